"""Matplotlib helpers shared by the plotting widgets (flow, clipping, descent, recorder).

Figures are made with `matplotlib.figure.Figure` directly (never pyplot), so nothing depends on
the interactive backend; they are rendered to PNG bytes with the Agg canvas. matplotlib is imported
here, and this module only when a widget or plot is made.
"""

from __future__ import annotations

import io
import math
import struct
from typing import Any

import numpy as np

from engine.interop import to_numpy
from gradviz.render.text import visible
from gradviz.render.theme import palette

# The colours only plots need, per theme (the rest is gradviz's one palette, `gradviz.render.theme`).
# "series": one colour per line / optimizer (colour-blind friendly, Okabe–Ito).
_PLOT_COLORS: dict[str, dict[str, Any]] = {
    "light": {
        "grid": "#e6e8eb", "before": "#9aa4b1", "after": "#0b6bcb", "threshold": "#d1242f",
        "good": "#1a7f37", "bad": "#d1242f", "cmap": "viridis",
        "series": ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#7f7f7f"],
    },
    "dark": {
        "grid": "#30363d", "before": "#6e7681", "after": "#58a6ff", "threshold": "#ff7b72",
        "good": "#3fb950", "bad": "#ff7b72", "cmap": "magma",
        "series": ["#56B4E9", "#E69F00", "#3fb950", "#CC79A7", "#F0E442", "#ff7b72", "#bbbbbb"],
    },
}


def theme_name(theme: Any = None) -> str:
    """``"light"`` or ``"dark"``: the given one; ``None``/``"auto"`` follows JupyterLab (see `theme`)."""
    return palette("auto" if theme is None else theme).name


def plot_colors(theme: Any = None) -> dict[str, Any]:
    """The plotting colours of ``theme``: gradviz's one palette (`gradviz.render.theme.Palette`, under
    ``"palette"``; background, text, muted, the axes' spines in its border colour) plus the colours only
    plots need (one per series, before/after, threshold, the grid)."""
    base = palette("auto" if theme is None else theme)
    return dict(_PLOT_COLORS[base.name], palette=base, background=base.background, panel=base.background,
                text=base.text, muted=base.muted, spine=base.border, highlight=base.highlight)


