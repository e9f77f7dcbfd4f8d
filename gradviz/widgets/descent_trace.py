"""`gv.descent(f, start)`: the descent trace.

Runs one or more engine optimizers on ``f`` from ``start`` (``compute_gradients`` then
``apply_gradients`` each step) and shows where they go: for a 2-vector ``start``, the contour plot of
``f`` with each optimizer's path; for a scalar ``start``, the curve of ``f`` with the points and the
tangent (the gradient) at the current one. A step slider moves along the paths, a learning-rate
slider re-runs them, checkboxes choose the optimizers, and a table shows the current step: θ before,
gradient, Δθ, θ after, loss and the optimizer's state (its slots).

>>> import gradviz as gv
>>> trace = gv.descent(lambda x: 0.5 * (x - 1.0) ** 2, 10.0, learning_rate=0.1, steps=10)
>>> [round(float(r["after"]), 4) for r in trace.rows()[:3]]      # after = before − 0.1·(before − 1)
[9.1, 8.29, 7.561]

The gradients, updates and slots are the engine's (the trace only records them); the one number the
widget computes itself is the 1-D table's "expected after" (``before − lr·gradient``, SGD's rule, in
the variable's dtype), a check of what the optimizer did.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import traitlets

from gradviz.model.checks import expect_numbers
from gradviz.model.descent_runs import (
    Trajectory,
    factories,
    run_optimizer,
    standard_optimizers,
)
from gradviz.render.descent_plots import DescentPlots
from gradviz.widgets.plot_widget import PlotWidget

__all__ = ["descent", "DescentTrace"]



class DescentTrace(DescentPlots, PlotWidget):
    """The descent-trace widget; see `descent`. State: ``step``, ``learning_rate``, ``selected``."""

    title = "Descent trace"

    def __init__(self, f: Callable[[Any], Any], start: Any, optimizers: Any = ("SGD",),
                 learning_rate: float = 0.1, steps: int = 50, xlim: tuple[float, float] | None = None,
                 ylim: tuple[float, float] | None = None, theme: str | None = None):
        import engine as eg

        super().__init__(theme)
        if not callable(f):
            raise TypeError(f"descent: f must be a function of one Variable, got {type(f).__name__}.")
        expect_numbers("gv.descent", "start", start)
        start_t = start if isinstance(start, eg.Tensor) else eg.constant(start)
        if start_t.dtype.kind != "f":
            start_t = eg.cast(start_t, "float32")
        self.start = start_t.numpy()
        if self.start.shape == ():
            self.mode = "1d"
        elif self.start.shape == (2,):
            self.mode = "2d"
        else:
            raise ValueError(
                f"descent: start must be a scalar (1-D trace) or a 2-vector (contour plot), got shape "
                f"{self.start.shape}."
            )
        self.f = f
        self.steps = int(steps)
        if self.steps < 1:
            raise ValueError(f"descent: steps must be >= 1, got {steps}.")
        given = factories(optimizers)
        self._makers = dict(given)
        for name in standard_optimizers():
            if name not in self._makers:
                self._makers[name] = factories([name])[name]
        self._cache: dict[tuple[str, float], Trajectory] = {}
        self._xlim, self._ylim = xlim, ylim
        self._fig: Any = None
        self._art: dict[str, Any] = {}
        self.learning_rate = learning_rate  # checked by _check_learning_rate
        self.selected = list(given)
        self._layout_box()

    # ---- state: declared once, checked once ----------------------------------------------------------
    step = traitlets.Int(0, help="The number of updates shown (0 = the start).")
    learning_rate = traitlets.Float(0.1, help="The learning rate every optimizer runs with.")
    selected = traitlets.Any((), help="The optimizers shown (a tuple of names, in the widget's order).")

    @traitlets.validate("step")
    def _check_step(self, proposal: Any) -> int:
        value = int(proposal["value"])
        if not 0 <= value <= self.steps:
            raise ValueError(f"descent: step must be in 0..{self.steps}, got {value}.")
        return value

    @traitlets.validate("learning_rate")
    def _check_learning_rate(self, proposal: Any) -> float:
        value = float(proposal["value"])
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"descent: learning_rate must be a positive number, got {proposal['value']!r}.")
        slider = self._controls_by_name.get("learning_rate")
        if slider is not None:  # a rate beyond the slider's ends: the slider grows
            exponent = math.log10(value)
            slider.min, slider.max = min(slider.min, exponent), max(slider.max, exponent)
        return value

    @traitlets.validate("selected")
    def _check_selected(self, proposal: Any) -> tuple[str, ...]:
        names = proposal["value"]
        names = [names] if isinstance(names, str) else list(names)
        for n in names:
            if n not in self._makers:
                raise ValueError(f"descent: no optimizer {n!r}; available: {', '.join(self._makers)}.")
        return tuple(n for n in self._makers if n in names)

    @traitlets.observe("step", "learning_rate", "selected")
    def _state_changed(self, change: Any) -> None:
        self._changed()

    def _shown(self, name: str, show: bool) -> tuple[str, ...]:
        """``selected`` with ``name`` shown or not (what its checkbox sets)."""
        return tuple(n for n in self._makers if n in self.selected and n != name or n == name and show)

    @property
    def optimizers(self) -> tuple[str, ...]:
        """Every optimizer the widget offers."""
        return tuple(self._makers)

    def trajectory(self, name: str | None = None) -> Trajectory:
        """The run of optimizer ``name`` (default: the first one shown) at the current learning rate."""
        if name is None:
            if not self.selected:
                raise ValueError("descent: no optimizer is selected.")
            name = self.selected[0]
        if name not in self._makers:
            raise KeyError(f"descent: no optimizer {name!r}; available: {', '.join(self._makers)}.")
        key = (name, self.learning_rate)
        if key not in self._cache:
            if len(self._cache) > 200:
                self._cache.clear()
            opt = self._makers[name](self.learning_rate)
            self._cache[key] = run_optimizer(self.f, self.start, opt, self.steps, name)
        return self._cache[key]

    def rows(self, name: str | None = None) -> list[dict[str, Any]]:
        """The trace of one optimizer as table rows: step, before, loss, gradient, expected_after
        (``before − lr·gradient``, SGD's rule), after, delta, slots."""
        traj = self.trajectory(name)
        out = []
        for u in traj.updates:
            lr = np.asarray(u.learning_rate).astype(u.before.dtype)  # the update's dtype, as the engine
            out.append({
                "step": u.step, "before": u.before, "loss": u.loss, "gradient": u.gradient,
                "expected_after": u.before - lr * u.gradient, "after": u.after, "delta": u.delta,
                "slots": u.slots, "learning_rate": u.learning_rate,
            })
        return out

    def current(self) -> dict[str, dict[str, Any]]:
        """What the table shows: per selected optimizer, θ, loss, gradient there, and the update that
        led to it (``delta``, ``slots``; None at step 0)."""
        out = {}
        for name in self.selected:
            traj = self.trajectory(name)
            k = min(self.step, len(traj.updates))
            u = traj.updates[k - 1] if k >= 1 else None
            theta = traj.points[k]
            out[name] = {
                "step": k, "theta": theta, "loss": float(traj.losses[k]), "gradient": traj.gradient_at(k),
                "delta": None if u is None else u.delta, "slots": {} if u is None else u.slots,
                "diverged_at": traj.diverged_at,
            }
        return out

    # ---- controls ------------------------------------------------------------------------------
    def _controls(self) -> dict[str, Any]:
        import ipywidgets as w

        step = w.IntSlider(value=self.step, min=0, max=self.steps, description="step",
                           continuous_update=True, layout=w.Layout(width="360px"))
        exponent = math.log10(self.learning_rate)
        lr = w.FloatLogSlider(value=self.learning_rate, base=10, min=exponent - 2, max=exponent + 1.5,
                              step=0.05, description="learning rate", readout_format=".3g",
                              continuous_update=False, style={"description_width": "initial"},
                              layout=w.Layout(width="360px"))
        controls = {"step": self.link_control("step", step),
                    "learning_rate": self.link_control("learning_rate", lr)}
        for name in self._makers:
            box = w.Checkbox(value=name in self.selected, description=name, indent=False,
                             layout=w.Layout(width="auto", margin="0 10px 0 0"))
            controls[f"show {name}"] = self.link_control(
                "selected", box, (lambda sel, n=name: n in sel, lambda show, n=name: self._shown(n, show)))
        return controls

    # ---- the table -------------------------------------------------------------------------------
    def _panel(self) -> str:
        from gradviz.render.plot import fmt

        if not self.selected:
            return "<i>Select an optimizer.</i>"
        style = ("<style>.gv-dt td,.gv-dt th{padding:1px 8px;text-align:right;font-family:monospace}"
                 ".gv-dt tr.now{background:rgba(191,135,0,.18)}</style>")
        parts = [style, "<div style='font-size:12px'>"]
        if self.mode == "1d" and len(self.selected) == 1:
            parts.append(self._trace_table())
        cur = self.current()
        head = ("<tr><th>optimizer</th><th>step</th><th>θ</th><th>loss f(θ)</th><th>gradient at θ</th>"
                "<th>last Δθ</th><th>optimizer state (slots)</th></tr>")
        rows = []
        for name, c in cur.items():
            slots = ", ".join(f"{html.escape(s)}={fmt(v)}" for s, v in c["slots"].items()) or "—"
            diverged = c["diverged_at"]
            tail = f" <span style='color:#d1242f'>(diverged at step {diverged})</span>" if diverged else ""
            rows.append(
                f"<tr><td style='text-align:left'>{html.escape(name)}</td><td>{c['step']}</td>"
                f"<td>{fmt(c['theta'])}</td><td>{fmt(c['loss'])}</td>"
                f"<td>{'—' if c['gradient'] is None else fmt(c['gradient'])}</td>"
                f"<td>{'—' if c['delta'] is None else fmt(c['delta'])}</td><td>{slots}{tail}</td></tr>"
            )
        parts.append(f"<b>step {self.step}</b>, learning rate {fmt(self.learning_rate)}"
                     f"<table class='gv-dt'>{head}{''.join(rows)}</table></div>")
        return "".join(parts)

    def _trace_table(self) -> str:
        """The seed-002 style trace (1-D, one optimizer): before, gradient, expected after, after."""
        from gradviz.render.plot import fmt, fmt_exact

        name = self.selected[0]
        rows = self.rows(name)
        k = self.step
        sgd = type(self._makers[name](self.learning_rate)).__name__ == "SGD"
        head = "<tr><th>step</th><th>before</th><th>gradient</th>"
        head += "<th>expected after<br/>before − lr·gradient</th>" if sgd else "<th>Δθ</th>"
        head += "<th>after</th></tr>"
        shown = rows[max(0, k - 10):k]
        body = []
        for r in shown:
            middle = fmt_exact(r["expected_after"]) if sgd else fmt_exact(r["delta"])
            cls = " class='now'" if r["step"] == k else ""
            body.append(f"<tr{cls}><td>{r['step']}</td><td>{fmt_exact(r['before'])}</td>"
                        f"<td>{fmt_exact(r['gradient'])}</td><td>{middle}</td><td>{fmt_exact(r['after'])}</td></tr>")
        if not body:
            body.append(f"<tr><td colspan='5' style='text-align:left'>start: θ₀ = {fmt_exact(self.start)} "
                        "(move the step slider)</td></tr>")
        lr = fmt(self.learning_rate)
        rule = f", learning rate {lr}: after = before − {lr}·gradient" if sgd else ""
        return (f"<b>{html.escape(name)} trace</b>{rule}"
                f"<table class='gv-dt'>{head}{''.join(body)}</table>")


def descent(f: Callable[[Any], Any], start: Any, optimizers: Any = ("SGD",), learning_rate: float = 0.1,
            steps: int = 50, xlim: tuple[float, float] | None = None, ylim: tuple[float, float] | None = None,
            theme: str | None = None) -> DescentTrace:
    """The descent trace of ``optimizers`` on ``f`` from ``start``.

    ``f`` maps a Variable shaped like ``start`` to a scalar loss: a scalar ``start`` gives the 1-D
    trace (the curve of f with the points), a 2-vector the contour plot with the paths.
    ``optimizers``: names (``"SGD"``, ``"Momentum"``, ``"Adagrad"``, ``"RMSProp"``, ``"Adam"``),
    ``eg.optimizers`` classes, fresh instances (copied; the slider sets their learning rate) or
    functions ``learning_rate → optimizer``; a dict gives them labels. ``xlim``/``ylim`` fix the view.

    >>> import engine as eg
    >>> bowl = lambda v: v[0] ** 2 + 10.0 * v[1] ** 2
    >>> trace = descent(bowl, [2.0, 1.0], optimizers=("SGD", "Momentum"), learning_rate=0.05, steps=30)
    >>> trace.step = 30
    >>> trace.current()["SGD"]["loss"] < 0.01
    True
    """
    return DescentTrace(f, start, optimizers=optimizers, learning_rate=learning_rate, steps=steps,
                        xlim=xlim, ylim=ylim, theme=theme)
