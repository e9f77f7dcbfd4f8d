"""`PlotWidget`: the shared shell of the matplotlib-based views (flow, clipping, descent, gradcheck).

A `View` (see `gradviz.widgets.base`) made of controls (ipywidgets) + a picture (PNG, drawn by matplotlib)
+ an HTML panel (numbers, tables). The state lives in Python attributes, so the object works (and
can be tested, saved, shown statically) without a widget; the live widget is built on first display.
Subclasses provide:

- its state as traits, with ``@traitlets.validate`` for bad values and an ``@traitlets.observe``
  that calls `_changed`;
- ``_controls()`` → ``{name: control}``, built with the widget, each linked to its trait
  (`View.link_control`);
- ``_draw()`` → PNG bytes of the current state, fast (redrawing only what moves), or None;
- ``_figure()`` → a fresh matplotlib Figure of the current state (for ``save``), or None;
- ``_panel()`` → HTML of the current state.
"""

from __future__ import annotations

import time
from typing import Any

from gradviz.widgets.base import View, esc

__all__ = ["PlotWidget"]


class PlotWidget(View):
    """Base class: state → (PNG picture, HTML panel); controls ↔ state; static and live."""

    #: The title shown above the picture.
    title = ""

    def __init__(self, theme: str | None = None) -> None:
        from gradviz.render.plot import theme_name

        super().__init__()
        self.theme = theme_name(theme)
        self._image: Any = None
        self._html: Any = None
        self._controls_by_name: dict[str, Any] = {}
        self._png: bytes | None = None
        self.last_refresh_s = 0.0  # kernel time of the last redraw (what a slider move costs)

    # ---- what subclasses provide ---------------------------------------------------------------
    def _controls(self) -> dict[str, Any]:
        return {}

    def _draw(self) -> bytes | None:
        return None

    def _figure(self) -> Any:
        return None

    def _panel(self) -> str:
        return ""

    # ---- state changes ------------------------------------------------------------------------
    def _changed(self) -> None:
        """The state changed: forget the picture; redraw now if the widget is live."""
        self._png = None
        if self._widget is not None:
            self.refresh()

    def refresh(self) -> None:
        """Redraw the picture and the panel from the state (what a slider move triggers)."""
        start = time.perf_counter()
        png = self.png()
        if self._image is not None:
            if png is None:
                self._image.layout.display = "none"
            else:
                self._image.layout.display = None
                self._image.value = png
        if self._html is not None:
            self._html.value = self._panel()
        self.last_refresh_s = time.perf_counter() - start

    # ---- the live widget ---------------------------------------------------------------------
    @property
    def controls(self) -> dict[str, Any]:
        """The widget's controls by name (builds the widget): set ``.value`` as a user would."""
        _ = self.widget
        return dict(self._controls_by_name)

    def _build_widget(self) -> Any:
        import ipywidgets as w

        self._controls_by_name = self._controls()
        self._image = w.Image(format="png", layout=w.Layout(max_width="100%", height="auto"))
        self._html = w.HTML()
        children = []
        if self.title:
            children.append(w.HTML(f"<b>{esc(self.title)}</b>"))
        if self._controls_by_name:
            children.append(w.HBox(list(self._controls_by_name.values()),
                                   layout=w.Layout(flex_flow="row wrap", align_items="center")))
        children += [self._image, self._html]
        root = w.VBox(children)
        self._widget = root
        self.refresh()
        return root

    # ---- static forms ----------------------------------------------------------------------------
    def png(self) -> bytes | None:
        """PNG bytes of the current state, at screen resolution (what the widget shows)."""
        if self._png is None:
            self._png = self._draw()
        return self._png

    def to_png(self, scale: float = 2.0) -> bytes:
        """The current state as a PNG at ``scale`` × 72 dpi (a fresh, full-quality drawing)."""
        from gradviz.render.plot import png_bytes

        fig = self._figure()
        if fig is None:
            raise NotImplementedError(f"{type(self).__name__} has no picture; save it as .html.")
        return png_bytes(fig, dpi=72 * scale)

    def to_svg(self) -> str:
        """The current state as a (vector) SVG document."""
        from gradviz.render.plot import svg_text

        fig = self._figure()
        if fig is None:
            raise NotImplementedError(f"{type(self).__name__} has no picture; save it as .html.")
        return svg_text(fig)

    def _repr_svg_(self) -> str | None:
        """A light SVG around the current PNG (no second drawing); ``save("x.svg")`` / `to_svg` give
        the vector drawing."""
        from gradviz.render.plot import png_size

        png = self.png()
        if png is None:
            return None
        import base64

        width, height = png_size(png)
        data = base64.b64encode(png).decode("ascii")
        return (f'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
                f'width="{width}" height="{height}" viewBox="0 0 {width} {height}">'
                f"<title>{esc(self.title or type(self).__name__)}</title>"
                f'<image width="{width}" height="{height}" xlink:href="data:image/png;base64,{data}"/></svg>')

    def to_html(self) -> str:
        from gradviz.render.plot import png_img_tag

        parts = ['<div class="gradviz">']
        if self.title:
            parts.append(f"<b>{esc(self.title)}</b><br/>")
        png = self.png()
        if png is not None:
            parts.append(png_img_tag(png, self.title or type(self).__name__))
        parts.append(self._panel())
        parts.append("</div>")
        return "".join(parts)
