"""gradviz reads the engine only through its public API: no underscore names imported from engine,
none read by string (``getattr(x, "_uid")``), no underscore attribute of an engine object."""

from __future__ import annotations

import ast
from pathlib import Path

GRADVIZ = Path(__file__).resolve().parent.parent / "gradviz"
ENGINE_PRIVATE = {"_uid", "_data", "_device", "_is_variable", "_ACTIVE", "_records", "_watched", "_recording",
                  "_trainable", "_read", "_persistent", "_used", "_stack"}
GETTERS = {"getattr", "hasattr", "setattr"}


def _violations(source: str) -> list[str]:
    """Private engine names that ``source`` reaches for (empty when it uses the public API only).

    >>> _violations("from engine.tape import _ACTIVE")
    ['imports engine.tape._ACTIVE']
    >>> _violations("getattr(t, '_is_variable', False)")
    ["reads '_is_variable' by string"]
    """
    out = []
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "engine":
            if any(part.startswith("_") for part in node.module.split(".")):
                out.append(f"imports {node.module}")
            out += [f"imports {node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
        elif isinstance(node, ast.Import):
            parts = [a.name.split(".") for a in node.names]
            out += [f"imports {'.'.join(p)}" for p in parts
                    if p[0] == "engine" and any(q.startswith("_") for q in p)]
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) in GETTERS:
            own = isinstance(node.args[0], ast.Name) and node.args[0].id in {"self", "cls"}
            if len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and not own and \
                    str(node.args[1].value).startswith("_") and not str(node.args[1].value).startswith("__"):
                out.append(f"reads {node.args[1].value!r} by string")
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            base = node.value
            # engine modules, tensors and records: reached as eg.x, engine.x, t._uid, r._data ...
            if isinstance(base, ast.Name) and base.id in {"eg", "engine"}:
                out.append(f"reads {base.id}.{node.attr}")
            elif node.attr in ENGINE_PRIVATE and not (isinstance(base, ast.Name) and base.id == "self"):
                out.append(f"reads .{node.attr}")
    return out


def test_gradviz_uses_only_the_public_engine_api():
    found = {}
    for path in sorted(GRADVIZ.rglob("*.py")):
        bad = _violations(path.read_text(encoding="utf-8"))
        if bad:
            found[str(path.relative_to(GRADVIZ))] = bad
    assert not found, f"gradviz reaches into engine privates: {found}"