def new_figure(size: tuple[float, float], theme: str | None = None, dpi: float = 100):
    """A pyplot-free `Figure` with an Agg canvas, coloured for ``theme``."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # deferred: matplotlib is heavy
    from matplotlib.figure import Figure

    colors = plot_colors(theme)
    fig = Figure(figsize=size, dpi=dpi, facecolor=colors["background"])
    FigureCanvasAgg(fig)
    return fig


def style_axes(ax: Any, theme: str | None = None) -> None:
    """Quiet axes: light grid, thin spines, theme colours."""
    colors = plot_colors(theme)
    ax.set_facecolor(colors["panel"])
    for side, spine in ax.spines.items():
        spine.set_color(colors["spine"])
        spine.set_visible(side in ("left", "bottom"))
    ax.tick_params(colors=colors["muted"], labelsize=8)
    ax.grid(True, color=colors["grid"], lw=0.6)
    ax.set_axisbelow(True)


def plain_texts(fig: Any) -> Any:
    """``fig`` (or any artist) with every text shown as written: matplotlib's math text ("$...$") off
    for all its texts (titles, tick labels, legends, notes), so a name such as ``w$1$`` or ``a_b^{c}``
    is drawn as it is and cannot break the drawing. gradviz's own labels use no math text. Every render
    site calls this (`png_bytes`, `svg_text`, `Blitter`, the graph PNG renderer, ``Recorder.plot``,
    `gradviz.render.svg_layers.artists_svg` for the artists it draws), so no label needs escaping
    where it is made. Returns ``fig``.

    >>> fig = new_figure((2, 1))
    >>> t = fig.text(0.1, 0.5, "cost $w$ and \\\\alpha_{1}")
    >>> "cost $w$" in svg_text(plain_texts(fig)), t.get_parse_math()
    (True, False)
    """
    from matplotlib.axes import Axes  # deferred: matplotlib is heavy
    from matplotlib.text import Text
    from matplotlib.ticker import FixedFormatter, FuncFormatter

    for text in fig.findobj(Text):
        text.set_parse_math(False)
        shown = text.get_text()
        if visible(shown) != shown:  # control characters as escapes (`gradviz.render.text`)
            text.set_text(visible(shown))
    for ax in fig.findobj(Axes):  # tick labels are made again when drawn: escape their source too
        for axis in (ax.xaxis, ax.yaxis):
            ticks = axis.get_major_formatter()
            if isinstance(ticks, FixedFormatter):
                ticks.seq = [visible(s) for s in ticks.seq]
            elif isinstance(ticks, FuncFormatter) and not getattr(ticks.func, "visible", False):
                ticks.func = _visible_ticks(ticks.func)
    return fig


def _visible_ticks(func: Any) -> Any:
    def shown(x: Any, pos: Any = None) -> str:
        return visible(func(x, pos))

    shown.visible = True  # type: ignore[attr-defined]
    return shown


def png_bytes(fig: Any, dpi: float | None = None) -> bytes:
    """The figure as PNG bytes (Agg; no pyplot)."""
    plain_texts(fig)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi or fig.dpi, facecolor=fig.get_facecolor())
    return buffer.getvalue()


def svg_text(fig: Any) -> str:
    """The figure as SVG text."""
    plain_texts(fig)
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", facecolor=fig.get_facecolor())
    return buffer.getvalue()


def encode_png(rgba: Any) -> bytes:
    """PNG bytes of an RGBA pixel array (RGB when opaque; the fastest zlib level: these images are
    redrawn on every slider move)."""
    from PIL import Image  # deferred: Pillow is heavy

    if rgba.shape[-1] == 4 and np.all(rgba[..., 3] == 255):
        rgba = np.ascontiguousarray(rgba[..., :3])
    buffer = io.BytesIO()
    Image.fromarray(rgba).save(buffer, format="png", compress_level=1)
    return buffer.getvalue()


class Blitter:
    """Redraw only the artists that change.

    Three layers: the figure without its ``overlay`` and ``moving`` artists is drawn once and kept as
    pixels (axes, ticks and contours are the slow part); the ``overlay`` artists (which change
    rarely: a legend, faded full paths) are drawn on top of it and kept as a second copy; the
    ``moving`` ones (a marker, a line) are drawn on that at every `render`. Call
    `invalidate_overlay` when an overlay artist changed, `invalidate` when the background did.
    """

    def __init__(self, fig: Any, moving: list[Any], overlay: list[Any] | None = None):
        self.fig = fig
        self.moving = list(moving)
        self.overlay = list(overlay or [])
        for artist in self.moving + self.overlay:
            artist.set_animated(True)
        self._background: Any = None
        self._with_overlay: Any = None

    def invalidate(self) -> None:
        self._background = None
        self._with_overlay = None

    def invalidate_overlay(self) -> None:
        self._with_overlay = None

    def _draw(self, artists: list[Any]) -> None:
        renderer = self.fig.canvas.get_renderer()
        for artist in artists:
            if artist.get_visible():
                artist.draw(renderer)

    def render(self) -> bytes:
        canvas = self.fig.canvas
        if self._background is None:  # rebuilt after a change (a new legend): its texts are plain too
            plain_texts(self.fig)
            canvas.draw()
            self._background = canvas.copy_from_bbox(self.fig.bbox)
            self._with_overlay = None
        if self._with_overlay is None:
            for artist in self.overlay:
                plain_texts(artist)
            canvas.restore_region(self._background)
            self._draw(self.overlay)
            self._with_overlay = canvas.copy_from_bbox(self.fig.bbox)
        else:
            canvas.restore_region(self._with_overlay)
        for artist in self.moving:  # (walking only what moves: the whole figure costs ~1 ms a frame)
            plain_texts(artist)
        self._draw(self.moving)
        return encode_png(np.asarray(canvas.buffer_rgba()))


def png_size(png: bytes) -> tuple[int, int]:
    """(width, height) in pixels, read from the PNG header."""
    if png[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    width, height = struct.unpack(">II", png[16:24])
    return width, height


def _plain_log_label(value: float, _pos: Any = None) -> str:
    if value <= 0:
        return ""
    return f"{value:g}" if 1e-3 <= value < 1e4 else f"{value:.0e}".replace("e-0", "e-").replace("e+0", "e")


def log_axis(ax: Any, which: str = "y", limits: tuple[float, float] | None = None) -> None:
    """A log scale with plain-text labels (1e-5, 0.02, 100), no minor ticks: at 1, 2, 5 × 10^k when
    ``limits`` span at most two decades, else at the decades.

    matplotlib's default labels are mathtext ($10^{-5}$), whose first use costs most of a second.
    """
    from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator  # deferred: matplotlib is heavy

    axis = ax.yaxis if which == "y" else ax.xaxis
    (ax.set_yscale if which == "y" else ax.set_xscale)("log")
    if limits is not None:
        (ax.set_ylim if which == "y" else ax.set_xlim)(*limits)
    low, high = limits if limits is not None else (ax.get_ylim() if which == "y" else ax.get_xlim())
    narrow = low > 0 and math.log10(high / low) <= 2.05
    axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0) if narrow else (1.0,), numticks=7))
    axis.set_minor_locator(NullLocator())
    axis.set_major_formatter(FuncFormatter(_plain_log_label))


def wants_log(values: Any, span: float = 20.0) -> bool:
    """Whether positive ``values`` span more than ``span``× (a log scale then reads better)."""
    v = to_numpy(values, dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    return bool(v.size > 1 and v.max() / v.min() > span)
