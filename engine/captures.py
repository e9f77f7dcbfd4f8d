"""What a traced function reads that is not an argument, and how `eg.function` keeps it true.

A function's Python code runs once per trace; a replay does not run it. So every value the code
reached while tracing and that can change before a later call must be either read by the graph when it
runs, or checked before the replay. The rule, decided here for every kind of capture:

- a Variable (a closure's, a global's, an attribute's, ``eg.constant(v)``): read live when the graph
  runs (a read node), so assignments between calls are seen; if the *name* is bound to another
  Variable, the function traces again (below);
- a tensor that is an attribute of an argument object (``b.x``, also nested ``b.inner.x``, and of the
  instance of a traced method): part of the call's inputs, like a tensor argument; its shape, dtype
  and device are part of the signature (`object_leaves`);
- a tensor the trace captured from an attribute of an object in a closure variable or global
  (``cfg.k``): that attribute is checked before each replay (another tensor: traced again);
- a closure variable or a global the code names (also those of the plain Python functions it calls)
  that holds data: a tensor, a Variable, a NumPy array, a Python number, or a list/tuple/dict of them.
  After each trace its value is remembered (`Captures`); before each replay it is compared (tensors
  and Variables by identity, arrays by contents, numbers by value, ``-0.0`` told from ``0.0``): a
  change traces again, counted in ``trace_count`` and warned about like any retrace.

>>> import engine as eg
>>> k = eg.constant(2.0)
>>> f = eg.function(lambda x: x * k)
>>> float(f(eg.constant(1.0)))
2.0
>>> k = eg.constant(10.0)       # rebinding the captured name: the next call traces again
>>> float(f(eg.constant(1.0))), f.trace_count
(10.0, 2)
"""

from __future__ import annotations

import dis
import functools
import math
import types
from collections.abc import Callable
from typing import Any

import numpy as np

from .tensor import Tensor

__all__ = ["Captures", "capture_captures", "object_leaves", "number_key", "is_plain_object"]

_MISSING = object()
_DEPTH = 3  # how deep containers and attribute objects are opened
_NOT_OPENED = ("engine", "gradviz", "numpy", "cupy", "builtins")  # libraries' objects keep their own state


def number_key(v: Any) -> Any:
    """A key for a Python or NumPy number that tells ``-0.0`` from ``0.0`` and equals itself for NaN.

    >>> number_key(0.0) == number_key(-0.0), number_key(float("nan")) == number_key(float("nan"))
    (False, True)
    """
    if isinstance(v, float | np.floating):
        return (type(v).__name__, "nan" if math.isnan(v) else float(v).hex())
    if isinstance(v, complex | np.complexfloating):
        return (type(v).__name__, number_key(float(v.real)), number_key(float(v.imag)))
    return (type(v).__name__, v)


def is_plain_object(v: Any) -> bool:
    """Whether ``v`` is a user's object whose attributes `object_leaves` opens (not a library's, a
    class, a module or a function)."""
    if isinstance(v, type | types.ModuleType | types.FunctionType | types.MethodType | functools.partial):
        return False
    d = getattr(v, "__dict__", None)
    if not isinstance(d, dict):
        return False
    module = type(v).__module__ or ""
    return module.split(".")[0] not in _NOT_OPENED


def object_leaves(obj: Any, path: str, depth: int = 0) -> list[tuple[str, Tensor]]:
    """The tensors (not Variables: those are read live) held by ``obj``'s attributes, with their paths
    (``b.x``, ``b.inner.x``, ``b.xs[0]``): they are inputs of the call, like tensor arguments.

    >>> import engine as eg
    >>> from types import SimpleNamespace
    >>> b = SimpleNamespace(x=eg.constant(1.0), v=eg.Variable(2.0), name="b")
    >>> [p for p, _ in object_leaves(b, "b")]
    ['b.x']
    """
    out: list[tuple[str, Tensor]] = []
    if depth >= _DEPTH:
        return out
    if isinstance(obj, dict):
        items: Any = ((f"{path}[{k!r}]", v) for k, v in obj.items())
    elif isinstance(obj, list | tuple):
        items = ((f"{path}[{i}]", v) for i, v in enumerate(obj))
    elif is_plain_object(obj):
        items = ((f"{path}.{k}", v) for k, v in vars(obj).items())
    else:
        return out
    for where, v in items:
        if isinstance(v, Tensor):
            if not v._is_variable:
                out.append((where, v))
        elif isinstance(v, dict | list | tuple) or is_plain_object(v):
            out += object_leaves(v, where, depth + 1)
    return out


