"""Argument checks shared by every op: ``axis``, ``shape`` and counts, checked before any array work,
so a bad argument is a TypeError or ValueError that names the op the user called (never NumPy's
"'float' object is not iterable", nor an inner op's name).

>>> axes(-1, 2, "sum")
(1,)
>>> axes(1.0, 2, "sum")
Traceback (most recent call last):
...
TypeError: sum: axis must be an int or a tuple of ints, got float 1.0.
"""

from __future__ import annotations

import operator
from typing import Any

__all__ = ["integer", "axis", "axes", "shape", "count", "floating", "seed"]


def integer(value: Any, what: str, op: str) -> int:
    """``value`` as an int: Python and NumPy ints, and integer 0-d tensors; not bools, floats or strings.

    >>> integer(3, "num", "linspace")
    3
    """
    if isinstance(value, bool) or not _is_int(value):
        raise TypeError(f"{op}: {what} must be an int, got {type(value).__name__} {value!r:.40}.")
    return operator.index(value)


def axis(value: Any, ndim: int, op: str, *, extra: int = 0) -> int:
    """One axis, in ``[-ndim - extra, ndim + extra)``, normalised to ``0 … ndim + extra - 1``.
    ``extra=1`` is for ops that insert an axis (``expand_dims``, ``stack``).

    >>> axis(-1, 3, "softmax")
    2
    """
    if isinstance(value, bool) or not _is_int(value):
        raise TypeError(f"{op}: axis must be an int, got {type(value).__name__} {value!r:.40}.")
    a, n = operator.index(value), ndim + extra
    if not -n <= a < n:
        what = "a scalar (0-d) tensor, which has no axes" if ndim == 0 and not extra else \
            f"a tensor with {ndim} dimensions" + (" (the result has one more)" if extra else "")
        raise ValueError(f"{op}: axis {a} is out of range for {what}; valid: {-n} … {n - 1}.")
    return a % n


def axes(value: Any, ndim: int, op: str) -> tuple[int, ...] | None:
    """None (all axes), an int or a tuple/list of ints, normalised, sorted, each checked once.

    >>> axes((0, -1), 3, "mean"), axes(None, 3, "mean")
    ((0, 2), None)
    """
    if value is None:
        return None
    if isinstance(value, list | tuple):
        items = list(value)
    elif _is_int(value) and not isinstance(value, bool):
        items = [value]
    else:
        raise TypeError(f"{op}: axis must be an int or a tuple of ints, got {type(value).__name__} "
                        f"{value!r:.40}.")
    out = [axis(a, ndim, op) for a in items]
    if len(set(out)) != len(out):
        raise ValueError(f"{op}: axis {tuple(items)} names an axis twice.")
    return tuple(sorted(out))


def shape(value: Any, op: str, what: str = "shape") -> tuple[int, ...]:
    """A shape: an int or a sequence of ints (a 1-D integer tensor too), each >= 0.

    >>> shape([2, 3], "zeros"), shape(4, "zeros")
    ((2, 3), (4,))
    """
    if hasattr(value, "numpy") and hasattr(value, "dtype"):  # a Tensor of sizes
        value = value.numpy().tolist()
    if hasattr(value, "tolist") and getattr(value, "ndim", 1) <= 1:
        value = value.tolist()
    sizes = [value] if _is_int(value) and not isinstance(value, bool) else value
    if not isinstance(sizes, list | tuple):
        raise TypeError(f"{op}: {what} must be an int or a sequence of ints, got {type(value).__name__} "
                        f"{value!r:.40}.")
    out = []
    for n in sizes:
        if isinstance(n, bool) or not _is_int(n):
            raise TypeError(f"{op}: {what} must hold ints, got {type(n).__name__} {n!r:.40} "
                            f"in {value!r:.60}.")
        if operator.index(n) < 0:
            raise ValueError(f"{op}: {what} {tuple(sizes)} has a negative size ({n}); sizes are >= 0.")
        out.append(operator.index(n))
    return tuple(out)


def count(value: Any, what: str, op: str, minimum: int = 0) -> int:
    """An int >= ``minimum`` (a number of samples, of rows, ...).

    >>> count(5, "num", "linspace")
    5
    """
    n = integer(value, what, op)
    if n < minimum:
        raise ValueError(f"{op}: {what} must be >= {minimum}, got {n}.")
    return n


def floating(dtype: Any, shape: tuple[int, ...], op: str) -> None:
    """Refuse a non-floating tensor (by its ``dtype`` and ``shape``) where only floats make sense.

    >>> import numpy as np
    >>> floating(np.dtype("int32"), (2,), "exp")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: exp: expected a floating-point tensor, got int32 (shape (2,)). Convert first: ...
    """
    if dtype.kind not in "fc":
        raise TypeError(f"{op}: expected a floating-point tensor, got {dtype} (shape {shape}). "
                        "Convert first: eg.cast(x, 'float32').")


def seed(value: Any, op: str) -> None:
    """Refuse a seed that is neither None nor an int (a float, a bool, a string).

    >>> seed(3, "normal"), seed(None, "normal")
    (None, None)
    """
    if value is not None and (isinstance(value, bool) or not _is_int(value)):
        raise TypeError(f"{op}: seed must be an int or None, got {type(value).__name__} {value!r:.40}.")


def _is_int(value: Any) -> bool:
    try:
        operator.index(value)
    except TypeError:
        return False
    kind = getattr(getattr(value, "dtype", None), "kind", "i")
    return kind in "iu"
