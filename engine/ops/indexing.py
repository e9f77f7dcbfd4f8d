"""Indexing ``t[key]``: basic (ints, slices, None, ...) and integer-array indexing, differentiable.

The gradient of indexing scatters the upstream gradient back into zeros shaped like the input,
adding where an index repeats; the gradient of that scatter is indexing again.

Index arrays given on the host (lists, NumPy arrays, cpu:0 tensors) are checked against the shape
there, then moved to the indexed tensor's device: out-of-range indices raise IndexError on every
device (CuPy itself would wrap them silently). Index tensors already on that GPU are used as they are,
unchecked: checking them would cost a device→host transfer per op.

>>> import engine as eg
>>> x = eg.constant([10.0, 20.0, 30.0])
>>> x[[0, 2, 2]].numpy()
array([10., 30., 30.], dtype=float32)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import backend
from ..primitive import Primitive
from ..tensor import Tensor


def _has_arrays(key: tuple) -> bool:
    return any(not isinstance(k, int | slice | type(None) | type(Ellipsis)) for k in key)


def _scatter_forward(xp, g, key, shape):
    out = xp.zeros(shape, dtype=g.dtype)
    if not _has_arrays(key):
        out[key] = g  # basic indexing never repeats an element
    elif xp is np:
        np.add.at(out, key, g)  # repeated indices add up
    elif g.dtype.kind == "c":  # cupyx.scatter_add has no complex version: add each part on its own
        real = _scatter_forward(xp, g.real.copy(), key, shape)
        imag = _scatter_forward(xp, g.imag.copy(), key, shape)
        out = (real + 1j * imag).astype(g.dtype)
    else:
        import cupyx  # noqa: PLC0415

        cupyx.scatter_add(out, key, g)
    return out


_scatter = Primitive(
    "scatter_add", _scatter_forward,
    vjps=[lambda gg, y, g, key, shape: getitem(gg, key)],
    needs=(), inputs=("dy",), rule="∂dy = g[key]",
    doc="zeros(shape) with g added at key: the gradient of indexing.",
)

_getitem = Primitive(
    "getitem", lambda xp, x, key: x[key],
    vjps=[lambda g, y, x, key: _scatter(g, key=key, shape=x.shape)],
    needs=(), rule="∂x = zeros shaped like x with g added at [key] (repeated indices add up)",
    op_type="StridedSlice",
)
# x[mask] has as many elements as the mask has True values: a traced graph checks that count per run
_getitem.shape_depends_on_values = lambda params: any(  # type: ignore[method-assign]
    _is_array(k) and k.dtype.kind == "b" for k in params["key"])


def _is_array(k: Any) -> bool:
    return hasattr(k, "dtype") and hasattr(k, "shape") and not isinstance(k, np.generic)


def _normalize(key: Any, x: Tensor) -> tuple:
    """``key`` with every index array on ``x``'s device; host arrays bounds-checked before they move.
    An index tensor is moved by the engine's own op (`Tensor.to`), so a traced graph sees the move and
    replays it with each call's indices."""
    if not isinstance(key, tuple):
        key = (key,)
    parts: list[Any] = []
    tensors: dict[int, Tensor] = {}  # position in parts → the index tensor it came from
    for k in key:
        if isinstance(k, Tensor):
            tensors[len(parts)] = k._read() if k._is_variable else k
            k = tensors[len(parts)]._data
        elif isinstance(k, list):
            k = np.asarray(k)
            if k.size == 0 and k.dtype.kind == "f":  # x[[]]: NumPy's empty integer selection
                k = k.astype(np.intp)
        elif isinstance(k, np.integer):
            k = int(k)
        elif not (_is_array(k) or isinstance(k, int | slice | type(None) | type(Ellipsis))):
            raise IndexError(f"getitem: unsupported index {k!r:.60} of type {type(k).__name__}.")
        if _is_array(k) and k.dtype.kind not in "iub":
            raise IndexError(f"getitem: index arrays must be integer or bool, got {k.dtype}.")
        parts.append(k)
    _check_host_bounds(parts, x.shape)
    dev = x._device
    for i, t in tensors.items():
        parts[i] = t.to(dev)._data
    return tuple(backend.transfer(k, dev) if _is_array(k) and backend.device_of_array(k) is not dev else k
                 for k in parts)


def _check_host_bounds(parts: list, shape: tuple[int, ...]) -> None:
    """IndexError for an out-of-range integer index array that is on the host (NumPy)."""
    taken = sum(k.ndim if _is_array(k) and k.dtype.kind == "b" else 0 if k is None or k is Ellipsis else 1
                for k in parts)
    axis = 0
    for k in parts:
        if k is Ellipsis:
            axis += len(shape) - taken
        elif _is_array(k) and k.dtype.kind == "b":
            axis += k.ndim
        elif k is not None:
            if isinstance(k, np.ndarray) and k.dtype.kind in "iu" and k.size and axis < len(shape):
                n = shape[axis]
                bad = k[(k < -n) | (k >= n)]
                if bad.size:
                    raise IndexError(f"getitem: index {bad.ravel()[0]} is out of range for axis {axis} with "
                                     f"size {n} (shape {shape}).")
            axis += 1


def getitem(x: Tensor, key: Any) -> Tensor:
    """``x[key]``. Out-of-range indices raise IndexError naming the shape.

    >>> import engine as eg
    >>> eg.getitem(eg.constant([10.0, 20.0, 30.0]), 1).numpy()
    array(20., dtype=float32)
    """
    key = _normalize(key, x)
    try:
        return _getitem(x, key=key)
    except IndexError as exc:
        cause = exc.__cause__ or exc  # NumPy's own words, without the engine's "getitem: failed on ..."
        if x.ndim == 0:
            raise IndexError(f"getitem: cannot index a 0-d tensor (a scalar) with {_show(key)}; it has no "
                             "axes. Use it as it is, or its value: x.item().") from None
        raise IndexError(f"getitem: index {_show(key)} does not fit shape {x.shape}: {cause}") from None


def _show(key: tuple) -> str:
    return repr(key[0]) if len(key) == 1 else repr(key)