# ---- closures and globals ----------------------------------------------------------------------------

def _is_data(v: Any, depth: int = 0) -> bool:
    """Whether ``v`` is a value a replay would freeze: a tensor, an array, a number, or a container of
    tensors and arrays (numbers in a container are not guarded: a list or dict of counts is usually
    the code's own side effect, kept while tracing)."""
    if isinstance(v, Tensor | np.ndarray):
        return True
    if isinstance(v, bool | int | float | complex | np.generic):
        return depth == 0
    if isinstance(v, list | tuple | dict) and depth < _DEPTH:
        values = v.values() if isinstance(v, dict) else v
        return len(values) > 0 and any(_is_data(x, depth + 1) for x in values)
    return False


def _snapshot(v: Any, depth: int = 0) -> Any:
    """What `_unchanged` compares a capture's later value with."""
    if isinstance(v, Tensor):
        return ("is", v)
    if isinstance(v, np.ndarray):
        return ("array", v, v.copy())
    if isinstance(v, bool | int | float | complex | np.generic):
        return ("number", number_key(v)) if depth == 0 else ("any",)
    if isinstance(v, list | tuple) and depth < _DEPTH:
        return ("seq", type(v), tuple(_snapshot(x, depth + 1) for x in v))
    if isinstance(v, dict) and depth < _DEPTH:
        return ("dict", tuple((k, _snapshot(x, depth + 1)) for k, x in v.items()))
    return ("any",)


def _captured_paths(obj: Any, outside: dict[int, Any], steps: tuple = (), depth: int = 0) -> list[tuple]:
    """The attribute (and item) paths inside ``obj`` to tensors the trace captured as constants (their
    arrays are ``outside``), each with the tensor: ``[((("attr", "k"),), tensor)]`` for ``cfg.k``."""
    out: list[tuple] = []
    if depth >= _DEPTH:
        return out
    if isinstance(obj, dict):
        items: Any = ((("item", k), v) for k, v in obj.items())
    elif isinstance(obj, list | tuple):
        items = ((("item", i), v) for i, v in enumerate(obj))
    elif is_plain_object(obj):
        items = ((("attr", k), v) for k, v in vars(obj).items())
    else:
        return out
    for step, v in items:
        if isinstance(v, Tensor):
            if not v._is_variable and outside.get(id(v._data)) is v._data:
                out.append(((*steps, step), v))
        elif isinstance(v, dict | list | tuple) or is_plain_object(v):
            out += _captured_paths(v, outside, (*steps, step), depth + 1)
    return out


def _follow(obj: Any, steps: tuple) -> Any:
    """The value at ``steps`` inside ``obj`` now, or _MISSING."""
    try:
        for kind, key in steps:
            obj = getattr(obj, key) if kind == "attr" else obj[key]
    except (AttributeError, LookupError, TypeError):
        return _MISSING
    return obj


def _unchanged(snap: Any, v: Any) -> bool:
    """Whether ``v`` still is what `_snapshot` saw. A list or dict may have grown (entries appended
    by the code as it traced); the entries seen must be unchanged."""
    kind = snap[0]
    if kind == "any":
        return True
    if kind == "paths":  # an object whose attributes' tensors the trace captured: still those tensors
        return v is snap[1] and all(_follow(v, steps) is t for steps, t in snap[2])
    if kind == "is":
        return v is snap[1]
    if kind == "array":
        return (v is snap[1] and v.shape == snap[2].shape and v.dtype == snap[2].dtype
                and bool(np.array_equal(v, snap[2], equal_nan=True)))
    if kind == "number":
        return isinstance(v, bool | int | float | complex | np.generic) and number_key(v) == snap[1]
    if kind == "seq":
        return (type(v) is snap[1] and len(v) >= len(snap[2])
                and all(_unchanged(s, x) for s, x in zip(snap[2], v)))
    return isinstance(v, dict) and all(k in v and _unchanged(s, v[k]) for k, s in snap[1])


