"""The reading map of docs/ARCHITECTURE.md: check (or fix) its ``file:first-last`` line ranges.

Each row of the map names a definition (``Tensor.__init__``, ``apply``, ``multiply``: a function, a
class, a method or a module-level assignment) and the lines it spans. Code moves; the map must move
with it. ``python tools/reading_map.py`` prints each row's range as the code has it now and the total;
``--fix`` writes the ranges (and the total in the sentence "N lines in all") back into the document.
`tests/test_reading_map.py` fails when a range or the total is stale.

>>> rows = map_rows("| 1 | `engine/primitive.py:10-20` `apply` | idea |")
>>> rows[0].path, rows[0].symbol, (rows[0].first, rows[0].last)
('engine/primitive.py', 'apply', (10, 20))
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "ARCHITECTURE.md"
ROW = re.compile(r"`(?P<path>engine/[\w/]+\.py):(?P<first>\d+)-(?P<last>\d+)` `(?P<symbol>[\w.]+)`")
TOTAL = re.compile(r"(?P<total>\d+) lines in all")
PROMISE = 400  # what the core must fit in (ARCHITECTURE.md's promise to a reader)


@dataclass
class Row:
    path: str
    symbol: str
    first: int
    last: int


def map_rows(text: str) -> list[Row]:
    """The map's rows, in reading order."""
    return [Row(m["path"], m["symbol"], int(m["first"]), int(m["last"])) for m in ROW.finditer(text)]


def span(path: str, symbol: str) -> tuple[int, int]:
    """The first and last line of ``symbol`` (``Class.method`` for a method) in ``path``: from its
    first decorator or its ``def``/``class``/assignment line to its last line."""
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    node: ast.AST = tree
    for part in symbol.split("."):
        node = _child(node, part, path, symbol)
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    return first, node.end_lineno


def _child(node: ast.AST, name: str, path: str, symbol: str) -> ast.AST:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.ClassDef) and child.name == name:
            return child
        targets = child.targets if isinstance(child, ast.Assign) else []
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return child
    raise LookupError(f"{path}: no definition of {symbol!r} (the reading map names it)")


def fixed(text: str) -> str:
    """``text`` with every row's range and the total as the code has them now."""
    def row(m: re.Match) -> str:
        first, last = span(m["path"], m["symbol"])
        return f"`{m['path']}:{first}-{last}` `{m['symbol']}`"

    text = ROW.sub(row, text)
    total = sum(r.last - r.first + 1 for r in map_rows(text))
    return TOTAL.sub(f"{total} lines in all", text, count=1)


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
