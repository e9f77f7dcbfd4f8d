"""How wide a label is, measured with the font that draws it, so that every label fits its box.

Graphviz sizes boxes with its own estimate of Helvetica, but the page draws with whatever font the
browser maps "Helvetica, sans-serif" to, the PNG (`gradviz.render.raster`) with matplotlib's fonts,
and some labels are bold only after layout (`gradviz.render.svg.restyle`). So widths are measured
here, with DejaVu Sans (bundled with matplotlib, the widest of the usual sans fonts: Helvetica,
Arial and Liberation Sans draw the same text narrower), in its bold face for bold text, and the boxes
are sized from them (`to_dot`); the PNG draws with DejaVu Sans itself.

>>> round(text_width("dense_1/kernel", 11), 1) > round(text_width("x", 11), 1)
True
>>> text_width("w", 11, bold=True) > text_width("w", 11)
True
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from gradviz.render.text import visible

__all__ = ["text_width", "FONT", "BOLD_FONT"]

FONT = "DejaVu Sans"  # what boxes are measured with and what PNGs draw with
BOLD_FONT = "DejaVu Sans:bold"


@lru_cache(maxsize=2)
def _face(bold: bool) -> Any:
    from matplotlib import font_manager  # noqa: PLC0415 (deferred: matplotlib is heavy)
    from matplotlib.ft2font import FT2Font  # noqa: PLC0415

    prop = font_manager.FontProperties(family=FONT, weight="bold" if bold else "normal")
    return FT2Font(font_manager.findfont(prop, fallback_to_default=True))


@lru_cache(maxsize=4096)
def text_width(text: str, size: float, bold: bool = False) -> float:
    """The advance width of ``text`` in points at ``size`` points (the widest line of several).

    >>> text_width("", 10)
    0.0
    """
    lines = visible(str(text)).split("\n")  # measured as drawn: control characters as escapes
    face = _face(bold)
    face.set_size(size, 72)
    widest = 0.0
    for line in lines:
        if not line:
            continue
        face.set_text(line, 0.0)
        widest = max(widest, face.get_width_height()[0] / 64.0)
    return widest
