"""Sliding windows over NHWC images: the geometry that convolution and pooling share.

- `geometry`: output size and padding per spatial axis, exactly as TensorFlow defines ``SAME`` and
  ``VALID``: ``VALID`` uses only whole windows, ``out = (in - k) // s + 1``; ``SAME`` gives
  ``out = ceil(in / s)`` and pads ``max((out - 1)·s + k - in, 0)`` in total, the odd one extra at
  the bottom / right.
- `windows`: every window as a strided *view* ``(N, OH, OW, KH, KW, C)`` of a padded image (no copy).
- `fold`: the adjoint of `windows`: add per-window values back onto the image (overlaps add up).

>>> geometry(5, 3, 2, "SAME"), geometry(5, 3, 2, "VALID")
((3, 1, 1), (2, 0, 0))
>>> windows(np, np.arange(16.0).reshape(1, 4, 4, 1), (2, 2), (2, 2), (2, 2)).shape
(1, 2, 2, 2, 2, 1)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import checks

__all__ = ["pair", "padding_name", "geometry", "pad", "windows", "fold"]


def pair(value: Any, name: str, op: str) -> tuple[int, int]:
    """``2`` → ``(2, 2)``; ``(2, 3)`` stays; TensorFlow's ``[1, 2, 3, 1]`` → ``(2, 3)``. Python or NumPy
    ints (a 1-D integer array too), each >= 1 (`engine.checks.count`).

    >>> pair(np.int8(2), "strides", "conv2d"), pair([1, 2, 3, 1], "strides", "conv2d")
    ((2, 2), (2, 3))
    """
    if isinstance(value, np.ndarray) and value.ndim == 1:
        value = value.tolist()
    if isinstance(value, list | tuple) and len(value) == 2:
        values: Sequence[Any] = value
    elif isinstance(value, list | tuple) and len(value) == 4 and value[0] == 1 and value[3] == 1:
        values = value[1:3]
    elif isinstance(value, list | tuple):
        raise ValueError(f"{op}: {name} must be an int, a pair (h, w), or [1, h, w, 1]; got {value!r:.60}.")
    else:
        values = (value, value)
    return tuple(checks.count(v, name, op, minimum=1) for v in values)  # type: ignore[return-value]


def padding_name(padding: Any, op: str) -> str:
    name = str(padding).upper()
    if name not in ("SAME", "VALID"):
        raise ValueError(f"{op}: padding must be 'SAME' or 'VALID', got {padding!r}.")
    return name


def geometry(size: int, k: int, s: int, padding: str) -> tuple[int, int, int]:
    """``(out, pad_before, pad_after)`` along one axis of length ``size``."""
    if padding == "VALID":
        return (size - k) // s + 1, 0, 0
    out = -(-size // s)
    total = max((out - 1) * s + k - size, 0)
    return out, total // 2, total - total // 2


def pad(xp: Any, x: Any, ph: tuple[int, int], pw: tuple[int, int], value: Any = 0) -> Any:
    """``x`` (NHWC) padded on the spatial axes; the same array when there is nothing to pad."""
    if ph == (0, 0) and pw == (0, 0):
        return x
    return xp.pad(x, ((0, 0), ph, pw, (0, 0)), constant_values=value)


def windows(xp: Any, xpad: Any, out: tuple[int, int], k: tuple[int, int], s: tuple[int, int]) -> Any:
    """A read-only strided view ``(N, OH, OW, KH, KW, C)``: window (i, j) starts at (i·sh, j·sw)."""
    n, _, _, c = xpad.shape
    sn, sh, sw, sc = xpad.strides
    extra = {"writeable": False} if xp is np else {}  # CuPy's as_strided has no `writeable`
    return xp.lib.stride_tricks.as_strided(
        xpad, shape=(n, out[0], out[1], k[0], k[1], c),
        strides=(sn, sh * s[0], sw * s[1], sh, sw, sc), **extra)


def fold(xp: Any, cols: Any, padded_shape: tuple[int, ...], s: tuple[int, int]) -> Any:
    """Sum per-window values ``cols`` ``(N, OH, OW, KH, KW, C)`` into a zero image of
    ``padded_shape``: the transpose of `windows`. One vectorised add per kernel offset."""
    n, oh, ow, kh, kw, c = cols.shape
    out = xp.zeros(padded_shape, dtype=cols.dtype)
    rows, columns = s[0] * (oh - 1) + 1, s[1] * (ow - 1) + 1
    for i in range(kh):
        for j in range(kw):
            out[:, i:i + rows:s[0], j:j + columns:s[1], :] += cols[:, :, :, i, j, :]
    return out
