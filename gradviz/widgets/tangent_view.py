"""`TangentView`: the widget guide's example (docs/WIDGETS.md): f and its tangent at x, x on a slider.

A whole widget on `gradviz.widgets.view.View` in three files: the numbers (`gradviz.model.tangent`), their
drawing (`gradviz.render.tangent_svg`) and this one: the state (one trait), its control (one slider over
a grid of x) and its frames (pure functions of the slider's position). It works with no kernel, in
JupyterLab and in an exported page alike.

>>> import engine as eg
>>> view = tangent(lambda x: x * x, x=1.0, lo=-2.0, hi=2.0, points=5)
>>> view.slope
2.0
>>> frames = view.frames()
>>> len(frames.layers[0]["frames"]), "slope -4" in frames.lookup("panel", x=0)
(5, True)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import traitlets

from gradviz.model.tangent import Tangent, curve, tangent_at
from gradviz.render.html import gradviz_block
from gradviz.render.tangent_svg import Box, curve_svg, tangent_panel, tangent_svg, with_tangent
from gradviz.widgets.frames import Frames
from gradviz.widgets.view import Control, Number, View

__all__ = ["tangent", "TangentView"]


class TangentView(View):
    """What `tangent` returns: f's curve and its tangent at ``x`` (a trait: set it, the slider follows)."""

    x = Number(0.0, where="tangent", help="Where the tangent touches the curve.")

    def __init__(self, f: Callable[[Any], Any], x: float, lo: float, hi: float, points: int) -> None:
        super().__init__()
        if not lo < hi:
            raise ValueError(f"tangent: lo must be below hi, got lo={lo}, hi={hi}.")
        self.f = f
        self.grid = [float(v) for v in np.linspace(lo, hi, int(points))]  # the slider's positions
        xs, ys = curve(f, lo, hi)
        self.box = Box(float(lo), float(hi), float(np.min(ys)), float(np.max(ys)))
        self.picture = curve_svg(xs, ys, self.box, "f and its tangent")
        self.reach = (hi - lo) / 6
        self.x = x

    @property
    def slope(self) -> float:
        """df/dx at ``x``."""
        return self._at(self.x).slope

    def _at(self, x: float) -> Tangent:
        return tangent_at(self.f, x)

    @traitlets.observe("x")
    def _moved(self, change: Any) -> None:
        self._sync()  # the live widget follows (the base's one path)

    # ---- the hooks of `View` ----------------------------------------------------------------------
    def _frame_controls(self) -> list[Control]:
        grid = sorted(set(self.grid) | {self.x})  # a value set from code joins the grid
        return [Control("x", "slider", grid, [f"{v:.3g}" for v in grid], play=True)]

    def frames(self) -> Frames:
        """Every position's tangent and panel."""
        return self._make_frames(self._frame_controls())

    def _make_frames(self, controls: list[Control]) -> Frames:
        (x,) = controls
        frames = Frames("tangent", title="f and its tangent", picture=self.picture)
        frames.add_controls(controls, self)
        frames.layer("tangent", "svg", ["x"],
                     lambda k: tangent_svg(self._at(x.values[k]), self.box, self.reach))
        frames.layer("panel", "html", ["x"], lambda k: tangent_panel(self._at(x.values[k])))
        return frames

    # ---- the static forms -------------------------------------------------------------------------
    def to_svg(self) -> str:
        return with_tangent(self.picture, self._at(self.x), self.box, self.reach)

    def to_html(self) -> str:
        return gradviz_block(self.to_svg() + tangent_panel(self._at(self.x)))

    def __repr__(self) -> str:
        return f"<tangent at x={self.x:g}: slope {self.slope:g}>"


def tangent(f: Callable[[Any], Any], x: float = 0.0, lo: float = -2.0, hi: float = 2.0,
            points: int = 41) -> TangentView:
    """f (a function of one tensor) over ``lo .. hi`` with its tangent at ``x``; the slider offers
    ``points`` values of x.

    >>> import engine as eg
    >>> tangent(eg.tanh, x=0.0)
    <tangent at x=0: slope 1>
    """
    return TangentView(f, x, lo, hi, points)
