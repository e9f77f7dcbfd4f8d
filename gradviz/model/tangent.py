"""The numbers of the widget guide's example (docs/WIDGETS.md): a function of one variable, and its tangent
at a point, the slope taken by the engine's own tape.

>>> import engine as eg
>>> t = tangent_at(lambda x: x * x, 3.0)
>>> t.y, t.slope
(9.0, 6.0)
>>> xs, ys = curve(lambda x: x * x, -1.0, 1.0, 3)
>>> xs.tolist(), ys.tolist()
([-1.0, 0.0, 1.0], [1.0, 0.0, 1.0])
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import engine as eg

__all__ = ["Tangent", "tangent_at", "curve"]


@dataclass(frozen=True)
class Tangent:
    """f's value and slope at ``x``: the tangent line is ``y + slope · (t - x)``."""

    x: float
    y: float
    slope: float


def tangent_at(f: Callable[[Any], Any], x: float) -> Tangent:
    """f(x) and df/dx at ``x``, from one GradientTape (a gradient that is None, f not depending on x,
    is 0)."""
    point = eg.constant(float(x))
    with eg.GradientTape() as tape:
        tape.watch(point)
        y = f(point)
    slope = tape.gradient(y, point)
    return Tangent(float(x), float(np.asarray(y.numpy())), 0.0 if slope is None else float(slope.numpy()))


def curve(f: Callable[[Any], Any], lo: float, hi: float, n: int = 101) -> tuple[np.ndarray, np.ndarray]:
    """``n`` points of f over ``lo .. hi`` (f applied to them all at once)."""
    xs = np.linspace(float(lo), float(hi), int(n))
    return xs, np.asarray(f(eg.constant(xs)).numpy(), dtype=float)
