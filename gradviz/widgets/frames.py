"""Kernel-free widgets: everything the controls explore, computed once in Python, switched in the browser.

A `Frames` holds controls (each one a list of positions: a slider's grid, a dropdown's options, a
checkbox's off/on) and layers. A layer's content depends on some of the controls and is stored for
every combination of their positions, so the front end (``frames_view.js``) only looks frames up:
a control answers with no kernel round trip, in the live lab and in an exported static page alike.
Layers are "svg" (a fragment drawn into ``<g data-gv-layer="NAME">`` of the picture), "trace" (a
polyline in the picture's coordinates, revealed up to a slider's position), "patch" (new attributes
and texts for elements of the picture, by id: `gradviz.svg.restyle`'s arguments, for a graph whose
highlights move), "html" (the panel) or "rows" (table rows of the panel, revealed up to a slider's
position: `rows_html`).

>>> f = Frames("demo", title="Clip a gradient")
>>> f.slider("threshold", ["0.5", "1", "2"], index=1)
>>> f.checkbox("show", True, label="show the clipped vector")
>>> f.layer("panel", "html", ["threshold", "show"], lambda t, s: f"<p>{t} {s}</p>")
>>> f.lookup("panel", threshold=2, show=0)
'<p>2 0</p>'
>>> f.panel(threshold=0)  # the panel as the browser joins it (every "html" and "rows" layer)
'<p>0 1</p>'
>>> sorted(f.state()["index"].items())
[('show', 1), ('threshold', 1)]
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Sequence
from typing import Any

import traitlets

from gradviz.render.html import frame_key, layer_frame, layer_slot, panel_html, rows_html
from gradviz.render.plot import plot_colors, svg_text
from gradviz.render.svg_layers import (
    artists_svg,
    compact_svg,
    svg_points,
    svg_with_layers,
    themed_svg,
)
from gradviz.render.theme import widget_css
from gradviz.widgets.esm import esm_source

__all__ = [
    "Frames", "plot_frames", "frames_widget_class",
    "svg_with_layers", "themed_svg", "svg_points", "artists_svg", "rows_html", "panel_html", "frame_key",
    "layer_frame",
]

_KINDS = ("slider", "dropdown", "checkbox")
_LAYER_TYPES = ("svg", "html", "trace", "patch", "rows")
MAX_FRAMES = 20_000  # per layer: a grid this size is a mistake, not a widget


class Frames:
    """Controls, their positions, and layers computed for every combination the layer depends on."""

    def __init__(self, kind: str, title: str = "", picture: str = "", note: str = "") -> None:
        self.kind = kind
        self.title = title
        self.picture = picture
        self.note = note
        self.controls: list[dict[str, Any]] = []
        self.index: dict[str, int] = {}
        self.layers: list[dict[str, Any]] = []
        self.info: dict[str, str] = {}  # SVG element id → HTML shown when it is clicked

    # ---- controls -----------------------------------------------------------------------------
    def _add(self, spec: dict[str, Any], index: int) -> None:
        name = spec["name"]
        if name in self.index:
            raise ValueError(f"Frames({self.kind!r}): a control named {name!r} exists already.")
        n = len(spec["labels"])
        if n == 0:
            raise ValueError(f"Frames({self.kind!r}): control {name!r} has no positions.")
        if not 0 <= index < n:
            raise ValueError(f"Frames({self.kind!r}): control {name!r} starts at {index}, not in 0..{n - 1}.")
        self.controls.append(spec)
        self.index[name] = int(index)

    def slider(
        self, name: str, labels: Sequence[str], index: int = 0, label: str | None = None,
        play: bool = False, note: str = "", interval_ms: int | None = None,
    ) -> None:
        """A slider over positions 0..len(labels)-1 (``labels``: what each position shows; ``note``: the
        grid it uses, as a tooltip); ``play`` adds ‹ › and ▶ buttons, ▶ moving one position every
        ``interval_ms`` (default 400 ms)."""
        spec = {"name": name, "kind": "slider", "label": label if label is not None else name,
                "labels": [str(x) for x in labels], "play": bool(play), "note": note}
        if interval_ms is not None:
            spec["interval_ms"] = int(interval_ms)
        self._add(spec, index)

    def dropdown(self, name: str, options: Sequence[str], index: int = 0, label: str | None = None) -> None:
        """A dropdown with ``options`` (position k is option k)."""
        spec = {"name": name, "kind": "dropdown", "label": label if label is not None else name,
                "labels": [str(x) for x in options]}
        self._add(spec, index)

    def checkbox(self, name: str, value: bool, label: str | None = None) -> None:
        """A checkbox: position 0 is off, 1 is on."""
        spec = {"name": name, "kind": "checkbox", "label": label if label is not None else name,
                "labels": ["off", "on"]}
        self._add(spec, int(bool(value)))

    def add_controls(self, controls: Sequence[Any], view: Any) -> None:
        """Add ``controls`` (`gradviz.widgets.view.Control`), each starting where ``view``'s state is."""
        for c in controls:
            k = c.index(view)
            if c.kind == "slider":
                self.slider(c.name, c.labels, k, c.label, play=c.play, note=c.note, interval_ms=c.interval_ms)
            elif c.kind == "dropdown":
                self.dropdown(c.name, c.labels, k, c.label)
            elif c.kind == "checkbox":
                self.checkbox(c.name, bool(k), c.label)
            else:
                raise ValueError(f"Frames({self.kind!r}): control {c.name!r} has kind {c.kind!r}; use one of "
                                 f"{_KINDS}.")

    def positions(self, name: str) -> int:
        """How many positions control ``name`` has."""
        for c in self.controls:
            if c["name"] == name:
                return len(c["labels"])
        raise KeyError(f"Frames({self.kind!r}): no control {name!r}; there are {list(self.index)}.")

    # ---- layers -------------------------------------------------------------------------------
    def layer(
        self, name: str, type: str, deps: Sequence[str], content: Callable[..., Any],
        reveal: str | None = None,
    ) -> None:
        """Compute layer ``name`` for every combination of the positions of ``deps``:
        ``content(*positions)`` gives an SVG fragment ("svg"), HTML ("html"),
        ``{"points": [[x, y], ...], "color": ..., "width": ...}`` ("trace"; None draws nothing) or
        ``{element id: {"shapes": {attr: value}, "texts": {text: {attr: value}}}}`` ("patch") or
        ``{"head": html, "rows": [[cell html, ...], ...], "tail": html, "window": n, "lead": [cells]}``
        ("rows", see `rows_html`). A trace shows its first ``position of reveal + 1`` points, or
        ``counts[position]`` of them; a trace may also carry ``opacity``, ``marker`` (a dot on every
        point), ``radius`` (the last point's dot; 0: none), ``halo`` (its outline colour), ``ghost``
        (the whole path, faded to this opacity), ``clip`` (``[x, y, width, height]``) and ``segments``
        (a dashed ``[x0, y0, x1, y1]`` per point, drawn at the last one shown, in ``segment_color``)."""
        if type not in _LAYER_TYPES:
            raise ValueError(f"Frames.layer({name!r}): type must be one of {_LAYER_TYPES}, got {type!r}.")
        if reveal is not None and reveal not in self.index:
            raise ValueError(f"Frames.layer({name!r}): reveal={reveal!r} is not a control.")
        deps = list(deps)
        sizes = [self.positions(d) for d in deps]
        count = 1
        for s in sizes:
            count *= s
        if count > MAX_FRAMES:
            raise ValueError(
                f"Frames.layer({name!r}): {count:,} combinations of {deps} (over {MAX_FRAMES:,}); use a "
                "coarser grid, or split the layer so each depends on fewer controls."
            )
        frames: dict[str, Any] = {}
        for combo in itertools.product(*(range(s) for s in sizes)):
            value = content(*combo)
            if value is None or value == "":
                continue
            frames[frame_key(combo)] = value
        self.layers.append({"name": name, "type": type, "deps": deps, "frames": frames, "reveal": reveal})

    def panel(self, **positions: int) -> str:
        """The panel as the browser shows it with the controls at ``positions`` (`panel_html`)."""
        return panel_html(self.state(), {**self.index, **positions})

    def lookup(self, layer: str, **positions: int) -> Any:
        """What ``layer`` shows with the controls at ``positions`` (the others where they are now)."""
        chosen = {**self.index, **positions}
        for spec in self.layers:
            if spec["name"] == layer:
                return layer_frame(spec, chosen) or ""
        raise KeyError(f"Frames({self.kind!r}): no layer {layer!r}.")

    # ---- what the browser gets ------------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        """The widget's traits."""
        return {
            "kind": self.kind, "title": self.title, "note": self.note, "picture": self.picture,
            "controls": self.controls, "index": dict(self.index), "layers": self.layers, "info": self.info,
            "css": widget_css(),
        }

    def size_bytes(self) -> int:
        """The size of the state as JSON (what a notebook output and an exported page carry)."""
        return len(json.dumps(self.state(), separators=(",", ":")).encode())

    def widget(self) -> Any:
        """The anywidget that shows these frames."""
        return frames_widget_class()(**self.state())


