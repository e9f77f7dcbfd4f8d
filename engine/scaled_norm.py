"""Overflow-safe L2 norms: ``||t|| = m·||t/m||`` with ``m = max|t|``, what `engine.clipping` is built on.

Squaring 1e20 overflows float32 (``1e20² = inf``): the plain ``sqrt(sum(t*t))`` gives inf, and clipping
by it gives zeros. With ``m = max|t|`` (per slice), ``t/m`` lies in ``[-1, 1]``: its squares neither
overflow nor underflow, so the norm of finite values is finite and correct to a few ulps. ``m`` comes
from `norm_scale`, which tapes see as a constant: the value of ``m·||t/m||`` does not depend on ``m``, so
every derivative is that of ``||t||`` itself, computed from bounded intermediates (finite at 1e20 too).
Values that really are inf or NaN keep them: ``m`` is 1 there, and the sum is inf or NaN as before.

>>> import engine as eg
>>> t = eg.constant([3e20, 4e20])
>>> eg.norm(t).numpy()      # sqrt(sum(t*t)) is inf in float32: 1.6e41 does not fit
array(5.e+20, dtype=float32)
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from . import ops as F
from .primitive import Primitive
from .tensor import Tensor

__all__ = ["norm_scale", "scaled_l2", "global_parts", "real_like", "sum_squares", "safe_sqrt"]


def _norm_scale_forward(xp: Any, x: Any, *floor: Any, axis: tuple[int, ...] | None, keepdims: bool) -> Any:
    shape = tuple(1 if axis is None or i in axis else n for i, n in enumerate(x.shape))
    if x.size == 0 or any(x.shape[i] == 0 for i in (axis if axis is not None else range(x.ndim))):
        m = xp.ones(shape, dtype=x.real.dtype)  # an empty slice: nothing to scale
    elif x.dtype.kind == "c":
        m = xp.max(xp.abs(x), axis=axis, keepdims=True)
    else:  # max|x| without the temporary |x| (NaN propagates through both)
        m = xp.maximum(xp.max(x, axis=axis, keepdims=True), -xp.min(x, axis=axis, keepdims=True))
    if floor:  # a threshold c: m >= c·2/max^(1/4) keeps c/m and its powers finite (tiny x, large c)
        c = xp.abs(floor[0]).astype(m.dtype, copy=False) * _floor_factor(m.dtype)
        if c.size == 1:
            m = xp.maximum(m, c.reshape(()))
        else:  # a threshold per element: the floor of each slice is the largest in it
            m = xp.maximum(m, xp.max(xp.broadcast_to(c, x.shape), axis=axis, keepdims=True))
    m = xp.where(xp.isfinite(m) & (m > 0), m, xp.ones((), dtype=m.dtype))  # 0, inf, NaN: as they are
    if not keepdims:
        m = m.reshape(()) if axis is None else m.reshape(tuple(n for i, n in enumerate(shape)
                                                                if i not in axis))
    return m.astype(x.dtype, copy=False)


@functools.cache
def _floor_factor(dtype: np.dtype) -> Any:
    """With ``m >= c·factor``, ``k = c/m`` stays below ``K = max^(1/4)/2``: a clip's gradients divide by
    ``k²`` (first order) and ``k⁴`` (second order), all finite. Exact: ``k/max(r, k)`` is ``c/max(n, c)``
    for any ``m``; a larger ``m`` only drops values below ``c/K·1e-19`` from ``r``, when ``r << k``."""
    return np.dtype(dtype).type(2 / math.sqrt(math.sqrt(float(np.finfo(dtype).max))))

norm_scale = Primitive(
    "norm_scale", _norm_scale_forward, inputs=("x", "floor"), symbol="max|x|", op_type="NormScale",
    doc="The largest magnitude of ``x`` over ``axis`` (1 where that is 0, inf or NaN; at least "
        "``|floor|``·2/max^(1/4) with a second input ``floor``): the scale an overflow-safe L2 norm "
        "divides by. Not differentiable: tapes see a constant.",
    example=("eg.primitives['norm_scale']([[3.0, -4.0], [0.0, 0.0]], axis=(1,), keepdims=True).numpy()",
             "array([[4.],\n       [1.]], dtype=float32)"),
)


def sum_squares(u: Tensor, axes: Any, keepdims: bool = True) -> Tensor:
    """``sum u²`` over ``axes`` (``u`` real: `scaled_l2` takes the modulus of complex values first)."""
    return F.sum(u * u, axis=axes, keepdims=keepdims)


def scaled_l2(t: Tensor, axes: Any, floor: Tensor | None = None,
              keepdims: bool = True) -> tuple[Tensor, Tensor, Tensor]:
    """``(m, u, r)`` with ``||t|| = m·r`` over ``axes``: ``m`` the scale (a constant), ``u = t/m``
    (``|t|/m`` for complex ``t``, whose norms are real, as in TensorFlow) and ``r = ||u||`` (between 1
    and sqrt(size) for finite, non-zero ``t``; inf or NaN where ``t`` holds one).

    >>> import numpy as np, engine as eg
    >>> m, u, r = scaled_l2(eg.constant(np.array([3e200, -4e200])), None, keepdims=False)
    >>> float(m), u.numpy(), float(r)
    (4e+200, array([ 0.75, -1.  ]), 1.25)
    """
    if t.dtype.kind == "c":  # complex: the norm of the moduli (real, complex64 → float32)
        t = F.abs(t)
    inputs = (t,) if floor is None else (t, floor)
    m = norm_scale(*inputs, axis=axes, keepdims=keepdims)
    u = t / m
    return m, u, safe_sqrt(sum_squares(u, axes, keepdims))


def safe_sqrt(l2sum: Tensor) -> Tensor:
    """sqrt with a finite gradient at 0 (the gradient there is 0, not 0·inf = NaN).

    ``sqrt`` only ever sees positive numbers: where the sum is 0 (or NaN), the sum itself is used.
    """
    positive = l2sum > 0
    safe = F.where(positive, l2sum, F.ones_like(l2sum))
    return F.where(positive, F.sqrt(safe), l2sum)


def real_like(t: Tensor) -> Tensor:
    """A 0-d tensor of ``t``'s real dtype (float32 for complex64) on its device: what thresholds convert to.

    >>> import engine as eg
    >>> real_like(eg.constant([1 + 2j])).dtype
    dtype('float32')
    """
    dev = t._device
    with dev.activate():
        return Tensor._make(dev.xp.zeros((), dtype=np.empty(0, t.dtype).real.dtype), dev)


def global_parts(values: list[Tensor]) -> tuple[Tensor, Tensor]:
    """``(M, R)`` with the global norm ``M·R``: each tensor's norm as ``m_i·r_i`` (`scaled_l2`), then
    ``R = sqrt(sum (m_i/M)²·r_i²)`` with ``M = max m_i``, so no step squares a large number. ``R`` is
    inf or NaN exactly when some value is.

    >>> import engine as eg
    >>> M, R = global_parts([eg.constant([3e20]), eg.constant([[0.0, -4e20]])])
    >>> (M * R).numpy()
    array(5.e+20, dtype=float32)
    """
    parts = [scaled_l2(v, None, keepdims=False)[::2] for v in values]  # (m, r): scalars
    if len(parts) == 1:
        return parts[0]
    ms = F.stack([m for m, _ in parts])
    scale = norm_scale(ms, axis=None, keepdims=False)
    w = (ms / scale) * F.stack([r for _, r in parts])
    return scale, safe_sqrt(F.sum(w * w))
