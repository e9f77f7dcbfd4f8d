"""Comparisons and logic (bool results, not differentiable), and `stop_gradient`.

>>> import engine as eg
>>> x = eg.constant([1.0, 2.0, 3.0])
>>> ((x > 1.5) & (x < 2.5)).numpy()
array([False,  True, False])
"""

from __future__ import annotations

from typing import Any

from ..primitive import Primitive
from ..tensor import Tensor


def _compare(name: str, fn: str, symbol: str, example: tuple[str, str] | None = None,
             ordered: bool = True) -> Primitive:
    return Primitive(name, lambda xp, a, b: getattr(xp, fn)(a, b),
                     inputs=("a", "b"), symbol=symbol, elementwise=True, example=example, ordered=ordered,
                     doc=f"a {symbol} b elementwise, as a bool tensor. Not differentiable.")


equal = _compare("equal", "equal", "==",
                 example=('eg.equal([1, 2], [1, 3]).numpy()', 'array([ True, False])'), ordered=False)
not_equal = _compare("not_equal", "not_equal", "!=",
                     example=('eg.not_equal([1, 2], [1, 3]).numpy()', 'array([False,  True])'), ordered=False)
less = _compare("less", "less", "<",
                example=('eg.less([1, 2], 2).numpy()', 'array([ True, False])'))
less_equal = _compare("less_equal", "less_equal", "<=",
                      example=('eg.less_equal([1, 2], 2).numpy()', 'array([ True,  True])'))
greater = _compare("greater", "greater", ">",
                   example=('eg.greater([1, 2], 1).numpy()', 'array([False,  True])'))
greater_equal = _compare("greater_equal", "greater_equal", ">=",
                         example=('eg.greater_equal([1, 2], 2).numpy()', 'array([False,  True])'))


def _bool_only(name: str, fn, symbol: str, inputs: tuple[str, ...],
               example: tuple[str, str] | None = None):
    def forward(xp, *args):
        if any(a.dtype.kind != "b" for a in args):
            raise TypeError(
                f"expects bool tensors, got {', '.join(str(a.dtype) for a in args)}; compare first "
                "(e.g. x > 0) or use eg.cast(x, 'bool')"
            )
        return fn(xp, *args)

    return Primitive(name, forward, inputs=inputs, symbol=symbol, elementwise=True, example=example,
                     doc=f"Elementwise {name.split('_')[1]} of bool tensors. Not differentiable.")


logical_and = _bool_only("logical_and", lambda xp, a, b: xp.logical_and(a, b), "∧", ("a", "b"),
                         example=('eg.logical_and([True, True], [True, False]).numpy()',
                                  'array([ True, False])'))
logical_or = _bool_only("logical_or", lambda xp, a, b: xp.logical_or(a, b), "∨", ("a", "b"),
                        example=('eg.logical_or([True, False], [False, False]).numpy()',
                                 'array([ True, False])'))
logical_xor = _bool_only("logical_xor", lambda xp, a, b: xp.logical_xor(a, b), "⊕", ("a", "b"),
                         example=('eg.logical_xor([True, True], [True, False]).numpy()',
                                  'array([False,  True])'))
logical_not = _bool_only("logical_not", lambda xp, a: xp.logical_not(a), "¬", ("a",),
                         example=('eg.logical_not([True, False]).numpy()', 'array([False,  True])'))

_stop_gradient = Primitive("stop_gradient", lambda xp, x: x, elementwise=True,
                           same_dtype=False, doc="x, which tapes see as a constant.")


def stop_gradient(x: Any) -> Tensor:
    """The same value, but tapes see a constant: no gradient flows through it.

    >>> import engine as eg
    >>> x = eg.constant(3.0)
    >>> with eg.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = x * eg.stop_gradient(x)
    >>> float(tape.gradient(y, x))   # d/dx of x·c with c = 3
    3.0
    """
    return _stop_gradient(x)
