"""`gv.check_gradients(f, *args)`: the engine's gradients against central differences, in float64.

The arithmetic is `gradviz.model.gradient_check`'s; this module shows it. For each input, element by
element: the analytic gradient (``eg.gradients_function(f)``, the
engine's backward pass) beside the numerical one, ``(f(x + h) − f(x − h)) / 2h``, their difference
and relative error, coloured pass / fail, with a summary. The returned object also carries the
numbers, for exercises: ``.ok``, ``.max_rel_error``, ``.analytic``, ``.numeric``.

>>> import engine as eg, gradviz as gv
>>> check = gv.check_gradients(lambda x, y: x * x - 2 * x * y + 3 * y, 2.0, 1.0)
>>> check.ok, [float(g) for g in check.analytic]
(True, [2.0, -1.0])
>>> check.max_rel_error < 1e-8
True

A non-scalar ``f`` is differentiated as the sum of its elements (what ``tape.gradient`` does).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import traitlets

from gradviz.model.gradient_check import GradientComparison, compare_gradients
from gradviz.render import fmt
from gradviz.render.plot import log_axis, new_figure, plot_colors, png_bytes, style_axes
from gradviz.render.plot_panels import gradient_check_panel
from gradviz.widgets.plot_widget import PlotWidget
from gradviz.widgets.view import Control

__all__ = ["check_gradients", "GradientCheck"]

_RESULT_FIELDS = [f.name for f in dataclasses.fields(GradientComparison)]


class GradientCheck(PlotWidget):
    """The result of `check_gradients`: a table per input, a picture, and the numbers.

    Attributes: ``ok`` (every checked element within its error bound), ``max_rel_error``, ``analytic``,
    ``numeric``, ``abs_error``, ``rel_error``, ``bound`` (the largest abs_error allowed), ``passed`` (one
    array per input), ``names``, ``value`` (f at the inputs), ``checked`` (the flat indices checked per
    input: all, unless sampled).
    """

    title = "Gradient check"
    kind = "check_gradients"  # data-gv-widget of the kernel-free widget

    def __init__(self, f: Callable, args: Sequence[Any], eps: float = 1e-6, rtol: float = 1e-5,
                 atol: float = 1e-7, max_elements: int = 2000, seed: int = 0, theme: str | None = None):
        super().__init__(theme)
        self.result = compare_gradients(f, args, eps=eps, rtol=rtol, atol=atol, max_elements=max_elements,
                                        seed=seed)
        for name in _RESULT_FIELDS:  # the numbers, as attributes of the widget (``check.ok``...)
            setattr(self, name, getattr(self.result, name))
        self.input = self.names[0]

    # ---- state: declared once, checked once ----------------------------------------------------------
    input = traitlets.Unicode("", help="The input whose table is shown.")
    failures_only = traitlets.Bool(False, help="Show only the elements that disagree.")

    @traitlets.validate("input")
    def _check_input(self, proposal: Any) -> str:
        if proposal["value"] not in self.names:
            raise ValueError(f"check_gradients: no input {proposal['value']!r}; "
                             f"inputs: {', '.join(self.names)}.")
        return proposal["value"]

    @traitlets.observe("input", "failures_only")
    def _state_changed(self, change: Any) -> None:
        self._changed()

    @property
    def _input(self) -> int:
        return self.names.index(self.input)

    def rows(self, name: str | None = None) -> list[dict[str, Any]]:
        """The checked elements of one input: index, x, analytic, numeric, abs_error, rel_error, ok."""
        return self.result.rows(self._input if name is None else self.names.index(name))

    def summary(self) -> str:
        """One line: how many elements agree, and the largest relative error."""
        return self.result.summary()

    def __repr__(self) -> str:
        return f"<GradientCheck ok={self.ok} max_rel_error={self.max_rel_error:.3g} inputs={self.names}>"

    # ---- controls: the browser switches between panels computed here (no kernel needed) ------------
    def _frame_controls(self) -> list[Any]:
        controls = []
        if len(self.names) > 1:
            controls.append(Control("input", "dropdown", list(self.names)))
        only = Control("failures_only", "checkbox", [False, True], label="failures only")
        controls.append(only)
        return controls

    # ---- drawing -------------------------------------------------------------------------------
    def _figure(self) -> Any:
        from matplotlib.ticker import MaxNLocator  # deferred: matplotlib is heavy

        colors = plot_colors(self.theme)
        fig = new_figure((8.0, 2.8), theme=self.theme, dpi=80)
        ax, axr = fig.subplots(1, 2, gridspec_kw={"wspace": 0.3})
        for a in (ax, axr):
            style_axes(a, self.theme)
        every = []
        offset = 0
        for k, name in enumerate(self.names):
            idx = self.checked[k]
            a = self.analytic[k].reshape(-1)[idx]
            n = self.numeric[k].reshape(-1)[idx]
            color = colors["series"][k % len(colors["series"])]
            ax.scatter(n, a, s=14, color=color, label=name, zorder=3)
            bad = ~self.passed[k]
            if bad.any():
                ax.scatter(n[bad], a[bad], s=60, facecolors="none", edgecolors=colors["bad"], zorder=4)
            rel = self.rel_error[k]
            xs = np.arange(offset, offset + len(idx))
            shown = np.where(np.isfinite(rel), np.maximum(rel, 1e-17), np.nan)
            dots = np.where(self.passed[k], color, colors["bad"]).tolist()
            axr.scatter(xs, shown, s=10, color=dots, zorder=3)
            offset += len(idx)
            every += [a, n]
        values = np.concatenate(every) if every else np.zeros(1)
        values = values[np.isfinite(values)]
        lo, hi = (float(values.min()), float(values.max())) if values.size else (-1.0, 1.0)
        pad = 0.05 * (hi - lo) if hi > lo else 1.0
        ax.plot([lo - pad, hi + pad], [lo - pad, hi + pad], color=colors["muted"], lw=1, ls="--", zorder=2)
        ax.set_xlabel("numerical (central differences)", color=colors["muted"], fontsize=8)
        ax.set_ylabel("analytic (engine)", color=colors["muted"], fontsize=8)
        ax.set_title("analytic vs numerical", color=colors["text"], fontsize=10, y=1.0)
        if len(self.names) > 1:
            ax.legend(fontsize=7, frameon=False, labelcolor=colors["text"])
        log_axis(axr, "y", (1e-17, 1.0))
        axr.axhline(self.rtol, color=colors["threshold"], lw=1, ls="--")
        axr.set_xlabel("element (inputs one after another)", color=colors["muted"], fontsize=8)
        axr.xaxis.set_major_locator(MaxNLocator(integer=True))
        axr.set_title(f"relative error (tolerance {self.rtol:g})", color=colors["text"], fontsize=10, y=1.0)
        fig.subplots_adjust(left=0.09, right=0.98, top=0.88, bottom=0.18)
        return fig

    def _draw(self) -> bytes:
        if not hasattr(self, "_png_cache"):
            self._png_cache = png_bytes(self._figure())  # the picture does not depend on the controls
        return self._png_cache

    def _panel(self, limit: int = 40) -> str:
        k = self._input
        rows = self.rows()
        if self.failures_only:
            rows = [r for r in rows if not r["ok"]]
        note = ""
        if len(rows) > limit:
            rows = sorted(rows, key=lambda r: -(r["abs_error"] / r["bound"] if math.isfinite(r["rel_error"])
                                                 else np.inf))
            note = f"showing the {limit} errors largest against their bounds, of {len(rows)} elements"
            rows = rows[:limit]
        rule = (f"f = {fmt.cell(self.value)}; h = {self.eps:g}·max(1, |x|); pass when |difference| ≤ "
                f"{self.atol:g} + {self.rtol:g}·max(|analytic|, |numerical|)")
        nones = [n for n, none in zip(self.names, self.none_gradient) if none]
        return gradient_check_panel(rows, self.summary(), self.ok, rule, nones, self.names[k],
                                    self.inputs[k].shape, note)


def check_gradients(f: Callable[..., Any], *args: Any, eps: float = 1e-6, rtol: float = 1e-5,
                    atol: float = 1e-7, max_elements: int = 2000, seed: int = 0,
                    theme: str | None = None) -> GradientCheck:
    """Compare ``f``'s analytic gradients (the engine's) with central differences, in float64.

    ``args``: the point to check at (numbers, lists, arrays or tensors; all converted to float64).
    ``eps``: the step, scaled by ``max(1, |x|)``; an element passes when
    ``|analytic − numerical| ≤ atol + rtol·max(|analytic|, |numerical|) + 4·u·F/h``: the last term is
    the rounding error of f's own sum (``u`` the machine epsilon of f's dtype, ``F`` the sum of
    ``|f(x ± h)|``), so a correct gradient of a large sum is not flagged; an element outside it is
    measured again with a 100× larger step and fails only if it disagrees there too
    (`gradviz.model.gradient_check`). Inputs with more than ``max_elements`` elements, or so large that
    checking that many would evaluate f over more than 2·10⁸ elements in all, are checked on a seeded
    random sample (``seed``; at least 64 elements).

    >>> import engine as eg
    >>> bad = check_gradients(lambda x: eg.relu(x), [0.0, 2.0])    # relu has a kink at 0
    >>> bad.ok
    False
    """
    return GradientCheck(f, args, eps=eps, rtol=rtol, atol=atol, max_elements=max_elements, seed=seed,
                         theme=theme)
