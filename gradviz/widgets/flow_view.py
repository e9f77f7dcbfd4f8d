"""`gv.flow`: gradient flow, per layer, over training steps; and gradient magnitude on a graph's edges.

- ``gv.flow(rec)`` with a `gv.Recorder`: each layer's (or variable's) gradient norm over the steps, and
  at the step the slider picks, bars of the gradient norm and of the update/weight ratio
  ‖Δw‖ / ‖w‖ (how far the optimizer moved the weights, relative to their size; around 1e-3 is the
  usual healthy range). A log-scale toggle and a layer/variable switch.
- ``gv.flow(model, loss=lambda: ...)`` or ``gv.flow(grads_and_vars)``: the current gradient magnitude
  of each variable (one step). A model alone (no loss) shows its weights' norms and says what to pass.
- ``gv.flow(target, tape)``: the computation graph with each edge drawn as wide as the gradient that
  flows along it (read off the engine's own backward steps, `eg.backward_steps`).

>>> import engine as eg, gradviz as gv
>>> w = eg.Variable([1.0, -2.0], name="dense/kernel")
>>> rec = gv.Recorder()
>>> for step in range(3):
...     with eg.GradientTape() as tape:
...         loss = eg.sum(w * w)
...     g = tape.gradient(loss, w)
...     rec.record(step, loss=loss, grads_and_vars=[(g, w)])
...     _ = w.assign_sub(0.1 * g)
>>> view = gv.flow(rec)
>>> view.step = 2
>>> [round(v, 3) for v in view.values("norm")]          # ‖g‖ = 2‖w‖ = 2·0.64·√5 at step 2
[2.862]

Nothing is differentiated here: the numbers are the recorder's statistics of the engine's gradients,
or (for edges) the engine's VJPs.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import traitlets

import engine as eg
from gradviz.model.edge_flow import edge_magnitudes
from gradviz.model.flow_stats import RATIO_GUIDE, STATS, summarise
from gradviz.model.recorder import RecordedSteps
from gradviz.render.edges import edge_attributes
from gradviz.render.plot import Blitter, log_axis, new_figure, plot_colors, style_axes, wants_log
from gradviz.render.plot_panels import flow_panel
from gradviz.render.recorder_plot import Recorder
from gradviz.widgets.flow_frames import draw_lines, flow_frames, short_name
from gradviz.widgets.graph_entry import graph
from gradviz.widgets.graph_view import GraphView
from gradviz.widgets.plot_widget import PlotWidget
from gradviz.widgets.view import Control, Whole

__all__ = ["flow", "FlowView", "summarise", "edge_magnitudes", "edge_attributes", "STATS"]

def _is_model(obj: Any) -> bool:
    return hasattr(obj, "trainable_variables") and not isinstance(obj, RecordedSteps | Recorder)


def _is_pairs(obj: Any) -> bool:
    return isinstance(obj, list | tuple) and len(obj) > 0 and all(
        isinstance(p, tuple | list) and len(p) == 2 and isinstance(p[1], eg.Variable) for p in obj)


class FlowView(PlotWidget):
    """Gradient flow from a `Recorder` (see `flow`). State: ``step``, ``stat``, ``by``, ``log``."""

    title = "Gradient flow"

    def __init__(self, rec: RecordedSteps, by: str = "layer", stat: str = "norm", log: bool = True,
                 note: str = "", theme: str | None = None):
        super().__init__(theme)
        if not rec.variable_names:
            raise ValueError(
                "flow: the recorder holds no gradient statistics; record them with "
                "rec.record(step, loss=..., grads_and_vars=opt.compute_gradients(...))."
            )
        self.recorder = rec
        self.note = note
        self._data: dict[tuple[str, str], tuple[list[int], list[str], np.ndarray]] = {}
        self._figs: dict[tuple, tuple[Any, dict[str, Any], Any]] = {}
        self.stat, self.by, self.log = stat, by, bool(log)  # checked by _check_stat, _check_by
        self.steps = self._summary("norm")[0]
        # the right-hand bars: update/weight, or the largest |g| when no update was recorded
        self._right = "update_ratio" if np.isfinite(summarise(rec, "update_ratio", by)[2]).any() else "max"
        self.step = self.steps[-1]

    def _summary(self, stat: str) -> tuple[list[int], list[str], np.ndarray]:
        key = (stat, self.by)
        if key not in self._data:
            self._data[key] = summarise(self.recorder, stat, self.by)
        return self._data[key]

    # ---- state: declared once, checked once ----------------------------------------------------------
    step = Whole(0, where="gv.flow", help="The training step the bars show.")
    stat = traitlets.Unicode("norm", help="The statistic the lines show (a key of STATS).")
    by = traitlets.Unicode("layer", help="'layer' or 'variable'.")
    log = traitlets.Bool(True, help="Log scale where the values span decades.")

    @traitlets.validate("step")
    def _check_step(self, proposal: Any) -> int:
        value = proposal["value"]
        if value not in self.steps:
            raise ValueError(f"flow: step {value} was not recorded; recorded steps: "
                             f"{self.steps[0]} … {self.steps[-1]}.")
        return value

    @traitlets.validate("stat")
    def _check_stat(self, proposal: Any) -> str:
        if proposal["value"] not in STATS:
            raise ValueError(f"flow: stat must be one of {', '.join(STATS)}, got {proposal['value']!r}.")
        return proposal["value"]

    @traitlets.validate("by")
    def _check_by(self, proposal: Any) -> str:
        if proposal["value"] not in ("layer", "variable"):
            raise ValueError(f"flow: by must be 'layer' or 'variable', got {proposal['value']!r}.")
        return proposal["value"]

    @traitlets.observe("step", "stat", "by", "log")
    def _state_changed(self, change: Any) -> None:
        self._changed()

    @property
    def _index(self) -> int:
        return self.steps.index(self.step)

    @property
    def names(self) -> list[str]:
        """The layers (or variables) shown, input side first."""
        return self._summary("norm")[1]

    def values(self, stat: str | None = None) -> list[float]:
        """``stat`` (default: the one shown) of each layer/variable at the current step."""
        return [float(v) for v in self._summary(stat or self.stat)[2][self._index]]

    # ---- controls: grids the browser switches between (no kernel needed) -----------------------
    kind = "flow"
    MAX_STEPS = 40  # positions of the kernel-free step slider

    def _step_grid(self) -> list[int]:
        """The recorded steps the slider offers: all of them up to `MAX_STEPS`, else `MAX_STEPS` evenly
        spread ones, always with the first, the last and the current one."""
        steps = self.steps
        if len(steps) <= self.MAX_STEPS:
            return list(steps)
        picks = {round(k * (len(steps) - 1) / (self.MAX_STEPS - 1)) for k in range(self.MAX_STEPS)}
        return sorted({steps[k] for k in picks} | {self.step})

    def _frame_controls(self) -> list[Any]:
        controls = []
        if len(self.steps) > 1:
            grid = self._step_grid()
            note = (f"all {len(grid)} recorded steps" if len(grid) == len(self.steps)
                    else f"{len(grid)} of the {len(self.steps)} recorded steps, evenly spread")
            controls.append(Control("step", "slider", grid, note=note, play=True))
            controls.append(Control("stat", "dropdown", list(STATS), list(STATS.values()),
                                          label="lines"))
        controls.append(Control("by", "dropdown", ["layer", "variable"], label="per"))
        controls.append(Control("log", "checkbox", [False, True], label="log scale"))
        return controls

    def _make_frames(self, specs: list[Any]) -> Any:
        if "stat" not in self._frame_layout()["figure_controls"]:  # a single step: no line panel
            return super()._make_frames(specs)
        return flow_frames(self, specs, **self._frame_layout())

    def _frame_layout(self) -> dict[str, Any]:
        names = ["step"] if len(self.steps) > 1 else []
        return {
            "figure_controls": ["by", "log"] + (["stat"] if names else []),
            "moving_controls": names + ["by", "log"],  # the bars do not depend on the lines' statistic
            "panel_controls": names + ["by"],
        }

    # ---- drawing -------------------------------------------------------------------------------
    def _colors(self, n: int) -> list[Any]:
        colors = plot_colors(self.theme)
        if n <= len(colors["series"]):
            return colors["series"][:n]
        from matplotlib import colormaps  # deferred: matplotlib is heavy

        cmap = colormaps["viridis"]
        return [cmap(x) for x in np.linspace(0.0, 0.9, n)]

    def _make_figure(self, lines_shown: bool = True) -> tuple[Any, dict[str, Any], list[Any]]:
        """The figure, its artists, the moving ones; ``lines_shown=False``: the line panel drawn
        hidden (`flow_frames` draws it apart, for every stat)."""
        from matplotlib.ticker import MaxNLocator  # deferred: matplotlib is heavy

        colors = plot_colors(self.theme)
        steps, names, norms = self._summary("norm")
        series = self._colors(len(names))
        many = len(steps) > 1
        height = max(3.2, 0.75 + 0.26 * len(names))
        fig = new_figure((10.0 if many else 7.0, height), theme=self.theme, dpi=80)
        moving: list[Any] = []
        art: dict[str, Any] = {}
        y = np.arange(len(names))[::-1]
        short = [short_name(n) for n in names]
        label_room = 0.1 + 0.011 * max(len(s) for s in short)  # for the bars' labels, in axes widths
        if many:
            outer = fig.add_gridspec(1, 2, width_ratios=[1.6, 2.0], wspace=label_room)
            grid = outer[1].subgridspec(1, 2, wspace=0.2)
            ax = fig.add_subplot(outer[0])
            style_axes(ax, self.theme)
            art["ax"], art["lines"] = ax, draw_lines(self, ax)
            if not lines_shown:
                for artist in art["lines"]:
                    artist.set_visible(False)
            pad = 0.05 * (steps[-1] - steps[0])  # matplotlib's margin, and the same for every stat
            ax.set_xlim(steps[0] - pad, steps[-1] + pad)  # (a NaN first update ratio moved it)
            ax.set_xlabel("step", color=colors["muted"], fontsize=9)
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            art["vline"] = ax.axvline(steps[self._index], color=colors["highlight"], lw=1.2, ls=":")
            moving.append(art["vline"])
            axn = fig.add_subplot(grid[0])
            axr = fig.add_subplot(grid[1], sharey=axn)
        else:
            grid = fig.add_gridspec(1, 2, wspace=0.2)
            axn = fig.add_subplot(grid[0])
            axr = fig.add_subplot(grid[1], sharey=axn)
        for a in (axn, axr):
            style_axes(a, self.theme)
        art["norm_bars"] = axn.barh(y, np.nan_to_num(norms[self._index]), color=series, height=0.7)
        axn.set_yticks(y)
        axn.set_yticklabels(short, fontsize=8)
        axn.set_title("gradient norm", color=colors["text"], fontsize=10, y=1.0)
        right = self._summary(self._right)[2]
        art["ratio_bars"] = axr.barh(y, np.nan_to_num(right[self._index]), color=series, height=0.7,
                                     alpha=0.85)
        axr.tick_params(labelleft=False)
        axr.set_title("update / weight" if self._right == "update_ratio" else "largest |g|",
                      color=colors["text"], fontsize=10, y=1.0)
        if self._right == "update_ratio":
            axr.axvline(RATIO_GUIDE, color=colors["muted"], lw=0.9, ls="--")
        for a, data in ((axn, norms), (axr, right)):
            finite = data[np.isfinite(data) & (data > 0)]
            guide = a is axr and self._right == "update_ratio"
            if self.log and (wants_log(data) or guide) and finite.size:
                lo = 10.0 ** math.floor(math.log10(finite.min()))
                hi = 10.0 ** math.ceil(math.log10(finite.max() * 1.05))
                if guide:
                    lo, hi = min(lo, RATIO_GUIDE / 10), max(hi, RATIO_GUIDE * 10)
                log_axis(a, "x", (lo, hi))
                for bar in art["norm_bars" if a is axn else "ratio_bars"]:
                    bar.set_x(lo / 10)  # log axes: bars start off the left edge
            else:
                a.set_xlim(0, 1.08 * (finite.max() if finite.size else 1.0))
        for bar_key in ("norm_bars", "ratio_bars"):
            moving += list(art[bar_key])
        art["step_text"] = fig.text(0.995, 0.01, "", ha="right", va="bottom", fontsize=8,
                                    color=colors["muted"])
        moving.append(art["step_text"])
        if self.note:
            fig.text(0.01, 0.01, self.note, ha="left", va="bottom", fontsize=8, color=colors["muted"])
        left = min(0.3, 0.07 + 0.0065 * max(len(s) for s in short)) if not many else 0.06
        fig.subplots_adjust(left=left, right=0.98, top=0.9, bottom=0.14)
        return fig, art, moving

    def _update(self, art: dict[str, Any]) -> None:
        steps, _, norms = self._summary("norm")
        ratios = self._summary(self._right)[2]
        k = self._index
        if "vline" in art:
            art["vline"].set_xdata([steps[k], steps[k]])
        for key, data in (("norm_bars", norms), ("ratio_bars", ratios)):
            for bar, v in zip(art[key], data[k]):
                left = bar.get_x()
                bar.set_width(max(v - left, 0.0) if np.isfinite(v) else 0.0)
        art["step_text"].set_text(f"step {steps[k]}")

    def _figure(self) -> Any:
        fig, art, _ = self._make_figure()
        self._update(art)
        return fig

    def _draw(self) -> bytes:
        key = (self.by, self.stat, self.log)
        if key not in self._figs:
            if len(self._figs) > 8:
                self._figs.clear()
            fig, art, moving = self._make_figure()
            self._figs[key] = (fig, art, Blitter(fig, moving))
        fig, art, blitter = self._figs[key]
        self._update(art)
        return blitter.render()

    def _panel(self) -> str:
        steps, names, norms = self._summary("norm")
        ratios = self._summary("update_ratio")[2]
        maxes = self._summary("max")[2]
        weights = self._summary("weight_norm")[2]
        k = self._index
        return flow_panel(steps[k], self.by, names, norms[k], maxes[k], weights[k], ratios[k], RATIO_GUIDE,
                          self.note)


def flow_graph(target: Any, tape: Any = None, names: Any = None, theme: str = "auto") -> Any:
    """``gv.graph(target, tape, names)`` with each edge as wide as the gradient flowing along it."""
    base = graph(target, tape, names=names, theme=theme)
    return GraphView(base.full_model, show=base.show, theme=theme, rankdir=base.rankdir, edge_magnitude=True)


# ---- the entry point -----------------------------------------------------------------------------------

def flow(source: Any, tape: Any = None, *, loss: Any = None, names: Any = None, by: str = "layer",
         stat: str = "norm", log: bool = True, theme: str | None = None) -> Any:
    """Gradient flow.

    ``source``:
    - a `gv.Recorder` (or its ``to_dict()``): per-layer gradient norms and update/weight ratios over
      the recorded steps, with a step slider;
    - a model (anything with ``trainable_variables``, e.g. ``eg.layers.Sequential``) with ``loss``, a
      zero-argument function returning the loss: the gradient magnitude of every variable now;
    - a list of ``(gradient, variable)`` pairs (what ``opt.compute_gradients`` returns): the same;
    - a target tensor with the ``tape`` that recorded it: the graph with edges as wide as the gradient
      flowing along them.

    ``by``: "layer" (variables grouped by name scope, ``dense_1/kernel`` → ``dense_1``) or "variable";
    ``stat``: what the line panel shows ("norm", "max", "update_ratio"); ``log``: log scales.

    >>> import engine as eg
    >>> import gradviz as gv
    >>> w = eg.Variable([1.0, 2.0], name="dense_1/kernel")
    >>> rec = gv.Recorder()
    >>> for step in range(2):
    ...     with eg.GradientTape() as tape:
    ...         loss = eg.sum(w * w)
    ...     rec.record(step, loss=loss, grads_and_vars=[(tape.gradient(loss, w), w)])
    ...
    >>> gv.flow(rec).names
    ['dense_1']
    """
    if isinstance(source, dict) and "gradients" in source:
        source = RecordedSteps.from_dict(source)
    if isinstance(source, Recorder):  # gv.Recorder: the numbers it holds
        source = source.recorded
    if isinstance(source, RecordedSteps):
        return FlowView(source, by=by, stat=stat, log=log, theme=theme)
    if isinstance(source, eg.Tensor) or isinstance(source, eg.GradientTape):
        return flow_graph(source, tape, names=names, theme=theme or "auto")
    if _is_pairs(source):
        rec = RecordedSteps()
        rec.record(0, grads_and_vars=list(source))
        return FlowView(rec, by=by, stat=stat, log=log, theme=theme,
                        note="one step: the gradients given (update/weight needs two records)")
    if _is_model(source):
        variables = [v for v in source.trainable_variables if getattr(v, "trainable", True)]
        if not variables:
            raise ValueError("flow: the model has no trainable variables (has it been called once, so "
                             "that its layers made their weights?).")
        rec = RecordedSteps()
        if loss is None:
            rec.record(0, grads_and_vars=[(None, v) for v in variables])
            return FlowView(rec, by=by, stat=stat, log=log, theme=theme,
                            note="no loss given: pass loss=lambda: ... to see the gradients")
        with eg.GradientTape() as t:
            value = loss()
        if not isinstance(value, eg.Tensor):
            raise TypeError(f"flow: loss() must return the loss tensor, got {type(value).__name__}.")
        grads = t.gradient(value, variables)
        rec.record(0, loss=value, grads_and_vars=list(zip(grads, variables)))
        return FlowView(rec, by=by, stat=stat, log=log, theme=theme,
                        note=f"gradients of the loss ({float(value.numpy().reshape(-1)[0]):.4g}) now")
    raise TypeError(
        f"flow: cannot show {type(source).__name__}; pass a gv.Recorder, a model with loss=..., a list of "
        "(gradient, variable) pairs, or a target tensor with its tape."
    )
