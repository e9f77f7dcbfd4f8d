"""Pen widths that show the gradient flowing along each edge of a graph: drawn from the magnitudes
the model computes (`gradviz.model.edge_flow.edge_magnitudes`; no walk here).

>>> from gradviz.model.graph_model import Edge
>>> attrs = edge_attributes({("t1", "o2"): 0.5, ("o2", "t3"): 50.0, ("t3", "o4"): 0.0})
>>> [attrs(Edge(*key)) for key in [("t1", "o2"), ("o2", "t3"), ("t3", "o4"), ("t9", "o9")]]
... # doctest: +NORMALIZE_WHITESPACE
[{'penwidth': '0.60', 'tooltip': 'gradient norm 0.5'}, {'penwidth': '7.00', 'tooltip': 'gradient norm 50'},
 {'penwidth': '0.60', 'style': 'dashed', 'tooltip': 'gradient norm 0'}, None]
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from gradviz.render.theme import palette

__all__ = ["edge_attributes"]


def edge_attributes(mags: Mapping[tuple[str, str], float], min_width: float = 0.6, max_width: float = 7.0,
                    theme: str | None = None) -> Any:
    """A ``to_dot(..., edge_attrs=...)`` callback: pen width grows with log ‖gradient‖ along the edge,
    ``mags`` being (source node, destination node) → that norm (`gradviz.model.edge_flow`).

    Widths are scaled between the smallest and largest non-zero magnitude in the graph (a log scale:
    gradients often span many decades); an edge with no gradient is thin and dashed, a non-finite
    one red. The tooltip gives the number.
    """
    finite = [v for v in mags.values() if math.isfinite(v) and v > 0]
    lo, hi = (math.log10(min(finite)), math.log10(max(finite))) if finite else (0.0, 0.0)
    bad = palette(theme).grad_neg  # a graph colour: it follows the page's theme (render.theme)

    def attrs(edge: Any) -> dict[str, str] | None:
        v = mags.get((edge.src, edge.dst))
        if v is None:
            return None
        if not math.isfinite(v):
            return {"penwidth": f"{max_width:.2f}", "color": bad, "tooltip": f"gradient norm {v}"}
        if v == 0:
            return {"penwidth": f"{min_width:.2f}", "style": "dashed", "tooltip": "gradient norm 0"}
        frac = 1.0 if hi == lo else (math.log10(v) - lo) / (hi - lo)
        width = min_width + frac * (max_width - min_width)
        return {"penwidth": f"{width:.2f}", "tooltip": f"gradient norm {v:.4g}"}

    return attrs
