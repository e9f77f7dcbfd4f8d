"""Dtypes and conversions: the one place that decides how a user's value becomes a tensor's array.

- Supported dtypes: bool, int8-64, uint8-64, float16/32/64, complex64/128. Anything else (object,
  strings, datetimes, void, float128) is a TypeError.
- Python values take TensorFlow's defaults (float → float32, int → int32, or int64 when too large,
  complex → complex64); NumPy and CuPy arrays keep their dtype. The array is always a copy: a tensor
  never shares memory with the caller's array, so changing the array later changes nothing.
- Every conversion into another dtype is checked: a value that does not fit (2**40 into int32, -1 into
  uint8, 1.5 into int32, 1e39 into float32, a complex number into a real dtype) is an error that names
  the op, the value, the dtype and its range, never a silently wrapped number.
- Weak types (binary ops such as ``x * 2``): Python numbers and lists adopt the tensor's dtype; NumPy
  arrays and scalars carry their own dtype, so a float64 array beside a float32 tensor is a dtype
  mismatch, exactly as two tensors would be (as in TensorFlow's type promotion guide: only Python
  values are weakly typed). `apply_gradients` uses the same rule.
- Complex numbers: a complex value never joins a real tensor (TypeError; eg.cast to complex64 first),
  and never converts to a real dtype except through `eg.cast` (the real part, as TensorFlow). Ops that
  order values (maximum, <, relu, clip) refuse complex tensors. Norms of complex tensors are real
  (``sqrt(sum |t|²)``). Gradients through a complex input are computed only by holomorphic or linear
  ops (``Primitive.complex_grad``), as ``g·f'(z)`` (the transpose, JAX's convention; TensorFlow returns
  its conjugate); any other op (abs, a complex-to-real cast, ...) raises a TypeError naming it.
- Bool tensors do no arithmetic (add, multiply, sum, ...: TypeError, cast to int32/float32 first);
  logical ops and comparisons work on them. Integer // and % by zero raise ZeroDivisionError.

>>> import engine as eg
>>> eg.constant(2**40, dtype="int32")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
OverflowError: constant: 1099511627776 does not fit in int32 (range -2147483648 to 2147483647). ...
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import backend

__all__ = ["SUPPORTED", "as_dtype", "is_floating", "check_supported", "to_array", "check_castable",
           "weak_array", "check_cast_range"]

SUPPORTED: tuple[np.dtype, ...] = tuple(np.dtype(n) for n in (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128"))
_SUPPORTED = frozenset(SUPPORTED)
_NAMES = ", ".join(str(d) for d in SUPPORTED)
_INT32 = np.iinfo(np.int32)
_FLOAT_MAX = {np.dtype(n): float(np.finfo(n).max) for n in ("float16", "float32", "float64",
                                                             "complex64", "complex128")}


def as_dtype(dtype: Any, op: str = "as_dtype") -> np.dtype:
    """A supported NumPy dtype from a name, a type, or a dtype: ``as_dtype("float32") == np.float32``.

    >>> import engine as eg
    >>> eg.as_dtype('float32') == eg.float32
    True
    """
    if dtype is bool or dtype == "bool":
        return np.dtype(np.bool_)
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{op}: {dtype!r} is not a dtype; use e.g. 'float32', 'float64', 'int32'.") from None
    check_supported(dt, op)
    return dt


def is_floating(dtype: np.dtype) -> bool:
    """True for the dtypes gradients flow through (float16/32/64, complex)."""
    return dtype.kind in "fc"


def check_supported(dtype: np.dtype, op: str, what: str = "dtype") -> None:
    """A TypeError naming ``op`` unless tensors can have ``dtype``."""
    if dtype not in _SUPPORTED:
        raise TypeError(f"{op}: {what} {dtype} is not supported by tensors (not numeric). Supported "
                        f"dtypes: {_NAMES}.")


def _range_text(dtype: np.dtype) -> str:
    if dtype.kind == "b":
        return "False/True, i.e. 0 or 1"
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return f"range {info.min} to {info.max}"
    return f"finite range ±{np.finfo(dtype).max:.4g}"


def _python_array(value: Any, op: str, dtype: np.dtype | None = None) -> np.ndarray:
    """A Python number or (nested) list as a NumPy array, with NumPy's widest types (float64, int64)."""
    try:
        array = np.asarray(value)
    except ValueError as exc:
        if "inhomogeneous" in str(exc) or "sequence" in str(exc):
            raise ValueError(
                f"{op}: the nested list {value!r:.80} is ragged (rows of different lengths); a tensor "
                "needs every row of a dimension to have the same length. Pad the rows, or make one "
                "tensor per row."
            ) from None
        raise ValueError(f"{op}: cannot make a tensor from {value!r:.80}: {exc}") from None
    if array.dtype.kind == "O" and _has_big_int(value):
        if dtype is not None and dtype.kind in "iub":
            raise OverflowError(f"{op}: the Python int in {value!r:.80} does not fit in {dtype} "
                                f"({_range_text(dtype)}).")
        raise OverflowError(f"{op}: the Python int in {value!r:.80} does not fit in int64 (range "
                            f"{np.iinfo(np.int64).min} to {np.iinfo(np.int64).max}) nor uint64; tensors "
                            "cannot hold it. Use a float (e.g. float64) if an approximation will do.")
    if array.dtype.kind not in "biufc":
        raise TypeError(f"{op}: cannot make a tensor from {type(value).__name__} {value!r:.80}: not "
                        f"numeric (NumPy reads it as {array.dtype}). Supported dtypes: {_NAMES}.")
    return array


