"""Names that say what they hold: no two modules of a folder differ only by a suffix (``record`` and
``recording``, ``function`` and ``functional`` were such a pair), so a reader never has to open both to
learn which holds what; and a widget module is named after the widget it holds.

>>> sorted(suffix_twins(["record", "recording", "tape", "tapes", "graph_view", "view"]))
[('record', 'recording'), ('tape', 'tapes')]
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("engine", "gradviz", "gradlab", "lessons/_checks", "tools", "bench")
SUFFIX = 4  # "s", "al", "ing", "ions": a longer ending makes a new word, not a twin


def suffix_twins(names: Iterable[str]) -> list[tuple[str, str]]:
    """Pairs of module names where one is the other plus a short ending with no underscore."""
    names = sorted(set(names))
    return [(a, b) for a in names for b in names
            if a != b and b.startswith(a) and len(b) - len(a) <= SUFFIX and "_" not in b[len(a):]]


def _folders() -> dict[Path, list[str]]:
    out: dict[Path, list[str]] = {}
    for pkg in PACKAGES:
        for path in (ROOT / pkg).rglob("*.py"):
            if not any(part.startswith(".") for part in path.relative_to(ROOT).parts):
                out.setdefault(path.parent, []).append(path.stem)
    return out


def test_no_module_is_another_plus_a_suffix():
    folders = _folders()
    assert len(folders) > 5
    twins = {str(d.relative_to(ROOT)): suffix_twins(names) for d, names in folders.items()}
    assert {d: t for d, t in twins.items() if t} == {}


def test_each_widget_module_holds_the_view_it_is_named_after():
    """``widgets/tape_view.py`` holds ``TapeView``: a module named ``*_view`` defines the class its name
    spells (``backprop_view`` → ``BackpropView``)."""
    modules = sorted((ROOT / "gradviz" / "widgets").glob("*_view.py"))
    assert len(modules) >= 5
    for path in modules:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        classes = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
        expected = "".join(part.capitalize() for part in path.stem.split("_"))
        assert expected in classes, f"{path.name} holds {sorted(classes)}, not {expected}"
