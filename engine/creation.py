"""Making tensors: zeros, ones, fill, eye, arange, linspace and the ``*_like`` forms.

New tensors go on the current device (see `engine.device`); ``*_like`` ones beside their model.

>>> import engine as eg
>>> eg.zeros((2, 3)).shape, eg.arange(5).numpy(), eg.eye(2).dtype
((2, 3), array([0, 1, 2, 3, 4], dtype=int32), dtype('float32'))
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import backend
from .dtypes import check_endpoints, to_array
from .tensor import Tensor, as_dtype

__all__ = ["zeros", "ones", "zeros_like", "ones_like", "fill", "eye", "arange", "linspace"]


def _shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, Tensor):
        shape = shape.numpy().tolist()
    if isinstance(shape, int | np.integer):
        return (int(shape),)
    return tuple(int(n) for n in shape)


def _new(build, dtype: Any, device: backend.Device | None = None) -> Tensor:
    dev = device or backend.current_device()
    with dev.activate():
        return Tensor._make(build(dev.xp, as_dtype(dtype)), dev)


def zeros(shape: int | Sequence[int], dtype: Any = "float32") -> Tensor:
    """A tensor of zeros.

    >>> import engine as eg
    >>> eg.zeros((2,), dtype='int32').numpy()
    array([0, 0], dtype=int32)
    """
    return _new(lambda xp, dt: xp.zeros(_shape(shape), dtype=dt), dtype)


def ones(shape: int | Sequence[int], dtype: Any = "float32") -> Tensor:
    """A tensor of ones.

    >>> import engine as eg
    >>> eg.ones((2,)).numpy()
    array([1., 1.], dtype=float32)
    """
    return _new(lambda xp, dt: xp.ones(_shape(shape), dtype=dt), dtype)


def fill(dims: int | Sequence[int], value: Any, dtype: Any = None) -> Tensor:
    """A tensor of shape ``dims`` filled with ``value`` (dtype from the value: 1.5 → float32).

    >>> import engine as eg
    >>> eg.fill([2], 7.0).numpy()
    array([7., 7.], dtype=float32)
    """
    if isinstance(value, Tensor):
        value = value.numpy()
    array = to_array(value, "fill", None if dtype is None else as_dtype(dtype, "fill"))  # checked: fits
    if array.ndim:
        raise ValueError(f"fill: value must be a scalar, got shape {array.shape}; use eg.broadcast_to "
                         "for an array.")
    return _new(lambda xp, d: xp.full(_shape(dims), array, dtype=d), array.dtype)


def zeros_like(t: Any, dtype: Any = None) -> Tensor:
    """Zeros with ``t``'s shape, dtype and device.

    >>> import engine as eg
    >>> eg.zeros_like([1.5, 2.5]).numpy()
    array([0., 0.], dtype=float32)
    """
    t = t if isinstance(t, Tensor) else Tensor(to_array(t, "zeros_like"), backend.current_device())
    return _new(lambda xp, dt: xp.zeros(t.shape, dtype=dt), dtype or t.dtype, t._device)


def ones_like(t: Any, dtype: Any = None) -> Tensor:
    """Ones with ``t``'s shape, dtype and device.

    >>> import engine as eg
    >>> eg.ones_like([1, 2]).numpy()
    array([1, 1], dtype=int32)
    """
    t = t if isinstance(t, Tensor) else Tensor(to_array(t, "ones_like"), backend.current_device())
    return _new(lambda xp, dt: xp.ones(t.shape, dtype=dt), dtype or t.dtype, t._device)


def eye(num_rows: int, num_columns: int | None = None, dtype: Any = "float32") -> Tensor:
    """The identity matrix (ones on the diagonal).

    >>> import engine as eg
    >>> eg.eye(2).numpy()
    array([[1., 0.],
           [0., 1.]], dtype=float32)
    """
    return _new(lambda xp, dt: xp.eye(num_rows, num_columns, dtype=dt), dtype)


def arange(start: Any, limit: Any = None, delta: Any = 1, dtype: Any = None) -> Tensor:
    """``start, start + delta, …`` below ``limit`` (``arange(n)`` is ``0 … n-1``), like tf.range.

    >>> import engine as eg
    >>> eg.arange(3).numpy()
    array([0, 1, 2], dtype=int32)
    """
    if limit is None:
        start, limit = 0, start
    if dtype is not None:
        dt = as_dtype(dtype)
    elif all(isinstance(v, int) for v in (start, limit, delta)):
        dt = np.dtype(np.int32)  # Python ints → int32, as TensorFlow
    elif all(isinstance(v, int | float) for v in (start, limit, delta)):
        dt = np.dtype(np.float32)
    else:
        dt = np.result_type(start, limit, delta)  # NumPy scalars keep their dtype
    count = math.ceil((limit - start) / delta) if delta else 0
    if count > 0:  # the values from start to the last one must fit dt (none wraps)
        check_endpoints(start, start + (count - 1) * delta, as_dtype(dt, "arange"), "arange")
    return _new(lambda xp, d: xp.arange(start, limit, delta, dtype=d), dt)


def linspace(start: float, stop: float, num: int, dtype: Any = "float32") -> Tensor:
    """``num`` evenly spaced values from ``start`` to ``stop``, both included.

    >>> import engine as eg
    >>> eg.linspace(0.0, 1.0, 3).numpy()
    array([0. , 0.5, 1. ], dtype=float32)
    """
    check_endpoints(start, stop, as_dtype(dtype, "linspace"), "linspace")  # no value wraps
    return _new(lambda xp, dt: xp.linspace(start, stop, int(num), dtype=dt), dtype)
