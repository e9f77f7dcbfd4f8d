"""`gv.descent(f, start)`: the descent trace.

Runs one or more engine optimizers on ``f`` from ``start`` (``compute_gradients`` then
``apply_gradients`` each step) and shows where they go: for a 2-vector ``start``, the contour plot of
``f`` with each optimizer's path; for a scalar ``start``, the curve of ``f`` with the points and the
tangent (the gradient) at the current one. A step slider moves along the paths, a learning-rate
slider picks the rate they ran with, a momentum slider Momentum's μ and Adam's β₁ (for the optimizers
given by name or class), checkboxes choose the optimizers, and a table shows the current step: θ
before, gradient, Δθ, θ after, loss and the optimizer's state (its slots). Every path at every rate
(and momentum) of the sliders' grids is computed when the widget is made
(`gradviz.widgets.descent_frames`): the controls work with no kernel, in the lab and in an exported
page.

>>> import gradviz as gv
>>> trace = gv.descent(lambda x: 0.5 * (x - 1.0) ** 2, 10.0, learning_rate=0.1, steps=10)
>>> [round(float(r["after"]), 4) for r in trace.rows()[:3]]      # after = before − 0.1·(before − 1)
[9.1, 8.29, 7.561]

The gradients, updates and slots are the engine's (the trace only records them); the one number the
widget computes itself is the 1-D table's "expected after" (``before − lr·gradient``, SGD's rule, in
the variable's dtype), a check of what the optimizer did.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import traitlets

import engine as eg
from gradviz.model.checks import expect_callable, expect_number, expect_numbers, wrong_type
from gradviz.model.descent_runs import (
    Trajectory,
    factories,
    follows_momentum,
    run_optimizer,
    standard_optimizers,
)
from gradviz.model.descent_scene import descent_scene, trace_mode
from gradviz.render.descent_plots import DescentPlots, descent_figure
from gradviz.render.html import grids_note
from gradviz.render.plot import plot_colors
from gradviz.widgets.descent_frames import (
    MAX_STEPS,
    descent_frames,
    momentum_grid,
    panel_parts,
    rate_grid,
    step_grid,
)
from gradviz.widgets.plot_widget import PlotWidget
from gradviz.widgets.view import Control, Number, Whole

__all__ = ["descent", "DescentTrace"]


class DescentTrace(PlotWidget):
    """The descent-trace widget; see `descent`. State: ``step``, ``learning_rate``, ``momentum``,
    ``selected``."""

    title = "Descent trace"
    kind = "descent"  # data-gv-widget of the kernel-free widget

    def __init__(self, f: Callable[[Any], Any], start: Any, optimizers: Any = ("SGD",),
                 learning_rate: float = 0.1, steps: int = 50, xlim: tuple[float, float] | None = None,
                 ylim: tuple[float, float] | None = None, theme: str | None = None, momentum: float = 0.9):
        super().__init__(theme)
        expect_callable("gv.descent", "f", f, "Pass a function of one Variable that returns the loss.")
        expect_numbers("gv.descent", "start", start)
        self.steps = _check_steps(steps)
        self._rate_anchor = _check_rate(learning_rate)
        self._momentum_anchor = _check_momentum(momentum)
        xlim, ylim = _check_limits("xlim", xlim), _check_limits("ylim", ylim)
        start_t = start if isinstance(start, eg.Tensor) else eg.constant(start)
        if start_t.dtype.kind != "f":
            start_t = eg.cast(start_t, "float32")
        self.start = start_t.numpy()
        self.mode = trace_mode(self.start)
        self.f = f
        given = factories(optimizers)
        self._makers = dict(given)
        for name in standard_optimizers():
            if name not in self._makers:
                self._makers[name] = factories([name])[name]
        #: the optimizers the momentum slider drives, and the attribute it sets (μ or β₁)
        self._momentum_attr = {n: a for n, make in self._makers.items() if (a := follows_momentum(make))}
        self._cache: dict[tuple[str, float, float | None], Trajectory] = {}
        self.learning_rate = learning_rate  # checked by _check_learning_rate
        self.momentum = momentum
        self.selected = list(given)
        #: the pictures' box, f on a grid there and the loss axis, fixed by the first paths shown
        self.scene = descent_scene(f, self.start, [self.trajectory(n) for n in self.selected], self.steps,
                                   xlim=xlim, ylim=ylim)
        self._plots: DescentPlots | None = None  # the figure the widget's PNG is drawn from (`_draw`)

    # ---- state: declared once, checked once ----------------------------------------------------------
    step = Whole(0, where="gv.descent", help="The number of updates shown (0 = the start).")
    learning_rate = Number(0.1, where="gv.descent", help="The learning rate every optimizer runs with.")
    momentum = Number(0.9, where="gv.descent",
                      help="Momentum's μ and Adam's β₁ (optimizers given by name or class).")
    selected = traitlets.Any((), help="The optimizers shown (a tuple of names, in the widget's order).")

    @traitlets.validate("step")
    def _check_step(self, proposal: Any) -> int:
        value = int(proposal["value"])
        if not 0 <= value <= self.steps:
            raise ValueError(f"descent: step must be in 0..{self.steps}, got {value}.")
        return value

    @traitlets.validate("learning_rate")
    def _check_learning_rate(self, proposal: Any) -> float:
        return _check_rate(proposal["value"])

    @traitlets.validate("momentum")
    def _check_momentum_value(self, proposal: Any) -> float:
        return _check_momentum(proposal["value"])

    @traitlets.validate("selected")
    def _check_selected(self, proposal: Any) -> tuple[str, ...]:
        names = proposal["value"]
        names = [names] if isinstance(names, str) else list(names)
        for n in names:
            if n not in self._makers:
                raise ValueError(f"descent: no optimizer {n!r}; available: {', '.join(self._makers)}.")
        return tuple(n for n in self._makers if n in names)

    @traitlets.observe("step", "learning_rate", "momentum", "selected")
    def _state_changed(self, change: Any) -> None:
        self._changed()

    def _shown(self, name: str, show: bool) -> tuple[str, ...]:
        """``selected`` with ``name`` shown or not (what its checkbox sets)."""
        return tuple(n for n in self._makers if n in self.selected and n != name or n == name and show)

    @property
    def xlim(self) -> tuple[float, float]:
        """The picture's θ range (θ[0] in 2-D)."""
        return self.scene.xlim

    @property
    def ylim(self) -> tuple[float, float]:
        """The picture's f(θ) range (θ[1] in 2-D)."""
        return self.scene.ylim

    @property
    def optimizers(self) -> tuple[str, ...]:
        """Every optimizer the widget offers."""
        return tuple(self._makers)

    def colors(self) -> dict[str, str]:
        """Each optimizer's colour: the engine's optimizers keep theirs whatever the selection (their
        place in ``eg.optimizers.names()``); others take the next ones."""
        series = plot_colors(self.theme)["series"]
        standard = list(standard_optimizers())
        others = iter(range(len(standard), len(standard) + len(self._makers)))
        return {n: series[(standard.index(n) if n in standard else next(others)) % len(series)]
                for n in self._makers}

    def is_sgd(self, name: str) -> bool:
        """Whether optimizer ``name`` is plain SGD (its table shows ``before − lr·gradient``)."""
        return type(self._makers[name](self.learning_rate)) is eg.optimizers.SGD

    def follows_momentum(self, name: str) -> bool:
        """Whether the momentum slider sets optimizer ``name``'s μ (Momentum) or β₁ (Adam)."""
        return name in self._momentum_attr

    def run(self, name: str, learning_rate: float, momentum: float | None = None) -> Trajectory:
        """The run of optimizer ``name`` at ``learning_rate`` and ``momentum`` (default: the slider's;
        ignored by optimizers the slider does not drive), computed once, then cached."""
        if name not in self._makers:
            raise KeyError(f"descent: no optimizer {name!r}; available: {', '.join(self._makers)}.")
        attr = self._momentum_attr.get(name)
        mu = None if attr is None else float(self.momentum if momentum is None else momentum)
        key = (name, float(learning_rate), mu)
        if key not in self._cache:
            if len(self._cache) > 2000:
                self._cache.clear()
            opt = self._makers[name](float(learning_rate))
            if attr is not None:
                setattr(opt, attr, mu)
            self._cache[key] = run_optimizer(self.f, self.start, opt, self.steps, name)
        return self._cache[key]

    def trajectory(self, name: str | None = None) -> Trajectory:
        """The run of optimizer ``name`` (default: the first one shown) at the current learning rate."""
        if name is None:
            if not self.selected:
                raise ValueError("descent: no optimizer is selected.")
            name = self.selected[0]
        return self.run(name, self.learning_rate)

    def rows(self, name: str | None = None, learning_rate: float | None = None,
             momentum: float | None = None) -> list[dict[str, Any]]:
        """The trace of one optimizer as table rows: step, before, loss, gradient, expected_after
        (``before − lr·gradient``, SGD's rule), after, delta, slots."""
        if learning_rate is None and momentum is None:
            traj = self.trajectory(name)
        else:
            traj = self.run(name, self.learning_rate if learning_rate is None else learning_rate, momentum)
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

    # ---- controls: grids the browser switches between (no kernel needed) -----------------------
    def step_grid(self) -> list[int]:
        """The steps the step slider offers (`gradviz.widgets.descent_frames.step_grid`)."""
        return step_grid(self.steps, self.step)

    def rate_grid(self) -> list[float]:
        """The learning rates the slider offers: 1, 2, 5 per decade from lr/100 to 50·lr (lr: the one
        the widget was made with), and the current one."""
        return rate_grid(self._rate_anchor, self.learning_rate)

    def momentum_grid(self) -> list[float]:
        """The momenta the momentum slider offers (`gradviz.widgets.descent_frames.momentum_grid`)."""
        return momentum_grid(self._momentum_anchor, self.momentum)

    def _frame_controls(self) -> list[Any]:
        steps, rates = self.step_grid(), self.rate_grid()
        step_note = "" if len(steps) == self.steps + 1 else \
            f"{len(steps)} of the {self.steps} steps (every {self.steps / (len(steps) - 1):.3g}th)"
        rate_note = (f"{len(rates)} rates from {rates[0]:.3g} to {rates[-1]:.3g} (1, 2, 5 per decade, and "
                     f"{self._rate_anchor:.3g}); the slider snaps to these, its label shows the rate run")
        specs = [Control("step", "slider", steps, note=step_note, play=True),
                 Control("learning_rate", "slider", rates, [f"{r:.3g}" for r in rates],
                               label="learning rate", note=rate_note)]
        if self._momentum_attr:
            moms = self.momentum_grid()
            which = " and ".join(f"{n}'s {'μ' if a == 'momentum' else 'β₁'}"
                                 for n, a in self._momentum_attr.items())
            specs.append(Control("momentum", "slider", moms, [f"{m:g}" for m in moms],
                                       label="momentum", note=f"{len(moms)} values of {which}"))
        for name in self._makers:
            specs.append(Control(f"show {name}", "checkbox", [False, True], ["off", "on"], name,
                                 get=lambda view, n=name: n in view.selected,
                                 set=lambda view, on, n=name: setattr(view, "selected", view._shown(n, on))))
        return specs

    def _make_frames(self, specs: list[Any]) -> Any:
        return descent_frames(self, specs, note=grids_note(specs))

    # ---- the picture and the tables ------------------------------------------------------------------
    def _shown_runs(self) -> dict[str, Trajectory]:
        """The run of each optimizer shown, at the sliders' rate and momentum."""
        return {name: self.trajectory(name) for name in self.selected}

    def _figure(self) -> Any:
        return descent_figure(self.scene, self.colors(), self.theme, self._shown_runs(), self.step)

    def _draw(self) -> bytes:
        if self._plots is None:
            self._plots = DescentPlots(self.scene, self.colors(), self.theme)
        return self._plots.png(self._shown_runs(), self.step)

    def _panel(self) -> str:
        return "".join(panel_parts(self))


