"""Graph mode sits behind the one hook: outside its own modules, no engine module asks whether a trace
runs or imports graph mode's internals; user-level modules (layers, optimizers, random, dropout,
clipping) speak to it only through the public scopes and the ops and assignments they make. And the
engine's modules import each other at the top (no import hidden in a function).

Read from the source with `ast`, so a new ``tracer()`` question or a deferred import fails here.

>>> sorted(_questions("from .trace import current_tracer\\nif current_tracer() is None: pass\\n"))
['call current_tracer()', 'import engine.trace']
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ENGINE = ROOT / "engine"
# graph mode's own modules; `listeners` is the hook it subscribes to
GRAPH_MODE = {"function", "trace", "replay", "captures", "graph"}
ASKS = {"tracer", "current_tracer", "tracing"}  # what asking "does a trace run?" is called


def _module(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def _outside_graph_mode() -> list[Path]:
    return [p for p in sorted(ENGINE.rglob("*.py"))
            if p.parent != ENGINE or p.stem not in GRAPH_MODE]


def _imported(node: ast.ImportFrom, package: list[str]) -> list[str]:
    base = package[: len(package) - node.level + 1] if node.level else []
    module = ".".join(base + ([node.module] if node.module else []))
    return [f"{module}.{a.name}" for a in node.names] + [module]


def _questions(source: str, package: tuple[str, ...] = ("engine",)) -> list[str]:
    """What in ``source`` asks whether a trace runs (a call of ``tracer()``...) or reaches into graph
    mode's modules (an import of ``engine.trace``, ``engine.replay``...)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if name in ASKS:
                found.append(f"call {name}()")
        elif isinstance(node, ast.Attribute) and node.attr in ("tracer", "dry"):
            found.append(f"attribute .{node.attr}")
        elif isinstance(node, ast.ImportFrom | ast.Import):
            names = (_imported(node, list(package)) if isinstance(node, ast.ImportFrom)
                     else [a.name for a in node.names])
            found += [f"import engine.{n}" for n in GRAPH_MODE
                      if any(m == f"engine.{n}" for m in names)]
    return found


@pytest.mark.parametrize("path", _outside_graph_mode(), ids=_module)
def test_no_module_outside_graph_mode_asks_for_a_trace(path):
    if path == ENGINE / "__init__.py":  # the package re-exports graph mode's public names
        return
    package = tuple(_module(path).split(".")[:-1])
    found = _questions(path.read_text(encoding="utf-8"), package)
    assert not found, (f"{path.relative_to(ROOT)}: {found}. Outside graph mode, speak to listeners "
                       "through engine.listeners (name_scope, init_scope, events), never to the tracer.")


def test_the_check_sees_each_kind_of_question():
    assert _questions("import engine.replay\n") == ["import engine.replay"]
    assert _questions("from .. import trace\n", ("engine", "layers")) == ["import engine.trace"]
    assert "call tracer()" in _questions("if rec.tracer() is not None: pass\n")
    assert _questions("from .listeners import name_scope\nwith name_scope('a'): pass\n") == []


def _function_level_imports(path: Path) -> list[str]:
    out = []
    for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in ast.walk(fn):
                if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith(
                        ("engine", "gradviz"))):
                    out.append(f"{path.relative_to(ROOT)}:{node.lineno}")
                elif isinstance(node, ast.Import) and any(a.name.startswith(("engine", "gradviz"))
                                                          for a in node.names):
                    out.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return out


def test_engine_modules_import_each_other_at_the_top():
    """The engine's modules form no import cycle (tests/test_import_cycles.py), so none needs to hide
    an import of another in a function; only heavy libraries are deferred (each says so)."""
    found = [where for p in sorted(ENGINE.rglob("*.py")) for where in _function_level_imports(p)]
    assert not found, f"imports of engine modules inside functions: {found}"


def test_the_hook_knows_no_graph_mode_module():
    source = (ENGINE / "listeners.py").read_text(encoding="utf-8")
    assert not [q for q in _questions(source) if q.startswith("import")]