def _has_big_int(value: Any) -> bool:
    if isinstance(value, int):
        return True
    return isinstance(value, list | tuple) and any(_has_big_int(v) for v in value)


def _copy(array: Any) -> Any:
    """A copy of a NumPy or CuPy array (on its own device): the tensor must not share the caller's."""
    if isinstance(array, np.ndarray | np.generic):
        return np.array(array, copy=True)
    with backend.device_of_array(array).activate():
        return array.copy()


def to_array(value: Any, op: str = "constant", dtype: np.dtype | None = None) -> Any:
    """A user's value as a new array (never the caller's memory), with TensorFlow's default dtypes,
    converted to ``dtype`` when given (checked: values that do not fit are an error).

    NumPy and CuPy arrays keep their dtype (and a CuPy array its GPU). Python floats become float32 and
    ints int32 (int64 when they do not fit), unless ``dtype`` is given: then the values are converted
    to it directly from the Python numbers (0.1 into float64 is exactly float64's 0.1).

    >>> to_array([1, 2]).dtype, to_array(2**40).dtype, to_array(0.1, dtype=np.dtype('float64')).item()
    (dtype('int32'), dtype('int64'), 0.1)
    """
    if isinstance(value, np.ndarray | np.generic) or backend.is_device_array(value):
        check_supported(value.dtype, op, f"the {type(value).__name__}'s dtype")
        array = value
        if dtype is not None and array.dtype != dtype:
            check_castable(array, dtype, op)
            with backend.device_of_array(array).activate():
                return array.astype(dtype)
        return _copy(array)
    array = _python_array(value, op, dtype)
    if dtype is None:
        kind = array.dtype.kind
        if kind == "f" and array.dtype != np.float32:
            return array.astype(np.float32)
        if kind == "i":
            if array.size and (array.max() > _INT32.max or array.min() < _INT32.min):
                return array  # too large for int32: int64 rather than overflow
            return array.astype(np.int32)
        if kind == "u":  # NumPy reads ints from 2**63 to 2**64 - 1 as uint64
            raise OverflowError(
                f"{op}: {value!r:.80} does not fit in int64 (range {np.iinfo(np.int64).min} to "
                f"{np.iinfo(np.int64).max}); pass dtype='uint64' if that is what you mean.")
        if kind == "c" and array.dtype != np.complex64:
            return array.astype(np.complex64)
        return array
    if array.dtype != dtype:
        check_castable(array, dtype, op)
        array = array.astype(dtype)
    return array


