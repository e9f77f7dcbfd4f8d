"""`View`: the one base of gradviz's widgets: a static picture anywhere, one live widget in JupyterLab.

A `View` is what ``gv.graph(...)``, ``gv.tape(...)`` and the others return. In a static notebook, an
HTML export or a terminal it shows its current state (``_repr_html_``, ``_repr_svg_``,
``.save("x.svg" | "x.png" | "x.html")``); in JupyterLab it displays as a widget built once (``.widget``).

The widget's lifecycle is written here once (docs/WIDGETS.md):

- a widget's state is its traits (checked by ``@traitlets.validate``); its controls are `Control`\\ s,
  each a grid of values of one piece of that state (``_frame_controls()``);
- its frames are made by pure functions of a control snapshot (``_make_frames(controls)``: every
  position's content, computed from `at` (a detached copy of the view with the controls at one
  snapshot) or from the model directly, never by moving the live view), so the browser switches
  frames with no kernel, in the lab and in an exported page alike (`gradviz.widgets.frames`);
- one sync path each way: the browser reports the user's moves (the widget traits named in
  ``_browser_reports``: ``index`` for the kernel-free widgets) and `_follow_browser` sets the state;
  a state change calls `_sync`, which sets the widget traits `_browser_state` gives that differ
  (the controls' positions; whole new frames when a value falls off its grid).

Setting a trait to the value it has notifies nothing, and the browser's moves are applied together
(``hold_trait_notifications``), so neither direction needs a flag against the other.
ipywidgets and anywidget are imported only when a live widget is built. `View`'s docstring has an
example; docs/WIDGETS.md a whole widget.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import traitlets

from engine import checks
from gradviz.model.checks import expect_number
from gradviz.render.graphviz import render_png
from gradviz.render.html import gradviz_block, html_page
from gradviz.render.static_state import holds_picture, notice_html
from gradviz.render.svg import strip_prolog
from gradviz.render.theme import widget_css
from gradviz.widgets.esm import esm_source

__all__ = ["View", "Control", "FrameControl", "svg_widget_class", "Number", "Whole"]


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


@dataclass
class Control:
    """One control of a widget: a grid of ``values`` of one piece of its state, position k holding
    ``values[k]`` (shown as ``labels[k]``). ``get(view)`` / ``set(view, value)`` read and write that
    state on a view (default: the trait named ``name``); ``get=None``: a control of the browser alone
    (it picks what a layer shows and changes no state).

    >>> c = Control("step", "slider", [0, 10, 20])
    >>> c.labels, c.position(type("V", (), {"step": 10})())
    (['0', '10', '20'], 1)
    """

    name: str
    kind: str  # "slider" | "dropdown" | "checkbox"
    values: Sequence[Any]
    labels: Sequence[str] | None = None
    label: str | None = None
    note: str = ""  # a slider's grid, in words
    play: bool = False
    get: Callable[[Any], Any] | None = field(default=None, repr=False)
    set: Callable[[Any, Any], None] | None = field(default=None, repr=False)
    browser_only: bool = False
    start: int = 0  # where a control of the browser alone starts
    interval_ms: int | None = None  # a playing slider's time per position (default: frames_view.js's)

    def __post_init__(self) -> None:
        self.values = list(self.values)
        self.labels = [str(v) for v in self.values] if self.labels is None else list(self.labels)
        if self.get is None and not self.browser_only:
            name = self.name
            self.get = lambda view: getattr(view, name)
            if self.set is None:
                self.set = lambda view, value: setattr(view, name, value)

    def position(self, view: Any) -> int | None:
        """Where ``view``'s state is on the grid (None: off it, or a control of the browser alone)."""
        if self.get is None:
            return None
        value = self.get(view)
        return self.values.index(value) if value in self.values else None

    def index(self, view: Any) -> int:
        """The position the control starts at on ``view`` (``start`` for a control of the browser
        alone, 0 when off the grid)."""
        if self.get is None:
            return self.start
        k = self.position(view)
        return 0 if k is None else k


class FrameControl:
    """A control of a live widget as Python sees it: ``.value`` reads and sets the view's state (the
    browser follows), like an ipywidgets control's ``.value``."""

    def __init__(self, control: Control, view: Any) -> None:
        self.control = control
        self.view = view
        self.description = control.label if control.label is not None else control.name

    @property
    def value(self) -> Any:
        return self.control.get(self.view) if self.control.get is not None else None

    @value.setter
    def value(self, new: Any) -> None:
        if self.control.set is None:
            raise AttributeError(f"the control {self.control.name!r} cannot be set from code.")
        self.control.set(self.view, new)

    @property
    def options(self) -> list[str]:
        return list(self.control.labels)

    def __repr__(self) -> str:
        return f"<{self.control.kind} {self.control.name}={self.value!r}>"


