"""`PlotWidget`: the matplotlib flavour of `View` (flow, clipping, descent, gradcheck, memory).

A `View` (see `gradviz.widgets.view`, whose lifecycle it uses as it is) made of controls + a picture
(drawn by matplotlib) + an HTML panel (numbers, tables). The state lives in traits, so the object
works (and can be tested, saved, shown statically) without a widget; the live widget's frames are
drawn by snapshots of the view (`plot_frames`). Subclasses provide:

- its state as traits, with ``@traitlets.validate`` for bad values and an ``@traitlets.observe``
  that calls `_changed`;
- ``_frame_controls()`` → its `Control`\\ s;
- ``_make_figure()`` / ``_update(art)`` / ``_moving(art)`` (what `plot_frames` draws) or its own
  ``_make_frames(controls)``;
- ``_draw()`` → PNG bytes of the current state (the static picture), or None;
- ``_figure()`` → a fresh matplotlib Figure of the current state (for ``save``), or None;
- ``_panel()`` → HTML of the current state.
"""

from __future__ import annotations

import time
from typing import Any

from gradviz.render.html import grids_note, plot_view_html, png_svg
from gradviz.render.plot import plot_colors, png_bytes, png_size, svg_text, theme_name
from gradviz.render.svg import strip_prolog
from gradviz.widgets.frames import compact_svg, layer_frame, panel_html, plot_frames, rows_html, themed_svg
from gradviz.widgets.view import View

__all__ = ["PlotWidget"]


class PlotWidget(View):
    """Base class: state → (picture, HTML panel), drawn with matplotlib; static and live."""

    #: The title shown above the picture.
    title = ""
    #: The kernel-free widget's name (its ``data-gv-widget``): the gradviz call that makes it.
    kind = ""

    def __init__(self, theme: str | None = None) -> None:
        super().__init__()
        self.theme = theme_name(theme)
        self._png: bytes | None = None
        self.last_refresh_s = 0.0  # kernel time of the last redraw (what a slider move costs)

    # ---- what subclasses provide ---------------------------------------------------------------
    def _draw(self) -> bytes | None:
        return None

    def _figure(self) -> Any:
        return None

    def _panel(self) -> str:
        return ""

    def _frame_layout(self) -> dict[str, Any]:
        """Which controls change the figure, the moving artists, the panel (`plot_frames`' arguments
        ``figure_controls``, ``moving_controls``, ``panel_controls``; default: one figure, all)."""
        return {}

    def _make_figure(self) -> tuple[Any, dict[str, Any], list[Any]]:
        """The figure, its artists by name, and those a control moves (default: `_figure`, nothing
        moves: the controls change the panel only)."""
        return self._figure(), {}, []

    def _update(self, art: dict[str, Any]) -> None:
        """Bring the moving artists of `_make_figure` to the current state."""

    def _make_frames(self, controls: list[Any]) -> Any:
        """The `Frames` of ``controls`` (default: `plot_frames`, each frame drawn by a snapshot)."""
        return plot_frames(self, self.kind or type(self).__name__, controls, title=self.title,
                           note=grids_note(controls), **self._frame_layout())

    # ---- state changes ------------------------------------------------------------------------
    def _changed(self) -> None:
        """The state changed: forget the picture; bring the live widget there (`View._sync`)."""
        self._png = None
        if self._widget is not None:
            self.refresh()

    def refresh(self) -> None:
        """Bring the live widget to the state (its controls, or new frames off the grids)."""
        start = time.perf_counter()
        self._sync()
        self.last_refresh_s = time.perf_counter() - start

    def shown(self, layer: str = "panel") -> str:
        """What the live kernel-free widget shows now in ``layer`` ("panel", or "moving": the parts of
        the picture the controls move): the frame its controls select, as the browser looks it up. A
        widget whose panel is several layers (no layer named "panel") gives them joined."""
        w = self.widget
        for spec in w.layers:
            if spec["name"] == layer:
                content = layer_frame(spec, w.index) or ""
                rows = spec["type"] == "rows"
                return rows_html(content, w.index.get(spec["reveal"], 0)) if rows else content
        if layer == "panel":
            return panel_html({"layers": w.layers, "index": w.index})
        raise KeyError(f"no layer {layer!r}; there are {[s['name'] for s in w.layers]}.")

    # ---- static forms ----------------------------------------------------------------------------
    def png(self) -> bytes | None:
        """PNG bytes of the current state, at screen resolution (what the widget shows)."""
        if self._png is None:
            self._png = self._draw()
        return self._png

    def to_png(self, scale: float = 2.0) -> bytes:
        """The current state as a PNG at ``scale`` × 72 dpi (a fresh, full-quality drawing)."""
        fig = self._figure()
        if fig is None:
            raise NotImplementedError(f"{type(self).__name__} has no picture; save it as .html.")
        return png_bytes(fig, dpi=72 * scale)

    def to_svg(self) -> str:
        """The current state as a (vector) SVG document."""
        fig = self._figure()
        if fig is None:
            raise NotImplementedError(f"{type(self).__name__} has no picture; save it as .html.")
        return svg_text(fig)

    def _repr_svg_(self) -> str | None:
        """A light SVG around the current PNG (no second drawing); ``save("x.svg")`` / `to_svg` give
        the vector drawing."""
        png = self.png()
        if png is None:
            return None
        width, height = png_size(png)
        return png_svg(png, width, height, self.title or type(self).__name__)

    def to_html(self) -> str:
        """The current state as HTML: the picture as vector SVG (text as text, crisp at any zoom, in
        the theme's CSS colours), then the panel. What a static page shows, or a page before its
        widgets have rendered."""
        import matplotlib  # noqa: PLC0415 (deferred: matplotlib is heavy)

        with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "gradviz"}):
            fig = self._figure()
            svg = None
            if fig is not None:
                svg = themed_svg(compact_svg(strip_prolog(svg_text(fig))), plot_colors(self.theme))
        return plot_view_html(self.title, svg, self._panel())