def check_castable(array: Any, dtype: np.dtype, op: str) -> None:
    """Raise unless every value of ``array`` is exactly representable in ``dtype`` (up to float rounding).

    Refused: values out of an integer dtype's range (2**40 into int32, -1 into uint8), fractions,
    inf or NaN into an integer dtype, numbers other than 0 and 1 into bool, floats into bool, complex
    numbers into a real dtype, finite numbers that overflow a float dtype (1e39 into float32).

    >>> check_castable(np.array([-1]), np.dtype('uint8'), 'constant')  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    OverflowError: constant: -1 does not fit in uint8 (range 0 to 255). Use a wider dtype, e.g. ...
    """
    check_supported(dtype, op)
    src = array.dtype
    if src == dtype or array.size == 0 or np.can_cast(src, dtype, "safe"):
        return
    kind_from, kind_to = src.kind, dtype.kind
    if kind_from == "c" and kind_to != "c":
        raise TypeError(
            f"{op}: cannot convert complex values ({src}) to {dtype}: the imaginary part would be lost. "
            f"Keep a complex dtype (complex64), or compute with real numbers.")
    if kind_to in "iub" and kind_from == "f" or kind_to == "b":
        host = backend.to_host(array)
        if kind_to == "b" and kind_from == "f":
            bad = host.ravel()[0]
        elif kind_from == "f":
            wrong = ~np.isfinite(host) | (host != np.round(host))
            bad = host[wrong].ravel()[0] if wrong.any() else None
        else:
            bad = None
        if bad is not None:
            raise TypeError(
                f"{op}: cannot convert {src} values to {dtype} without losing them (e.g. {bad!r}). "
                f"Convert explicitly with eg.cast(x, '{dtype}') (which truncates), or keep a float dtype.")
    if kind_to in "iub":
        lo, hi = (0, 1) if kind_to == "b" else (np.iinfo(dtype).min, np.iinfo(dtype).max)
        _check_bounds(array, lo, hi, dtype, op)
    elif kind_from in "iuf" and kind_to in "fc":
        top = _FLOAT_MAX[dtype]
        host = backend.to_host(array)
        finite = host[np.isfinite(host)] if kind_from == "f" else host
        if finite.size and (finite.max() > top or finite.min() < -top):
            bad = (finite.max() if finite.max() > top else finite.min()).item()
            raise OverflowError(f"{op}: {bad!r} overflows {dtype} ({_range_text(dtype)}): it would become "
                                f"inf. Use a wider dtype, e.g. dtype='float64'.")


def _check_bounds(array: Any, lo: int, hi: int, dtype: np.dtype, op: str) -> None:
    with backend.device_of_array(array).activate():
        small, big = array.min(), array.max()  # two scalars back from a GPU, not the whole array
    small, big = backend.to_host(small).item(), backend.to_host(big).item()
    if small < lo or big > hi:
        bad = small if small < lo else big
        wider = "'int64'" if dtype.kind != "b" else "'int32'"
        raise OverflowError(f"{op}: {bad!r} does not fit in {dtype} ({_range_text(dtype)}). Use a wider "
                            f"dtype, e.g. dtype={wider}.")


def check_endpoints(first: Any, last: Any, dtype: np.dtype, op: str) -> None:
    """The first and last values of a sequence (arange, linspace) must fit ``dtype`` (checked like any
    conversion), so that no value of it wraps: ``arange(0, 300, dtype='uint8')`` is an error."""
    values = [v.item() if isinstance(v, np.generic) else v for v in (first, last)]
    array = np.asarray(values)
    if array.dtype.kind in "iuf" and array.dtype != dtype:
        check_castable(array, dtype, op)


