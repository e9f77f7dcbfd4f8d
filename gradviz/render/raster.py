"""Graphviz SVG → PNG with matplotlib (no cairo, no browser).

Graphviz's SVG uses a small vocabulary (polygon, ellipse, path with M/C, polyline, text, one
transform on the root group), so drawing it with matplotlib's Agg backend is direct. Used for
``save("graph.png")`` whichever renderer made the SVG, so PNGs look the same everywhere.
"""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
from functools import lru_cache
from typing import Any

from gradviz.render.plot import plain_texts
from gradviz.render.text_width import FONT

__all__ = ["svg_to_png"]

_SVG_NS = "{http://www.w3.org/2000/svg}"
_NAMED = {"none": None, "transparent": None}


def svg_to_png(svg: str, scale: float = 2.0) -> bytes:
    """PNG bytes of a Graphviz SVG at ``scale`` × 72 dpi."""
    import matplotlib  # noqa: PLC0415 (deferred: matplotlib is heavy)
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: PLC0415
    from matplotlib.figure import Figure  # noqa: PLC0415

    del matplotlib
    root = ET.fromstring(svg[svg.find("<svg") :] if "<svg" in svg else svg)
    width, height = _length(root.get("width")), _length(root.get("height"))
    vb = [float(v) for v in re.split(r"[ ,]+", root.get("viewBox", f"0 0 {width} {height}").strip())]
    fig = Figure(figsize=(max(width, 1) / 72, max(height, 1) / 72), dpi=72 * scale)
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(vb[0], vb[0] + vb[2])
    ax.set_ylim(vb[1] + vb[3], vb[1])
    ax.set_axis_off()
    sx, sy = (width / vb[2] if vb[2] else 1.0), (height / vb[3] if vb[3] else 1.0)
    _draw(ax, root, (1.0, 1.0, 0.0, 0.0), min(sx, sy))

    plain_texts(fig)  # node labels are user names: drawn as written, never as math text
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=72 * scale, pil_kwargs={"compress_level": 2})
    return buf.getvalue()


def _length(text: str | None) -> float:
    if not text:
        return 100.0
    return float(re.match(r"[\d.]+", text).group(0)) * (0.75 if text.endswith("px") else 1.0)


def _transform(
    text: str | None, parent: tuple[float, float, float, float]
) -> tuple[float, float, float, float]:
    """Compose Graphviz's ``scale(..) rotate(0) translate(..)`` with the parent's (sx, sy, tx, ty)."""
    sx, sy, tx, ty = parent
    if not text:
        return parent
    s = re.search(r"scale\(([-\d.]+)(?:[ ,]+([-\d.]+))?\)", text)
    t = re.search(r"translate\(([-\d.]+)(?:[ ,]+([-\d.]+))?\)", text)
    ls = (float(s.group(1)), float(s.group(2) or s.group(1))) if s else (1.0, 1.0)
    lt = (float(t.group(1)), float(t.group(2) or 0)) if t else (0.0, 0.0)
    # point p → parent(scale(ls) · (p + lt)): SVG applies the rightmost transform first
    return sx * ls[0], sy * ls[1], tx + sx * ls[0] * lt[0], ty + sy * ls[1] * lt[1]


def _colour(value: str | None, default: Any = None) -> Any:
    if value is None:
        return default
    value = value.strip()
    if value.lower() in _NAMED:
        return None
    return value


