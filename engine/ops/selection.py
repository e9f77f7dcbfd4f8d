"""Choosing between values: `where` and `clip`.

>>> import engine as eg
>>> x = eg.constant([-2.0, 0.5, 3.0])
>>> eg.where(x > 0, x, 0.0).numpy(), eg.clip(x, -1.0, 1.0).numpy()
(array([0. , 0.5, 3. ], dtype=float32), array([-1. ,  0.5,  1. ], dtype=float32))
"""

from __future__ import annotations

from typing import Any

from ..creation import zeros_like
from ..primitive import Primitive, weak_like
from ..tensor import Tensor, constant


def _zero(g):
    return zeros_like(g)


_where = Primitive(
    "where", lambda xp, c, a, b: xp.where(c, a, b),
    vjps=[lambda g, y, c, a, b: None,
          lambda g, y, c, a, b: where(c, g, _zero(g)),
          lambda g, y, c, a, b: where(c, _zero(g), g)],
    needs=("c",), inputs=("c", "a", "b"), elementwise=True, same_dtype=False,
    rule="∂c = none (a condition), ∂a = g where c, else 0; ∂b = g where not c, else 0",
)


def where(condition: Any, x: Any, y: Any) -> Tensor:
    """``x`` where ``condition`` is True, else ``y`` (all three broadcast).

    The condition gets no gradient; ``x`` gets the gradient where the condition holds, ``y`` elsewhere.

    >>> import engine as eg
    >>> eg.where([True, False], [1.0, 2.0], 0.0).numpy()
    array([1., 0.], dtype=float32)
    """
    cond = condition if isinstance(condition, Tensor) else constant(condition)
    if cond.dtype.kind != "b":
        raise TypeError(f"where: the condition must be a bool tensor, got {cond.dtype}. "
                        "Compare first, e.g. eg.where(x > 0, ...).")
    x, y = _pair(x, y)
    if x.dtype != y.dtype:
        raise TypeError(f"where: x and y have different dtypes ({x.dtype}, {y.dtype}); "
                        f"convert one with eg.cast(y, '{x.dtype}').")
    return _where(cond, x, y)


def _pair(x: Any, y: Any) -> tuple[Tensor, Tensor]:
    """Two operands as tensors, a Python/NumPy one taking the other's dtype and device."""
    if isinstance(x, Tensor) and not isinstance(y, Tensor):
        return x, weak_like(y, x, "where")
    if isinstance(y, Tensor) and not isinstance(x, Tensor):
        return weak_like(x, y, "where"), y
    if not isinstance(x, Tensor):
        return constant(x), constant(y)
    return x, y


clip = Primitive(
    "clip", lambda xp, x, lo, hi: xp.minimum(xp.maximum(x, lo), hi),
    vjps=[lambda g, y, x, lo, hi: where((x >= lo) & (x <= hi), g, _zero(g)),
          lambda g, y, x, lo, hi: where(x < lo, g, _zero(g)),
          lambda g, y, x, lo, hi: where(x > hi, g, _zero(g))],
    needs=("x", "lo", "hi"), inputs=("x", "lo", "hi"), elementwise=True, numeric=True, ordered=True,
    rule="∂x = g where lo ≤ x ≤ hi, else 0; ∂lo = g where x < lo, else 0; ∂hi = g where x > hi, else 0",
    doc="Limit x to [lo, hi]; NaN stays NaN. Gradient to x is 1 inside the bounds (inclusive), 0 outside; "
        "the bounds get the gradient where they were active (TensorFlow's ClipByValue rule).",
    example=('eg.clip([-2.0, 0.5, 3.0], -1.0, 1.0).numpy()', 'array([-1. ,  0.5,  1. ], dtype=float32)'),
)
