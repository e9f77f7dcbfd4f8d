"""The arguments of the clipping ops, checked: thresholds (``clip_norm``) and bounds (`engine.clipping`).

A threshold must be finite (and a norm threshold ``>= 0``): a NaN or infinite one would quietly turn the
result into NaN or leave it unclipped. A Python or NumPy threshold is checked on the host before it is
converted (so clipping on a GPU makes no device→host transfer); a tensor threshold is read back.

>>> import engine as eg
>>> _checked_clip_norm(2.0, eg.constant([1.0]), "clip_by_norm").numpy()
array(2., dtype=float32)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import backend, checks
from . import listeners as _listeners
from .listeners import TracingError
from .primitive import weak_like
from .tensor import Tensor


def _like(value: Any, ref: Tensor, op: str, what: str) -> Tensor:
    """``value`` as a tensor on ``ref``'s device with ``ref``'s dtype (TensorFlow's conversion rule).

    A tensor must already have ``ref``'s dtype; a Python/NumPy float cannot go into an int tensor.
    """
    value = checks.python_number(value)  # np.float16(0.5) is a number here, not a float16 array
    if isinstance(value, Tensor):
        if value.dtype != ref.dtype:
            raise TypeError(
                f"{op}: {what} has dtype {value.dtype} but the tensor has dtype {ref.dtype}; they must "
                f"match. Convert one with eg.cast({what}, '{ref.dtype}')."
            )
        if value._device is not ref._device:
            raise ValueError(f"{op}: {what} is on {value.device} but the tensor is on {ref.device}; "
                             f"move it with .to('{ref.device}').")
        return value
    array = np.asarray(value)
    if ref.dtype.kind in "iub" and array.dtype.kind in "fc":
        raise TypeError(
            f"{op}: expected {ref.dtype} for {what}, got {value!r} of type {type(value).__name__} instead "
            f"(the tensor is {ref.dtype}). Use integer bounds, or cast the tensor: eg.cast(t, 'float32')."
        )
    return weak_like(value, ref, op)


def _host(t: Any) -> np.ndarray:
    """A tensor's (or CuPy array's) values on the host, read as engine code reads them: not through
    ``.numpy()``, which would tell a recording tape the value left it (`GradientTape.host_read`)."""
    if isinstance(t, Tensor):
        if _listeners.listening:  # a traced tensor has no value: TracingError
            _listeners.note_host_read(t, "clip_norm", tapes=False)
        t = t._data
    return np.asarray(backend.to_host(t))


def _host_value(value: Any, converted: Tensor | None, dtype: Any) -> np.ndarray | None:
    """What a threshold holds, read on the host: a Python or NumPy value as it converts to ``dtype``,
    without a device round trip; a tensor (or CuPy array) is read back (one transfer on a GPU). None for
    a tensor of a graph that eg.function is tracing: it has no value yet, so it cannot be checked (as in
    TensorFlow, whose clipping checks no threshold)."""
    if isinstance(value, Tensor) or backend.is_device_array(value):
        try:
            return _host(converted if converted is not None else value)
        except TracingError:
            return None
    array = np.asarray(value)
    if array.dtype.kind not in "biufc":
        return array  # not a number: the conversion explains
    with np.errstate(over="ignore", invalid="ignore"):  # 1e39 into float32 is inf: refused as such
        return array.astype(dtype)


def _refuse_non_finite(values: np.ndarray | None, op: str, what: str) -> None:
    if values is not None and values.dtype.kind in "fc" and not np.all(np.isfinite(values)):
        bad = values[~np.isfinite(values)].ravel()[0].item()
        raise ValueError(
            f"{op}: {what} is {bad!r} (as {values.dtype}); it must be finite: a NaN or infinite "
            f"threshold would quietly turn the result into NaN or leave it unclipped. Pass a finite number."
        )


def _checked_clip_norm(clip_norm: Any, ref: Tensor, op: str) -> Tensor:
    """``clip_norm`` as a tensor like ``ref``, refused unless finite and ``>= 0``.

    A Python or NumPy threshold is checked on the host (no device transfer); a tensor on a GPU costs
    one small read-back for the check.
    """
    clip_norm = checks.python_number(clip_norm)
    is_tensor = isinstance(clip_norm, Tensor) or backend.is_device_array(clip_norm)
    if not is_tensor:  # checked before converting (1e39 would become inf in float32, with a warning)
        _check_threshold(_host_value(clip_norm, None, ref.dtype), op)
    c = _like(clip_norm, ref, op, "clip_norm")
    if is_tensor:
        _check_threshold(_host_value(clip_norm, c, ref.dtype), op)
    return c


def _check_threshold(values: np.ndarray | None, op: str) -> None:
    _refuse_non_finite(values, op, "clip_norm")
    if values is not None and values.dtype.kind in "biuf" and np.any(values < 0):
        raise ValueError(f"{op}: clip_norm must be >= 0, got {values[values < 0].ravel()[0].item()!r}.")
