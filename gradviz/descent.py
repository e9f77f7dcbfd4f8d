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

import copy
import html
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._plotwidget import PlotWidget

__all__ = ["descent", "DescentTrace", "Trajectory", "Update", "run_optimizer", "STANDARD_OPTIMIZERS"]

#: The optimizers the widget offers (checkboxes), by the names of ``eg.optimizers``.
STANDARD_OPTIMIZERS = ("SGD", "Momentum", "Adagrad", "RMSProp", "Adam")
_ALIASES = {"sgd": "SGD", "gradientdescent": "SGD", "gd": "SGD", "momentum": "Momentum",
            "adagrad": "Adagrad", "rmsprop": "RMSProp", "adam": "Adam"}


def _optimizers_module() -> Any:
    import importlib

    return importlib.import_module("engine.optimizers")


@dataclass
class Update:
    """One optimizer step, as the engine did it (arrays are host copies)."""

    step: int  # 1, 2, ...
    before: np.ndarray
    loss: float  # f(before)
    gradient: np.ndarray  # what compute_gradients returned at `before`
    after: np.ndarray  # the variable after apply_gradients
    learning_rate: float
    slots: dict[str, np.ndarray] = field(default_factory=dict)  # after the update

    @property
    def delta(self) -> np.ndarray:
        return self.after - self.before


@dataclass
class Trajectory:
    """The path of one optimizer from ``start``: its updates, and where it stopped."""

    name: str
    learning_rate: float
    start: np.ndarray
    updates: list[Update]
    final_loss: float  # f at the last point
    final_gradient: np.ndarray | None  # the gradient there (for the tangent / arrow at the end)
    diverged_at: int | None = None  # the first step whose result is not finite

    @property
    def points(self) -> np.ndarray:
        """θ₀ (the start), θ₁, …: shape ``(n + 1,) + start.shape``."""
        return np.stack([self.start] + [u.after for u in self.updates])

    @property
    def losses(self) -> np.ndarray:
        """f(θ₀), f(θ₁), …: shape ``(n + 1,)``."""
        return np.array([u.loss for u in self.updates] + [self.final_loss], dtype=float)

    def gradient_at(self, k: int) -> np.ndarray | None:
        """The gradient at θ_k."""
        return self.updates[k].gradient if k < len(self.updates) else self.final_gradient


def _make_var(start: np.ndarray) -> Any:
    import engine as eg

    return eg.Variable(eg.constant(start), name="theta")


def _loss_value(loss: Any) -> float:
    import engine as eg

    if not isinstance(loss, eg.Tensor):
        raise TypeError(f"descent: f must return an engine Tensor (the loss), got {type(loss).__name__}.")
    if loss.size != 1:
        raise ValueError(
            f"descent: f must return a scalar loss, got shape {loss.shape}; reduce it, e.g. eg.sum(...)."
        )
    return float(loss.numpy().reshape(()))


def run_optimizer(f: Callable[[Any], Any], start: np.ndarray, optimizer: Any, steps: int,
                  name: str | None = None) -> Trajectory:
    """Run ``optimizer`` (a fresh engine optimizer) on ``f`` from ``start`` for ``steps`` steps.

    Each step: the loss under a `GradientTape`, ``optimizer.compute_gradients(loss, [θ], tape=tape)``,
    then ``optimizer.apply_gradients``; θ, the gradient, the slots and the loss are recorded. Stops at
    the first step whose loss or result is not finite (``diverged_at``).
    """
    import engine as eg

    var = _make_var(start)
    updates: list[Update] = []
    diverged = None
    for k in range(1, int(steps) + 1):
        before = var.numpy()
        with eg.GradientTape() as tape:
            loss = f(var)
        value = _loss_value(loss)
        pairs = optimizer.compute_gradients(loss, [var], tape=tape)
        grad = pairs[0][0]
        if grad is None:
            raise ValueError("descent: the gradient of f is None: f does not depend on its argument "
                             "(or it cut the path with eg.stop_gradient / .numpy()).")
        lr = optimizer.current_learning_rate()
        optimizer.apply_gradients(pairs)
        after = var.numpy()
        slots = {s: v.numpy() for s, v in optimizer.slots(var).items()}
        updates.append(Update(k, before, value, grad.numpy(), after, lr, slots))
        if not (math.isfinite(value) and np.all(np.isfinite(after))):
            diverged = k
            break
    if diverged is None:
        with eg.GradientTape() as tape:
            loss = f(var)
        final_loss = _loss_value(loss)
        g = tape.gradient(loss, var)
        final_grad = None if g is None else g.numpy()
        if not math.isfinite(final_loss):
            diverged = len(updates)
    else:
        final_loss, final_grad = math.nan, None
    return Trajectory(name or getattr(optimizer, "name", type(optimizer).__name__),
                      float(optimizer.current_learning_rate(0)), np.asarray(start), updates,
                      final_loss, final_grad, diverged)


