"""Plain values: answers are read as copies, never through their own methods."""

from __future__ import annotations

from typing import Any

import numpy as np

import engine as eg

_NUMPY_NUMBERS = frozenset(np.dtype(c).type for c in np.typecodes["AllInteger"] + np.typecodes["Float"])


class _NotPlain(Exception):
    """An answer that is not a plain number, array or tensor; the message says what it is."""


#: The engine's tensor classes and their reading, captured at import (a cell may rebind eg.Tensor).
_TENSOR_TYPES = (eg.Tensor, eg.Variable)
_tensor_numpy = eg.Tensor.numpy


def _is_tensor(value: Any) -> bool:
    """Exactly an engine Tensor or Variable (a subclass could answer for itself)."""
    return any(type(value) is kind for kind in _TENSOR_TYPES)


def _kind(value: Any) -> str:
    """What an answer is, for a message: "True/False" or "of type X"."""
    return "True/False" if type(value) in (bool, np.bool_) else f"of type {type(value).__name__}"


def _plain_array(value: Any) -> np.ndarray:
    """A fresh NumPy array of numbers copied from a number, array, tensor or (nested) list/tuple.

    Raises `_NotPlain` for anything else, booleans and subclasses included.
    """
    kind = type(value)
    if kind is int or kind is float or kind in _NUMPY_NUMBERS:
        array = np.array(value)
    elif kind is np.ndarray:
        array = np.array(value, copy=True)
    elif _is_tensor(value):
        array = _tensor_numpy(value)
        if type(array) is not np.ndarray:
            raise _NotPlain("a tensor whose values are not a plain NumPy array")
    elif kind is list or kind is tuple:
        parts = [_plain_array(v) for v in value]
        if any(p.shape != parts[0].shape for p in parts):
            raise _NotPlain("a list whose parts have different shapes")
        array = np.array(parts) if parts else np.zeros(0)
    else:
        raise _NotPlain(_kind(value))
    if array.dtype.kind not in "iuf":
        if array.dtype.kind == "b":
            raise _NotPlain("made of True/False values")
        raise _NotPlain(f"made of values of dtype {array.dtype}")
    return array


def _plain_numbers(value: Any, where: str) -> np.ndarray | str:
    """`_plain_array` of the value, or the sentence saying why it is not a number (``where`` first)."""
    try:
        return _plain_array(value)
    except _NotPlain as exc:
        return f"{where}is {exc}, not a number: give a plain number, a NumPy array or an engine tensor."


def _plain_collection(value: Any, kinds: tuple[type, ...]) -> bool:
    """Exactly one of ``kinds`` (a subclass could lie about its length or parts)."""
    return type(value) in kinds


def _plain_count(value: Any) -> int | None:
    """A plain int for an exact int, NumPy integer, or whole float; None for anything else."""
    if type(value) is int or (type(value) in _NUMPY_NUMBERS and np.dtype(type(value)).kind in "iu"):
        return int(value)
    if (type(value) is float or type(value) in _NUMPY_NUMBERS) and float(value).is_integer():
        return int(float(value))
    return None
