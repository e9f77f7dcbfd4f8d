"""Argument checks shared by every op: ``axis``, ``shape`` and counts, checked before any array work,
so a bad argument is a TypeError or ValueError that names the op the user called (never NumPy's
"'float' object is not iterable", nor an inner op's name).

Numbers have one conversion, used by every public argument that takes one (layers, nn ops, data,
training, optimizers, random, clipping, gradviz): `integer` / `count` for whole numbers, `number` for
the others, `live_number` where the API reads a Variable when the step runs (learning and dropout
rates). Each takes Python numbers, NumPy scalars of every width (int8 … uint64, float16 … float64) and
0-d arrays and tensors, and refuses bools, strings and non-finite values naming the function and the
argument.

>>> axes(-1, 2, "sum")
(1,)
>>> axes(1.0, 2, "sum")
Traceback (most recent call last):
...
TypeError: sum: axis must be an int or a tuple of ints, got float 1.0.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from . import backend
from . import listeners as _listeners
from .tensor import Tensor

__all__ = ["integer", "axis", "axes", "shape", "count", "number", "live_number", "python_number", "floating",
           "seed"]


def integer(value: Any, what: str, op: str) -> int:
    """``value`` as an int: Python and NumPy ints of every width, 0-d integer arrays and 0-d integer
    tensors; not bools, floats or strings.

    >>> import numpy as np

from . import backend
from . import listeners as _listeners
from .tensor import Tensor
    >>> integer(3, "num", "linspace"), integer(np.uint8(3), "num", "linspace")
    (3, 3)
    """
    if isinstance(value, bool | np.bool_) or not _is_int(value):
        fix = " Pass a whole number, e.g. int(round(x))." if _is_real(value) else ""
        raise TypeError(f"{op}: {what} must be an int, got {_show(value)}.{fix}")
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
    """An int >= ``minimum`` (a number of samples, of units, a batch size...), checked like `integer`.

    >>> import numpy as np

from . import backend
from . import listeners as _listeners
from .tensor import Tensor
    >>> count(5, "num", "linspace"), count(np.int64(16), "units", "Dense", minimum=1)
    (5, 16)
    """
    n = integer(value, what, op)
    if n < minimum:
        raise ValueError(f"{op}: {what} must be >= {minimum}, got {n}.")
    return n


def number(value: Any, what: str, op: str, *, low: float | None = None, high: float | None = None,
           low_open: bool = False, high_open: bool = False) -> float:
    """``value`` as a finite float: a Python int or float, a NumPy integer or floating scalar of any
    width, a 0-d array or a 0-d (one-element) tensor, read now; within ``[low, high]`` (``low_open`` /
    ``high_open``: that end excluded). Bools, strings, complex numbers, NaN and infinities are refused
    with an error naming ``op`` and ``what``. The one conversion for every argument that takes a number.

    >>> import numpy as np

from . import backend
from . import listeners as _listeners
from .tensor import Tensor
    >>> number(np.float16(0.5), "rate", "dropout", low=0, high=1, high_open=True)
    0.5
    >>> number(1.0, "rate", "dropout", low=0, high=1, high_open=True)
    Traceback (most recent call last):
    ...
    ValueError: dropout: rate must be < 1, got 1.0 (valid: a number in [0, 1)).
    """
    raw = value
    if not (type(value) is float or type(value) is int):
        if _is_tensor(value) and value._is_variable:
            raise TypeError(f"{op}: {what} is read once, so a Variable would be frozen at its value now; "
                            "pass a number (float(v)).")
        if _is_tensor(value) and value.size == 1:
            value = _tensor_value(value)
        if isinstance(value, bool | np.bool_) or not _is_real(value):
            raise TypeError(f"{op}: {what} must be a number, got {_show(raw)}. Pass a Python or NumPy "
                            "number, e.g. 0.5.")
    x = float(value)
    if not math.isfinite(x):
        bound = "finite"
    elif low is not None and (x < low or (low_open and x == low)):
        bound = f"{'>' if low_open else '>='} {low:g}"
    elif high is not None and (x > high or (high_open and x == high)):
        bound = f"{'<' if high_open else '<='} {high:g}"
    else:
        return x
    raise ValueError(f"{op}: {what} must be {bound}, got {_show(raw, False)} (valid: "
                     f"{_range(low, high, low_open, high_open)}).")


def python_number(value: Any) -> Any:
    """A NumPy scalar or 0-d array of a number as the Python number it holds (so it adapts to a tensor's
    dtype as ``x * 2`` does, where a hyperparameter meets a tensor); anything else unchanged.

    >>> import numpy as np

from . import backend
from . import listeners as _listeners
from .tensor import Tensor
    >>> python_number(np.float16(0.5)), python_number(np.array(3)), python_number("a")
    (0.5, 3, 'a')
    """
    if isinstance(value, np.generic | np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
        return value.item()
    return value


def live_number(value: Any, what: str, op: str, **bounds: Any) -> Any:
    """A hyperparameter that may be live: a 0-d floating Tensor or Variable is returned as it is (read
    when the step or op runs, so assigning the Variable changes it, in ``eg.function`` graphs too);
    anything else goes through `number`.

    >>> import engine as eg
    >>> v = eg.Variable(0.5)
    >>> live_number(v, "rate", "dropout") is v, live_number(0.25, "rate", "dropout")
    (True, 0.25)
    """
    if _is_tensor(value):
        if value.shape != () or value.dtype.kind not in "f":
            raise TypeError(f"{op}: {what} given as a tensor must be a 0-d floating-point tensor or Variable "
                            f"(read each time it is used), got shape {value.shape} dtype {value.dtype}. "
                            "Make it with eg.Variable(0.5) or pass a number.")
        return value
    return number(value, what, op, **bounds)


def floating(dtype: Any, shape: tuple[int, ...], op: str) -> None:
    """Refuse a non-floating tensor (by its ``dtype`` and ``shape``) where only floats make sense.

    >>> import numpy as np

from . import backend
from . import listeners as _listeners
from .tensor import Tensor
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


def _is_real(value: Any) -> bool:
    """A Python/NumPy int or float scalar, or a 0-d array of one (bools too; the callers refuse them)."""
    if isinstance(value, int | float | np.integer | np.floating):
        return True
    return isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "biuf"


def _is_tensor(value: Any) -> bool:
    return isinstance(value, Tensor)


def _tensor_value(t: Any) -> Any:
    """A one-element tensor's value as a NumPy scalar, read without telling a tape it left (a Variable's
    current value). While ``eg.function`` traces, a graph tensor has no value: `TracingError`."""
    if _listeners.listening:  # a traced tensor has no value yet: TracingError
        _listeners.note_host_read(t, "a number argument", tapes=False)

    return backend.to_host(t._data).reshape(()) if t._data.ndim else backend.to_host(t._data)


def _range(low: float | None, high: float | None, low_open: bool, high_open: bool) -> str:
    if low is None and high is None:
        return "a finite number"
    if high is None:
        return f"a finite number {'>' if low_open else '>='} {low:g}"
    if low is None:
        return f"a finite number {'<' if high_open else '<='} {high:g}"
    return f"a number in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"


def _show(value: Any, kind: bool = True) -> str:
    """``value`` for a message: its type (NumPy's name for a NumPy scalar) and a short repr."""
    text = repr(value)
    text = text if len(text) <= 40 else text[:37] + "..."
    return f"{type(value).__name__} {text}" if kind else text


def _is_int(value: Any) -> bool:
    try:
        operator.index(value)
    except TypeError:
        return False
    kind = getattr(getattr(value, "dtype", None), "kind", "i")
    return kind in "iu"
