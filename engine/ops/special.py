"""Softmax and friends, composed from primitives (their gradients come for free), written to be
stable for large inputs.

Non-finite logits as in PyTorch and TensorFlow: a masked class (``-inf``) gets probability 0 and the
others stay finite, values and gradients; a row with every class masked, a ``+inf`` or a NaN gives
NaN (logsumexp: ``-inf`` for an all ``-inf`` row, ``+inf`` with a ``+inf``).

>>> import engine as eg
>>> eg.softmax(eg.constant([1000.0, 1000.0])).numpy()
array([0.5, 0.5], dtype=float32)
"""

from __future__ import annotations

from typing import Any

from .. import checks
from ..primitive import Primitive
from ..tensor import Tensor, convert_to_tensor
from .elementwise import exp, log
from .reduction import sum
from .shape import reshape, squeeze


def _shift_forward(xp: Any, x: Any, axis: int | tuple[int, ...] | None, finite: bool = True) -> Any:
    """max(x) over ``axis``: logsumexp(x) equals m + log(sum(exp(x - m))) for any constant m, and this
    m keeps exp from overflowing. ``finite``: infinities replaced by 0 (logsumexp: an all -inf row gives
    -inf, a +inf one +inf); else the max itself (softmax, log_softmax: such rows give NaN, as in PyTorch
    and TensorFlow)."""
    m = xp.max(x, axis=axis, keepdims=True) if x.size else xp.zeros((1,) * x.ndim, x.dtype)
    return xp.where(xp.isfinite(m), m, 0).astype(x.dtype) if finite else m


def _floats(x: Any, op: str) -> Tensor:
    """``x`` as a floating tensor, checked here so that errors name ``op`` (not exp or sum inside it)."""
    x = convert_to_tensor(x)
    checks.floating(x.dtype, x.shape, op)
    return x


def _one_axis(x: Tensor, axis: Any, op: str) -> int:
    if x.ndim == 0:
        raise ValueError(f"{op}: needs a tensor with at least one axis, got a scalar (0-d) tensor "
                         f"(the {op} of a single number is trivial). Reshape first: eg.reshape(x, [1]).")
    return checks.axis(axis, x.ndim, op)


# An op without a gradient (a constant for tapes), so that a traced graph computes it from each
# call's input instead of freezing the first call's value (and `apply` runs it on x's device).
_shift = Primitive("logsumexp_shift", _shift_forward, vjps=None,
                   doc="max(x) over axis (kept), infinities replaced by 0: the shift that keeps exp finite.")


def logsumexp(x: Any, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Tensor:
    """log(sum(exp(x))) over ``axis``, without overflow. Gradient: softmax(x).

    >>> import engine as eg
    >>> eg.logsumexp([1000.0, 1000.0]).numpy()
    array(1000.6932, dtype=float32)
    """
    x = _floats(x, "logsumexp")
    axis = checks.axes(axis, x.ndim, "logsumexp")
    m = _shift(x, axis=axis)  # logsumexp(x) = m + log(sum(exp(x - m))) for any constant m
    out = log(sum(exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else squeeze(out, axis=axis) if axis is not None else reshape(out, ())


def log_softmax(x: Any, axis: int = -1) -> Tensor:
    """x - logsumexp(x) along ``axis``: log-probabilities, exact in float32 for large logits.

    Computed as ``z - log(sum(exp(z)))`` with ``z = x - max(x)``: subtracting the max first keeps
    large logits from rounding (``x - logsumexp(x)`` would lose digits at 1e3).

    >>> log_softmax([1000.0, 1000.0]).numpy()
    array([-0.6931472, -0.6931472], dtype=float32)
    """
    x = _floats(x, "log_softmax")
    axis = _one_axis(x, axis, "log_softmax")
    z = x - _shift(x, axis=axis, finite=False)
    return z - log(sum(exp(z), axis=axis, keepdims=True))


def softmax(x: Any, axis: int = -1) -> Tensor:
    """exp(x) / sum(exp(x)) along ``axis``: probabilities that sum to 1, exact in float32 for large
    logits (the max is subtracted first, so exp never overflows).

    >>> softmax([1000.0, 1000.0]).numpy()
    array([0.5, 0.5], dtype=float32)
    """
    x = _floats(x, "softmax")
    axis = _one_axis(x, axis, "softmax")
    e = exp(x - _shift(x, axis=axis, finite=False))
    return e / sum(e, axis=axis, keepdims=True)