_WIDGET: Any = None


def frames_widget_class() -> type:
    """The anywidget class of `Frames` (see frames_view.js); ``index`` syncs back to Python."""
    global _WIDGET
    if _WIDGET is None:
        import anywidget  # noqa: PLC0415 (deferred: anywidget is heavy)

        class FramesWidget(anywidget.AnyWidget):
            gv_state_holds_picture = True  # the output's fallback is a notice (static_state)
            _esm = esm_source("frames_view.js")
            kind = traitlets.Unicode("").tag(sync=True)
            title = traitlets.Unicode("").tag(sync=True)
            note = traitlets.Unicode("").tag(sync=True)
            picture = traitlets.Unicode("").tag(sync=True)
            controls = traitlets.List([]).tag(sync=True)
            index = traitlets.Dict({}).tag(sync=True)
            layers = traitlets.List([]).tag(sync=True)
            info = traitlets.Dict({}).tag(sync=True)
            css = traitlets.Unicode("").tag(sync=True)

        _WIDGET = FramesWidget
    return _WIDGET


# ---- matplotlib views: the moving artists of every combination of the controls -----------------------


def plot_frames(
    view: Any, kind: str, controls: Sequence[Any], title: str = "", note: str = "",
    figure_controls: Sequence[str] = (), moving_controls: Sequence[str] | None = None,
    panel_controls: Sequence[str] | None = None, make_figure: Callable[[Any], Any] | None = None,
) -> Frames:
    """Frames of a matplotlib view (a `gradviz.widgets.view.View` with ``_make_figure() -> (fig,
    artists[, moving])``, ``_update(artists)``, ``_moving(artists)`` unless ``_make_figure`` gives
    them, ``_panel()``, ``theme``) over its `Control`\\ s: its figure drawn once without the moving
    artists; for every combination of the controls' positions, the moving artists (layer "moving")
    and the panel (layer "panel"). Each frame is drawn by a snapshot of the view (``view.at``): the
    view itself is never moved.

    ``figure_controls``: the controls that change the figure itself (its axes, scales): one figure
    per combination of theirs (layer "figure"). ``moving_controls`` / ``panel_controls``: the controls
    the moving artists / the panel depend on (default: all), so that a control that changes only the
    figure adds no moving frames. ``make_figure(snapshot)``: how a figure is made (default: its
    ``_make_figure()``)."""
    import matplotlib  # noqa: PLC0415 (deferred: matplotlib is heavy)

    by_name = {c.name: c for c in controls}
    for group in (figure_controls, moving_controls or (), panel_controls or ()):
        if unknown := [n for n in group if n not in by_name]:
            raise ValueError(f"plot_frames: no control(s) {unknown}; there are {list(by_name)}.")
    colors = plot_colors(view.theme)
    frames = Frames(kind, title=title, note=note)
    start = {c.name: c.index(view) for c in controls}
    frames.add_controls(controls, view)
    fig_names = [c.name for c in controls if c.name in figure_controls]
    moving_names = list(moving_controls) if moving_controls is not None else list(by_name)
    panel_names = list(panel_controls) if panel_controls is not None else list(by_name)
    make = make_figure or (lambda snap: snap._make_figure())
    figures: dict[tuple[int, ...], tuple[Any, Any, list[Any], str]] = {}

    def at(positions: dict[str, int]) -> Any:
        return view.at(view.snapshot(controls, {**start, **positions}), controls)

    def figure(positions: dict[str, int]) -> tuple[Any, Any, list[Any], str]:
        key = tuple(positions.get(n, start[n]) for n in fig_names)
        if key not in figures:
            snap = at(dict(zip(fig_names, key)))
            made = make(snap)
            fig, art = made[0], made[1]
            moving = list(made[2]) if len(made) > 2 else list(snap._moving(art))
            snap._update(art)
            for a in moving:
                a.set_visible(False)
            svg = ""
            if fig is not None:
                svg = themed_svg(svg_with_layers(compact_svg(svg_text(fig)), ["moving"]), colors)
            figures[key] = (fig, art, moving, svg)
        return figures[key]

    def moving_frame(*combo: int) -> str:
        positions = dict(zip(moving_names, combo))
        fig, art, moving, _ = figure(positions)
        if not moving:
            return ""
        for a in moving:
            a.set_visible(True)
        at(positions)._update(art)
        return themed_svg(artists_svg(fig, moving), colors)

    def panel_frame(*combo: int) -> str:
        return at(dict(zip(panel_names, combo)))._panel()

    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "gradviz"}):
        if fig_names:
            frames.picture = layer_slot("figure")
            frames.layer("figure", "svg", fig_names, lambda *combo: figure(dict(zip(fig_names, combo)))[3])
        else:
            frames.picture = figure({})[3]
        frames.layer("moving", "svg", moving_names, moving_frame)
        frames.layer("panel", "html", panel_names, panel_frame)
    return frames
