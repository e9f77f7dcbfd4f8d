"""`gv.clipping(grads)`: the clipping lab.

Pick a method and a threshold and see what clipping does to a set of gradients: before and after
drawn together (arrows for 2-D gradients, bars of per-variable norms otherwise), the global norm
against the threshold, and the angle between the gradient before and after. Every number comes from
the engine's clipping functions (`eg.clip_by_value`, `eg.clip_by_norm`, `eg.clip_by_global_norm`,
`eg.global_norm`, `eg.norm`); the lab only draws them.

>>> import engine as eg, gradviz as gv
>>> lab = gv.clipping([eg.constant([3.0, 4.0]), eg.constant([0.5, -2.0])], threshold=2.0,
...                   method="global norm")
>>> round(lab.result.global_norm_before, 4), round(lab.result.angle_deg, 4)
(5.4083, 0.0)

Methods (``c`` is the threshold):

- ``"value"``: ``[eg.clip_by_value(g, -c, c) for g in grads]``: each entry cut to [-c, c]; the
  direction changes.
- ``"norm"``: ``[eg.clip_by_norm(g, c, axes=-1) for g in grads]``: each row (the last axis) of each
  gradient rescaled to norm ≤ c on its own (for vectors: the same as per-variable norm).
- ``"global norm"``: ``eg.clip_by_global_norm(grads, c)``: everything scaled by one factor, so the
  global norm is ≤ c and the overall direction is kept.
- ``"per-variable norm"``: ``[eg.clip_by_norm(g, c) for g in grads]``: each variable's gradient
  rescaled on its own; the overall direction changes when the variables are scaled differently.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import traitlets

from gradviz.model.clip_results import (
    CALLS,
    MAX_ARROWS,
    METHODS,
    ClipResult,
    clip_gradients,
    measure_before,
    parse_gradients,
)
from gradviz.render import fmt
from gradviz.render.plot import Blitter, new_figure, plot_colors, style_axes
from gradviz.render.plot_panels import angle_text, clipping_panel
from gradviz.widgets.plot_widget import PlotWidget
from gradviz.widgets.view import Control, Number

__all__ = ["clipping", "ClippingLab", "ClipResult", "clip_gradients", "METHODS"]

class ClippingLab(PlotWidget):
    """The clipping lab widget; see `clipping`. State: ``method``, ``threshold``, ``result``."""

    title = "Clipping lab"
    kind = "clipping"  # data-gv-widget of the kernel-free widget

    def __init__(self, grads: Any, threshold: float | None = None, method: str = "global norm",
                 names: Sequence[str] | None = None, view: str | None = None, theme: str | None = None):
        super().__init__(theme)
        self.grads, self.names = parse_gradients(grads, names)
        self._cache: dict[tuple[str, float], ClipResult] = {}
        self._before = measure_before(self.grads)  # the same for every method and threshold
        self._global = self._before.global_norm
        self._norms = list(self._before.norms)
        arrays = [None if g is None else g.numpy() for g in self.grads]
        self._arrays = arrays
        present = [a for a in arrays if a is not None]
        # what can be drawn: the finite entries (inf/NaN ones are named in the panel, not drawn)
        self._max_abs = max((float(np.max(np.abs(a[np.isfinite(a)]))) for a in present
                             if np.isfinite(a).any()), default=0.0)
        arrows_ok = len(present) <= MAX_ARROWS and all(a.shape == (2,) for a in present)
        if view is None:
            view = "arrows" if arrows_ok else "bars"
        if view not in ("arrows", "bars"):
            raise ValueError(f"clipping: view must be 'arrows' or 'bars', got {view!r}.")
        if view == "arrows" and not arrows_ok:
            raise ValueError(
                f"clipping: the arrow view needs at most {MAX_ARROWS} gradients of shape (2,); "
                "use view='bars'."
            )
        self.view = view
        # the largest finite size in the data (an inf/NaN global norm must not make the slider 0..1.5)
        top = max((x for x in (self._global, self._max_abs, *self._norms) if math.isfinite(x)), default=0.0)
        self._slider_max = _nice(1.5 * top) if top > 0 else 1.5
        if threshold is None:
            finite_global = math.isfinite(self._global) and self._global > 0
            threshold = _nice(0.5 * (self._global if finite_global else top)) if top > 0 else 1.0
        self._fig: Any = None
        self._artists: dict[str, Any] = {}
        self.threshold = threshold  # checked by _check_threshold
        self._slider_max = max(self._slider_max, self.threshold)
        self.method = method

    # ---- state: declared once, checked once ----------------------------------------------------------
    method = traitlets.Unicode("global norm")
    threshold = Number(1.0, where="gv.clipping")

    @traitlets.validate("method")
    def _check_method(self, proposal: Any) -> str:
        value = proposal["value"]
        if value not in METHODS:
            raise ValueError(f"clipping: unknown method {value!r}; choose one of {', '.join(METHODS)}.")
        return value

    @traitlets.validate("threshold")
    def _check_threshold(self, proposal: Any) -> float:
        value = float(proposal["value"])
        if not value > 0 or not math.isfinite(value):
            raise ValueError(f"gv.clipping: the threshold must be > 0 and finite, got {value!r}.")
        return value

    @traitlets.observe("method", "threshold")
    def _state_changed(self, change: Any) -> None:
        self._changed()

    @property
    def result(self) -> ClipResult:
        """The clipping at the current method and threshold (cached)."""
        key = (self.method, self.threshold)
        if key not in self._cache:
            if len(self._cache) > 256:
                self._cache.clear()
            self._cache[key] = clip_gradients(self.grads, *key, before=self._before)
        return self._cache[key]

    # ---- controls: grids the browser switches between (no kernel needed) -----------------------
    def _threshold_grid(self) -> list[float]:
        """The thresholds the kernel-free slider offers: 40 evenly spaced up to the slider's end (3
        significant digits), and the current one."""
        top = max(self._slider_max, self.threshold)
        return sorted({float(f"{top * k / 40:.3g}") for k in range(1, 41)} | {self.threshold})

    def _frame_controls(self) -> list[Any]:
        grid = self._threshold_grid()
        note = f"{len(grid)} thresholds from {grid[0]:.3g} to {grid[-1]:.3g} (steps of {grid[-1] / 40:.3g})"
        return [
            Control("method", "dropdown", list(METHODS)),
            Control("threshold", "slider", grid, [f"{t:.4g}" for t in grid], note=note),
        ]

    # ---- drawing -------------------------------------------------------------------------------
    def _make_figure(self) -> tuple[Any, dict[str, Any]]:
        """The figure and its moving artists (those a control changes)."""
        from matplotlib.patches import Circle, Rectangle  # deferred: matplotlib is heavy

        colors = plot_colors(self.theme)
        fig = new_figure((8.4, 3.4), theme=self.theme, dpi=80)
        grid = fig.add_gridspec(1, 2, width_ratios=[1.2, 1.0], wspace=0.3)
        ax = fig.add_subplot(grid[0])
        axg = fig.add_subplot(grid[1])
        style_axes(ax, self.theme)
        style_axes(axg, self.theme)
        art: dict[str, Any] = {}
        idx = [k for k, a in enumerate(self._arrays) if a is not None]
        series = colors["series"]
        norms = [n for n in self._norms if math.isfinite(n)]
        if self.view == "arrows":
            before = _drawable(np.array([self._arrays[k] for k in idx], dtype=float).reshape(-1, 2))
            zeros = np.zeros(len(idx))
            cols = [series[j % len(series)] for j in range(len(idx))]
            ax.quiver(zeros, zeros, before[:, 0], before[:, 1], angles="xy", scale_units="xy", scale=1,
                      color=cols, alpha=0.28, width=0.011, zorder=2)
            art["after"] = ax.quiver(zeros, zeros, before[:, 0], before[:, 1], angles="xy",
                                     scale_units="xy", scale=1, color=cols, width=0.011, zorder=3)
            lim = _arrow_limit(before, self.threshold)
            ax.set_xlim(-lim, lim)
            ax.set_ylim(-lim, lim)
            art["lim"] = ax.get_xlim()[1]  # matplotlib widens a view narrower than it can draw
            ax.set_aspect("equal")
            ax.axhline(0, color=colors["spine"], lw=0.8, zorder=1)
            ax.axvline(0, color=colors["spine"], lw=0.8, zorder=1)
            art["circle"] = ax.add_patch(Circle((0, 0), 1.0, fill=False, ls="--", lw=1.3,
                                                ec=colors["threshold"], zorder=1))
            art["box"] = ax.add_patch(Rectangle((-1, -1), 2, 2, fill=False, ls="--", lw=1.3,
                                                ec=colors["threshold"], zorder=1))
            for j, k in enumerate(idx):
                drawn = bool(np.isfinite(self._arrays[k]).all() and np.isfinite(np.hypot(*before[j])))
                ax.plot([], [], color=cols[j], lw=3,
                        label=self.names[k] if drawn else f"{self.names[k]} (inf/NaN: not drawn)")
            if idx:
                ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False,
                          labelcolor=colors["text"], handlelength=1.2)
            ax.set_title("before (faded) and after", color=colors["text"], fontsize=10, y=1.0)
        else:
            y = np.arange(len(self.names))[::-1]
            before = _finite_or_zero(self._norms)
            ax.barh(y + 0.2, before, height=0.38, color=colors["before"], label="before")
            art["bars"] = ax.barh(y - 0.2, before, height=0.38, color=colors["after"], label="after")
            art["vline"] = ax.axvline(1.0, color=colors["threshold"], ls="--", lw=1.3)
            ax.set_yticks(y)
            ax.set_yticklabels(self.names, fontsize=7 if len(y) > 8 else 8)
            ax.set_ylim(-0.7, len(y) - 0.3)
            ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=2, fontsize=8, frameon=False,
                      labelcolor=colors["text"])
            ax.set_title("norm of each gradient", color=colors["text"], fontsize=10, y=1.0)
            ax.set_xlim(0, 1.08 * max(max(norms, default=1.0), self._slider_max))
        art["gbars"] = axg.barh([1, 0], _finite_or_zero([self._global, self._global]), height=0.6,
                                color=[colors["before"], colors["after"]])
        axg.set_yticks([1, 0])
        axg.set_yticklabels(["before", "after"], fontsize=9)
        axg.set_ylim(-0.6, 2.4)
        art["gline"] = axg.axvline(1.0, ymax=0.66, color=colors["threshold"], ls="--", lw=1.5)
        gmax = self._global if math.isfinite(self._global) else 1.0
        axg.set_xlim(0, 1.08 * max(gmax, self._slider_max))
        axg.set_title("global norm vs threshold", color=colors["text"], fontsize=10, y=1.0)
        art["gtext"] = axg.text(0.02, 0.97, "", transform=axg.transAxes, va="top", fontsize=8.5,
                                color=colors["text"], linespacing=1.4)
        bars = self.view == "bars"
        left = min(0.3, 0.03 + 0.0085 * max(len(n) for n in self.names)) if bars else 0.05
        fig.subplots_adjust(left=left, right=0.97, top=0.9, bottom=0.2 if bars else 0.12)
        return fig, art

    def _update(self, art: dict[str, Any]) -> None:
        r = self.result
        c = r.threshold
        if self.view == "arrows":
            after = np.array([a.numpy() for a in r.clipped if a is not None], dtype=float).reshape(-1, 2)
            after = _drawable(after)
            art["after"].set_UVC(after[:, 0], after[:, 1])
            norm_like = r.method != "value"
            # a circle (box) wholly outside the view is hidden, not drawn: a dashed curve far larger
            # than the axes is what hung the kernel (matplotlib dashes every point of it)
            lim = art["lim"]
            art["circle"].set_radius(c)
            art["circle"].set_visible(norm_like and c <= math.sqrt(2) * lim)
            art["box"].set_bounds(-c, -c, 2 * c, 2 * c)
            art["box"].set_visible(not norm_like and c <= lim)
        else:
            for bar, n in zip(art["bars"], r.norms_after):
                bar.set_width(n if math.isfinite(n) else 0.0)
            art["vline"].set_xdata([c, c])
            art["vline"].set_visible(r.method in ("norm", "per-variable norm"))
        g_after = r.global_norm_after
        art["gbars"][1].set_width(g_after if math.isfinite(g_after) else 0.0)
        art["gline"].set_xdata([c, c])
        relation = ">" if r.global_norm_before > c else "≤"
        art["gtext"].set_text(
            f"global norm {fmt.cell(r.global_norm_before)} {relation} threshold {fmt.cell(c)}\n"
            f"after {r.method} clipping: {fmt.cell(g_after)}\n"
            f"angle between before and after: {angle_text(r.angle_deg)}"
        )

    @staticmethod
    def _moving(art: dict[str, Any]) -> list[Any]:
        out: list[Any] = []
        for key in ("after", "circle", "box", "vline", "gline", "gtext"):
            if key in art:
                out.append(art[key])
        out += list(art.get("bars", [])) + [art["gbars"][1]]
        return out

    def _figure(self) -> Any:
        fig, art = self._make_figure()
        self._update(art)
        return fig

    def _draw(self) -> bytes:
        if self._fig is None:
            self._fig, self._artists = self._make_figure()
            self._blitter = Blitter(self._fig, self._moving(self._artists))
        self._update(self._artists)
        return self._blitter.render()

    def _panel(self) -> str:
        r = self.result
        bad = [n for n, a in zip(self.names, self._arrays) if a is not None and not np.isfinite(a).all()]
        shapes = [None if g is None else g.shape for g in self.grads]
        return clipping_panel(CALLS[r.method].format(c=f"{r.threshold:.4g}"), r, self.names, shapes, bad)


def _drawable(vectors: np.ndarray) -> np.ndarray:
    """Arrows as drawn: a vector with an inf/NaN entry, or too large for its length to be a float64,
    becomes a zero-length arrow (the panel names it)."""
    with np.errstate(over="ignore", invalid="ignore"):
        ok = np.isfinite(vectors).all(axis=1) & np.isfinite(np.hypot(vectors[:, 0], vectors[:, 1]))
    return np.where(ok[:, None], vectors, 0.0)


def _arrow_limit(vectors: np.ndarray, threshold: float) -> float:
    """Half the width of the arrow view: the longest arrow and the threshold circle both inside it, so
    the picture is never a speck of arrows under a huge circle (or the reverse) whatever the input.

    >>> _arrow_limit(np.zeros((1, 2)), 1.0), _arrow_limit(np.array([[3.0, 4.0]]), 2.0)
    (1.15, 5.75)
    """
    longest = float(np.max(np.hypot(vectors[:, 0], vectors[:, 1]), initial=0.0))
    lim = 1.15 * max(longest, float(threshold))
    return lim if math.isfinite(lim) else float(np.finfo(np.float64).max) / 2


def _finite_or_zero(values: Sequence[float]) -> np.ndarray:
    """Bar lengths: NaN and inf drawn as empty bars (the panel spells them out)."""
    array = np.array(values, dtype=float)
    return np.where(np.isfinite(array), array, 0.0)


def _nice(x: float) -> float:
    """``x`` rounded to 2 significant digits (slider ends and defaults)."""
    if not math.isfinite(x) or x <= 0:
        return 1.0
    digits = 1 - int(math.floor(math.log10(x)))
    return round(x, digits)


def clipping(grads: Any, threshold: float | None = None, method: str = "global norm",
             names: Sequence[str] | None = None, view: str | None = None,
             theme: str | None = None) -> ClippingLab:
    """The clipping lab for ``grads``: a list of gradients, a list of ``(gradient, variable)`` pairs
    (what ``opt.compute_gradients`` returns), or a dict ``{name: gradient}``.

    ``threshold``: the starting threshold (default: half the global norm); ``method``: one of
    ``"value"``, ``"norm"``, ``"global norm"``, ``"per-variable norm"``; ``view``: ``"arrows"``
    (default for up to 12 gradients of shape (2,)) or ``"bars"`` (per-variable norms).

    >>> lab = clipping([[0.0, 1.0, 2.0], [-2.0, 4.0]], threshold=3.0)
    >>> lab.method = "value"
    >>> lab.result.numpy()[1]
    array([-2.,  3.], dtype=float32)
    """
    return ClippingLab(grads, threshold=threshold, method=method, names=names, view=view, theme=theme)
