"""`gv.memory(profile_or_fn, *args, **kwargs)`: what backprop keeps, over the forward and backward pass.

Draws what ``eg.memory_profile`` measured (gradviz measures nothing): per profile, the bytes the
tapes keep for the backward pass, as a stacked area by layer (name scope), and the bytes alive, as a
line, at every op of the forward pass and every step of the backward walk. A cursor slider per
profile moves over its events; the panel names the event's op, what it kept (or let go), and the kept
bytes by layer. Several profiles are drawn side by side on one byte axis: a list (``labels=``) or a
dict label → profile (batch 128 against 4 × 32 accumulated; with and without ``eg.recompute_grad``).
Every cursor position is computed when the widget is made (`gradviz.model.memory_runs.cursor_grid`):
the sliders work with no kernel, in the lab and in an exported page.

>>> from types import SimpleNamespace as E
>>> events = [E(phase="forward", op="MatMul", scope="dense", alive_bytes=3000, saved_bytes=1000),
...           E(phase="backward", op="MatMul", scope="dense", alive_bytes=2000, saved_bytes=0)]
>>> view = memory(E(peak_bytes=3000, saved_peak_bytes=1000, timeline=events), theme="light")
>>> view.current()["profile"]["op"], view.current()["profile"]["saved_bytes"]
('MatMul', 1000)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import traitlets

import engine as eg
from gradviz.model.checks import describe
from gradviz.model.memory_runs import MemoryRun, cursor_grid, read_profiles
from gradviz.render.html import grids_note
from gradviz.render.memory_plots import (
    PANEL_CLOSE,
    MemoryPlots,
    cursor_html,
    cursor_svg,
    memory_figure,
    panel_open,
    scope_colors,
)
from gradviz.render.plot import plot_colors, png_bytes, svg_text
from gradviz.widgets.frames import Frames, compact_svg, svg_with_layers, themed_svg
from gradviz.widgets.plot_widget import PlotWidget
from gradviz.widgets.view import Control

__all__ = ["memory", "MemoryView"]

PLAY_MS = 8000  # how long ▶ takes over a profile's events (one event every 25 to 400 ms)


class MemoryView(PlotWidget):
    """The memory widget; see `memory`. State: ``cursor`` (one event index per profile)."""

    title = "What backprop keeps"
    kind = "memory"  # data-gv-widget of the kernel-free widget

    def __init__(self, profiles: Any, labels: Any = None, theme: str | None = None) -> None:
        super().__init__(theme)
        #: the profiles' numbers, in the order drawn (left to right)
        self.runs: list[MemoryRun] = read_profiles(profiles, labels)
        self._plots: MemoryPlots | None = None
        # each cursor starts where its profile keeps the most
        self.cursor = tuple(int(np.argmax(r.saved)) for r in self.runs)

    cursor = traitlets.Tuple(help="The event each profile's cursor is at (indices into its timeline).")

    @traitlets.validate("cursor")
    def _check_cursor(self, proposal: Any) -> tuple[int, ...]:
        value = proposal["value"]
        if len(value) != len(self.runs):
            raise ValueError(f"memory: cursor needs one event index per profile ({len(self.runs)}), "
                             f"got {describe(value)}.")
        out = []
        for run, k in zip(self.runs, value):
            if isinstance(k, bool) or not isinstance(k, int | np.integer) or not 0 <= k < run.events:
                raise ValueError(f"memory: the cursor of {run.label!r} must be an event index in "
                                 f"0..{run.events - 1}, got {k!r}.")
            out.append(int(k))
        return tuple(out)

    @traitlets.observe("cursor")
    def _state_changed(self, change: Any) -> None:
        self._changed()

    @property
    def labels(self) -> list[str]:
        return [r.label for r in self.runs]

    def move(self, i: int, k: int) -> None:
        """Put profile ``i``'s cursor at event ``k``."""
        self.cursor = tuple(k if j == i else c for j, c in enumerate(self.cursor))

    def current(self) -> dict[str, dict[str, Any]]:
        """What the panel shows, per profile label: the event under its cursor (`MemoryRun.event`)."""
        return {r.label: r.event(k) for r, k in zip(self.runs, self.cursor)}

    # ---- controls: every cursor position computed ahead (no kernel needed) ---------------------------
    def grid(self, i: int) -> list[int]:
        """The events profile ``i``'s cursor slider offers (and the one it is at)."""
        run = self.runs[i]
        return sorted(set(cursor_grid(run.events, int(np.argmax(run.saved)))) | {self.cursor[i]})

    def _frame_controls(self) -> list[Any]:
        specs = []
        for i, run in enumerate(self.runs):
            grid = self.grid(i)
            note = "" if len(grid) == run.events else f"{len(grid)} of the {run.events} events"

            # ▶ sweeps a whole profile in about PLAY_MS, however many events it has
            interval = min(400, max(25, PLAY_MS // max(len(grid), 1)))
            specs.append(Control(f"cursor {i + 1}", "slider", grid, [f"{k + 1}: {run.ops[k]}" for k in grid],
                                 f"event of {run.label}", note, play=True, interval_ms=interval,
                                 get=lambda view, i=i: view.cursor[i],
                                 set=lambda view, v, i=i: view.move(i, v)))
        return specs

    def _make_frames(self, specs: list[Any]) -> Any:
        import matplotlib  # deferred: matplotlib is heavy

        colors = plot_colors(self.theme)
        frames = Frames(self.kind, title=self.title, note=grids_note(specs))
        frames.add_controls(specs, self)
        slots = [f"cursor{i}" for i in range(len(self.runs))]
        with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "gradviz"}):
            plots = MemoryPlots(self.runs, self.theme)  # the background: no cursor shown
            frames.picture = themed_svg(svg_with_layers(compact_svg(svg_text(plots.fig)), slots), colors)
        edge = f"var(--jp-layout-color0, {colors['background']})"
        frames.layer("open", "html", [], lambda: panel_open(self.runs))
        for i, (run, ax, spec) in enumerate(zip(self.runs, plots.axes, specs)):
            grid = spec.values

            def picture(p: int, run: MemoryRun = run, ax: Any = ax, grid: list[int] = grid) -> str:
                return cursor_svg(ax, run, grid[p], edge)

            def row(p: int, run: MemoryRun = run, grid: list[int] = grid) -> str:
                return cursor_html(run, grid[p], plots.scope_colors)

            frames.layer(f"cursor{i}", "svg", [spec.name], picture)
            frames.layer(f"row{i}", "html", [spec.name], row)
        frames.layer("end", "html", [], lambda: PANEL_CLOSE)
        return frames

    # ---- the static picture and panel ----------------------------------------------------------------
    def _figure(self) -> Any:
        return memory_figure(self.runs, self.theme, self.cursor)

    def _draw(self) -> bytes:
        if self._plots is None:
            self._plots = MemoryPlots(self.runs, self.theme)
        self._plots.show(self.cursor)
        return png_bytes(self._plots.fig)

    def _panel(self) -> str:
        by_scope = scope_colors(self.runs, self.theme)
        rows = "".join(cursor_html(r, k, by_scope) for r, k in zip(self.runs, self.cursor))
        return panel_open(self.runs) + rows + PANEL_CLOSE


