"""gradviz's layers (docs/ARCHITECTURE.md): the model (data built from tapes and optimizers) imports
neither rendering nor widgets, anywhere in its modules (also inside functions); rendering imports no
widget."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = {"model": ("gradviz.render", "gradviz.widgets"), "render": ("gradviz.widgets",)}


def _imports(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
    return names


MODULES = sorted(p for layer in FORBIDDEN for p in (ROOT / "gradviz" / layer).glob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_layer_imports_nothing_above_it(path):
    bad = [m for m in _imports(path) if m.startswith(FORBIDDEN[path.parent.name])]
    assert not bad, f"gradviz/{path.parent.name}/{path.name} imports {bad}: above its layer"
