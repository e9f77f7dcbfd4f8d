"""Arithmetic on two tensors, with NumPy broadcasting: forward and gradients side by side.

>>> import engine as eg
>>> eg.constant(17) // 3, eg.constant(17) % 3
(<Tensor shape=() dtype=int32 device=cpu:0 5>, <Tensor shape=() dtype=int32 device=cpu:0 2>)
"""

from __future__ import annotations

from ..creation import ones_like, zeros_like
from ..primitive import Primitive
from .elementwise import log, negative
from .logic import equal
from .selection import where

add = Primitive(
    "add", lambda xp, a, b: a + b,
    vjps=[lambda g, y, a, b: g,
          lambda g, y, a, b: g],
    needs=(),
    inputs=("a", "b"), rule="∂a = g, ∂b = g", symbol="+", elementwise=True, numeric=True,
    doc="a + b, elementwise with broadcasting.",
    example=('eg.add([1.0, 2.0], 10.0).numpy()', 'array([11., 12.], dtype=float32)'),
)

subtract = Primitive(
    "subtract", lambda xp, a, b: a - b,
    vjps=[lambda g, y, a, b: g,
          lambda g, y, a, b: negative(g)],
    needs=(),
    inputs=("a", "b"), rule="∂a = g, ∂b = −g", symbol="−", elementwise=True, numeric=True,
    doc="a - b, elementwise with broadcasting.",
    example=('eg.subtract([5.0, 2.0], 1.0).numpy()', 'array([4., 1.], dtype=float32)'),
    op_type="Sub",
)

multiply = Primitive(
    "multiply", lambda xp, a, b: a * b,
    vjps=[lambda g, y, a, b: g * b,
          lambda g, y, a, b: g * a],
    needs=("a", "b"),
    inputs=("a", "b"), rule="∂a = g·b, ∂b = g·a", symbol="×", elementwise=True, numeric=True,
    doc="a * b, elementwise with broadcasting.",
    example=('eg.multiply([1.0, 2.0], [3.0, 4.0]).numpy()', 'array([3., 8.], dtype=float32)'),
    op_type="Mul",
)

divide = Primitive(
    "divide", lambda xp, a, b: xp.true_divide(a, b),
    vjps=[lambda g, y, a, b: g / b,
          lambda g, y, a, b: negative(g) * a / (b * b)],
    needs=("a", "b"),
    inputs=("a", "b"), rule="∂a = g/b, ∂b = −g·a/b²", symbol="÷", elementwise=True, numeric=True,
    doc="a / b (true division: int / int gives float64, as in NumPy and TensorFlow).",
    example=('eg.divide([1.0, 3.0], 2.0).numpy()', 'array([0.5, 1.5], dtype=float32)'),
    op_type="RealDiv",
)

def _no_int_zero(name: str, b):
    """Integer division by zero has no answer (NumPy would give 0): a ZeroDivisionError, as TensorFlow's
    CPU kernels raise. On a GPU the check is one device→host copy of a single bool per integer
    floordiv/mod (TensorFlow's GPU kernels skip it and return garbage; this engine prefers the error).
    Float division keeps IEEE's inf and NaN."""
    if b.dtype.kind in "iu" and (b == 0).any():
        raise ZeroDivisionError(f"{name}: integer division by zero (the divisor b has {int((b == 0).sum())} "
                                "zero(s)). Integers have no inf: avoid the zeros (eg.where), or divide "
                                "floats: eg.cast(a, 'float32').")


def _floordiv_forward(xp, a, b):
    _no_int_zero("floordiv", b)
    return xp.floor_divide(a, b)


def _mod_forward(xp, a, b):
    _no_int_zero("mod", b)
    return xp.mod(a, b)


floordiv = Primitive(
    "floordiv", _floordiv_forward,
    inputs=("a", "b"), symbol="//", elementwise=True, numeric=True,
    doc="a // b, rounded towards minus infinity. Not differentiable (piecewise constant): gradient None. "
        "Integer division by zero is a ZeroDivisionError (on a GPU the check costs one sync).",
    example=('eg.floordiv([7, -7], 2).numpy()', 'array([ 3, -4], dtype=int32)'),
    op_type="FloorDiv",
)

