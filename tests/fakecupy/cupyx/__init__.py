"""``cupyx`` of the fake: ``scatter_add``, which (as in CuPy) has no complex version."""

from __future__ import annotations

from typing import Any

import numpy as np
from cupy import _array


def scatter_add(a: Any, slices: Any, value: Any) -> None:
    """``a[slices] += value`` with repeated indices adding up; wraps out-of-range indices like CuPy."""
    if not isinstance(a, _array.ndarray):
        raise TypeError(f"scatter_add: a must be a cupy.ndarray, got {type(a)}")
    target = _array.arg(a)
    v = _array.arg(value)
    if target.dtype.kind == "c" or np.asarray(v).dtype.kind == "c":
        raise TypeError(f"scatter_add does not support the dtype {target.dtype} (complex)")
    np.add.at(target, _array._key(target, slices), v)
