"""Where the descent trace's pictures are drawn: numbers, no drawing.

`descent_scene` fixes, once, the box of the picture (the paths at the first learning rate, widened to
the lowest point of f nearby), f on a grid in that box (the contours, or the curve) and the limits
of the loss panel. `gradviz.render.descent_plots` draws a scene; the sliders never change it.

>>> import numpy as np
>>> from gradviz.model.descent_runs import run_optimizer
>>> import engine as eg
>>> f = lambda x: 0.5 * (x - 1.0) ** 2
>>> start = np.array(10.0, np.float32)
>>> scene = descent_scene(f, start, [run_optimizer(f, start, eg.optimizers.SGD(0.5), 3)], steps=3)
>>> scene.mode, [round(x, 2) for x in scene.xlim], scene.grid[0].shape   # θ from 10 down to near 1
('1d', [-0.36, 11.11], (300,))
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradviz.model.descent_runs import Trajectory, evaluate_many, nice_box

__all__ = ["DescentScene", "descent_scene", "trace_mode", "loss_axis_limits"]

TANGENT_HALF = 0.16  # the 1-D tangent's half-length, a fraction of the θ axis' width


def trace_mode(start: np.ndarray) -> str:
    """``"1d"`` for a scalar ``start`` (the curve of f), ``"2d"`` for a 2-vector (the contours).

    >>> trace_mode(np.zeros(2))
    '2d'
    """
    if start.shape == ():
        return "1d"
    if start.shape == (2,):
        return "2d"
    raise ValueError(
        f"descent: start must be a scalar (1-D trace) or a 2-vector (contour plot), got shape {start.shape}."
    )


@dataclass(frozen=True)
class DescentScene:
    """The fixed frame of a descent trace's pictures."""

    mode: str  # "1d" or "2d" (`trace_mode`)
    start: np.ndarray  # θ₀
    steps: int  # the loss panel's step axis: 0..steps
    xlim: tuple[float, float]  # θ (1-D) or θ[0] (2-D)
    ylim: tuple[float, float]  # f(θ) (1-D) or θ[1] (2-D)
    grid: tuple[np.ndarray, ...]  # f on a grid: (xs, f) in 1-D, (X, Y, f) meshes in 2-D
    loss_limits: tuple[float, float, bool]  # the loss panel's (low, high, logarithmic)

    @property
    def tangent_half(self) -> float:
        """Half the length of the 1-D tangent, in θ."""
        return TANGENT_HALF * (self.xlim[1] - self.xlim[0])


def descent_scene(f: Callable[[Any], Any], start: np.ndarray, runs: Sequence[Trajectory], steps: int,
                  xlim: tuple[float, float] | None = None,
                  ylim: tuple[float, float] | None = None) -> DescentScene:
    """The scene of ``runs`` (the paths first shown, at least one) of ``f`` from ``start``. ``xlim``
    fixes the θ axis; ``ylim`` fixes θ[1] in 2-D and the f axis in 1-D (else it spans the curve)."""
    mode = trace_mode(start)
    pts = np.concatenate([t.points.reshape(len(t.points), -1) for t in runs])
    losses = np.concatenate([t.losses for t in runs])
    start_loss = runs[0].losses[0]
    lowest = np.nanmin(np.where(np.isfinite(losses), losses, np.nan)) if np.isfinite(losses).any() \
        else start_loss
    # points far uphill (a diverging run) do not widen the view, except each path's first step
    first = np.concatenate([np.arange(len(t.points)) <= 1 for t in runs])
    keep = np.isfinite(losses) & np.all(np.isfinite(pts), axis=1) & \
        ((losses <= start_loss + abs(start_loss - lowest) + 1e-12) | first)
    pts = pts[keep] if keep.any() else start.reshape(1, -1).astype(float)
    dtype = start.dtype
    lows, highs = pts.min(axis=0).astype(float), pts.max(axis=0).astype(float)
    nearby = _lowest_nearby(f, mode, lows, highs, dtype)
    if nearby is not None:  # show where the paths are heading, too
        lows, highs = np.minimum(lows, nearby), np.maximum(highs, nearby)
    x0, x1 = nice_box(float(lows[0]), float(highs[0]))
    if xlim is not None:
        x0, x1 = map(float, xlim)
    if mode == "2d":
        y0, y1 = nice_box(float(lows[1]), float(highs[1]))
        if ylim is not None:
            y0, y1 = map(float, ylim)
        n = 60
        X, Y = np.meshgrid(np.linspace(x0, x1, n), np.linspace(y0, y1, n))
        Z = evaluate_many(f, np.stack([X.ravel(), Y.ravel()], axis=1), dtype).reshape(n, n)
        grid: tuple[np.ndarray, ...] = (X, Y, Z)
    else:
        xs = np.linspace(x0, x1, 300)
        Z = evaluate_many(f, xs, dtype)
        grid = (xs, Z)
        finite = Z[np.isfinite(Z)]
        lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        y0, y1 = nice_box(lo, hi, pad=0.08) if ylim is None else map(float, ylim)
    return DescentScene(mode, start, int(steps), (x0, x1), (y0, y1), grid, loss_axis_limits(runs))


def _lowest_nearby(f: Callable[[Any], Any], mode: str, lows: np.ndarray, highs: np.ndarray,
                   dtype: np.dtype) -> np.ndarray | None:
    """The lowest point of f on a coarse grid three times wider than the paths' box (None when it
    is not finite): the view is widened to include it, so the minimum the paths head for shows."""
    width = np.maximum(highs - lows, np.maximum(np.abs(lows), 1.0) * 0.1)
    axes = [np.linspace(lo - width_k, hi + width_k, 41 if mode == "1d" else 25)
            for lo, hi, width_k in zip(lows, highs, width)]
    if mode == "1d":
        points = axes[0]
    else:
        X, Y = np.meshgrid(*axes)
        points = np.stack([X.ravel(), Y.ravel()], axis=1)
    try:
        values = evaluate_many(f, points, dtype)
    except Exception:  # noqa: BLE001  (f undefined out there: keep the paths' box)
        return None
    if not np.isfinite(values).any():
        return None
    best = int(np.nanargmin(np.where(np.isfinite(values), values, np.nan)))
    return np.atleast_1d(points[best]).astype(float)


def loss_axis_limits(runs: Sequence[Trajectory]) -> tuple[float, float, bool]:
    """Limits of the loss panel, fixed once (so moving the sliders never redraws the axes):
    logarithmic when the first paths' losses span more than two decades. A diverging path runs
    off the top (at 1000 × the starting loss) rather than squashing the others."""
    losses = np.concatenate([t.losses for t in runs] or [np.zeros(1)])
    finite = losses[np.isfinite(losses)]
    if not finite.size:
        return 0.0, 1.0, False
    first = runs[0].losses[0] if math.isfinite(runs[0].losses[0]) else float(finite.max())
    top = float(finite.max())
    if first > 0:
        top = min(top, 1e3 * first)
    top = max(top, first)
    low = float(finite.min())
    if low > 0 and top / low > 100:
        lo = 10.0 ** (math.floor(math.log10(max(low, top * 1e-10))) - 1)
        hi = 10.0 ** math.ceil(math.log10(top * 1.5))
        return lo, hi, True
    lo, hi = nice_box(min(low, 0.0), top, pad=0.08)
    return lo, hi, False