# ---- optimizers: names, classes, instances, factories -------------------------------------------------

def _factory(spec: Any) -> tuple[str, Callable[[float], Any]]:
    """A label and a function ``lr → fresh optimizer`` for one entry of ``optimizers``."""
    opts = _optimizers_module()
    if isinstance(spec, str):
        key = _ALIASES.get(spec.replace(" ", "").replace("_", "").lower())
        if key is None:
            raise ValueError(
                f"descent: unknown optimizer {spec!r}; use one of {', '.join(STANDARD_OPTIMIZERS)}, an "
                "eg.optimizers class or instance, or a function learning_rate → optimizer."
            )
        cls = getattr(opts, key)
        if key == "Momentum":
            return key, lambda lr: cls(learning_rate=lr, momentum=0.9)
        return key, lambda lr: cls(learning_rate=lr)
    if isinstance(spec, opts.Optimizer):
        if spec.iterations:
            raise ValueError(
                f"descent: the optimizer {spec.name!r} has already taken {spec.iterations} steps; pass a "
                "fresh one (the trace starts from a clean state)."
            )
        template = copy.deepcopy(spec)

        def from_instance(lr: float) -> Any:
            opt = copy.deepcopy(template)
            opt.learning_rate = lr
            return opt

        return spec.name, from_instance
    if isinstance(spec, type) and issubclass(spec, opts.Optimizer):
        return spec.__name__, lambda lr: spec(learning_rate=lr)
    if callable(spec):
        probe = spec(0.1)
        if not isinstance(probe, opts.Optimizer):
            raise TypeError(f"descent: the function {spec!r} must return an eg.optimizers optimizer, "
                            f"got {type(probe).__name__}.")
        return probe.name, spec
    raise TypeError(f"descent: cannot use {spec!r} as an optimizer.")


def _factories(optimizers: Any) -> dict[str, Callable[[float], Any]]:
    if isinstance(optimizers, str) or not isinstance(optimizers, Sequence | Mapping):
        optimizers = (optimizers,)
    items = optimizers.items() if isinstance(optimizers, Mapping) else [(None, o) for o in optimizers]
    out: dict[str, Callable[[float], Any]] = {}
    for label, spec in items:
        name, make = _factory(spec)
        name = str(label) if label is not None else name
        base, k = name, 1
        while name in out:
            k += 1
            name = f"{base} ({k})"
        out[name] = make
    if not out:
        raise ValueError("descent: give at least one optimizer.")
    return out


# ---- evaluating f on a grid (for the contour / curve) -----------------------------------------------