def _read(place: Any, name: str) -> Any:
    if isinstance(place, dict):
        return place.get(name, _MISSING)
    try:
        return place.cell_contents
    except ValueError:  # an empty cell (the name is not bound yet)
        return _MISSING


def _code_names(code: types.CodeType) -> tuple[set[str], set[str]]:
    """The global names ``code`` (and the functions and comprehensions defined in it) reads (its
    ``LOAD_GLOBAL`` / ``LOAD_NAME`` instructions: ``co_names`` also holds attribute names), and the
    global and closure names it assigns (``global n; n += 1``: its own side effect, not guarded)."""
    reads, writes = set(), set()
    for ins in dis.get_instructions(code):
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
            reads.add(ins.argval)
        elif ins.opname in ("STORE_GLOBAL", "STORE_DEREF", "DELETE_GLOBAL", "DELETE_DEREF"):
            writes.add(ins.argval)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            r, w = _code_names(const)
            reads |= r
            writes |= w
    return reads, writes


def _unwrap(fn: Any) -> Any:
    """The Python function behind a traced function, a method, a partial or a callable object."""
    for _ in range(8):
        if hasattr(fn, "python_function"):  # an eg.function
            fn = fn.python_function
        elif hasattr(fn, "f") and hasattr(fn, "ref"):  # a traced method's weakly bound function
            fn = fn.f
        elif isinstance(fn, types.MethodType):
            fn = fn.__func__
        elif isinstance(fn, functools.partial):
            fn = fn.func
        else:
            break
    return fn


def _places(fn: Any, depth: int, seen: set[int], out: list[tuple[str, Any, str]]) -> None:
    """Append ``(label, place, name)`` for each closure cell and global that ``fn``'s code reads, then
    do the same for the user's plain functions it names."""
    fn = _unwrap(fn)
    code = getattr(fn, "__code__", None)
    if code is None or id(fn) in seen:
        return
    seen.add(id(fn))
    if depth and (getattr(fn, "__module__", None) or "").split(".")[0] in _NOT_OPENED:
        return  # a library's function the code calls: its globals are its own business
    where = getattr(fn, "__qualname__", "function")
    reads, writes = _code_names(code)
    mine = [(f"the closure variable {name!r} of {where}", cell, name)
            for name, cell in zip(code.co_freevars, fn.__closure__ or ()) if name not in writes]
    glb = getattr(fn, "__globals__", {})
    mine += [(f"the global {name!r} read by {where}", glb, name) for name in sorted(reads - writes)
             if name in glb]
    out += mine
    if depth < 2:
        for _, place, name in mine:
            v = _read(place, name)
            if isinstance(v, types.FunctionType) or hasattr(v, "python_function"):
                _places(v, depth + 1, seen, out)


class Captures:
    """The data a trace's code reads by name (closure variables, globals), as they were after the
    trace; `changed` says which one differs now (the function must trace again), or None.

    >>> import numpy as np
    >>> scale = np.array([2.0])
    >>> caps = capture_captures(lambda x: x * scale)
    >>> caps.changed() is None
    True
    >>> scale[0] = 3.0
    >>> caps.changed()
    "the global 'scale' read by <lambda>"
    """

    __slots__ = ("guards",)

    def __init__(self, guards: list[tuple[str, Any, str, Any]]):
        self.guards = guards

    def changed(self) -> str | None:
        for label, place, name, snap in self.guards:
            if not _unchanged(snap, _read(place, name)):
                return label
        return None


def capture_captures(fn: Callable, outside: dict[int, Any] | None = None) -> Captures:
    """The closure variables and globals holding data that ``fn`` (and the plain functions it names)
    may read, with their values now; and for an object among them (``cfg``), the attributes whose
    tensors the trace captured (``outside``: their arrays by id), so that ``cfg.k = ...`` is seen."""
    places: list[tuple[str, Any, str]] = []
    _places(fn, 0, set(), places)
    guards, done = [], set()
    for label, place, name in places:
        if (id(place), name) in done:
            continue
        done.add((id(place), name))
        v = _read(place, name)
        if v is not _MISSING and _is_data(v):
            guards.append((label, place, name, _snapshot(v)))
        elif outside and v is not _MISSING and is_plain_object(v):
            paths = _captured_paths(v, outside)
            if paths:
                guards.append((f"{label} (its tensor attributes)", place, name, ("paths", v, paths)))
    return Captures(guards)
