"""The drawing of the widget guide's example (docs/WIDGETS.md): a curve, the tangent at a point, the panel.

Plain SVG in the theme's CSS colours: the curve is the picture drawn once, with an empty slot
(``<g data-gv-layer="tangent">``) that a frame fills with the tangent at one point.

>>> from gradviz.model.tangent import Tangent
>>> box = Box(-1.0, 1.0, 0.0, 1.0)
>>> box.point(0.0, 1.0)
(160.0, 20.0)
>>> "slope 2" in tangent_panel(Tangent(1.0, 1.0, 2.0))
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gradviz.model.tangent import Tangent
from gradviz.render import fmt
from gradviz.render.text import esc
from gradviz.render.theme import LIGHT, themed_graph

__all__ = ["Box", "WIDTH", "HEIGHT", "curve_svg", "tangent_svg", "with_tangent", "tangent_panel"]

WIDTH, HEIGHT, PAD = 320, 200, 20  # the picture's size and margin, in SVG units


@dataclass(frozen=True)
class Box:
    """The data window drawn: x in ``x0 .. x1``, y in ``y0 .. y1`` (y up)."""

    x0: float
    x1: float
    y0: float
    y1: float

    def point(self, x: float, y: float) -> tuple[float, float]:
        """Data coordinates → the picture's (y down), rounded to 0.1."""
        u = PAD + (x - self.x0) / ((self.x1 - self.x0) or 1.0) * (WIDTH - 2 * PAD)
        v = HEIGHT - PAD - (y - self.y0) / ((self.y1 - self.y0) or 1.0) * (HEIGHT - 2 * PAD)
        return round(u, 1), round(v, 1)


def _role(role: str) -> str:
    """The theme's colour for ``role`` (its CSS variable; the light colour where none is set)."""
    return f"var(--gv-{role}, {getattr(LIGHT, role)})"


def curve_svg(xs: Sequence[float], ys: Sequence[float], box: Box, title: str) -> str:
    """The picture: the curve, and an empty ``tangent`` layer that a frame fills (in the theme's colours:
    `themed_graph` defines them in the document)."""
    points = " ".join("{},{}".format(*box.point(x, y)) for x, y in zip(xs, ys))
    return themed_graph(f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
            f'viewBox="0 0 {WIDTH} {HEIGHT}"><title>{esc(title)}</title>'
            f'<polyline points="{points}" fill="none" stroke-width="2" style="stroke:{_role("muted")}"/>'
            '<g data-gv-layer="tangent"></g></svg>')


def tangent_svg(t: Tangent, box: Box, reach: float) -> str:
    """The tangent at ``t`` (a segment ``reach`` either side in x) and its point: the ``tangent`` layer."""
    (u0, v0), (u1, v1) = (box.point(x, t.y + t.slope * (x - t.x)) for x in (t.x - reach, t.x + reach))
    u, v = box.point(t.x, t.y)
    color = _role("highlight")
    return (f'<line x1="{u0}" y1="{v0}" x2="{u1}" y2="{v1}" stroke-width="1.6" style="stroke:{color}"/>'
            f'<circle cx="{u}" cy="{v}" r="4" style="fill:{color}"/>')


def with_tangent(picture: str, t: Tangent, box: Box, reach: float) -> str:
    """The picture of `curve_svg` with the tangent at ``t`` drawn in its slot (the static picture)."""
    slot = '<g data-gv-layer="tangent">'
    return picture.replace(slot, slot + tangent_svg(t, box, reach), 1)


def tangent_panel(t: Tangent) -> str:
    """The numbers at the point: x, f(x), the slope (the engine's gradient)."""
    return (f"<div style='font-size:12px'>x = <b>{fmt.cell(t.x)}</b>, f(x) = {fmt.cell(t.y)}, "
            f"slope {fmt.cell(t.slope)} (df/dx, from the tape)</div>")
