"""Nested structures of tensors (lists, tuples, dicts) flattened to lists and packed back.

`GradientTape.gradient` uses these so that its result has the structure of its ``sources``.

>>> flatten({"b": [1, 2], "a": 3})
[1, 2, 3]
>>> pack_like({"b": [0, 0], "a": 0}, [4, 5, 6])
{'b': [4, 5], 'a': 6}
"""

from __future__ import annotations

from typing import Any

__all__ = ["flatten", "pack_like"]


def flatten(structure: Any) -> list[Any]:
    """The leaves of ``structure`` in order (dicts in insertion order); a leaf gives ``[leaf]``."""
    if isinstance(structure, dict):
        return [leaf for value in structure.values() for leaf in flatten(value)]
    if isinstance(structure, list | tuple):
        return [leaf for item in structure for leaf in flatten(item)]
    return [structure]


def pack_like(structure: Any, flat: list[Any]) -> Any:
    """Rebuild ``structure``'s shape with the values of ``flat`` (the inverse of `flatten`)."""
    return _build(structure, iter(flat))


def _build(s: Any, values: Any) -> Any:
    # A module-level helper, not a closure: a recursive closure is a reference cycle, which would
    # keep the gradients alive until the garbage collector runs.
    if isinstance(s, dict):
        return {k: _build(v, values) for k, v in s.items()}
    if isinstance(s, tuple) and hasattr(s, "_fields"):  # namedtuple
        return type(s)(*(_build(v, values) for v in s))
    if isinstance(s, list | tuple):
        return type(s)(_build(v, values) for v in s)
    return next(values)
