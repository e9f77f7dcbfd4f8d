"""Indexing ``t[key]``: basic (ints, slices, None, ...) and integer-array indexing, differentiable.

The gradient of indexing scatters the upstream gradient back into zeros shaped like the input,
adding where an index repeats; the gradient of that scatter is indexing again.

>>> import engine as eg
>>> x = eg.constant([10.0, 20.0, 30.0])
>>> x[[0, 2, 2]].numpy()
array([10., 30., 30.], dtype=float32)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import ops as F
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
    else:
        import cupyx  # noqa: PLC0415

        cupyx.scatter_add(out, key, g)
    return out


_scatter = Primitive(
    "scatter_add", _scatter_forward,
    vjps=[lambda gg, y, g, key, shape: F.getitem(gg, key)],
    doc="zeros(shape) with g added at key: the gradient of indexing.",
)

_getitem = Primitive(
    "getitem", lambda xp, x, key: x[key],
    vjps=[lambda g, y, x, key: _scatter(g, key=key, shape=x.shape)],
)


def _normalize(key: Any, x: Tensor) -> tuple:
    if not isinstance(key, tuple):
        key = (key,)
    xp = x._device.xp
    out = []
    for k in key:
        if isinstance(k, Tensor):
            if k.dtype.kind not in "iub":
                raise IndexError(f"getitem: index tensors must be integer or bool, got {k.dtype}.")
            k = k._data if k._device is x._device else xp.asarray(k.numpy())
        elif isinstance(k, list | np.ndarray):
            k = xp.asarray(k)
            if k.dtype.kind not in "iub":
                raise IndexError(f"getitem: index arrays must be integer or bool, got {k.dtype}.")
        elif isinstance(k, np.integer):
            k = int(k)
        elif not isinstance(k, int | slice | type(None) | type(Ellipsis)):
            raise IndexError(f"getitem: unsupported index {k!r} of type {type(k).__name__}.")
        out.append(k)
    return tuple(out)


def getitem(x: Tensor, key: Any) -> Tensor:
    """``x[key]``. Out-of-range indices raise IndexError naming the shape."""
    key = _normalize(key, x)
    try:
        return _getitem(x, key=key)
    except IndexError as exc:
        raise IndexError(f"getitem: index {key!r} is out of range for shape {x.shape}: {exc}") from None
