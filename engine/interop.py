"""NumPy on tensors: NumPy's functions run the engine's ops, and nothing leaves a tape unnoticed.

Three rules, in this order:

1. A NumPy ufunc or function that has an engine op of the same meaning runs that op:
   ``np.sin(x)`` is ``eg.sin(x)``, ``np.sum(x, axis=0)`` is ``eg.sum(x, axis=0)``. The result is a
   Tensor on ``x``'s device, and tapes record it, so its gradient is right. Which NumPy callables
   these are is read off the engine's own ops (a NumPy ufunc or function with an op's name), not kept
   in a table here: `engine_ufuncs` and `engine_functions` list them.
2. One without an engine op (``np.arctan``, ``np.linalg.norm``, ``np.add.reduce``, ``out=``…)
   computes with NumPy on the host, as before, outside tapes. Inside a recording tape that watches
   one of its tensors, a floating result would silently have no gradient, so that is a TypeError
   naming the function: write it with engine ops, or take the value explicitly with ``x.numpy()``.
3. ``np.asarray(t)`` / ``np.array(t)`` ask for a NumPy array explicitly: they work everywhere, but
   inside a recording tape that watches ``t`` they warn with `TapeEscapeWarning` (the array has left
   the tape: gradients through it will be None). Engine and gradviz code that only reads values
   uses `to_numpy`, which never warns.

>>> import numpy as np
>>> import engine as eg
>>> x = eg.constant(2.0)
>>> with eg.GradientTape() as tape:
...     tape.watch(x)
...     y = np.sin(x) * x
>>> round(float(tape.gradient(y, x)), 4)   # sin(2) + 2·cos(2)
0.077
"""

from __future__ import annotations

import functools
import inspect
import sys
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from . import backend
from . import listeners as _listeners
from . import tensor as _tensor
from .tensor import Tensor

__all__ = ["TapeEscapeWarning", "to_numpy", "engine_ufuncs", "engine_functions"]


class TapeEscapeWarning(UserWarning):
    """A tensor that a recording tape watches was turned into a NumPy array (``np.asarray(t)``):
    whatever is computed from that array is invisible to the tape, so its gradient will be None.

    Silence it on purpose with ``warnings.simplefilter("ignore", eg.TapeEscapeWarning)``, or read
    the value with ``t.numpy()``, which says so explicitly.

    >>> import warnings
    >>> import engine as eg
    >>> x = eg.constant([1.0])
    >>> with eg.GradientTape() as tape, warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     tape.watch(x)
    ...     _ = np.asarray(x)
    >>> [w.category.__name__ for w in caught]
    ['TapeEscapeWarning']
    """


# ---- reading values ---------------------------------------------------------------------------

