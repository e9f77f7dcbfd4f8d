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

from . import backend, checks
from . import ops as F
from .clip_args import _checked_clip_norm, _host_value, _like, _refuse_non_finite
from .scaled_norm import global_parts, norm_scale, real_like, scaled_l2
from .tensor import Tensor, convert_to_tensor

__all__ = ["clip_by_value", "clip_by_norm", "global_norm", "clip_by_global_norm", "norm"]


# ---- helpers ---------------------------------------------------------------------------------------

def _as_tensor(t: Any, op: str) -> Tensor:
    if t is None:
        raise ValueError(f"{op}: got None instead of a tensor.")
    return t if isinstance(t, Tensor) else convert_to_tensor(t)


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
    quietly returns ``clip_value_min`` then), ``min > max`` is a ``ValueError``, and so is a NaN or
    infinite bound (for one-sided clipping use ``eg.minimum`` or ``eg.maximum``).

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
    bounds = [(clip_value_min, "clip_value_min"), (clip_value_max, "clip_value_max")]
    host = {what: _host_value(v, None, t.dtype) for v, what in bounds
            if not (isinstance(v, Tensor) or backend.is_device_array(v))}
    for what, values in host.items():  # before converting: 1e39 would become inf in float32
        _refuse_non_finite(values, op, what)
    hi = _like(clip_value_max, t, op, "clip_value_max")  # max first, as TensorFlow (its Minimum op)
    lo = _like(clip_value_min, t, op, "clip_value_min")
    _no_enlarging(t, (lo, hi), op, "the bounds")
    for (v, what), converted in zip(bounds, (lo, hi)):
        if what not in host:  # a tensor: read back (on a GPU, one small transfer)
            host[what] = _host_value(v, converted, t.dtype)
            _refuse_non_finite(host[what], op, what)
    lo_values, hi_values = host["clip_value_min"], host["clip_value_max"]
    if lo_values is not None and hi_values is not None and np.any(lo_values > hi_values):
        raise ValueError(
            f"{op}: clip_value_min {lo_values.tolist()} is greater than clip_value_max "
            f"{hi_values.tolist()} (somewhere); swap them."
        )
    return F.clip(t, lo, hi)


# ---- clip_by_norm ----------------------------------------------------------------------------------

def clip_by_norm(t: Any, clip_norm: Any, axes: int | Sequence[int] | None = None) -> Tensor:
    """``t * clip_norm / max(l2norm(t), clip_norm)``: unchanged when its L2 norm is at most
    ``clip_norm``, else scaled down to norm ``clip_norm``.

    ``axes``: take the norm over these axes only, so each slice is clipped on its own (``axes=1``
    clips each row of a matrix). The gradient is finite at ``t == 0``. As in TensorFlow,
    ``clip_norm == 0`` gives zeros, and NaN for an all-zero tensor (0/0); inf or NaN entries give NaN.
    Finite values too large to square (1e20 in float32) are clipped correctly: the norm is taken of
    ``t / max|t|``. A negative, NaN or infinite ``clip_norm`` is a ``ValueError``.

    >>> import engine as eg
    >>> eg.clip_by_norm(eg.constant([3.0, 4.0]), 1.0).numpy()
    array([0.6, 0.8], dtype=float32)
    """
    op = "clip_by_norm"
    t = _as_tensor(t, op)
    checks.floating(t.dtype, t.shape, op)
    complex_t = t.dtype.kind == "c"
    c = _checked_clip_norm(clip_norm, real_like(t) if complex_t else t, op)  # complex t: a real bound
    _no_enlarging(t, (c,), op, "clip_norm")
    axes = checks.axes(axes, t.ndim, op)
    # TensorFlow's t·c / max(||t||, c), with ||t|| = m·r and u = t/m (no huge or tiny intermediate):
    # t itself where ||t|| < c, that is r < k = c/m; else u·c / max(r, k) (r >= 1 there, so finite).
    m, u, r = scaled_l2(t, axes, floor=c)
    k = c / m
    with np.errstate(divide="ignore", invalid="ignore"):
        if complex_t:  # one real scale (u is |t|/m), applied to real and imaginary parts alike
            return t * F.cast(k / F.maximum(r, k), t.dtype)
        return F.where(r < k, t, u * (c / F.maximum(r, k)))


# ---- global norm -----------------------------------------------------------------------------------

def global_norm(t_list: Sequence[Any]) -> Tensor:
    """``sqrt(sum of the squares of every element of every tensor)``; ``None`` entries are skipped.

    An empty list (or only ``None``) gives 0.0 (TensorFlow raises there). The gradient is finite at 0.
    Each tensor is scaled by its largest magnitude first, so finite values give a finite norm (unless
    the norm itself exceeds the dtype's range).

    >>> import engine as eg
    >>> float(eg.global_norm([eg.constant([[0.0, 1, 2], [3, 4, 5]]), eg.constant([[-2.0, -4], [2, 4]])]))
    9.746794700622559
    """
    op = "global_norm"
    values = _float_list(t_list, op)
    if not values:
        return F.zeros((), dtype="float32")
    scale, r = global_parts(values)
    return scale * r