class View(traitlets.HasTraits):
    """Base class of gradviz's widgets (see the module docstring).

    What a widget provides: its state (traits), ``_frame_controls()`` (its `Control`\\ s) and
    ``_make_frames(controls)`` (a `gradviz.widgets.frames.Frames` made from pure functions of a
    snapshot), ``to_svg()`` (or ``to_png()``) and ``to_html()`` for the static forms, and a call to
    `_sync` where its state changes. A widget that is not made of frames (the graph, whose states
    a click opens) overrides `_build_widget`, `_browser_reports`, `_follow_browser` and
    `_browser_state`: the same two paths.

    >>> import engine as eg
    >>> import gradviz as gv
    >>> x = eg.constant(2.0)
    >>> with eg.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = x * x
    ...
    >>> view = gv.backprop(tape, y, [x])
    >>> isinstance(view, gv.View), [c.name for c in view._frame_controls()]
    (True, ['step'])
    >>> view.at({"step": 1}).position, view.position   # a snapshot; the view itself stays
    (1, 0)
    """

    _widget: Any = None
    _controls: list[Control] | None = None
    #: the live widget's traits that report what the user did (what `_follow_browser` gets)
    _browser_reports: tuple[str, ...] = ("index",)

    # ---- what subclasses provide ------------------------------------------------------------------
    def to_svg(self) -> str:
        """The current state as an SVG document."""
        raise NotImplementedError(f"{type(self).__name__} has no SVG form; save it as .png or .html.")

    def to_png(self, scale: float = 2.0) -> bytes:
        """The current state as PNG bytes (default: the SVG, drawn with matplotlib)."""
        return render_png(self.to_svg(), scale=scale)

    def to_html(self) -> str:
        """The current state as an HTML fragment (default: the inline SVG)."""
        return gradviz_block(strip_prolog(self.to_svg()))

    def _frame_controls(self) -> list[Control]:
        """The controls, each over a grid of values of the state (where it is now among them)."""
        return []

    def _make_frames(self, controls: list[Control]) -> Any:
        """The `Frames` of ``controls``: every layer computed by a pure function of a snapshot."""
        raise NotImplementedError(f"{type(self).__name__} must define _make_frames() or _build_widget().")

    # ---- snapshots ---------------------------------------------------------------------------------
    def at(self, values: Mapping[str, Any], controls: Sequence[Control] | None = None) -> Any:
        """A detached copy of this view with the state ``values`` (control name → value, set through
        ``controls``, default the live widget's, or trait name → value): what a frame draws. The live
        view and its widget are untouched; caches are shared (they are keyed by state)."""
        twin = copy.copy(self)  # traitlets copies the trait values and rebinds the observers
        twin._widget = None
        if controls is None:
            controls = self._controls if self._controls is not None else self._frame_controls()
        setters = {c.name: c for c in controls}
        with twin.hold_trait_notifications():
            for name, value in values.items():
                control = setters.get(name)
                if control is not None and control.set is not None:
                    control.set(twin, value)
                else:
                    setattr(twin, name, value)
        return twin

    @staticmethod
    def snapshot(controls: Sequence[Control], positions: Mapping[str, int]) -> dict[str, Any]:
        """The values at ``positions`` (control name → position) of the stateful ``controls``."""
        by_name = {c.name: c for c in controls}
        return {n: by_name[n].values[int(k)] for n, k in positions.items()
                if n in by_name and by_name[n].set is not None}

    # ---- the live widget: built once, one path each way ------------------------------------------
    @property
    def widget(self) -> Any:
        """The live ipywidgets / anywidget widget (built once, on first use)."""
        if self._widget is None:
            widget = self._build_widget()
            widget.observe(self._browser_moved, names=list(self._browser_reports))
            self._widget = widget
        return self._widget

    @property
    def controls(self) -> dict[str, FrameControl]:
        """The widget's controls by name (builds the widget): set ``.value`` as a user would."""
        _ = self.widget
        return {c.name: FrameControl(c, self) for c in self._controls or []}

    def _build_widget(self) -> Any:
        """The kernel-free widget of the frames (`gradviz.widgets.frames.frames_widget_class`)."""
        return self._frames_now().widget()

    def _frames_now(self) -> Any:
        """The frames of the controls as they are now (their grids around the current state)."""
        self._controls = self._frame_controls()
        return self._make_frames(self._controls)

    def _browser_moved(self, change: dict) -> None:
        self._follow_browser(change["name"], change["new"], change.get("old"))

    def _follow_browser(self, name: str, new: Any, old: Any) -> None:
        """The user moved controls in the browser (``index``: their positions): the same state here,
        set together (nothing to draw: the browser has the frame)."""
        old = old or {}
        with self.hold_trait_notifications():
            for c in self._controls or []:
                k = (new or {}).get(c.name)
                if c.set is not None and k is not None and old.get(c.name) != k:
                    c.set(self, c.values[int(k)])

    def _browser_state(self) -> dict[str, Any]:
        """The widget traits that show the state now: the controls' positions, or whole new frames when
        a value is off its grid (a threshold between two grid points)."""
        positions = {}
        for c in self._controls or []:
            if c.get is None:
                continue
            k = c.position(self)
            if k is None:
                return self._frames_now().state()
            positions[c.name] = k
        return {"index": {**self._widget.index, **positions}}

    def _sync(self) -> None:
        """The state changed: bring the live widget (when there is one) to it."""
        w = self._widget
        if w is None:
            return
        changed = {k: v for k, v in self._browser_state().items() if getattr(w, k) != v}
        if changed:
            with w.hold_sync():
                for k, v in changed.items():
                    setattr(w, k, v)

    # ---- static forms ---------------------------------------------------------------------------
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
        (`gradviz.render.static_state`); otherwise the static HTML."""
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
            path.write_text(html_page(self.to_html(), title=type(self).__name__), encoding="utf-8")
        else:
            raise ValueError(f"save: unsupported file type {suffix or '(none)'!r}; use .svg, .png or .html.")
        return path


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