def _check_steps(steps: Any) -> int:
    if isinstance(steps, bool) or not isinstance(steps, int | np.integer):
        raise wrong_type("gv.descent", "steps", "a whole number", steps)
    if not 1 <= steps <= MAX_STEPS:
        raise ValueError(
            f"descent: steps must be in 1..{MAX_STEPS:,}, got {steps:,}: the widget runs every step of "
            f"each optimizer at each learning rate of its slider's grid when it is made (time), and keeps "
            f"every step's numbers for the browser (memory, page size). Show fewer steps, or run the "
            f"optimizer yourself for long runs."
        )
    return int(steps)


def _check_rate(value: Any) -> float:
    value = expect_number("gv.descent", "learning_rate", value)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"descent: learning_rate must be a positive number (> 0 and finite), got {value!r}.")
    return float(value)


def _check_momentum(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise wrong_type("gv.descent", "momentum", "a number", value)
    if not (math.isfinite(value) and 0 <= value < 1):
        raise ValueError(f"descent: momentum must be in [0, 1) (Momentum's μ, Adam's β₁), got {value!r}.")
    return float(value)


def _check_limits(what: str, lim: Any) -> tuple[float, float] | None:
    if lim is None:
        return None
    try:
        lo, hi = (float(v) for v in lim)
    except (TypeError, ValueError):
        raise wrong_type("gv.descent", what, "a pair (low, high) of numbers", lim) from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"descent: {what} must be finite with low < high, got {lim!r}.")
    return lo, hi


