"""Argument checks shared by the public ``gv.*`` entry points: one message shape for a wrong type.

A wrong argument is refused where it comes in, with a `TypeError` that names the call, the argument,
what was expected and what came (never an ``AttributeError`` from deep inside a widget).

>>> expect_callable("gv.descent", "f", 3.0)
Traceback (most recent call last):
...
TypeError: gv.descent: f must be a function, got float 3.0.
>>> expect_numbers("gv.descent", "start", [1.0, 2.0])
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from engine import Tensor, checks, nest
from engine.interop import to_numpy

__all__ = [
    "describe", "wrong_type", "expect_tensor", "expect_tensors", "expect_callable", "expect_numbers",
    "expect_collection", "expect_mapping", "expect_labels", "expect_integer", "expect_number",
]

TENSOR = "an engine Tensor (e.g. the loss computed inside the tape)"
NAMES = "a mapping of names to tensors, e.g. names=locals()"


def describe(value: Any) -> str:
    """A short description of ``value`` for an error message: its type, and the value when short.

    >>> describe(None), describe(3.0), describe("loss"), describe([1, 2])
    ('None', 'float 3.0', "str 'loss'", 'list [1, 2]')
    """
    if value is None:
        return "None"
    kind = type(value).__name__
    shape = getattr(value, "shape", None)
    if shape is not None and not isinstance(value, str | bytes | int | float | complex):
        return f"{kind} of shape {tuple(shape)}"
    text = repr(value)
    return f"{kind} {text}" if len(text) <= 40 else kind


def wrong_type(where: str, what: str, expected: str, value: Any, hint: str = "") -> TypeError:
    """The error for a wrong argument: ``where: what must be expected, got description. hint``."""
    message = f"{where}: {what} must be {expected}, got {describe(value)}."
    return TypeError(f"{message} {hint}" if hint else message)


def _is_tensor(value: Any) -> bool:
    return isinstance(value, Tensor)


def expect_tensor(where: str, what: str, value: Any, hint: str = "", expected: str = TENSOR) -> Any:
    """``value`` itself when it is an engine Tensor, else a `TypeError`."""
    if not _is_tensor(value):
        raise wrong_type(where, what, expected, value, hint)
    return value


def expect_tensors(where: str, what: str, value: Any, hint: str = "",
                   expected: str = "an engine Tensor or a list of them") -> list[Any]:
    """The tensors of ``value`` (a Tensor, or a list / tuple / dict of them, nested), flattened;
    a `TypeError` naming the first item that is not one.

    >>> import engine as eg
    >>> len(expect_tensors("gv.backprop", "sources", {"a": eg.constant(1.0), "b": [eg.constant(2.0)]}))
    2
    """
    if value is None or isinstance(value, str | bytes):
        raise wrong_type(where, what, expected, value, hint)
    flat = nest.flatten(value)
    for item in flat:
        if not _is_tensor(item):
            inner = "" if item is value else f" (one item is {describe(item)})"
            raise wrong_type(where, what, expected, value, (inner.strip(" ") + " " + hint).strip())
    return flat


def expect_callable(where: str, what: str, value: Any, hint: str = "") -> Any:
    """``value`` when it can be called, else a `TypeError`."""
    if not callable(value):
        raise wrong_type(where, what, "a function", value, hint)
    return value


def expect_numbers(where: str, what: str, value: Any, hint: str = "") -> None:
    """Refuse what cannot be a point of numbers: None, text, mappings, functions, or nested lists
    holding them (a number, a list of numbers, an array or a tensor passes)."""
    expected = "a number, a list of numbers, an array or a tensor"
    if _is_tensor(value) or (isinstance(value, np.ndarray | np.generic) and value.dtype.kind in "biufc"):
        return
    if value is None or isinstance(value, str | bytes | Mapping) or callable(value):
        raise wrong_type(where, what, expected, value, hint)

    try:
        kind = to_numpy(value).dtype.kind
    except (TypeError, ValueError):
        kind = "O"
    if kind not in "biufc":
        raise wrong_type(where, what, expected, value, hint)


def expect_collection(where: str, what: str, value: Any, expected: str, hint: str = "") -> list[Any]:
    """The items of ``value`` when it is a list, tuple or other iterable of items (not text, not a
    mapping, not a lone tensor or array), as a list; else a `TypeError` saying what was ``expected``."""
    lone = _is_tensor(value) or isinstance(value, np.ndarray)
    if lone or value is None or isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        raise wrong_type(where, what, expected, value, hint)
    return list(value)


def expect_mapping(where: str, what: str, value: Any, expected: str, hint: str = "") -> Any:
    """``value`` when it is None or a mapping (``names=locals()``), else a `TypeError`."""
    if value is not None and not isinstance(value, Mapping):
        raise wrong_type(where, what, expected, value, hint)
    return value


def expect_labels(where: str, what: str, value: Any, expected: str) -> tuple[str, ...]:
    """``value`` (a list or tuple of strings, not one string) as a tuple, else a `TypeError`.

    >>> expect_labels("gv.graph", "show", ["value", "grad"], "fields")
    ('value', 'grad')
    """
    hint = f"For one, write ({value!r},)." if isinstance(value, str) else ""
    items = expect_collection(where, what, value, expected, hint)
    if not all(isinstance(item, str) for item in items):
        raise wrong_type(where, what, expected, value)
    return tuple(items)


def expect_integer(where: str, what: str, value: Any, expected: str = "an integer") -> int:
    """``value`` as an int (an integer of any kind, or a float with no fraction), else a `TypeError`.

    >>> expect_integer("Recorder.record", "step", 3.0)
    3
    """
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if not isinstance(value, bool):
        try:
            return operator.index(value)
        except TypeError:
            pass
    raise wrong_type(where, what, expected, value)


def expect_number(where: str, what: str, value: Any) -> float:
    """``value`` as a float when it is a number of any kind a notebook computes (Python, a NumPy scalar
    of any width, a 0-d array or tensor: `engine.checks.number`), else a `TypeError` naming ``where``
    and ``what``. NaN and infinities come back as they are, for the caller's own range check.

    >>> import numpy as np
    >>> expect_number("gv.clipping", "threshold", np.float16(0.5))
    0.5
    """
    try:
        return checks.number(value, what, where)
    except ValueError:  # a number, but not finite: the widget says what it needs
        return float(value)