def memory(profile_or_fn: Any, *args: Any, **kwargs: Any) -> MemoryView:
    """The memory widget of a profile, of several side by side, or of a function run once.

    ``profile_or_fn``: an ``eg.MemoryProfile`` (what ``eg.memory_profile(fn, *args)`` returns), a
    list of them (``labels=[...]`` names them) or a dict label → profile; or a function, which is
    profiled as ``eg.memory_profile(profile_or_fn, *args, **kwargs)`` (every argument is the
    function's). With profiles, ``labels=`` and ``theme=`` ("light", "dark"; default: JupyterLab's)
    are the only keywords.

    >>> import engine as eg
    >>> w = eg.Variable(eg.ones([3, 2]), name="w")
    >>> def step(x):
    ...     with eg.GradientTape() as tape:
    ...         loss = eg.sum(eg.tanh(x @ w))
    ...     return tape.gradient(loss, w)
    >>> view = memory(step, eg.ones([4, 3]))
    >>> view.runs[0].saved_peak_bytes > 0
    True
    """
    if callable(profile_or_fn) and not hasattr(profile_or_fn, "timeline"):
        profile = eg.memory_profile(profile_or_fn, *args, **kwargs)
        return MemoryView(profile, labels=getattr(profile_or_fn, "__name__", None))
    if args:
        raise TypeError(f"gv.memory: extra positional arguments {describe(args)} are for a function to "
                        "profile; with profiles, pass a list or a dict of them as the one argument.")
    unknown = sorted(set(kwargs) - {"labels", "theme"})
    if unknown:
        raise TypeError(f"gv.memory: unexpected keyword(s) {unknown}; with profiles, only labels= and "
                        "theme= are taken (a function's own keywords go with the function).")
    return MemoryView(profile_or_fn, labels=kwargs.get("labels"), theme=kwargs.get("theme"))

