"""Changing shape and dtype without changing values: reshape, transpose, squeeze, expand_dims,
concat, stack, broadcast_to, cast.

>>> import engine as eg
>>> eg.reshape(eg.arange(6), (2, 3)).shape, eg.stack([eg.ones(2), eg.zeros(2)]).shape
((2, 3), (2, 2))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import checks
from ..dtypes import check_cast_range, to_array
from ..primitive import Primitive
from ..tensor import Tensor, as_dtype, constant, convert_to_tensor, is_floating


def _back_to_shape(g, y, x, **params):
    return reshape(g, x.shape)


_BACK = "∂x = g reshaped back to x's shape"
_reshape = Primitive("reshape", lambda xp, x, shape: xp.reshape(x, shape), vjps=[_back_to_shape],
                     needs=(), rule=_BACK)


def reshape(x: Any, shape: Sequence[int]) -> Tensor:
    """The same values in a new shape (one entry may be -1: inferred).

    >>> import engine as eg
    >>> eg.reshape(eg.arange(6), (2, -1)).shape
    (2, 3)
    """
    x = convert_to_tensor(x)
    sizes = shape.numpy().tolist() if isinstance(shape, Tensor) else shape
    sizes = sizes if isinstance(sizes, list | tuple) else (sizes,)
    shape = tuple(checks.integer(n, "each size in shape", "reshape") for n in sizes)
    if any(n < -1 for n in shape):
        raise ValueError(f"reshape: shape {shape} has a negative size; only -1 (inferred) is allowed.")
    known = 1
    for n in shape:
        known *= n if n != -1 else 1
    if shape.count(-1) > 1 or (shape.count(-1) == 0 and known != x.size) or \
            (shape.count(-1) == 1 and (known == 0 or x.size % known)):
        raise ValueError(f"reshape: cannot reshape a tensor of shape {x.shape} ({x.size} elements) "
                         f"into shape {shape}.")
    if shape == x.shape:
        return x
    return _reshape(x, shape=shape)


_transpose = Primitive(
    "transpose", lambda xp, x, perm: xp.transpose(x, perm),
    vjps=[lambda g, y, x, perm: _transpose(g, perm=_inverse(perm))],
    needs=(), rule="∂x = g transposed back (the inverse permutation)",
)


def _inverse(perm: tuple[int, ...]) -> tuple[int, ...]:
    """The permutation that undoes ``perm``: axis ``perm[i]`` goes back to position ``i``."""
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    return tuple(inverse)


def transpose(x: Any, perm: Sequence[int] | None = None) -> Tensor:
    """Permute the axes: output axis i is input axis ``perm[i]`` (default: reversed).

    >>> import engine as eg
    >>> eg.transpose(eg.ones((2, 3))).shape
    (3, 2)
    """
    x = convert_to_tensor(x)
    perm = tuple(range(x.ndim))[::-1] if perm is None else tuple(checks.axis(p, x.ndim, "transpose")
                                                                 for p in perm)
    if sorted(perm) != list(range(x.ndim)):
        raise ValueError(f"transpose: perm {perm} is not a permutation of the {x.ndim} axes of {x.shape}.")
    return _transpose(x, perm=perm)


_squeeze = Primitive("squeeze", lambda xp, x, axis: xp.squeeze(x, axis=axis), vjps=[_back_to_shape],
                     needs=(), rule=_BACK)


def squeeze(x: Any, axis: int | Sequence[int] | None = None) -> Tensor:
    """Drop axes of size 1 (all of them, or those in ``axis``).

    >>> import engine as eg
    >>> eg.squeeze(eg.ones((1, 2, 1))).shape
    (2,)
    """
    x = convert_to_tensor(x)
    if axis is not None:
        axes = checks.axes(axis, x.ndim, "squeeze")
        bad = [a for a in axes if x.shape[a] != 1]
        if bad:
            raise ValueError(f"squeeze: axis {bad[0]} of shape {x.shape} has size {x.shape[bad[0]]}, not 1.")
        axis = axes
    return _squeeze(x, axis=axis)


_expand_dims = Primitive("expand_dims", lambda xp, x, axis: xp.expand_dims(x, axis), vjps=[_back_to_shape],
                         needs=(), rule=_BACK)


def expand_dims(x: Any, axis: int) -> Tensor:
    """Insert an axis of size 1 at position ``axis`` (negative counts from the end of the result).

    >>> import engine as eg
    >>> eg.expand_dims([1.0, 2.0], 0).shape
    (1, 2)
    """
    x = convert_to_tensor(x)
    return _expand_dims(x, axis=checks.axis(axis, x.ndim, "expand_dims", extra=1))


_broadcast_to = Primitive(
    "broadcast_to", lambda xp, x, shape: xp.broadcast_to(x, shape),
    vjps=[lambda g, y, x, shape: g],  # the engine sums the gradient back to x's shape (unbroadcast)
    needs=(), rule="∂x = g summed over the broadcast (copied) axes",
)


def broadcast_to(x: Any, shape: Sequence[int]) -> Tensor:
    """Repeat ``x`` along axes of size 1 (and new leading axes) to reach ``shape``.

    >>> import engine as eg
    >>> eg.broadcast_to([1.0, 2.0], (2, 2)).numpy()
    array([[1., 2.],
           [1., 2.]], dtype=float32)
    """
    x = convert_to_tensor(x)
    shape = checks.shape(shape, "broadcast_to")
    if shape == x.shape:
        return x
    pairs = zip(x.shape[::-1], shape[::-1], strict=False)
    if len(shape) < x.ndim or any(n != m and n != 1 for n, m in pairs):
        raise ValueError(f"broadcast_to: shape {x.shape} cannot be broadcast to {shape}: aligned from the "
                         "right, each size must equal the target's or be 1.")
    return _broadcast_to(x, shape=shape)


def _concat_vjp(i, g, y, *inputs, axis):
    start = 0
    for t in inputs[:i]:
        start += t.shape[axis]
    index = [slice(None)] * g.ndim
    index[axis] = slice(start, start + inputs[i].shape[axis])
    return g[tuple(index)]


_concat = Primitive("concat", lambda xp, *xs, axis: xp.concatenate(xs, axis=axis), vjps=_concat_vjp,
                    inputs=("xs",), needs=(),
                    rule="∂xs[i] = the slice of g where xs[i] was placed along axis",
                    op_type="ConcatV2")


def concat(values: Sequence[Any], axis: int = 0) -> Tensor:
    """Join tensors along an existing axis; their other axes must match.

    >>> import engine as eg
    >>> eg.concat([[1.0], [2.0, 3.0]], axis=0).numpy()
    array([1., 2., 3.], dtype=float32)
    """
    values = [convert_to_tensor(v) for v in values]
    if not values:
        raise ValueError("concat: needs at least one tensor.")
    ndim = values[0].ndim
    if ndim == 0:
        raise ValueError("concat: cannot join scalars along an axis; use eg.stack.")
    axis = checks.axis(axis, ndim, "concat")
    for v in values:
        if v.ndim != ndim or v.shape[:axis] + v.shape[axis + 1:] != values[0].shape[:axis] + \
                values[0].shape[axis + 1:]:
            raise ValueError(
                f"concat: shapes {[t.shape for t in values]} differ outside axis {axis}; "
                "all other axes must have the same size."
            )
    if len(values) == 1:
        return values[0]
    return _concat(*values, axis=axis)


def stack(values: Sequence[Any], axis: int = 0) -> Tensor:
    """Join tensors of one shape along a new axis.

    >>> import engine as eg
    >>> eg.stack([[1.0, 2.0], [3.0, 4.0]], axis=1).numpy()
    array([[1., 3.],
           [2., 4.]], dtype=float32)
    """
    values = [convert_to_tensor(v) for v in values]
    if not values:
        raise ValueError("stack: needs at least one tensor.")
    shapes = {v.shape for v in values}
    if len(shapes) > 1:
        raise ValueError(f"stack: all tensors need the same shape, got {[v.shape for v in values]}.")
    axis = checks.axis(axis, values[0].ndim, "stack", extra=1)
    return concat([expand_dims(v, axis) for v in values], axis=axis)


_cast = Primitive(
    "cast", lambda xp, x, dtype: (x.real if x.dtype.kind == "c" and dtype.kind != "c" else x).astype(dtype),
    vjps=[lambda g, y, x, dtype: cast(g, x.dtype) if is_floating(x.dtype) else None],
    needs=(), rule="∂x = g cast back to x's dtype (none when x is not floating)",
    elementwise=True, same_dtype=False,
)


def cast(x: Any, dtype: Any) -> Tensor:
    """The values converted to ``dtype`` (float → int truncates toward zero, as in TensorFlow).

    Differentiable between floating dtypes; casting to an integer type cuts the gradient (None).
    Complex to real keeps the real part (as TensorFlow). A Python or NumPy value (not a tensor) must
    fit the integer dtype once truncated: ``cast(2**40, 'int32')`` is an OverflowError, not a wrapped
    number (a tensor's out-of-range values are cast as NumPy does, as TensorFlow leaves them undefined).

    >>> import engine as eg
    >>> eg.cast([1.7, -1.7], 'int32').numpy()
    array([ 1, -1], dtype=int32)
    """
    dtype = as_dtype(dtype, "cast")
    if not isinstance(x, Tensor):
        x = constant(to_array(x, "cast"))  # (errors name cast; the values are checked just below)
        check_cast_range(x._data, dtype, "cast")
    if dtype == x.dtype:
        return x
    return _cast(x, dtype=dtype)
