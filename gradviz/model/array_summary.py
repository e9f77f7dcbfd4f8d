"""Summaries of arrays for the side panels: shape, dtype, min / mean / max, a few values, and the
array's text for an "expand", capped so a panel stays small whatever the array's size.

A (8, 28, 28, 1) batch of images is 6,272 numbers: a panel shows its summary and first values, and
"expand" shows the first `EXPAND_LIMIT` values with a note saying how many there are.

>>> import numpy as np
>>> s = summarise_array(np.arange(12.0).reshape(3, 4))
>>> s.shape, s.dtype, s.size, s.min, s.mean, s.max, s.head
((3, 4), 'float64', 12, 0.0, 5.5, 11.0, [0.0, 1.0, 2.0, 3.0, 4.0, 5.0])
>>> s.capped, s.text.splitlines()[0]
(False, '[[ 0.,  1.,  2.,  3.],')
>>> big = summarise_array(np.ones((100, 100), np.float32))
>>> big.capped, len(big.text) < 20 * EXPAND_LIMIT, big.note
(True, True, 'the first 256 of 10,000 values (flattened, row by row)')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["ArraySummary", "summarise_array", "SMALL", "EXPAND_LIMIT", "HEAD"]

SMALL = 16  #: arrays up to this many values are shown whole, with no summary
EXPAND_LIMIT = 256  #: values an "expand" shows at most
HEAD = 6  #: values a summary shows


@dataclass(frozen=True)
class ArraySummary:
    """What a panel shows of an array (see `summarise_array`)."""

    shape: tuple[int, ...]
    dtype: str
    size: int
    min: float | None  # of the finite values (complex: of |z|); None when there is none
    mean: float | None
    max: float | None
    nan: int
    inf: int
    head: list[Any] = field(default_factory=list)  # the first values, flattened
    text: str = ""  # the whole array, or its first EXPAND_LIMIT values (capped)
    capped: bool = False

    @property
    def small(self) -> bool:
        """Shown whole: no summary needed."""
        return self.size <= SMALL

    @property
    def note(self) -> str:
        """What the expanded text holds, in words ("" when it is the whole array)."""
        if not self.capped:
            return ""
        return f"the first {EXPAND_LIMIT:,} of {self.size:,} values (flattened, row by row)"


def summarise_array(a: Any, head: int = HEAD, limit: int = EXPAND_LIMIT) -> ArraySummary:
    """The `ArraySummary` of ``a`` (anything ``np.asarray`` takes)."""
    a = np.asarray(a)
    kind = a.dtype.kind
    values = np.abs(a) if kind == "c" else a
    nan = inf = 0
    lo = mean = hi = None
    if kind in "fc":
        nan = int(np.isnan(a).sum())
        inf = int(np.isinf(a).sum())
        finite = values[np.isfinite(values)]
    elif kind in "iub":
        finite = values.astype(np.float64) if kind == "b" else values
    else:
        finite = np.empty(0)
    if finite.size:
        lo, hi = finite.min().item(), finite.max().item()
        mean = float(np.mean(finite, dtype=np.float64))
    flat = a.reshape(-1)
    capped = a.size > limit
    if capped:
        text = np.array2string(flat[:limit], threshold=limit + 1, precision=5, max_line_width=88,
                               separator=", ")
    elif a.ndim == 0:
        text = str(a.item())
    else:
        text = np.array2string(a, threshold=max(a.size, 1) + 1, precision=5, max_line_width=88,
                               separator=", ")
    return ArraySummary(
        shape=tuple(int(d) for d in a.shape), dtype=str(a.dtype), size=int(a.size), min=lo, mean=mean,
        max=hi, nan=nan, inf=inf, head=[x.item() for x in flat[:head]], text=text, capped=capped,
    )
