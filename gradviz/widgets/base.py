"""What every gradviz widget shares: a live widget in JupyterLab, a static picture anywhere else.

A `View` is what ``gv.graph(...)``, ``gv.tape(...)`` and the others return. In JupyterLab it
displays as an ipywidgets / anywidget widget (built on first display, or via ``.widget``); in a
static notebook, an HTML export or a terminal it shows its current state as HTML or SVG
(``_repr_html_``, ``_repr_svg_``); ``.save("x.svg" | "x.png" | "x.html")`` writes it to a file.
ipywidgets and anywidget are imported only when a live widget is built.

Subclasses implement ``to_svg()`` (or ``to_png()``), ``to_html()`` and ``_build_widget()``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import traitlets

from engine import checks
from gradviz.model.checks import expect_number
from gradviz.render.graphviz import render_png
from gradviz.render.svg import strip_prolog
from gradviz.render.text import esc
from gradviz.render.theme import widget_css
from gradviz.widgets.esm import esm_source
from gradviz.widgets.static_state import holds_picture, notice_html

__all__ = ["View", "svg_widget_class", "page", "info_table", "esc", "Number", "Whole"]


class Number(traitlets.Float):
    """A float trait that takes every number a notebook computes (NumPy scalars of any width, 0-d arrays
    and tensors), converted by `gradviz.model.checks.expect_number` before traitlets checks it, so a
    wrong value is refused with the name of the call (``where``) and of the trait."""

    def __init__(self, default_value: float = 0.0, where: str = "gradviz", **kwargs: Any) -> None:
        super().__init__(default_value, **kwargs)
        self.where = where

    def validate(self, obj: Any, value: Any) -> float:
        return super().validate(obj, expect_number(self.where, self.name, value))


class Whole(traitlets.Int):
    """An int trait that takes Python and NumPy integers of any width (`engine.checks.integer`)."""

    def __init__(self, default_value: int = 0, where: str = "gradviz", **kwargs: Any) -> None:
        super().__init__(default_value, **kwargs)
        self.where = where

    def validate(self, obj: Any, value: Any) -> int:
        return super().validate(obj, checks.integer(value, self.name, self.where))



class View(traitlets.HasTraits):
    """Base class of gradviz's widgets (see the module docstring).

    A widget's state is declared once, as traits (``step = traitlets.Int()``) checked by
    ``@traitlets.validate`` methods that raise a clear ValueError; the browser widget's controls set
    those traits (the widget observes the positions its controls report, e.g. ``index``) and a trait
    set from code moves the controls, so code and controls change the same state.

    >>> import engine as eg
    >>> import gradviz as gv
    >>> x = eg.constant(2.0)
    >>> with eg.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = x * x
    ...
    >>> isinstance(gv.tape(tape), gv.View)
    True
    """

    _widget: Any = None

    # ---- what subclasses provide ------------------------------------------------------------------
    def to_svg(self) -> str:
        """The current state as an SVG document."""
        raise NotImplementedError(f"{type(self).__name__} has no SVG form; save it as .png or .html.")

    def to_png(self, scale: float = 2.0) -> bytes:
        """The current state as PNG bytes (default: the SVG, drawn with matplotlib)."""
        return render_png(self.to_svg(), scale=scale)

    def to_html(self) -> str:
        """The current state as an HTML fragment (default: the inline SVG)."""
        return f'<div class="gradviz">{strip_prolog(self.to_svg())}</div>'

    def _build_widget(self) -> Any:
        raise NotImplementedError

    # ---- shared behaviour ---------------------------------------------------------------------
    @property
    def widget(self) -> Any:
        """The live ipywidgets / anywidget widget (built once, on first use)."""
        if self._widget is None:
            self._widget = self._build_widget()
        return self._widget

    def _repr_html_(self) -> str:
        return self.to_html()

    def _repr_svg_(self) -> str | None:
        try:
            return strip_prolog(self.to_svg())
        except NotImplementedError:
            return None

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """The live widget where a widget manager can show it, with a static fallback: the picture is
        carried once, so where the widget's state holds it (the graph and kernel-free widgets) the
        fallback is a short notice, and exported pages draw the static picture from the state
        (`gradviz.widgets.static_state`); otherwise the static HTML."""
        bundle: dict[str, Any] = {"text/plain": repr(self)}
        try:
            live = self.widget._repr_mimebundle_(include=include, exclude=exclude)
        except ImportError:
            live = None
        if isinstance(live, tuple):  # (data, metadata)
            live = live[0]
        if live:
            bundle.update({k: v for k, v in live.items() if k != "text/plain"})
        bundle["text/html"] = notice_html(self) if live and holds_picture(self._widget) else self.to_html()
        return bundle

    def save(self, path: str | Path, scale: float = 2.0) -> Path:
        """Write the current state to ``path``: ``.svg``, ``.png`` (``scale`` × 72 dpi) or ``.html``."""
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix == ".svg":
            path.write_text(self.to_svg(), encoding="utf-8")
        elif suffix == ".png":
            path.write_bytes(self.to_png(scale=scale))
        elif suffix in (".html", ".htm"):
            path.write_text(page(self.to_html(), title=type(self).__name__), encoding="utf-8")
        else:
            raise ValueError(f"save: unsupported file type {suffix or '(none)'!r}; use .svg, .png or .html.")
        return path


def page(body: str, title: str = "gradviz") -> str:
    """A standalone HTML page around a fragment."""
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
        f"<title>{esc(title)}</title>"
        "<style>body{font-family:Helvetica,Arial,sans-serif;margin:16px} "
        "pre{white-space:pre-wrap} table{border-collapse:collapse} "
        "td,th{padding:2px 8px;text-align:left;vertical-align:top}</style>"
        f"</head><body>\n{body}\n</body></html>\n"
    )


def info_table(rows: list[tuple[str, str]]) -> str:
    """An HTML table from (heading, already-escaped HTML) pairs."""
    cells = "".join(f"<tr><th>{esc(k)}</th><td>{v}</td></tr>" for k, v in rows)
    return f"<table>{cells}</table>"


_SVG_WIDGET: Any = None


def svg_widget_class() -> type:
    """The anywidget class that shows an SVG with a clickable details panel (see svg_view.js)."""
    global _SVG_WIDGET
    if _SVG_WIDGET is None:
        import anywidget  # noqa: PLC0415 (deferred: anywidget is heavy)

        class SvgWidget(anywidget.AnyWidget):
            gv_state_holds_picture = True  # the output's fallback is a notice (static_state)
            _esm = esm_source("svg_view.js")
            svg = traitlets.Unicode("").tag(sync=True)
            panel = traitlets.Unicode("").tag(sync=True)
            info = traitlets.Dict({}).tag(sync=True)
            selected = traitlets.Unicode("").tag(sync=True)
            max_height = traitlets.Int(640).tag(sync=True)
            views = traitlets.Dict({}).tag(sync=True)  # state → SVG, opened by a click alone
            opens = traitlets.Dict({}).tag(sync=True)  # SVG id → the state a click on it shows
            state = traitlets.Unicode("").tag(sync=True)  # the view shown ('': `svg`)
            css = traitlets.Unicode(widget_css()).tag(sync=True)  # the theme's colours

        _SVG_WIDGET = SvgWidget
    return _SVG_WIDGET