mod = Primitive(
    "mod", _mod_forward,
    vjps=[lambda g, y, a, b: g,
          lambda g, y, a, b: negative(g) * floordiv(a, b)],
    needs=("a", "b"),
    inputs=("a", "b"), rule="∂a = g, ∂b = −g·floor(a/b)", symbol="%", elementwise=True, numeric=True,
    doc="a % b with the sign of b (Python's and TensorFlow's floor modulo). d/da = 1, d/db = -floor(a/b). "
        "Integer modulo by zero is a ZeroDivisionError (on a GPU the check costs one sync).",
    example=('eg.mod([7, -7], 3).numpy()', 'array([1, 2], dtype=int32)'),
    op_type="FloorMod",
)


def _pow_vjp_base(g, y, a, b):
    return g * b * pow(a, b - 1)


def _pow_vjp_exponent(g, y, a, b):
    # d(a^b)/db = a^b·log(a), taken as 0 where a <= 0 (TensorFlow's convention). The inner `where`
    # keeps log away from a <= 0 so the unused branch cannot put NaN into higher derivatives.
    positive = a > 0
    safe_a = where(positive, a, ones_like(a))
    return g * where(positive, y * log(safe_a), zeros_like(y))


pow = Primitive(  # noqa: A001
    "pow", lambda xp, a, b: xp.power(a, b),
    vjps=[_pow_vjp_base, _pow_vjp_exponent],
    needs=("a", "b", "y"),
    inputs=("a", "b"), rule="∂a = g·b·a^(b−1), ∂b = g·y·ln a where a > 0, else 0 (y = aᵇ)", symbol="pow",
    elementwise=True, numeric=True,
    doc="a ** b. d/da = b·a^(b-1); d/db = a^b·log(a) for a > 0, else 0 (as TensorFlow).",
    example=("eg.pow([2.0, 3.0], 2.0).numpy()", "array([4., 9.], dtype=float32)"),
)


def _tie_split(g, a, b, wins):
    """Gradient to ``a`` of max/min: all of g where a wins, half of g where a and b tie."""
    return where(wins, g, where(equal(a, b), g * 0.5, zeros_like(g)))


maximum = Primitive(
    "maximum", lambda xp, a, b: xp.maximum(a, b),
    vjps=[lambda g, y, a, b: _tie_split(g, a, b, a > b),
          lambda g, y, a, b: _tie_split(g, b, a, b > a)],
    needs=("a", "b"),
    inputs=("a", "b"), rule="∂a = g where a > b, g/2 where a = b (ties split 0.5/0.5), else 0; "
                            "∂b = g where b > a, g/2 where a = b, else 0",
    elementwise=True, numeric=True, ordered=True,
    doc="Elementwise max(a, b); NaN propagates. Where a == b the gradient is split equally.",
    example=('eg.maximum([1.0, 5.0], [3.0, 2.0]).numpy()', 'array([3., 5.], dtype=float32)'),
)

minimum = Primitive(
    "minimum", lambda xp, a, b: xp.minimum(a, b),
    vjps=[lambda g, y, a, b: _tie_split(g, a, b, a < b),
          lambda g, y, a, b: _tie_split(g, b, a, b < a)],
    needs=("a", "b"),
    inputs=("a", "b"), rule="∂a = g where a < b, g/2 where a = b (ties split 0.5/0.5), else 0; "
                            "∂b = g where b < a, g/2 where a = b, else 0",
    elementwise=True, numeric=True, ordered=True,
    doc="Elementwise min(a, b); NaN propagates. Where a == b the gradient is split equally.",
    example=('eg.minimum([1.0, 5.0], [3.0, 2.0]).numpy()', 'array([1., 2.], dtype=float32)'),
)