def check_cast_range(array: Any, dtype: np.dtype, op: str = "cast") -> None:
    """For `eg.cast` of a user's value: truncation toward zero is allowed (TensorFlow's cast), but the
    truncated value must fit in an integer ``dtype``, and NaN/inf cannot become integers."""
    check_supported(dtype, op)
    if dtype.kind not in "iu" or array.size == 0 or array.dtype.kind not in "iuf":
        return
    if array.dtype.kind == "f":
        host = backend.to_host(array)
        if not np.all(np.isfinite(host)):
            raise ValueError(f"{op}: cannot convert inf or NaN to {dtype} (an integer has no such value).")
        array = np.trunc(host)
    if not np.can_cast(array.dtype, dtype, "safe"):
        info = np.iinfo(dtype)
        _check_bounds(array, info.min, info.max, dtype, op)


def weak_array(value: Any, target: np.dtype, op: str) -> Any:
    """``value`` (not a tensor) as a new array of dtype ``target``, for an op beside a ``target`` tensor.

    Python numbers and lists are weakly typed: they adopt ``target`` if their values fit (checked).
    NumPy and CuPy arrays and NumPy scalars are not: their dtype must be ``target`` already, as for two
    tensors. A bool Python value never joins a numeric tensor, nor a number a bool tensor, and a complex
    number never joins a real tensor (TypeError, as in TensorFlow).

    >>> weak_array(3, np.dtype('float32'), 'multiply')
    array(3., dtype=float32)
    >>> weak_array(np.ones(2), np.dtype('float32'), 'add')  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: add: a NumPy array of dtype float64 cannot be combined with a float32 tensor: ...
    """
    if isinstance(value, np.ndarray | np.generic) or backend.is_device_array(value):
        if value.dtype != target:
            check_supported(value.dtype, op, f"the {type(value).__name__}'s dtype")
            kind = "CuPy array" if backend.is_device_array(value) else (
                "NumPy array" if isinstance(value, np.ndarray) else "NumPy scalar")
            raise TypeError(
                f"{op}: a {kind} of dtype {value.dtype} cannot be combined with a {target} tensor: "
                f"NumPy arrays keep their dtype (only Python numbers and lists adapt to the tensor's). "
                f"Convert it first: np.asarray(value, dtype='{target}'), or "
                f"eg.cast(eg.constant(value), '{target}').")
        return _copy(value)
    array = _python_array(value, op, target)
    kind_from, kind_to = array.dtype.kind, target.kind
    if kind_from == "b" and kind_to != "b":
        raise TypeError(f"{op}: cannot combine the bool value {value!r:.60} with a {target} tensor; "
                        f"use numbers (1, 0), or cast: eg.cast(mask, '{target}').")
    if kind_to == "b" and kind_from != "b":
        raise TypeError(f"{op}: cannot combine the number {value!r:.60} with a bool tensor: bool tensors "
                        "do no arithmetic. Cast the tensor first: eg.cast(x, 'int32') or "
                        "eg.cast(x, 'float32').")
    if kind_from == "c" and kind_to != "c":
        raise TypeError(f"{op}: cannot combine the complex number {value!r:.60} with a {target} tensor: "
                        "the imaginary part would be lost. Cast the tensor first: eg.cast(x, 'complex64').")
    if array.dtype != target:
        check_castable(array, target, op)
        array = array.astype(target)
    return array


def weak_scalar(value: float | int, target: np.dtype, op: str) -> np.ndarray:
    """The hot path of `weak_array`: a Python float or int beside a float or complex tensor."""
    if abs(value) > _FLOAT_MAX[target]:
        check_scalar(value, target, op)
    return np.array(value, dtype=target)


def check_scalar(value: float | int, target: np.dtype, op: str) -> None:
    """A Python float or int must not overflow a float or complex ``target`` (inf itself may go in)."""
    if abs(value) > _FLOAT_MAX[target] and not math.isinf(value):
        raise OverflowError(f"{op}: {value!r:.40} overflows {target} ({_range_text(target)}): it would "
                            f"become inf. Use a wider dtype for the tensor, e.g. eg.cast(x, 'float64').")
