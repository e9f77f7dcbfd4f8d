"""Clipping and norms with TensorFlow's semantics: what gradient clipping is built from.

- `clip_by_value`: every element into ``[min, max]``.
- `clip_by_norm`: rescale a tensor whose L2 norm exceeds ``clip_norm`` (per slice with ``axes``).
- `global_norm` / `clip_by_global_norm`: one norm over a whole list of tensors, one common scale.
- `norm`: vector and matrix norms (``ord`` = "euclidean", 1, 2, inf, p > 0; "fro" for matrices).

All of them are built from engine ops, so they are differentiable (to any order).

>>> import engine as eg
>>> clipped, n = eg.clip_by_global_norm([eg.constant([3.0, 4.0])], 1.0)
>>> float(n), clipped[0].numpy()
(5.0, array([0.6, 0.8], dtype=float32))
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import ops as F
from .primitive import weak_like
from .tensor import Tensor, convert_to_tensor, is_floating

__all__ = ["clip_by_value", "clip_by_norm", "global_norm", "clip_by_global_norm", "norm"]


# ---- helpers ---------------------------------------------------------------------------------------

def _as_tensor(t: Any, op: str) -> Tensor:
    if t is None:
        raise ValueError(f"{op}: got None instead of a tensor.")
    return t if isinstance(t, Tensor) else convert_to_tensor(t)


def _require_float(t: Tensor, op: str) -> None:
    if not is_floating(t.dtype):
        raise TypeError(
            f"{op}: expected a floating-point tensor, got {t.dtype} (shape {t.shape}). Norms need float "
            f"or complex values (as in TensorFlow); convert first: eg.cast(t, 'float32')."
        )


def _like(value: Any, ref: Tensor, op: str, what: str) -> Tensor:
    """``value`` as a tensor on ``ref``'s device with ``ref``'s dtype (TensorFlow's conversion rule).

    A tensor must already have ``ref``'s dtype; a Python/NumPy float cannot go into an int tensor.
    """
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


def _no_enlarging(t: Tensor, others: Sequence[Tensor], op: str, names: str) -> None:
    """Bounds may broadcast against ``t`` but must not make the result larger than ``t``."""
    try:
        shape = np.broadcast_shapes(t.shape, *(o.shape for o in others))
    except ValueError:
        shape = None
    if shape != t.shape:
        raise ValueError(
            f"{op}: {names} of shape {', '.join(str(o.shape) for o in others)} would broadcast the "
            f"tensor of shape {t.shape} to a different shape; they must be scalars or broadcast to "
            f"{t.shape} without enlarging it."
        )


def _host(t: Tensor) -> np.ndarray:
    return np.asarray(t.numpy())


def _check_clip_norm(clip_norm: Tensor, op: str) -> None:
    values = _host(clip_norm)
    if np.any(values < 0):
        raise ValueError(f"{op}: clip_norm must be >= 0, got {values.ravel()[0]!r}.")


def _safe_sqrt(l2sum: Tensor) -> Tensor:
    """sqrt with a finite gradient at 0 (the gradient there is 0, not 0·inf = NaN).

    ``sqrt`` only ever sees positive numbers: where the sum is 0 (or NaN), the sum itself is used.
    """
    positive = l2sum > 0
    safe = F.where(positive, l2sum, F.ones_like(l2sum))
    return F.where(positive, F.sqrt(safe), l2sum)


def _squares(t: Tensor) -> Tensor:
    """``|t|²`` elementwise, real: ``t·t`` for real tensors; for complex ones ``|t|·|t|`` (``t·t`` would
    be complex: ``(3+4j)² = -7+24j``, while ``|3+4j|² = 25``). Norms of complex tensors are real, of the
    matching real dtype (complex64 → float32), as in TensorFlow; their gradients are refused (the engine
    computes no gradients through complex values)."""
    if t.dtype.kind == "c":
        m = F.abs(t)
        return m * m
    return t * t


def _real_like(t: Tensor) -> Tensor:
    """A 0-d tensor of ``t``'s real dtype (float32 for complex64) on its device: what bounds convert to."""
    dev = t._device
    with dev.activate():
        return Tensor._make(dev.xp.zeros((), dtype=np.empty(0, t.dtype).real.dtype), dev)


def _check_list(t_list: Any, op: str) -> list[Any]:
    if not isinstance(t_list, list | tuple):
        raise TypeError(
            f"{op}: t_list must be a list or tuple of tensors, got {type(t_list).__name__}. For one "
            f"tensor pass [t] (or use eg.clip_by_norm)."
        )
    return list(t_list)


# ---- clip_by_value ---------------------------------------------------------------------------------

def clip_by_value(t: Any, clip_value_min: Any, clip_value_max: Any) -> Tensor:
    """Each element of ``t`` limited to ``[clip_value_min, clip_value_max]``.

    The bounds may be scalars or tensors that broadcast to ``t``'s shape (never enlarging it) and
    must have ``t``'s dtype: an int tensor with float bounds is a ``TypeError``, as in TensorFlow.
    NaN stays NaN. Gradient: 1 inside the bounds (inclusive), 0 outside. Unlike TensorFlow (which
    quietly returns ``clip_value_min`` then), ``min > max`` is a ``ValueError``.

    >>> import engine as eg
    >>> eg.clip_by_value(eg.constant([-4, -2, 0, 2, 4, 6]), -2, 2).numpy()
    array([-2, -2,  0,  2,  2,  2], dtype=int32)
    """
    op = "clip_by_value"
    t = _as_tensor(t, op)
    if t.dtype.kind == "c":
        raise TypeError(f"{op}: complex numbers have no order (got {t.dtype}); clip the modulus instead: "
                        "eg.clip_by_norm(t, max_norm, axes=...) per element, or clip real and imaginary "
                        "parts as float tensors.")
    hi = _like(clip_value_max, t, op, "clip_value_max")  # max first, as TensorFlow (its Minimum op)
    lo = _like(clip_value_min, t, op, "clip_value_min")
    _no_enlarging(t, (lo, hi), op, "the bounds")
    if np.any(_host(lo) > _host(hi)):
        raise ValueError(
            f"{op}: clip_value_min {_host(lo).tolist()} is greater than clip_value_max "
            f"{_host(hi).tolist()} (somewhere); swap them."
        )
    return F.clip(t, lo, hi)


# ---- clip_by_norm ----------------------------------------------------------------------------------

def clip_by_norm(t: Any, clip_norm: Any, axes: int | Sequence[int] | None = None) -> Tensor:
    """``t * clip_norm / max(l2norm(t), clip_norm)``: unchanged when its L2 norm is at most
    ``clip_norm``, else scaled down to norm ``clip_norm``.

    ``axes``: take the norm over these axes only, so each slice is clipped on its own (``axes=1``
    clips each row of a matrix). The gradient is finite at ``t == 0``. As in TensorFlow,
    ``clip_norm == 0`` gives zeros, and NaN for an all-zero tensor (0/0); inf or NaN entries give NaN.

    >>> import engine as eg
    >>> eg.clip_by_norm(eg.constant([3.0, 4.0]), 1.0).numpy()
    array([0.6, 0.8], dtype=float32)
    """
    op = "clip_by_norm"
    t = _as_tensor(t, op)
    _require_float(t, op)
    complex_t = t.dtype.kind == "c"
    c = _like(clip_norm, _real_like(t) if complex_t else t, op, "clip_norm")  # complex t: a real bound
    _check_clip_norm(c, op)
    _no_enlarging(t, (c,), op, "clip_norm")
    if isinstance(axes, list):
        axes = tuple(axes)
    l2norm = _safe_sqrt(F.sum(_squares(t), axis=axes, keepdims=True))
    with np.errstate(divide="ignore", invalid="ignore"):
        if complex_t:  # one real scale, applied to real and imaginary parts alike
            return t * F.cast(c / F.maximum(l2norm, c), t.dtype)
        return t * c / F.maximum(l2norm, c)


# ---- global norm -----------------------------------------------------------------------------------

def global_norm(t_list: Sequence[Any]) -> Tensor:
    """``sqrt(sum of the squares of every element of every tensor)``; ``None`` entries are skipped.

    An empty list (or only ``None``) gives 0.0 (TensorFlow raises there). The gradient is finite at 0.

    >>> import engine as eg
    >>> float(eg.global_norm([eg.constant([[0.0, 1, 2], [3, 4, 5]]), eg.constant([[-2.0, -4], [2, 4]])]))
    9.746794700622559
    """
    op = "global_norm"
    values = [_as_tensor(t, op) for t in _check_list(t_list, op) if t is not None]
    if not values:
        return F.zeros((), dtype="float32")
    for v in values:
        _require_float(v, op)
    dtypes = {v.dtype for v in values}
    if len(dtypes) > 1:
        raise TypeError(
            f"{op}: the tensors have different dtypes ({', '.join(sorted(map(str, dtypes)))}); "
            "cast them to one dtype first."
        )
    squares = [F.sum(_squares(v)) for v in values]
    total = F.sum(F.stack(squares)) if len(squares) > 1 else squares[0]
    return _safe_sqrt(total)


def clip_by_global_norm(t_list: Sequence[Any], clip_norm: Any,
                        use_norm: Any = None) -> tuple[list[Tensor | None], Tensor]:
    """Scale every tensor by one factor so that their global norm is at most ``clip_norm``.

    Returns ``(list_clipped, global_norm)`` (the norm before clipping). The scale is TensorFlow's:
    ``clip_norm * min(1 / global_norm, 1 / clip_norm)``. ``None`` entries pass through; ``use_norm``
    replaces the computed norm. An inf or NaN norm makes every output NaN (nothing is silently
    rescaled to a finite number).

    >>> import engine as eg
    >>> clipped, n = eg.clip_by_global_norm([eg.constant([6.0, 8.0]), None], 5.0)
    >>> float(n), clipped[0].numpy(), clipped[1]
    (10.0, array([3., 4.], dtype=float32), None)
    """
    op = "clip_by_global_norm"
    items = _check_list(t_list, op)
    if use_norm is None:
        use_norm = global_norm(items)
    else:
        use_norm = _as_tensor(use_norm, op)
        _require_float(use_norm, op)
    c = _like(clip_norm, use_norm, op, "clip_norm")
    _check_clip_norm(c, op)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale_for_finite = c * F.minimum(1.0 / use_norm, 1.0 / c)
        scale = scale_for_finite + (use_norm - use_norm)  # NaN when use_norm is inf or NaN
    clipped: list[Tensor | None] = []
    for t in items:
        if t is None:
            clipped.append(None)
            continue
        t = _as_tensor(t, op)
        _require_float(t, op)
        clipped.append(t * F.cast(scale, t.dtype))
    return clipped, use_norm


# ---- norm ------------------------------------------------------------------------------------------

_VECTOR_ORDS = "'euclidean', 1, 2, inf or any real p > 0"
_MATRIX_ORDS = "'euclidean', 'fro', 1 or inf"


def _is_inf(ord: Any) -> bool:  # noqa: A002
    return not isinstance(ord, str) and isinstance(ord, int | float | np.number) and ord == math.inf


def _axes_for(axis: Any, ndim: int, op: str) -> tuple[tuple[int, ...] | None, bool]:
    """Normalised axes and whether they ask for a matrix norm."""
    if axis is None:
        return None, False
    if isinstance(axis, int | np.integer):
        a = int(axis)
        if not -ndim <= a < ndim:
            raise ValueError(f"{op}: axis {a} is out of range for a tensor with {ndim} dimensions.")
        return (a % ndim,), False
    if isinstance(axis, list | tuple) and len(axis) == 2 and all(isinstance(a, int | np.integer)
                                                                  for a in axis):
        axes = []
        for a in axis:
            if not -ndim <= int(a) < ndim:
                raise ValueError(f"{op}: axis {tuple(axis)} is out of range for a tensor with {ndim} "
                                 "dimensions.")
            axes.append(int(a) % ndim)
        if axes[0] != axes[1]:
            return tuple(axes), True
    raise ValueError(f"{op}: axis must be None, an integer, or a tuple of 2 different integers, got "
                     f"{axis!r}.")


def norm(t: Any, ord: Any = "euclidean", axis: int | Sequence[int] | None = None,  # noqa: A002
         keepdims: bool = False) -> Tensor:
    """The vector or matrix norm of ``t`` (TensorFlow's ``tf.norm``).

    - ``axis=None``: ``t`` is treated as one long vector; an int: vector norms along that axis.
    - vector ``ord``: ``'euclidean'`` (= 2), 1, ``inf`` (max of ``|t|``) or any real ``p > 0``.
    - a 2-tuple ``axis`` asks for a matrix norm: ``'euclidean'``/``'fro'`` (Frobenius), 1 (max column
      sum of ``|t|``), ``inf`` (max row sum). Other combinations are a ``ValueError``.

    The Euclidean norm has gradient 0 (not NaN) at ``t == 0``.

    >>> import numpy as np, engine as eg
    >>> x = eg.constant([[3.0, -4.0], [0.0, 1.0]])
    >>> float(eg.norm(x)), eg.norm(x, ord=np.inf, axis=1).numpy()
    (5.099019527435303, array([4., 1.], dtype=float32))
    """
    op = "norm"
    t = _as_tensor(t, op)
    axes, matrix = _axes_for(axis, t.ndim, op)
    if matrix:
        if not (ord in ("euclidean", "fro") or (not isinstance(ord, str) and (ord == 1 or _is_inf(ord)))):
            extra = " (the spectral norm, ord=2, is not supported)" if ord == 2 else ""
            raise ValueError(f"{op}: ord must be a supported matrix norm ({_MATRIX_ORDS}) with a 2-tuple "
                             f"axis, got {ord!r}{extra}.")
    else:
        if ord == "fro":
            raise ValueError(f"{op}: ord='fro' is a matrix norm; give a 2-tuple axis, or use "
                             "ord='euclidean' for vectors.")
        ok = ord == "euclidean" or (
            not isinstance(ord, str | bool) and isinstance(ord, int | float | np.number)
            and (ord > 0) and not math.isnan(ord))
        if not ok:
            raise ValueError(f"{op}: ord must be a supported vector norm ({_VECTOR_ORDS}), got {ord!r}.")
    _require_float(t, op)

    if ord in ("euclidean", "fro") or (not matrix and ord == 2):
        result = _safe_sqrt(F.sum(_squares(t), axis=axes, keepdims=True))
    elif matrix:
        a0, a1 = axes
        if ord == 1:   # the largest column sum
            result = F.max(F.sum(F.abs(t), axis=a0, keepdims=True), axis=a1, keepdims=True)
        else:          # inf: the largest row sum
            result = F.max(F.sum(F.abs(t), axis=a1, keepdims=True), axis=a0, keepdims=True)
    elif ord == 1:
        result = F.sum(F.abs(t), axis=axes, keepdims=True)
    elif _is_inf(ord):
        result = F.max(F.abs(t), axis=axes, keepdims=True)
    else:
        result = F.pow(F.sum(F.pow(F.abs(t), ord), axis=axes, keepdims=True), 1.0 / ord)
    if keepdims:
        return result
    if axes is None:
        return F.reshape(result, ())
    return F.squeeze(result, axis=axes)
