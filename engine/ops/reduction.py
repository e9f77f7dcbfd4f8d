"""Reductions over axes: sum, mean, max, min, prod, argmax, argmin.

``axis`` is None (all axes), an int, or a tuple; ``keepdims`` keeps reduced axes with size 1.

>>> import engine as eg
>>> x = eg.constant([[1.0, 5.0], [5.0, 2.0]])
>>> eg.sum(x, axis=0).numpy(), eg.max(x).numpy()
(array([6., 7.], dtype=float32), array(5., dtype=float32))
"""

from __future__ import annotations

from typing import Any

from .. import checks
from ..creation import ones_like, zeros_like
from ..primitive import Primitive
from ..tensor import Tensor, convert_to_tensor
from .logic import equal
from .selection import where
from .shape import _broadcast_to, _reshape, broadcast_to, cast, reshape


def _axes(axis: Any, ndim: int, op: str) -> tuple[int, ...] | None:
    return checks.axes(axis, ndim, op)


def _kept_shape(shape: tuple[int, ...], axes: tuple[int, ...] | None) -> tuple[int, ...]:
    return tuple(1 if axes is None or i in axes else n for i, n in enumerate(shape))


def _spread(g: Tensor, x: Tensor, axis, keepdims) -> Tensor:
    """Broadcast a reduced gradient back over the reduced axes of ``x``."""
    shape, kept = x.shape, _kept_shape(x.shape, axis)
    if g.shape != kept:
        g = _reshape(g, shape=kept)  # the primitives themselves: these shapes need no checking
    return g if kept == shape else _broadcast_to(g, shape=shape)


def _count(x: Tensor, axis) -> int:
    n = 1
    for i, size in enumerate(x.shape):
        if axis is None or i in axis:
            n *= size
    return n


_sum = Primitive(
    "sum", lambda xp, x, axis, keepdims: xp.sum(x, axis=axis, keepdims=keepdims),
    vjps=[lambda g, y, x, axis, keepdims: _spread(g, x, axis, keepdims)],
    needs=(), rule="∂x = g copied back over the summed axes", numeric=True,
)
_mean = Primitive(
    "mean", lambda xp, x, axis, keepdims: xp.mean(x, axis=axis, keepdims=keepdims),
    vjps=[lambda g, y, x, axis, keepdims: _spread(g, x, axis, keepdims) / _count(x, axis)],
    needs=(), numeric=True,
    rule="∂x = g/n copied back over the reduced axes (n: the number of elements averaged)",
)


def _extremum_vjp(g, y, x, axis, keepdims):
    # Ties share the gradient equally: each of k tied maxima gets g / k.
    hit = cast(equal(x, reshape(y, _kept_shape(x.shape, axis))), g.dtype)
    count = sum(hit, axis=axis, keepdims=True)
    return _spread(g, x, axis, keepdims) * hit / count


_max = Primitive("max", lambda xp, x, axis, keepdims: xp.max(x, axis=axis, keepdims=keepdims),
                 vjps=[_extremum_vjp], ordered=True, needs=("x", "y"),
                 rule="∂x = g/k at each of the k maximal elements (ties split equally), else 0")
_min = Primitive("min", lambda xp, x, axis, keepdims: xp.min(x, axis=axis, keepdims=keepdims),
                 vjps=[_extremum_vjp], ordered=True, needs=("x", "y"),
                 rule="∂x = g/k at each of the k minimal elements (ties split equally), else 0")


def _prod_vjp(g, y, x, axis, keepdims):
    # d prod / d x_i = product of the others. Dividing y by x_i fails at zeros, so count them:
    # no zero → y / x_i; one zero → the product of the non-zeros at that zero, 0 elsewhere; more → 0.
    is_zero = equal(x, 0)
    nonzero = where(is_zero, ones_like(x), x)
    prod_nonzero = reshape(prod(nonzero, axis=axis, keepdims=True), _kept_shape(x.shape, axis))
    zeros = sum(cast(is_zero, x.dtype), axis=axis, keepdims=True)
    local = where(equal(zeros, 0), prod_nonzero / nonzero,
                    where(equal(zeros, 1) & is_zero, broadcast_to(prod_nonzero, x.shape),
                            zeros_like(x)))
    return _spread(g, x, axis, keepdims) * local


_prod = Primitive("prod", lambda xp, x, axis, keepdims: xp.prod(x, axis=axis, keepdims=keepdims),
                  vjps=[_prod_vjp],
                  needs=("x",), rule="∂x = g·(the product of the other elements), exact where x has zeros",
                  numeric=True)


def _reducer(prim: Primitive, doc: str, example: str):
    def reduce(x: Any, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Tensor:
        x = convert_to_tensor(x)
        return prim(x, axis=_axes(axis, x.ndim, prim.name), keepdims=bool(keepdims))

    reduce.__name__ = reduce.__qualname__ = prim.name
    reduce.__doc__ = f"{doc}\n\n>>> import engine as eg\n{example}\n"
    return reduce


sum = _reducer(_sum, "Sum over ``axis`` (None: all). Gradient: the upstream gradient, broadcast back.",  # noqa: A001
               ">>> eg.sum([[1.0, 2.0], [3.0, 4.0]], axis=0).numpy()\narray([4., 6.], dtype=float32)")
mean = _reducer(_mean, "Mean over ``axis``. Gradient: upstream / number of reduced elements.",
                ">>> eg.mean([[1.0, 5.0], [7.0, 2.0]], axis=0).numpy()\narray([4. , 3.5], dtype=float32)")
max = _reducer(_max, "Maximum over ``axis``; NaN propagates. Gradient: to the maximal elements; "  # noqa: A001
               "k tied maxima each get 1/k of it (PyTorch's convention; TensorFlow does the same).",
               ">>> eg.max([[1.0, 5.0], [7.0, 2.0]], axis=1).numpy()\narray([5., 7.], dtype=float32)")
min = _reducer(_min, "Minimum over ``axis``; NaN propagates. Gradient: to the minimal elements; "  # noqa: A001
               "k tied minima each get 1/k of it.",
               ">>> eg.min([[1.0, 5.0], [7.0, 2.0]]).numpy()\narray(1., dtype=float32)")
prod = _reducer(_prod, "Product over ``axis``. Gradient: the product of the other elements (exact "
                "with zeros too). Its second derivative is exact only where x has no zeros.",
                ">>> eg.prod([2.0, 3.0, 4.0]).numpy()\narray(24., dtype=float32)")


def _arg(name, fn):
    prim = Primitive(name, lambda xp, x, axis: getattr(xp, fn)(x, axis=axis).astype("int64"),
                     symbol=name, same_dtype=False, op_type=f"Arg{fn[3:].capitalize()}", ordered=True)

    def arg(x: Any, axis: int | None = None) -> Tensor:
        x = convert_to_tensor(x)
        if axis is not None:
            axis = checks.axis(axis, x.ndim, name)
        return prim(x, axis=axis)

    arg.__name__ = arg.__qualname__ = name
    arg.__doc__ = (f"Index (int64) of the {fn[3:]}imum along ``axis`` (None: of the flattened tensor, "
                   "as NumPy). Not differentiable.\n\n>>> import engine as eg\n"
                   f">>> eg.{name}([1.0, 5.0, 2.0]).numpy()\narray({1 if fn == 'argmax' else 0})\n")
    return arg


argmax = _arg("argmax", "argmax")
argmin = _arg("argmin", "argmin")
