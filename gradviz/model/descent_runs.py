"""Optimizer runs for the descent trace: each step as the engine's optimizer did it, and the optimizers
named by `eg.optimizers` (its `names`, `canonical_name` and classes: gradviz keeps no table of them).

>>> import engine as eg
>>> traj = run_optimizer(lambda x: 0.5 * x * x, np.array(4.0, np.float32), eg.optimizers.SGD(0.5), 2)
>>> [float(p) for p in traj.points]
[4.0, 2.0, 1.0]
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import engine as eg
from engine import optimizers
from engine.interop import to_numpy

__all__ = ["Trajectory", "Update", "run_optimizer", "factories", "evaluate_many", "nice_box",
           "standard_optimizers", "momentum_hyper", "follows_momentum"]


def _optimizers_module() -> Any:
    return optimizers


def standard_optimizers() -> tuple[str, ...]:
    """The optimizers the widget offers as checkboxes: every update rule of `eg.optimizers`."""
    return _optimizers_module().names()


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
    return eg.Variable(eg.constant(start), name="theta")


def _loss_value(loss: Any) -> float:
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
    with np.errstate(over="ignore", invalid="ignore"):  # a diverging run is shown, not warned about
        return _run(f, start, optimizer, steps, name)


def _run(f: Callable[[Any], Any], start: np.ndarray, optimizer: Any, steps: int,
         name: str | None) -> Trajectory:
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
                      float(optimizer.current_learning_rate(0)), to_numpy(start), updates,
                      final_loss, final_grad, diverged)


# ---- optimizers: names, classes, instances, factories -------------------------------------------------

def momentum_hyper(optimizer: Any) -> str | None:
    """The attribute the descent trace's momentum slider sets on ``optimizer``: Momentum's ``momentum``
    (μ), Adam's ``beta1`` (β₁); None for the others."""
    opts = _optimizers_module()
    if isinstance(optimizer, opts.Momentum):
        return "momentum"
    if isinstance(optimizer, opts.Adam):
        return "beta1"
    return None


def follows_momentum(make: Callable[[float], Any]) -> str | None:
    """`momentum_hyper` of the optimizers ``make`` returns, when they were given by name or class (an
    instance or a function keeps the momentum it was made with)."""
    return momentum_hyper(make(0.1)) if getattr(make, "by_name", False) else None


def _by_name(make: Callable[[float], Any]) -> Callable[[float], Any]:
    make.by_name = True  # type: ignore[attr-defined]
    return make


def _factory(spec: Any) -> tuple[str, Callable[[float], Any]]:
    """A label and a function ``lr → fresh optimizer`` for one entry of ``optimizers``."""
    opts = _optimizers_module()
    if isinstance(spec, str):
        try:
            key = opts.canonical_name(spec)
        except ValueError:
            raise ValueError(
                f"descent: unknown optimizer {spec!r}; use one of {', '.join(opts.names())}, an "
                "eg.optimizers class or instance, or a function learning_rate → optimizer."
            ) from None
        return key, _by_name(lambda lr: opts.get(key, learning_rate=lr))
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
        return spec.__name__, _by_name(lambda lr: spec(learning_rate=lr))
    if callable(spec):
        probe = spec(0.1)
        if not isinstance(probe, opts.Optimizer):
            raise TypeError(f"descent: the function {spec!r} must return an eg.optimizers optimizer, "
                            f"got {type(probe).__name__}.")
        return probe.name, spec
    raise TypeError(f"descent: cannot use {spec!r} as an optimizer.")


def factories(optimizers: Any) -> dict[str, Callable[[float], Any]]:
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

def evaluate_many(f: Callable[[Any], Any], points: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """f at each row of ``points`` (shape (N,) for 1-D, (N, 2) for 2-D), vectorised when f allows.

    First f is called once on all points stacked along a new last axis (``v[0]`` is then a vector of
    x values); the result is kept only if it has one value per point and matches f at a few points
    evaluated one by one. Otherwise f is called point by point.
    """
    def one(p: np.ndarray) -> float:
        return float(to_numpy(f(eg.constant(np.asarray(p, dtype=dtype)))).reshape(()))

    n = points.shape[0]
    stacked = np.ascontiguousarray(points.T if points.ndim == 2 else points, dtype=dtype)
    try:
        out = to_numpy(f(eg.constant(stacked)), dtype=float)
        if out.shape == (n,):
            probe = np.random.default_rng(0).choice(n, size=min(n, 4), replace=False)
            if all(np.isclose(out[i], one(points[i]), rtol=1e-4, atol=1e-6, equal_nan=True) for i in probe):
                return out
    except Exception:  # noqa: BLE001  (f may not accept a batch: then evaluate point by point)
        pass
    return np.array([one(p) for p in points], dtype=float)


def nice_box(lo: float, hi: float, pad: float = 0.12) -> tuple[float, float]:
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return -1.0, 1.0
    width = hi - lo
    if width <= 0:
        width = max(abs(lo), 1.0)
        return lo - width, hi + width
    return lo - pad * width, hi + pad * width
