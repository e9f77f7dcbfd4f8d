"""The reading map of docs/ARCHITECTURE.md: the engine's core definitions in reading order, each as
``file:first-last``, and printing one of them (lesson 10 reads the real engine's walk this way).

Each row of the map names a definition (``Tensor.__init__``, ``apply``, ``multiply``: a function, a
class, a method or a module-level assignment) and the lines it spans. Code moves; the map must move
with it: ``python tools/reading_map.py --fix`` rewrites the ranges, `tests/test_reading_map.py` fails
when one is stale. The document is read from the repository (``docs/``) or, in an installed wheel, from
the copy the wheel carries (``gradlab/ARCHITECTURE.md``); the engine's files from wherever ``engine``
is imported from, so a course copied out with ``gradlab lessons DEST`` reads the same lines.

>>> rows = map_rows("| 1 | `engine/primitive.py:10-20` `apply` | idea |")
>>> rows[0].path, rows[0].symbol, (rows[0].first, rows[0].last)
('engine/primitive.py', 'apply', (10, 20))
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import engine

#: where the map's ``engine/...`` paths start: the folder that holds the imported ``engine`` package
SOURCE_ROOT = Path(engine.__file__).resolve().parent.parent
_DOCUMENTS = (Path(__file__).resolve().parent.parent / "docs" / "ARCHITECTURE.md",  # a clone
              Path(__file__).resolve().parent / "ARCHITECTURE.md")  # the wheel's copy
ROW = re.compile(r"`(?P<path>engine/[\w/]+\.py):(?P<first>\d+)-(?P<last>\d+)` `(?P<symbol>[\w.]+)`")
TOTAL = re.compile(r"(?P<total>\d+) lines in all")
PROMISE = 400  # what the core must fit in (ARCHITECTURE.md's promise to a reader)


@dataclass
class Row:
    path: str
    symbol: str
    first: int
    last: int


def document() -> Path:
    """ARCHITECTURE.md: the clone's ``docs/``, else the copy in the installed package."""
    for path in _DOCUMENTS:
        if path.is_file():
            return path
    looked = ", ".join(map(str, _DOCUMENTS))
    raise FileNotFoundError(f"the reading map's document is missing (looked for {looked})")


def map_rows(text: str) -> list[Row]:
    """The map's rows of ``text``, in reading order."""
    return [Row(m["path"], m["symbol"], int(m["first"]), int(m["last"])) for m in ROW.finditer(text)]


def reading_rows() -> list[Row]:
    """The rows of the document's reading map."""
    return map_rows(document().read_text(encoding="utf-8"))


def span(path: str, symbol: str) -> tuple[int, int]:
    """The first and last line of ``symbol`` (``Class.method`` for a method) in ``path``: from its
    first decorator or its ``def``/``class``/assignment line to its last line."""
    tree = ast.parse((SOURCE_ROOT / path).read_text(encoding="utf-8"))
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


def show(symbol: str) -> None:
    """Print the lines of the map's row for ``symbol``, numbered as in the file.

    >>> show("unbroadcast")  # doctest: +ELLIPSIS
    # engine/...py:...
    ...def unbroadcast(...
    """
    rows = [r for r in reading_rows() if r.symbol == symbol]
    if not rows:
        raise KeyError(f"{symbol!r} is not in the reading map; its rows: "
                       f"{', '.join(r.symbol for r in reading_rows())}")
    row = rows[0]
    lines = (SOURCE_ROOT / row.path).read_text(encoding="utf-8").splitlines()
    print(f"# {row.path}:{row.first}-{row.last}")
    for n in range(row.first, row.last + 1):
        print(f"{n:4d}  {lines[n - 1]}")