def host_array(t: Tensor, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
    """``t``'s value as a host NumPy array (a read-only view on the CPU unless ``copy``); no warning."""
    if _listeners.listening:  # a traced tensor has no value yet: TracingError
        _listeners.note_host_read(t, "np.asarray()", tapes=False)
    array = backend.to_host(t._data)
    if copy:
        array = np.array(array, copy=True)
    elif array is t._data:
        array = array.view()
        array.flags.writeable = False  # a tensor is immutable: don't let np.asarray(t) change it
    return np.asarray(array, dtype=dtype)


def to_numpy(value: Any, dtype: Any = None) -> np.ndarray:
    """``np.asarray(value, dtype)`` that never warns: for engine and gradviz code that only reads
    values (a plot, a table) while a user's tape may be recording. Tensors come back as host arrays.

    >>> import engine as eg
    >>> to_numpy(eg.constant([1.0, 2.0])), to_numpy([3, 4], dtype=float)
    (array([1., 2.], dtype=float32), array([3., 4.]))
    """
    if isinstance(value, Tensor):
        return host_array(value, dtype)
    if isinstance(value, list | tuple) and any(isinstance(v, Tensor) for v in value):
        value = [host_array(v) if isinstance(v, Tensor) else v for v in value]
    return np.asarray(value, dtype=dtype)


def _watching_tape(tensors: list[Tensor]) -> Any:
    """A tape of this thread that is recording and watches (or would auto-watch) one of ``tensors``."""
    if not _listeners.anywhere:
        return None
    return next((tape for t in tensors for tape in _listeners.watchers(t)), None)


def _what(t: Tensor) -> str:
    kind = "Variable" if t._is_variable else "tensor"
    name = f" {t.name!r}" if t.name is not None else ""
    return f"the {kind}{name} of shape {t.shape}"


def array(t: Tensor, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
    """`Tensor.__array__`: `host_array`, with a `TapeEscapeWarning` when a recording tape watches ``t``."""
    if t._data.dtype.kind in "fc" and _watching_tape([t]) is not None:
        warnings.warn(TapeEscapeWarning(
            f"np.asarray/np.array on {_what(t)}, which a recording GradientTape watches: the NumPy "
            "array leaves the tape, so gradients through it will be None. Use engine ops "
            "(np.sin(x) and eg.sin(x) both work on tensors), or x.numpy() if you want the value."),
            stacklevel=3)
    return host_array(t, dtype, copy)


# ---- which NumPy callables are engine ops -----------------------------------------------------

def _public_ops() -> dict[str, Any]:
    ops = sys.modules["engine.ops"]
    creation = sys.modules["engine.creation"]
    return {name: getattr(ops, name) for name in ops.__all__ if name not in creation.__all__}


_NUMPY_NAMES = {"floordiv": "floor_divide"}  # the one engine op whose NumPy ufunc has another name


@functools.cache
def engine_ufuncs() -> dict[np.ufunc, Any]:
    """NumPy ufunc → the engine op it runs on tensors: every op whose name (or, for `floordiv`,
    NumPy's ``floor_divide``) is a NumPy ufunc.

    >>> import numpy as np
    >>> import engine as eg
    >>> engine_ufuncs()[np.sin] is eg.sin, engine_ufuncs()[np.power] is eg.pow
    (True, True)
    """
    found = {}
    for name, op in _public_ops().items():
        candidate = getattr(np, _NUMPY_NAMES.get(name, name), None)
        if isinstance(candidate, np.ufunc):
            found[candidate] = op
    return found


@functools.cache
def engine_functions() -> dict[Callable, Any]:
    """NumPy array function → the engine op it runs on tensors (``np.sum`` → `eg.sum`,
    ``np.concatenate`` → `eg.concat`, ...): every op whose name is a NumPy array function.

    >>> import numpy as np
    >>> import engine as eg
    >>> engine_functions()[np.mean] is eg.mean
    True
    """
    found = {}
    for name, op in _public_ops().items():
        candidate = getattr(np, name, None)
        if candidate is not None and hasattr(candidate, "_implementation"):  # an __array_function__ one
            found[candidate] = op
    return found


# NumPy's parameter name → the engine's, where they differ (np.transpose(a, axes) is eg.transpose(x, perm)).
_PARAMETERS = {"axes": "perm", "a_min": "lo", "a_max": "hi", "min": "lo", "max": "hi"}


@functools.cache
def _signature(func: Callable) -> inspect.Signature:
    return inspect.signature(func)


@functools.cache
def _parameters(op: Any) -> tuple[str, ...]:
    inputs = getattr(op, "inputs", None)  # a Primitive takes its inputs positionally
    if inputs is not None and not inspect.isfunction(op):
        return tuple(inputs)
    return tuple(_signature(op).parameters)


def _engine_call(func: Callable, op: Any, args: tuple, kwargs: dict) -> tuple | None:
    """``(args, kwargs)`` for ``op`` from a NumPy call of ``func``; None when NumPy's call uses
    something the engine op has no equivalent for (``out=``, ``dtype=``, ``initial=``, ...)."""
    if len(args) == 1 and not kwargs and sum(_required(op, n) for n in _parameters(op)) == 1:
        return args, {}  # np.sum(x), np.transpose(x), np.concatenate([x, y]): the common call, fast
    try:
        bound = _signature(func).bind(*args, **kwargs)
    except TypeError:
        return None
    names = _parameters(op)
    given = list(bound.arguments.items())
    values = {names[0]: given[0][1]}
    for name, value in given[1:]:
        target = _PARAMETERS.get(name, name)
        if target not in names or target in values:
            return None
        values[target] = value
    if any(values.get(n) is None for n in names if n != names[0] and _required(op, n)):
        return None  # np.where(condition) alone: NumPy's other meaning
    if not inspect.isfunction(op):
        return tuple(values[n] for n in names), {}
    return (values.pop(names[0]),), values


def _required(op: Any, name: str) -> bool:
    if not inspect.isfunction(op):
        return True
    return _signature(op).parameters[name].default is inspect.Parameter.empty


# ---- the protocol methods -----------------------------------------------------------------------

def array_ufunc(ufunc: np.ufunc, method: str, inputs: tuple, kwargs: dict) -> Any:
    """`Tensor.__array_ufunc__`: rule 1 for ``ufunc(*inputs)``, else rule 2."""
    if method == "__call__" and not kwargs:
        op = engine_ufuncs().get(ufunc)
        if op is not None:
            return op(*inputs)
    label = f"np.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
    outs = kwargs.get("out", ())
    if any(isinstance(o, Tensor) for o in (outs if isinstance(outs, tuple) else (outs,))):
        raise TypeError(f"{label}(..., out=...): tensors are immutable, NumPy cannot write into one. "
                        "Drop out= and keep the returned tensor.")
    return _on_host(label, getattr(ufunc, method), inputs, kwargs)


def array_function(func: Callable, args: tuple, kwargs: dict) -> Any:
    """`Tensor.__array_function__`: rule 1 for ``func(*args, **kwargs)``, else rule 2."""
    op = engine_functions().get(func)
    if op is not None:
        call = _engine_call(func, op, args, kwargs)
        if call is not None:
            return op(*call[0], **call[1])
    parts = [p for p in (getattr(func, "__module__", None) or "numpy").split(".") if not p.startswith("_")]
    label = ".".join(["np" if parts[0] == "numpy" else parts[0], *parts[1:], func.__name__])
    return _on_host(label, func, args, kwargs)


def _on_host(label: str, func: Callable, args: tuple, kwargs: dict) -> Any:
    """Rule 2: run NumPy's own ``func`` on the tensors' host values."""
    seen: list[Tensor] = []
    host_args = _replace(args, seen)
    host_kwargs = _replace(kwargs, seen)
    result = func(*host_args, **host_kwargs)
    if _floating(result) and _watching_tape([t for t in seen if t._data.dtype.kind in "fc"]) is not None:
        names = ", ".join(_what(t) for t in seen[:2])
        raise TypeError(
            f"{label} has no engine op, so a GradientTape cannot record it: computed with NumPy from "
            f"{names}, which a recording tape watches, its gradient would silently be None. Write it "
            "with engine ops (eg.sin, eg.exp, eg.sum, ... ; NumPy calls them for np.sin, np.exp, "
            "np.sum), or, to leave the tape on purpose, call it on x.numpy().")
    return result


def _replace(value: Any, seen: list[Tensor]) -> Any:
    if isinstance(value, Tensor):
        seen.append(value)
        return host_array(value)
    if isinstance(value, list | tuple):
        return type(value)(_replace(v, seen) for v in value) if type(value) in (list, tuple) else value
    if isinstance(value, dict):
        return {k: _replace(v, seen) for k, v in value.items()}
    return value


def _floating(result: Any) -> bool:
    if isinstance(result, tuple | list):
        return any(_floating(r) for r in result)
    dtype = getattr(result, "dtype", None)
    return dtype is not None and getattr(dtype, "kind", "") in "fc"


_tensor._interop = sys.modules[__name__]  # Tensor.__array__ and NumPy's protocols call this module
