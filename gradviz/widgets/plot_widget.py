"""`PlotWidget`: the shared shell of the matplotlib-based views (flow, clipping, descent, gradcheck).

A `View` (see `gradviz.widgets.base`) made of controls + a picture (drawn by matplotlib) + an HTML
panel (numbers, tables). The state lives in Python attributes, so the object works (and can be
tested, saved, shown statically) without a widget; the live widget is built on first display, and it
is kernel-free: every frame its controls explore is computed here once and switched in the browser,
in the lab and in an exported page alike (`gradviz.widgets.frames`). Subclasses provide:

- its state as traits, with ``@traitlets.validate`` for bad values and an ``@traitlets.observe``
  that calls `_changed`;
- ``_frame_controls()`` → its controls as grids (`gradviz.widgets.frames.Control`, e.g. from
  `trait_control`);
- ``_draw()`` → PNG bytes of the current state (the static picture), or None;
- ``_figure()`` → a fresh matplotlib Figure of the current state (for ``save``), or None;
- ``_panel()`` → HTML of the current state.
"""

from __future__ import annotations

import base64
import time
from typing import Any

from gradviz.render.plot import plot_colors, png_bytes, png_size, svg_text, theme_name
from gradviz.render.svg import strip_prolog
from gradviz.widgets.base import View, esc
from gradviz.widgets.frames import (
    FrameControl,
    compact_svg,
    layer_frame,
    panel_html,
    plot_frames,
    rows_html,
    themed_svg,
)

__all__ = ["PlotWidget"]


class PlotWidget(View):
    """Base class: state → (picture, HTML panel); controls (computed ahead) ↔ state; static and live."""

    #: The title shown above the picture.
    title = ""
    #: The kernel-free widget's name (its ``data-gv-widget``): the gradviz call that makes it.
    kind = ""

    def __init__(self, theme: str | None = None) -> None:
        super().__init__()
        self.theme = theme_name(theme)
        self._controls_by_name: dict[str, Any] = {}
        self._png: bytes | None = None
        self.last_refresh_s = 0.0  # kernel time of the last redraw (what a slider move costs)
        self._frames: dict[str, Any] | None = None  # the kernel-free widget's controls, by name
        self._frames_busy = False  # computing frames: state changes are the frames', not the user's

    # ---- what subclasses provide ---------------------------------------------------------------
    def _draw(self) -> bytes | None:
        return None

    def _figure(self) -> Any:
        return None

    def _panel(self) -> str:
        return ""

    def _frame_controls(self) -> list[Any]:
        raise NotImplementedError(f"{type(self).__name__} must define _frame_controls().")

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

    # ---- state changes ------------------------------------------------------------------------
    def _changed(self) -> None:
        """The state changed: forget the picture; redraw now if the widget is live."""
        self._png = None
        if self._widget is not None:
            self.refresh()

    def refresh(self) -> None:
        """Bring the live widget to the state (its controls, or new frames off the grids)."""
        start = time.perf_counter()
        if self._frames is not None and not self._frames_busy:
            self._follow_state()
        self.last_refresh_s = time.perf_counter() - start

    # ---- the live widget ---------------------------------------------------------------------
    @property
    def controls(self) -> dict[str, Any]:
        """The widget's controls by name (builds the widget): set ``.value`` as a user would."""
        _ = self.widget
        return dict(self._controls_by_name)

    def _build_widget(self) -> Any:
        return self._build_frames(self._frame_controls())

    # ---- the kernel-free widget (gradviz.widgets.frames) -------------------------------------------
    def _compute_frames(self, specs: list[Any]) -> Any:
        self._frames_busy = True
        try:
            frames = self._make_frames(specs)
        finally:
            self._frames_busy = False
        self._frames = {c.name: c for c in specs}
        self._controls_by_name = {c.name: FrameControl(c) for c in specs}
        self._png = None
        return frames

    def _make_frames(self, specs: list[Any]) -> Any:
        """The `Frames` of the controls ``specs`` (default: `plot_frames` of the matplotlib view)."""
        return plot_frames(self, self.kind or type(self).__name__, specs, title=self.title,
                           note=_grids_note(specs), **self._frame_layout())

    def _build_frames(self, specs: list[Any]) -> Any:
        widget = self._compute_frames(specs).widget()
        widget.observe(self._on_frame_index, names="index")
        return widget

    def _on_frame_index(self, change: dict) -> None:
        """A control moved in the browser: the same state here (nothing to draw: the browser has it)."""
        if self._frames is None or self._frames_busy:
            return
        old = change.get("old") or {}
        self._frames_busy = True
        try:
            for name, k in (change["new"] or {}).items():
                if name in self._frames and old.get(name) != k:
                    self._frames[name].apply(int(k))
        finally:
            self._frames_busy = False

    def _follow_state(self) -> None:
        """The state changed in code: move the browser's controls there, or compute new frames when
        the state is off a grid (a threshold between two grid points)."""
        positions = {}
        for name, c in self._frames.items():
            k = c.position() if c.position is not None else None
            if k is None:
                state = self._compute_frames(self._frame_controls()).state()
                self._frames_busy = True
                try:
                    with self._widget.hold_sync():
                        for key, value in state.items():
                            setattr(self._widget, key, value)
                finally:
                    self._frames_busy = False
                return
            positions[name] = k
        if positions != self._widget.index:
            self._frames_busy = True
            try:
                self._widget.index = positions
            finally:
                self._frames_busy = False

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
        data = base64.b64encode(png).decode("ascii")
        return (f'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
                f'width="{width}" height="{height}" viewBox="0 0 {width} {height}">'
                f"<title>{esc(self.title or type(self).__name__)}</title>"
                f'<image width="{width}" height="{height}" xlink:href="data:image/png;base64,{data}"/></svg>')

    def to_html(self) -> str:
        """The current state as HTML: the picture as vector SVG (text as text, crisp at any zoom, in
        the theme's CSS colours), then the panel. What a static page shows, or a page before its
        widgets have rendered."""
        import matplotlib  # deferred: matplotlib is heavy

        parts = ['<div class="gradviz">']
        if self.title:
            parts.append(f"<b>{esc(self.title)}</b><br/>")
        with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "gradviz"}):
            fig = self._figure()
            if fig is not None:
                svg = themed_svg(compact_svg(strip_prolog(svg_text(fig))), plot_colors(self.theme))
                parts.append(f"<style>.gradviz-picture svg{{max-width:100%;height:auto}}</style>"
                             f'<div class="gradviz-picture">{svg}</div>')
        parts.append(self._panel())
        parts.append("</div>")
        return "".join(parts)

def _grids_note(specs: list[Any]) -> str:
    grids = [f"{c.label or c.name}: {c.note}" for c in specs if c.note]
    return "Computed ahead, no kernel needed: " + "; ".join(grids) + "." if grids else ""
