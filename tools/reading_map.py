"""Check (or fix) the ``file:first-last`` line ranges of docs/ARCHITECTURE.md's reading map.

``python tools/reading_map.py`` prints each row's range as the code has it now and the total;
``--fix`` writes the ranges (and the total in the sentence "N lines in all") back into the document.
The map itself (rows, spans, `show`) is `gradlab.reading_map`; `tests/test_reading_map.py` fails when a
range or the total is stale.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from gradlab.reading_map import PROMISE, TOTAL, fixed, map_rows, span  # noqa: E402, F401

DOC = ROOT / "docs" / "ARCHITECTURE.md"


def main() -> None:
    text = DOC.read_text(encoding="utf-8")
    new = fixed(text)
    for r in map_rows(new):
        print(f"{r.path}:{r.first}-{r.last}  {r.symbol}  ({r.last - r.first + 1} lines)")
    print(f"total: {sum(r.last - r.first + 1 for r in map_rows(new))} lines (promise: at most {PROMISE})")
    if "--fix" in sys.argv[1:]:
        DOC.write_text(new, encoding="utf-8")
        print(f"wrote {DOC.relative_to(ROOT)}")
    elif new != text:
        print("docs/ARCHITECTURE.md is stale: run python tools/reading_map.py --fix")
        sys.exit(1)


if __name__ == "__main__":
    main()
