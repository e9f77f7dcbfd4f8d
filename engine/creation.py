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

from . import backend, checks
from .dtypes import check_endpoints, to_array
from .tensor import Tensor, as_dtype

__all__ = ["zeros", "ones", "zeros_like", "ones_like", "fill", "eye", "arange", "linspace"]


def _shape(shape: Any, op: str = "zeros", what: str = "shape") -> tuple[int, ...]:
    """``shape`` checked (ints >= 0), for the op ``op``: TypeError / ValueError naming it."""
    return checks.shape(shape, op, what)


def numeric_dtype(dtype: Any, op: str) -> np.dtype:
    """``as_dtype(dtype)`` for a dtype tensors support (bool, int, float, complex); errors name ``op``."""
    return as_dtype(dtype, op)


def _new(build, dtype: Any, device: backend.Device | None = None, op: str = "zeros") -> Tensor:
    dev = device or backend.current_device()
    dt = numeric_dtype(dtype, op)
    with dev.activate():
        return Tensor._make(build(dev.xp, dt), dev)


def zeros(shape: int | Sequence[int], dtype: Any = "float32") -> Tensor:
    """A tensor of zeros.

    >>> import engine as eg
    >>> eg.zeros((2,), dtype='int32').numpy()
    array([0, 0], dtype=int32)
    """
    shape = _shape(shape, "zeros")
    return _new(lambda xp, dt: xp.zeros(shape, dtype=dt), dtype, op="zeros")


def ones(shape: int | Sequence[int], dtype: Any = "float32") -> Tensor:
    """A tensor of ones.

    >>> import engine as eg
    >>> eg.ones((2,)).numpy()
    array([1., 1.], dtype=float32)
    """
    shape = _shape(shape, "ones")
    return _new(lambda xp, dt: xp.ones(shape, dtype=dt), dtype, op="ones")


def fill(dims: int | Sequence[int], value: Any, dtype: Any = None) -> Tensor:
    """A tensor of shape ``dims`` filled with ``value`` (dtype from the value: 1.5 → float32).

    >>> import engine as eg
    >>> eg.fill([2], 7.0).numpy()
    array([7., 7.], dtype=float32)
    """
    dims = _shape(dims, "fill", "dims")
    if isinstance(value, Tensor):
        value = value.numpy()
    array = to_array(value, "fill", None if dtype is None else as_dtype(dtype, "fill"))  # checked: fits
    if array.ndim:
        raise ValueError(f"fill: value must be a scalar, got shape {array.shape}; use eg.broadcast_to "
                         "for an array.")
    return _new(lambda xp, d: xp.full(dims, array, dtype=d), array.dtype, op="fill")


def zeros_like(t: Any, dtype: Any = None) -> Tensor:
    """Zeros with ``t``'s shape, dtype and device.

    >>> import engine as eg
    >>> eg.zeros_like([1.5, 2.5]).numpy()
    array([0., 0.], dtype=float32)
    """
    t = t if isinstance(t, Tensor) else Tensor(to_array(t, "zeros_like"), backend.current_device())
    return _new(lambda xp, dt: xp.zeros(t.shape, dtype=dt), dtype or t.dtype, t._device, op="zeros_like")


def ones_like(t: Any, dtype: Any = None) -> Tensor:
    """Ones with ``t``'s shape, dtype and device.

    >>> import engine as eg
    >>> eg.ones_like([1, 2]).numpy()
    array([1, 1], dtype=int32)
    """
    t = t if isinstance(t, Tensor) else Tensor(to_array(t, "ones_like"), backend.current_device())
    return _new(lambda xp, dt: xp.ones(t.shape, dtype=dt), dtype or t.dtype, t._device, op="ones_like")


def eye(num_rows: int, num_columns: int | None = None, dtype: Any = "float32") -> Tensor:
    """The identity matrix (ones on the diagonal).

    >>> import engine as eg
    >>> eg.eye(2).numpy()
    array([[1., 0.],
           [0., 1.]], dtype=float32)
    """
    rows = checks.count(num_rows, "num_rows", "eye")
    cols = rows if num_columns is None else checks.count(num_columns, "num_columns", "eye")
    return _new(lambda xp, dt: xp.eye(rows, cols, dtype=dt), dtype, op="eye")


def arange(start: Any, limit: Any = None, delta: Any = 1, dtype: Any = None) -> Tensor:
    """``start, start + delta, …`` below ``limit`` (``arange(n)`` is ``0 … n-1``), like tf.range.

    >>> import engine as eg
    >>> eg.arange(3).numpy()
    array([0, 1, 2], dtype=int32)
    """
    if limit is None:
        start, limit = 0, start
    for name, v in (("start", start), ("limit", limit), ("delta", delta)):
        if isinstance(v, Tensor):
            raise TypeError(f"arange: {name} must be a Python or NumPy number, got a tensor; use "
                            f"{name}.item().")
        if isinstance(v, bool) or not isinstance(v, int | float | np.integer | np.floating):
            raise TypeError(f"arange: {name} must be a number, got {type(v).__name__} {v!r:.40}.")
        if not np.isfinite(v):
            raise ValueError(f"arange: {name} must be finite, got {v}.")
    if delta == 0:
        raise ValueError("arange: delta (the step) must not be 0.")
    if dtype is not None:
        dt = numeric_dtype(dtype, "arange")
    elif all(isinstance(v, int) for v in (start, limit, delta)):
        dt = np.dtype(np.int32)  # Python ints → int32, as TensorFlow
    elif all(isinstance(v, int | float) for v in (start, limit, delta)):
        dt = np.dtype(np.float32)
    else:
        dt = np.result_type(start, limit, delta)  # NumPy scalars keep their dtype
    count = math.ceil((limit - start) / delta) if delta else 0
    if count > 0:  # the values from start to the last one must fit dt (none wraps)
        check_endpoints(start, start + (count - 1) * delta, as_dtype(dt, "arange"), "arange")
    return _new(lambda xp, d: xp.arange(start, limit, delta, dtype=d), dt, op="arange")


def linspace(start: float, stop: float, num: int, dtype: Any = "float32") -> Tensor:
    """``num`` evenly spaced values from ``start`` to ``stop``, both included.

    >>> import engine as eg
    >>> eg.linspace(0.0, 1.0, 3).numpy()
    array([0. , 0.5, 1. ], dtype=float32)
    """
    num = checks.count(num, "num", "linspace")
    for name, v in (("start", start), ("stop", stop)):
        if isinstance(v, bool) or not isinstance(v, int | float | np.integer | np.floating):
            raise TypeError(f"linspace: {name} must be a number, got {type(v).__name__} {v!r:.40}.")
    check_endpoints(start, stop, as_dtype(dtype, "linspace"), "linspace")  # no value wraps
    return _new(lambda xp, dt: xp.linspace(start, stop, num, dtype=dt), dtype, op="linspace")