def _draw(ax: Any, el: ET.Element, tf: tuple[float, float, float, float], font_scale: float) -> None:
    from matplotlib.patches import Ellipse, PathPatch, Polygon  # noqa: PLC0415 (deferred: matplotlib is heavy)
    from matplotlib.path import Path as MplPath  # noqa: PLC0415

    for child in el:
        tag = child.tag.replace(_SVG_NS, "")
        if child.get("visibility") == "hidden":
            continue
        if tag in ("g", "a"):
            _draw(ax, child, _transform(child.get("transform"), tf), font_scale)
            continue
        sx, sy, tx, ty = tf

        def pt(x: float, y: float, sx: float = sx, sy: float = sy, tx: float = tx, ty: float = ty) -> tuple:
            return sx * x + tx, sy * y + ty

        fill = _colour(child.get("fill"), "black")
        stroke = _colour(child.get("stroke"), None)
        lw = float(child.get("stroke-width", "1")) * 1.0
        dashes = child.get("stroke-dasharray")
        style = {"linewidth": lw if stroke else 0, "edgecolor": stroke or "none", "facecolor": fill or "none"}
        if dashes:
            style["linestyle"] = (0, tuple(float(d) for d in re.split(r"[ ,]+", dashes.strip()) if d))
        if tag in ("polygon", "polyline"):
            nums = [float(v) for v in re.split(r"[ ,]+", child.get("points", "").strip()) if v]
            pts = [pt(nums[i], nums[i + 1]) for i in range(0, len(nums) - 1, 2)]
            if len(pts) >= 2:
                if tag == "polyline":
                    style["facecolor"] = "none"
                ax.add_patch(Polygon(pts, closed=(tag == "polygon"), **style))
        elif tag == "ellipse":
            cx, cy = pt(float(child.get("cx", 0)), float(child.get("cy", 0)))
            ax.add_patch(
                Ellipse(
                    (cx, cy), 2 * sx * float(child.get("rx", 0)), 2 * sy * float(child.get("ry", 0)), **style
                )
            )
        elif tag == "path":
            verts, codes = _path(child.get("d", ""), pt)
            if verts:
                ax.add_patch(PathPatch(MplPath(verts, codes), **style))
        elif tag == "text" and child.text:
            x, y = pt(float(child.get("x", 0)), float(child.get("y", 0)))
            anchor = {"start": "left", "middle": "center", "end": "right"}.get(
                child.get("text-anchor", "start")
            )
            size = float(child.get("font-size", "14")) * font_scale * _font_fit()
            ax.text(
                x,
                y,
                child.text,
                ha=anchor,
                va="baseline",
                fontsize=size,
                color=_colour(child.get("fill"), "black"),
                fontweight=child.get("font-weight", "normal"),
                fontstyle=child.get("font-style", "normal"),
                family=_font_family(child.get("font-family", "")),
            )


def _path(d: str, pt: Any) -> tuple[list, list]:
    """Graphviz paths: ``M x,y C x1,y1 x2,y2 x3,y3 ...`` (and L / Z, rarely)."""
    from matplotlib.path import Path as MplPath  # noqa: PLC0415 (deferred: matplotlib is heavy)

    verts: list = []
    codes: list = []
    tokens = re.findall(r"[MCLZmclz]|-?[\d.]+(?:e-?\d+)?", d)
    cmd = "M"
    nums: list[float] = []

    def flush() -> None:
        nonlocal nums
        if cmd == "M":
            for i in range(0, len(nums) - 1, 2):
                verts.append(pt(nums[i], nums[i + 1]))
                codes.append(MplPath.MOVETO if i == 0 else MplPath.LINETO)
        elif cmd == "L":
            for i in range(0, len(nums) - 1, 2):
                verts.append(pt(nums[i], nums[i + 1]))
                codes.append(MplPath.LINETO)
        elif cmd == "C":
            for i in range(0, len(nums) - 5, 6):
                for j in range(3):
                    verts.append(pt(nums[i + 2 * j], nums[i + 2 * j + 1]))
                    codes.append(MplPath.CURVE4)
        nums = []

    for tok in tokens:
        if tok.isalpha():
            flush()
            cmd = tok.upper()
            if cmd == "Z" and verts:
                verts.append(verts[-1])
                codes.append(MplPath.CLOSEPOLY)
        else:
            nums.append(float(tok))
    flush()
    return verts, codes


@lru_cache(maxsize=1)
def _available_fonts() -> frozenset[str]:
    from matplotlib import font_manager  # noqa: PLC0415 (deferred: matplotlib is heavy)

    return frozenset(f.name for f in font_manager.fontManager.ttflist)


def _font_family(spec: str) -> list[str]:
    """Sans text in DejaVu Sans, the font its box was measured with (`gradviz.render.text_width`);
    monospace text in the first font of Graphviz's list that matplotlib has, DejaVu behind it for the
    glyphs it lacks (∇, ‖, …)."""
    return _font_family_cached(spec)


@lru_cache(maxsize=16)
def _font_family_cached(spec: str) -> list[str]:
    wanted = [f.strip() for f in spec.split(",") if f.strip()]
    monospace = any("courier" in f.lower() or "mono" in f.lower() for f in wanted)
    if not monospace:
        return [FONT]
    prefs = wanted + (
        ["Liberation Mono", "DejaVu Sans Mono"] if monospace else ["Arial", "Liberation Sans", "DejaVu Sans"]
    )
    have = _available_fonts()
    fallback = "DejaVu Sans Mono" if monospace else "DejaVu Sans"
    for f in prefs:
        if f in have:
            return [f, fallback] if f != fallback else [f]
    return [fallback]


def _font_fit() -> float:
    """The boxes were measured with the font the PNG draws with: no shrinking."""
    return 1.0