def _float_list(t_list: Any, op: str) -> list[Tensor]:
    values = [_as_tensor(t, op) for t in _check_list(t_list, op) if t is not None]
    for v in values:
        checks.floating(v.dtype, v.shape, op)
    dtypes = {v.dtype for v in values}
    if len(dtypes) > 1:
        raise TypeError(
            f"{op}: the tensors have different dtypes ({', '.join(sorted(map(str, dtypes)))}); "
            "cast them to one dtype first."
        )
    return values


def clip_by_global_norm(t_list: Sequence[Any], clip_norm: Any,
                        use_norm: Any = None) -> tuple[list[Tensor | None], Tensor]:
    """Scale every tensor by one factor so that their global norm is at most ``clip_norm``.

    Returns ``(list_clipped, global_norm)`` (the norm before clipping). The scale is TensorFlow's,
    ``clip_norm / max(global_norm, clip_norm)``, computed from the scaled norms (`engine.scaled_norm`),
    so finite values too large to square (1e20 in float32) are clipped correctly; where the norm itself
    exceeds the dtype's range it is returned as inf, and the clipped values are still right. ``None``
    entries pass through; ``use_norm`` replaces the computed norm. As in TensorFlow, an input that is
    inf or NaN (or an inf or NaN ``use_norm``) makes every output NaN (nothing is silently rescaled to a
    finite number). A negative, NaN or infinite ``clip_norm`` is a ``ValueError``.

    >>> import engine as eg
    >>> clipped, n = eg.clip_by_global_norm([eg.constant([6.0, 8.0]), None], 5.0)
    >>> float(n), clipped[0].numpy(), clipped[1]
    (10.0, array([3., 4.], dtype=float32), None)
    """
    op = "clip_by_global_norm"
    items = _check_list(t_list, op)
    if use_norm is None:
        values = _float_list(items, op)
        ref = real_like(values[0]) if values else F.zeros((), dtype="float32")
        c = _checked_clip_norm(clip_norm, ref, op)
        if c.shape != ():
            if c.size != 1:
                raise ValueError(f"{op}: clip_norm must be a scalar, got shape {c.shape}.")
            c = F.reshape(c, ())
        if values:
            m, r = global_parts(values)
            # c / max(norm, c) = k / max(r_c, k) with norm = m_c·r_c, k = c/m_c, m_c = max(m, c·2/max^(1/4))
            m_c = norm_scale(m, c, axis=None, keepdims=False)  # a constant too
            k, r_c = c / m_c, r * (m / m_c)
            with np.errstate(over="ignore", invalid="ignore"):  # a norm beyond the dtype's range is inf
                # + NaN where an input is inf or NaN; a constant for tapes (its gradient is 0, and taking
                # it as +g - g would wipe out the small true gradient in rounding)
                scale = k / F.maximum(r_c, k) + F.stop_gradient(r - r)
                use_norm = m * r
        else:
            scale, use_norm = F.ones((), dtype="float32"), F.zeros((), dtype="float32")
    else:
        use_norm = _as_tensor(use_norm, op)
        checks.floating(use_norm.dtype, use_norm.shape, op)
        c = _checked_clip_norm(clip_norm, use_norm, op)
        with np.errstate(divide="ignore", invalid="ignore"):
            scale_for_finite = c * F.minimum(1.0 / use_norm, 1.0 / c)
            scale = scale_for_finite + F.stop_gradient(use_norm - use_norm)  # NaN for an inf/NaN norm
    clipped: list[Tensor | None] = []
    for t in items:
        if t is None:
            clipped.append(None)
            continue
        t = _as_tensor(t, op)
        checks.floating(t.dtype, t.shape, op)
        clipped.append(t * (scale if scale.dtype == t.dtype else F.cast(scale, t.dtype)))
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

    The Euclidean norm has gradient 0 (not NaN) at ``t == 0``. Euclidean and p-norms divide by the
    largest magnitude before squaring (or raising to ``p``), so finite values give finite norms and
    gradients (``norm([1e20, 1e20])`` is 1.41e20 in float32, not inf).

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
    checks.floating(t.dtype, t.shape, op)

    if ord in ("euclidean", "fro") or (not matrix and ord == 2):
        m, _, r = scaled_l2(t, axes)
        result = m * r
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
    else:  # m·(sum (|t|/m)^p)^(1/p): no overflow either
        a = F.abs(t)
        m = norm_scale(a, axis=axes, keepdims=True)
        result = m * F.pow(F.sum(F.pow(a / m, ord), axis=axes, keepdims=True), 1.0 / ord)
    if keepdims:
        return result
    if axes is None:
        return F.reshape(result, ())
    return F.squeeze(result, axis=axes)
