r"""No import cycles in engine/ or gradviz/, counting imports deferred into functions.

The module graph is read from the source with `ast` (every ``import`` statement, wherever it is),
so a cycle hidden in a function body counts too.

>>> sorted(_imports_of("engine.tape", "from . import nest\nfrom .record import Record\n", {"engine.nest"}))
['engine.nest', 'engine.record']
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("engine", "gradviz")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}


def _imports_of(name: str, source: str, known: set[str], package: bool = False) -> set[str]:
    """The engine/gradviz modules that ``source`` (the module ``name``) imports, anywhere in it.

    ``from X import y`` is an edge to the module ``X.y`` when there is one, else to ``X``: importing a
    submodule does not import its package's other contents. ``package``: ``name`` is a package's
    ``__init__`` (its relative imports start from itself).
    """
    here = name.split(".") if package else name.split(".")[:-1]
    out: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(here[: len(here) - node.level + 1] + ([node.module] if node.module else [])) \
                if node.level else node.module or ""
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        out.update(t for t in targets if t.split(".")[0] in PACKAGES and t != name)
    return out


def import_graph() -> dict[str, set[str]]:
    """Module → the engine/gradviz modules it imports (at top level or inside functions)."""
    modules = _modules()
    known = set(modules)
    graph = {}
    for name, path in modules.items():
        edges = _imports_of(name, path.read_text(encoding="utf-8"), known, path.name == "__init__.py")
        # `import engine.ops.shape` names a module; an unknown dotted name falls back to its package
        graph[name] = {e if e in known else e.rpartition(".")[0] for e in edges} - {name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a list of modules (first == last), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_graph_sees_function_level_imports():
    source = "def f():\n    from .ops import add\n    import engine.tape\n"
    known = {"engine.ops", "engine.tape"}
    assert _imports_of("engine.backward", source, known) == {"engine.ops", "engine.tape"}
    assert _imports_of("engine.ops", "from .shape import cast", {"engine.ops.shape"}, package=True) == \
        {"engine.ops.shape"}


def test_the_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycle(package):
    graph = {m: edges for m, edges in import_graph().items() if m.split(".")[0] == package}
    cycle = find_cycle(graph)
    assert cycle is None, f"import cycle in {package}/: {' -> '.join(cycle or [])}"
