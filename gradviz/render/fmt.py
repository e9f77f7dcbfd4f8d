"""Numbers and arrays as short text for labels, as full text for tooltips and panels, and as table
cells (`cell`, `exact`): gradviz's one place that turns numbers into text.

NaN and inf are always shown as such: nothing is rounded into a plausible number.

>>> import numpy as np
>>> short(np.float32(2.0)), short(np.array([1.0, 2.5, 3.0])), short(np.arange(10.0))
('2.0', '[1.0, 2.5, 3.0]', '[0.0 … 9.0]')
>>> short(np.array([1.0, np.nan, 2.0, 3.0, 4.0]))
'[1.0 … 4.0] NaN!'
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from engine.interop import to_numpy

__all__ = ["number", "short", "full", "shape_text", "norm", "cell", "exact"]


def number(v: Any, digits: int = 4) -> str:
    """One number, compactly: 2.0, 0.6667, -1.2e-05, 3, True, nan, inf."""
    if isinstance(v, bool | np.bool_):
        return str(bool(v))
    if isinstance(v, int | np.integer):
        return str(int(v))
    if isinstance(v, complex | np.complexfloating):
        return f"{v.real:.{digits}g}{v.imag:+.{digits}g}j"
    v = float(v)
    if not np.isfinite(v):
        return "nan" if np.isnan(v) else ("inf" if v > 0 else "-inf")
    if v == int(v) and abs(v) < 1e6:
        return f"{v:.1f}"
    return f"{v:.{digits}g}"


def short(a: Any, max_items: int = 4) -> str:
    """A value for a node label: the number, a short list, or a [min … max] range for large arrays."""
    a = to_numpy(a)
    if a.size == 1:
        return number(a.reshape(-1)[0])
    if a.size == 0:
        return "[]"
    if a.size <= max_items:
        return _nested(a)
    if a.dtype.kind in "fciu":
        finite = a[np.isfinite(a)] if a.dtype.kind in "fc" else a
        if a.dtype.kind == "c":
            finite = np.abs(finite)
        text = f"[{number(finite.min(), 3)} … {number(finite.max(), 3)}]" if finite.size else "[]"
        if a.dtype.kind in "fc":
            if np.isnan(a).any():
                text += " NaN!"
            if np.isinf(a).any():
                text += " inf!"
        return text
    if a.dtype.kind == "b":
        return f"{int(a.sum())} of {a.size} True"
    return f"<{a.dtype}>"


def _nested(a: np.ndarray) -> str:
    if a.ndim == 0:
        return number(a.item())
    if a.ndim == 1:
        return "[" + ", ".join(number(x, digits=3) for x in a) + "]"
    return "[" + ", ".join(_nested(x) for x in a) + "]"


def full(a: Any, threshold: int = 400) -> str:
    """The whole value (up to ``threshold`` elements, then NumPy's summary), for tooltips and panels."""
    a = to_numpy(a)
    if a.ndim == 0:
        return number(a.item())
    return np.array2string(
        a, threshold=threshold, edgeitems=4, precision=6, max_line_width=88, separator=", "
    )


def shape_text(shape: tuple[int, ...]) -> str:
    """(3,) and (2, 3) as Python writes them; () for a scalar."""
    return str(tuple(shape))


def norm(a: Any) -> float:
    """The L2 norm of an array (nan when it holds a NaN)."""
    a = to_numpy(a)
    a = np.abs(a) if a.dtype.kind == "c" else a.astype(np.float64)
    return float(np.sqrt(np.sum(np.square(a))))


def cell(x: Any, digits: int = 4) -> str:
    """A number for a table cell: short, NaN/inf spelled out, arrays element-wise (the first six).

    >>> cell(2.0), cell(1 / 3), cell(1e-5), cell(np.array([1.0, np.nan]))
    ('2', '0.3333', '1.000e-05', '[1, nan]')
    """
    array = to_numpy(x)
    if array.ndim > 0:
        items = [cell(v, digits) for v in array.ravel()[:6]]
        more = ", …" if array.size > 6 else ""
        return "[" + ", ".join(items) + more + "]"
    v = float(array)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if v == 0:
        return "0"
    if 1e-3 <= abs(v) < 1e5:
        return f"{v:.{digits}g}"
    return f"{v:.{max(digits - 1, 1)}e}"


def exact(x: Any) -> str:
    """The shortest text that identifies the value in its own dtype (float32 9.1 → "9.1", not
    9.1000004): what a trace table shows, digit for digit what the engine computed.

    >>> exact(np.float32(9.1)), exact(np.float64(0.1) + 0.2), exact(np.float32(3e-9))
    ('9.1', '0.30000000000000004', '3e-09')
    """
    array = to_numpy(x)
    if array.ndim > 0:
        more = ", …" if array.size > 6 else ""
        return "[" + ", ".join(exact(v) for v in array.ravel()[:6]) + more + "]"
    if array.dtype.kind == "f":
        value = array.reshape(())[()]
        if not np.isfinite(value):
            return str(value)
        return np.format_float_positional(value, unique=True, trim="-") if 1e-4 <= abs(value) < 1e8 or \
            value == 0 else np.format_float_scientific(value, unique=True, trim="-")
    return str(array.reshape(())[()])