def descent(f: Callable[[Any], Any], start: Any, optimizers: Any = ("SGD",), learning_rate: float = 0.1,
            steps: int = 50, xlim: tuple[float, float] | None = None, ylim: tuple[float, float] | None = None,
            theme: str | None = None, momentum: float = 0.9) -> DescentTrace:
    """The descent trace of ``optimizers`` on ``f`` from ``start``.

    ``f`` maps a Variable shaped like ``start`` to a scalar loss: a scalar ``start`` gives the 1-D
    trace (the curve of f with the points), a 2-vector the contour plot with the paths.
    ``optimizers``: names (``"SGD"``, ``"Momentum"``, ``"Adagrad"``, ``"RMSProp"``, ``"Adam"``),
    ``eg.optimizers`` classes, fresh instances (copied; the slider sets their learning rate) or
    functions ``learning_rate → optimizer``; a dict gives them labels. ``xlim``/``ylim`` fix the view.
    ``steps``: 1 to `MAX_STEPS` (1,000); ``learning_rate``: a positive number, the middle of the
    slider's grid (1, 2, 5 per decade from ``learning_rate``/100 to 50·``learning_rate``);
    ``momentum``: in [0, 1), Momentum's μ and Adam's β₁ for the optimizers given by name or class, on a
    slider of its own (`gradviz.widgets.descent_frames.momentum_grid`); instances and functions keep
    theirs.

    >>> import engine as eg
    >>> bowl = lambda v: v[0] ** 2 + 10.0 * v[1] ** 2
    >>> trace = descent(bowl, [2.0, 1.0], optimizers=("SGD", "Momentum"), learning_rate=0.05, steps=30)
    >>> trace.step = 30
    >>> trace.current()["SGD"]["loss"] < 0.01
    True
    """
    return DescentTrace(f, start, optimizers=optimizers, learning_rate=learning_rate, steps=steps,
                        xlim=xlim, ylim=ylim, theme=theme, momentum=momentum)
