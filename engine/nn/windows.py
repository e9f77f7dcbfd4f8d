"""Sliding windows over NHWC images: the geometry that convolution and pooling share.

- `geometry`: output size and padding per spatial axis, exactly as TensorFlow defines ``SAME`` and
  ``VALID``: ``VALID`` uses only whole windows, ``out = (in - k) // s + 1``; ``SAME`` gives
  ``out = ceil(in / s)`` and pads ``max((out - 1)·s + k - in, 0)`` in total, the odd one extra at
  the bottom / right.
- `windows`: every window as a strided *view* ``(N, OH, OW, KH, KW, C)`` of a padded image (no copy).
- `fold`: the adjoint of `windows` (and the padding): add per-window values back onto the image
  (overlaps add up).

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

__all__ = ["pair", "padding_name", "geometry", "pad", "windows", "fold", "inside"]


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
    n, h, w, c = x.shape
    # What xp.pad does, without its general machinery (tens of µs per call on NumPy)
    out = xp.full((n, h + ph[0] + ph[1], w + pw[0] + pw[1], c), value, dtype=x.dtype)
    out[:, ph[0]:ph[0] + h, pw[0]:pw[0] + w, :] = x
    return out


def windows(xp: Any, xpad: Any, out: tuple[int, int], k: tuple[int, int], s: tuple[int, int]) -> Any:
    """A read-only strided view ``(N, OH, OW, KH, KW, C)``: window (i, j) starts at (i·sh, j·sw)."""
    n, _, _, c = xpad.shape
    sn, sh, sw, sc = xpad.strides
    extra = {"writeable": False} if xp is np else {}  # CuPy's as_strided has no `writeable`
    return xp.lib.stride_tricks.as_strided(
        xpad, shape=(n, out[0], out[1], k[0], k[1], c),
        strides=(sn, sh * s[0], sw * s[1], sh, sw, sc), **extra)


def fold(xp: Any, cols: Any, shape: tuple[int, ...] | None, s: tuple[int, int], before: tuple[int, int],
         out: Any = None) -> Any:
    """Sum per-window values ``cols`` ``(N, OH, OW, KH, KW, C)`` into a zero image of ``shape``
    (NHWC, unpadded), or into the image ``out`` in place: the transpose of `windows` over the image
    padded by ``before`` = (top, left). One vectorised add per kernel offset, of the windows' part
    that lies inside the image: what falls on the padding is never added (with SAME padding that is
    much of a small image's work)."""
    n, oh, ow, kh, kw, c = cols.shape
    if out is None:
        out = xp.zeros(shape, dtype=cols.dtype)
    shape = out.shape
    for i in range(kh):
        rows = inside(oh, s[0], i - before[0], shape[1])
        if rows is None:
            continue
        for j in range(kw):
            columns = inside(ow, s[1], j - before[1], shape[2])
            if columns is not None:
                out[:, rows[1], columns[1], :] += cols[:, rows[0], columns[0], i, j, :]
    return out


def inside(count: int, s: int, shift: int, size: int) -> tuple[slice, slice] | None:
    """Windows ``a`` (of ``count``) whose pixel ``a·s + shift`` lies in ``[0, size)``: ``(slice of
    windows, slice of pixels)``, or None when there is none."""
    first, stop = max(0, -(shift // s)), min(count, (size - 1 - shift) // s + 1)  # -(d // s) = ceil(-d / s)
    if stop <= first:
        return None
    return slice(first, stop), slice(first * s + shift, (stop - 1) * s + shift + 1, s)