def _evaluate_many(f: Callable[[Any], Any], points: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """f at each row of ``points`` (shape (N,) for 1-D, (N, 2) for 2-D), vectorised when f allows.

    First f is called once on all points stacked along a new last axis (``v[0]`` is then a vector of
    x values); the result is kept only if it has one value per point and matches f at a few points
    evaluated one by one. Otherwise f is called point by point.
    """
    import engine as eg

    def one(p: np.ndarray) -> float:
        return float(np.asarray(f(eg.constant(np.asarray(p, dtype=dtype)))).reshape(()))

    n = points.shape[0]
    stacked = np.ascontiguousarray(points.T if points.ndim == 2 else points, dtype=dtype)
    try:
        out = np.asarray(f(eg.constant(stacked)), dtype=float)
        if out.shape == (n,):
            probe = np.random.default_rng(0).choice(n, size=min(n, 4), replace=False)
            if all(np.isclose(out[i], one(points[i]), rtol=1e-4, atol=1e-6, equal_nan=True) for i in probe):
                return out
    except Exception:  # noqa: BLE001  (f may not accept a batch: then evaluate point by point)
        pass
    return np.array([one(p) for p in points], dtype=float)


def _nice_box(lo: float, hi: float, pad: float = 0.12) -> tuple[float, float]:
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return -1.0, 1.0
    width = hi - lo
    if width <= 0:
        width = max(abs(lo), 1.0)
        return lo - width, hi + width
    return lo - pad * width, hi + pad * width


class DescentTrace(PlotWidget):
    """The descent-trace widget; see `descent`. State: ``step``, ``learning_rate``, ``selected``."""

    title = "Descent trace"

    def __init__(self, f: Callable[[Any], Any], start: Any, optimizers: Any = ("SGD",),
                 learning_rate: float = 0.1, steps: int = 50, xlim: tuple[float, float] | None = None,
                 ylim: tuple[float, float] | None = None, theme: str | None = None):
        import engine as eg

        super().__init__(theme)
        if not callable(f):
            raise TypeError(f"descent: f must be a function of one Variable, got {type(f).__name__}.")
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
        lr = float(learning_rate)
        if not (math.isfinite(lr) and lr > 0):
            raise ValueError(f"descent: learning_rate must be a positive number, got {learning_rate!r}.")
        given = _factories(optimizers)
        self._makers = dict(given)
        for name in STANDARD_OPTIMIZERS:
            if name not in self._makers:
                self._makers[name] = _factory(name)[1]
        self._selected = list(given)
        self._lr = lr
        self._step = 0
        self._cache: dict[tuple[str, float], Trajectory] = {}
        self._xlim, self._ylim = xlim, ylim
        self._fig: Any = None
        self._art: dict[str, Any] = {}
        self._boxes: dict[str, Any] = {}
        self._layout_box()

    # ---- state ---------------------------------------------------------------------------------
    @property
    def step(self) -> int:
        """The number of updates shown (0 = the start)."""
        return self._step

    @step.setter
    def step(self, value: int) -> None:
        value = int(value)
        if not 0 <= value <= self.steps:
            raise ValueError(f"descent: step must be in 0..{self.steps}, got {value}.")
        self._step = value
        self._set_control("step", value)
        self._changed()

    @property
    def learning_rate(self) -> float:
        return self._lr

    @learning_rate.setter
    def learning_rate(self, value: float) -> None:
        value = float(value)
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"descent: learning_rate must be a positive number, got {value!r}.")
        slider = self._controls_by_name.get("learning_rate")
        if slider is not None:
            exponent = math.log10(value)
            slider.min, slider.max = min(slider.min, exponent), max(slider.max, exponent)
        self._lr = value
        self._set_control("learning_rate", value)
        self._changed()

    @property
    def selected(self) -> tuple[str, ...]:
        """The optimizers shown."""
        return tuple(self._selected)

    @selected.setter
    def selected(self, names: Sequence[str]) -> None:
        names = [names] if isinstance(names, str) else list(names)
        for n in names:
            if n not in self._makers:
                raise ValueError(f"descent: no optimizer {n!r}; available: {', '.join(self._makers)}.")
        self._selected = [n for n in self._makers if n in names]
        self._syncing = True
        try:
            for name, box in self._boxes.items():
                box.value = name in names
        finally:
            self._syncing = False
        self._changed()

    @property
    def optimizers(self) -> tuple[str, ...]:
        """Every optimizer the widget offers."""
        return tuple(self._makers)

    def trajectory(self, name: str | None = None) -> Trajectory:
        """The run of optimizer ``name`` (default: the first one shown) at the current learning rate."""
        if name is None:
            if not self._selected:
                raise ValueError("descent: no optimizer is selected.")
            name = self._selected[0]
        if name not in self._makers:
            raise KeyError(f"descent: no optimizer {name!r}; available: {', '.join(self._makers)}.")
        key = (name, self._lr)
        if key not in self._cache:
            if len(self._cache) > 200:
                self._cache.clear()
            opt = self._makers[name](self._lr)
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
        for name in self._selected:
            traj = self.trajectory(name)
            k = min(self._step, len(traj.updates))
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

        step = w.IntSlider(value=self._step, min=0, max=self.steps, description="step",
                           continuous_update=True, layout=w.Layout(width="360px"))
        exponent = math.log10(self._lr)
        lr = w.FloatLogSlider(value=self._lr, base=10, min=exponent - 2, max=exponent + 1.5, step=0.05,
                              description="learning rate", readout_format=".3g", continuous_update=False,
                              style={"description_width": "initial"}, layout=w.Layout(width="360px"))
        self._boxes = {}
        for name in self._makers:
            box = w.Checkbox(value=name in self._selected, description=name, indent=False,
                             layout=w.Layout(width="auto", margin="0 10px 0 0"))
            box.observe(self._on_box, names="value")
            self._boxes[name] = box
        step.observe(self._on_step, names="value")
        lr.observe(self._on_lr, names="value")
        return {"step": step, "learning_rate": lr, **{f"show {n}": b for n, b in self._boxes.items()}}

    def _on_step(self, change: dict) -> None:
        if not self._syncing:
            self._step = int(change["new"])
            self._changed()

    def _on_lr(self, change: dict) -> None:
        if not self._syncing:
            self._lr = float(change["new"])
            self._changed()

    def _on_box(self, change: dict) -> None:
        if not self._syncing:
            self._selected = [n for n, b in self._boxes.items() if b.value]
            self._changed()

    # ---- the box (axes limits) and the background ------------------------------------------------
    def _layout_box(self) -> None:
        """Axes limits from the start and the paths at the first learning rate; f on a grid there."""
        trajs = [self.trajectory(n) for n in self._selected]
        pts = np.concatenate([t.points.reshape(len(t.points), -1) for t in trajs])
        losses = np.concatenate([t.losses for t in trajs])
        start_loss = trajs[0].losses[0]
        lowest = np.nanmin(np.where(np.isfinite(losses), losses, np.nan)) if np.isfinite(losses).any() \
            else start_loss
        # points far uphill (a diverging run) do not widen the view, except each path's first step
        first = np.concatenate([np.arange(len(t.points)) <= 1 for t in trajs])
        keep = np.isfinite(losses) & np.all(np.isfinite(pts), axis=1) & \
            ((losses <= start_loss + abs(start_loss - lowest) + 1e-12) | first)
        pts = pts[keep] if keep.any() else self.start.reshape(1, -1).astype(float)
        dtype = self.start.dtype
        lows, highs = pts.min(axis=0).astype(float), pts.max(axis=0).astype(float)
        lowest_nearby = self._lowest_nearby(lows, highs, dtype)
        if lowest_nearby is not None:  # show where the paths are heading, too
            lows, highs = np.minimum(lows, lowest_nearby), np.maximum(highs, lowest_nearby)
        x0, x1 = _nice_box(float(lows[0]), float(highs[0]))
        if self._xlim is not None:
            x0, x1 = map(float, self._xlim)
        self.xlim = (x0, x1)
        if self.mode == "2d":
            y0, y1 = _nice_box(float(lows[1]), float(highs[1]))
            if self._ylim is not None:
                y0, y1 = map(float, self._ylim)
            self.ylim = (y0, y1)
            n = 60
            xs, ys = np.linspace(x0, x1, n), np.linspace(y0, y1, n)
            X, Y = np.meshgrid(xs, ys)
            Z = _evaluate_many(self.f, np.stack([X.ravel(), Y.ravel()], axis=1), dtype).reshape(n, n)
            self._grid = (X, Y, Z)
        else:
            xs = np.linspace(x0, x1, 300)
            Z = _evaluate_many(self.f, xs, dtype)
            self._grid = (xs, Z)
            finite = Z[np.isfinite(Z)]
            lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
            self.ylim = _nice_box(lo, hi, pad=0.08)
        self._loss_limits = self._loss_axis_limits(trajs)

    def _lowest_nearby(self, lows: np.ndarray, highs: np.ndarray, dtype: np.dtype) -> np.ndarray | None:
        """The lowest point of f on a coarse grid three times wider than the paths' box (None when it
        is not finite): the view is widened to include it, so the minimum the paths head for shows."""
        width = np.maximum(highs - lows, np.maximum(np.abs(lows), 1.0) * 0.1)
        axes = [np.linspace(lo - width_k, hi + width_k, 41 if self.mode == "1d" else 25)
                for lo, hi, width_k in zip(lows, highs, width)]
        if self.mode == "1d":
            points = axes[0]
        else:
            X, Y = np.meshgrid(*axes)
            points = np.stack([X.ravel(), Y.ravel()], axis=1)
        try:
            values = _evaluate_many(self.f, points, dtype)
        except Exception:  # noqa: BLE001  (f undefined out there: keep the paths' box)
            return None
        if not np.isfinite(values).any():
            return None
        best = int(np.nanargmin(np.where(np.isfinite(values), values, np.nan)))
        return np.atleast_1d(points[best]).astype(float)

    def _loss_axis_limits(self, trajs: list[Trajectory]) -> tuple[float, float, bool]:
        """Limits of the loss panel, fixed once (so moving the sliders never redraws the axes):
        logarithmic when the first paths' losses span more than two decades. A diverging path runs
        off the top (at 1000 × the starting loss) rather than squashing the others."""
        losses = np.concatenate([t.losses for t in trajs] or [np.zeros(1)])
        finite = losses[np.isfinite(losses)]
        if not finite.size:
            return 0.0, 1.0, False
        first = trajs[0].losses[0] if math.isfinite(trajs[0].losses[0]) else float(finite.max())
        top = float(finite.max())
        if first > 0:
            top = min(top, 1e3 * first)
        top = max(top, first)
        low = float(finite.min())
        if low > 0 and top / low > 100:
            lo = 10.0 ** (math.floor(math.log10(max(low, top * 1e-10))) - 1)
            hi = 10.0 ** math.ceil(math.log10(top * 1.5))
            return lo, hi, True
        lo, hi = _nice_box(min(low, 0.0), top, pad=0.08)
        return lo, hi, False

    # ---- drawing -------------------------------------------------------------------------------
    def _make_figure(self) -> tuple[Any, dict[str, Any], list[Any], list[Any]]:
        """The figure, its artists, and the blitter's moving and overlay artists."""
        from matplotlib.ticker import MaxNLocator

        from ._plot import log_axis, new_figure, palette, style_axes

        colors = palette(self.theme)
        fig = new_figure((9.6, 4.0), theme=self.theme, dpi=80)
        grid = fig.add_gridspec(1, 2, width_ratios=[1.35, 1.0], wspace=0.22)
        ax = fig.add_subplot(grid[0])
        axl = fig.add_subplot(grid[1])
        style_axes(ax, self.theme)
        style_axes(axl, self.theme)
        if self.mode == "2d":
            X, Y, Z = self._grid
            finite = Z[np.isfinite(Z)]
            if finite.size > 1 and finite.max() > finite.min():
                levels = np.unique(np.quantile(finite, np.linspace(0, 1, 18) ** 2))
                if levels.size > 2:
                    ax.contourf(X, Y, Z, levels=levels, cmap=colors["fill_cmap"], alpha=0.3)
                    ax.contour(X, Y, Z, levels=levels, cmap=colors["cmap"], linewidths=0.8, alpha=0.8)
            ax.set_xlim(*self.xlim)
            ax.set_ylim(*self.ylim)
            ax.set_xlabel("θ[0]", color=colors["muted"], fontsize=9)
            ax.set_ylabel("θ[1]", color=colors["muted"], fontsize=9)
            ax.plot([self.start[0]], [self.start[1]], marker="*", ms=13, color=colors["text"], ls="none",
                    zorder=5)
            ax.set_title("contours of f and the paths", color=colors["text"], fontsize=10, y=1.0)
        else:
            xs, Z = self._grid
            ax.plot(xs, Z, color=colors["muted"], lw=1.8)
            ax.set_xlim(*self.xlim)
            ax.set_ylim(*self.ylim)
            ax.set_xlabel("θ", color=colors["muted"], fontsize=9)
            ax.set_ylabel("f(θ)", color=colors["muted"], fontsize=9)
            ax.set_title("f and the points θ₀, θ₁, …", color=colors["text"], fontsize=10, y=1.0)
        lo, hi, log = self._loss_limits
        if log:
            log_axis(axl, "y", (lo, hi))
        else:
            axl.set_ylim(lo, hi)
        axl.set_xlim(-0.02 * self.steps, self.steps * 1.02)
        axl.xaxis.set_major_locator(MaxNLocator(integer=True))
        axl.set_xlabel("step", color=colors["muted"], fontsize=9)
        axl.set_title("loss", color=colors["text"], fontsize=10, loc="left", y=1.0)

        art: dict[str, Any] = {"paths": {}, "overlay_key": None, "legend": None,
                               "highlight": colors["highlight"]}
        moving: list[Any] = []
        overlay: list[Any] = []
        series = colors["series"]
        # each standard optimizer keeps its colour whatever the selection; others take the rest
        fixed = {"SGD": 0, "Momentum": 1, "Adagrad": 2, "Adam": 3, "RMSProp": 4}
        others = iter(range(len(fixed), len(fixed) + len(self._makers)))
        for name in self._makers:
            color = series[(fixed[name] if name in fixed else next(others)) % len(series)]
            a: dict[str, Any] = {}
            a["full"], = ax.plot([], [], color=color, lw=1.0, alpha=0.4, zorder=3)
            a["lfull"], = axl.plot([], [], color=color, lw=1.0, alpha=0.4)
            overlay += [a["full"], a["lfull"]]
            a["done"], = ax.plot([], [], color=color, lw=1.8, marker="o", ms=3, zorder=4)
            a["here"], = ax.plot([], [], color=color, marker="o", ms=9, mec=colors["background"], mew=1.5,
                                 ls="none", zorder=6)
            if self.mode == "1d":
                a["tangent"], = ax.plot([], [], color=colors["highlight"], lw=1.6, ls="--", zorder=5)
            a["ldone"], = axl.plot([], [], color=color, lw=1.8, label=name)
            a["lhere"], = axl.plot([], [], color=color, marker="o", ms=6, ls="none")
            moving += [v for key, v in a.items() if key not in ("full", "lfull")]
            art["paths"][name] = a
        art["vline"] = axl.axvline(0, color=colors["highlight"], lw=1.0, ls=":")
        moving.append(art["vline"])
        art["note"] = ax.text(0.02, 0.02, "", transform=ax.transAxes, fontsize=8, color=colors["bad"],
                              va="bottom")
        overlay.append(art["note"])
        fig.subplots_adjust(left=0.07, right=0.98, top=0.92, bottom=0.13)
        return fig, art, moving, overlay

    def _update_overlay(self, art: dict[str, Any], blitter: Any = None) -> None:
        """The artists that change with the learning rate and the selection (not with the step)."""
        from ._plot import palette

        key = (self._lr, self.selected)
        if art["overlay_key"] == key:
            return
        art["overlay_key"] = key
        notes = []
        for name, a in art["paths"].items():
            shown = name in self._selected
            for artist in a.values():
                artist.set_visible(shown)
            if not shown:
                continue
            traj = self.trajectory(name)
            pts, losses = traj.points, traj.losses
            if self.mode == "2d":
                a["full"].set_data(pts[:, 0], pts[:, 1])
            else:
                a["full"].set_data(pts.astype(float), losses)
            a["lfull"].set_data(np.arange(len(losses)), losses)
            if traj.diverged_at is not None:
                notes.append(f"{name} diverged at step {traj.diverged_at}")
        art["note"].set_text("; ".join(notes))
        if blitter is not None:
            blitter.invalidate_overlay()
        # the legend lists the optimizers shown (made again only when they change)
        if art.get("legend_for") == self.selected:
            return
        art["legend_for"] = self.selected
        axl = art["vline"].axes
        if art["legend"] is not None:
            art["legend"].remove()
            if blitter is not None and art["legend"] in blitter.overlay:
                blitter.overlay.remove(art["legend"])
            art["legend"] = None
        if self._selected:
            handles = [art["paths"][n]["ldone"] for n in self._selected]
            legend = axl.legend(handles, list(self._selected), loc="lower right", bbox_to_anchor=(1.0, 1.0),
                                ncol=len(handles), fontsize=8, frameon=False, borderaxespad=0.2,
                                handlelength=1.2, columnspacing=0.8, labelcolor=palette(self.theme)["text"])
            art["legend"] = legend
            if blitter is not None:
                legend.set_animated(True)
                blitter.overlay.append(legend)

    def _update(self, art: dict[str, Any], blitter: Any = None) -> None:
        """Point every artist at the current state (the overlay only when it changed)."""
        self._update_overlay(art, blitter)
        k_shown = self._step
        for name in self._selected:
            a = art["paths"][name]
            traj = self.trajectory(name)
            pts = traj.points
            k = min(k_shown, len(pts) - 1)
            losses = traj.losses
            if self.mode == "2d":
                a["done"].set_data(pts[: k + 1, 0], pts[: k + 1, 1])
                a["here"].set_data([pts[k, 0]], [pts[k, 1]])
            else:
                xs = pts.astype(float)
                a["done"].set_data(xs[: k + 1], losses[: k + 1])
                a["here"].set_data([xs[k]], [losses[k]])
                g = traj.gradient_at(k)
                if g is not None and math.isfinite(float(losses[k])):
                    half = 0.16 * (self.xlim[1] - self.xlim[0])
                    tx = np.array([xs[k] - half, xs[k] + half])
                    a["tangent"].set_data(tx, losses[k] + float(g) * (tx - xs[k]))
                    # one path: the tangent stands out in the highlight colour; several: each its own
                    alone = len(self._selected) == 1
                    a["tangent"].set_color(art["highlight"] if alone else a["done"].get_color())
                else:
                    a["tangent"].set_data([], [])
            steps = np.arange(len(losses))
            a["ldone"].set_data(steps[: k + 1], losses[: k + 1])
            a["lhere"].set_data([k], [losses[k]])
        art["vline"].set_xdata([k_shown, k_shown])

    def _figure(self) -> Any:
        fig, art, _, _ = self._make_figure()
        self._update(art)
        return fig

    def _draw(self) -> bytes:
        from ._plot import Blitter

        if self._fig is None:
            self._fig, self._art, moving, overlay = self._make_figure()
            self._blitter = Blitter(self._fig, moving, overlay)
        self._update(self._art, self._blitter)
        return self._blitter.render()

    # ---- the table -------------------------------------------------------------------------------
    def _panel(self) -> str:
        from ._plot import fmt

        if not self._selected:
            return "<i>Select an optimizer.</i>"
        style = ("<style>.gv-dt td,.gv-dt th{padding:1px 8px;text-align:right;font-family:monospace}"
                 ".gv-dt tr.now{background:rgba(191,135,0,.18)}</style>")
        parts = [style, "<div style='font-size:12px'>"]
        if self.mode == "1d" and len(self._selected) == 1:
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
        parts.append(f"<b>step {self._step}</b>, learning rate {fmt(self._lr)}"
                     f"<table class='gv-dt'>{head}{''.join(rows)}</table></div>")
        return "".join(parts)

    def _trace_table(self) -> str:
        """The seed-002 style trace (1-D, one optimizer): before, gradient, expected after, after."""
        from ._plot import fmt, fmt_exact

        name = self._selected[0]
        rows = self.rows(name)
        k = self._step
        sgd = type(self._makers[name](self._lr)).__name__ == "SGD"
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
        rule = f", learning rate {fmt(self._lr)}: after = before − {fmt(self._lr)}·gradient" if sgd else ""
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
