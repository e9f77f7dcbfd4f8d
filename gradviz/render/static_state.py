"""A widget's picture carried once: the notebook output's HTML is a short notice, the picture lives in the
widget's state, and `static_html` draws the static picture back from that state where a page needs it
without JavaScript (``tools/export_html.py`` puts it under each widget of an exported page).

A gradviz widget's notebook output is its live view plus a ``text/html`` fallback. The state of the
graph widget (``svg``) and of the kernel-free widgets (``picture`` and its ``layers``) already holds the
picture, so the fallback repeating it doubled every saved or exported output. `notice_html` is what the
output carries instead; `static_html` rebuilds what the front end (svg_view.js, frames_view.js) shows
first, from the saved state alone.

>>> state = {"svg": '<svg><g id="n1" class="node"><text>x</text></g></svg>', "panel": "<i>click</i>"}
>>> static_html(state).endswith("</svg><i>click</i></div>")
True
>>> static_html({"something": "else"}) is None
True
"""

from __future__ import annotations

import re
from typing import Any

from gradviz.render.html import layer_frame, panel_html
from gradviz.render.svg import restyle
from gradviz.render.text import esc

__all__ = ["NOTICE_MARK", "notice_html", "static_html", "holds_picture"]

#: The attribute that marks a notice in a notebook output (what tools/export_html.py looks for).
NOTICE_MARK = "data-gv-notice"


def holds_picture(widget: Any) -> bool:
    """Whether ``widget``'s own state holds its picture (the graph widget, the kernel-free widgets)."""
    return bool(getattr(type(widget), "gv_state_holds_picture", False))


def notice_html(view: Any) -> str:
    """The short ``text/html`` of a widget output whose picture is in the widget's state."""
    return (
        f'<div class="gradviz gradviz-notice" {NOTICE_MARK}="1" style="font-size:12px;opacity:.8">'
        f"{esc(repr(view))}: an interactive gradviz widget. Its picture is in the widget's state: it shows "
        "in JupyterLab (run the cell) and in pages exported with the widget state (make html).</div>"
    )


def static_html(state: dict[str, Any]) -> str | None:
    """The static picture of a gradviz widget from its saved ``state`` (None: not a gradviz widget).

    The graph widget: its SVG (or the folded state it shows, drawn ahead) and panel. A kernel-free
    widget: its picture with every layer filled at
    the saved control positions, the panel under it, and the controls' positions in words.
    """
    if isinstance(state.get("svg"), str) and "layers" not in state:
        panel = state.get("panel") or ""
        svg = state["svg"] or (state.get("views") or {}).get(state.get("state") or "", "")  # drawn ahead
        return f'<div class="gradviz gradviz-graph gradviz-static">{svg}{panel}</div>'
    if isinstance(state.get("picture"), str) and isinstance(state.get("layers"), list):
        return _frames_html(state)
    return None


def _frames_html(state: dict[str, Any]) -> str:
    index = state.get("index") or {}
    picture = state["picture"]
    for layer in state["layers"]:  # the picture's layers (the panel's: panel_html, below)
        content = layer_frame(layer, index)
        kind = layer.get("type")
        if kind == "patch" and content:
            shapes = {sid: change.get("shapes") or {} for sid, change in content.items()}
            texts = {sid: change.get("texts") or {} for sid, change in content.items()}
            picture = restyle(picture, shapes, texts)
        elif kind == "trace":
            position = index.get(layer["reveal"], 0) if layer.get("reveal") else None
            picture = _fill(picture, layer["name"], _trace_svg(content, position))
        elif kind == "svg":
            picture = _fill(picture, layer["name"], content or "")
    positions = []
    for control in state.get("controls") or []:
        labels = control.get("labels") or []
        k = index.get(control["name"], 0)
        shown = labels[k] if 0 <= k < len(labels) else str(k)
        positions.append(f"{esc(control.get('label') or control['name'])}: {esc(shown)}")
    title = f"<b>{esc(state['title'])}</b>" if state.get("title") else ""
    where = f'<div style="font-size:12px;opacity:.75">{" · ".join(positions)}</div>' if positions else ""
    return (f'<div class="gradviz gradviz-static" data-gv-static="{esc(state.get("kind") or "frames")}">'
            f"{title}{where}{picture}{panel_html(state, index)}</div>")


def _fill(picture: str, name: str, content: str) -> str:
    """``picture`` with ``content`` inside its empty ``<g|div data-gv-layer="name">`` slot."""
    slot = re.compile(rf'(<(g|div) data-gv-layer="{re.escape(name)}"[^>]*>)(</\2>)')
    return slot.sub(lambda m: m.group(1) + content + m.group(3), picture, count=1)


def _trace_svg(trace: Any, position: int | None) -> str:
    """A "trace" frame as frames_view.js's drawTrace draws it with its reveal control at ``position``."""
    if not trace or not trace.get("points"):
        return ""
    every = trace["points"]
    count = len(every)
    if position is not None:
        counts = trace.get("counts")
        count = counts[min(position, len(counts) - 1)] if counts else position + 1
    points = every[: max(1, count)]
    color = esc(str(trace.get("color") or "currentColor"))

    def line(pts: list, width: Any, opacity: Any) -> str:
        path = " ".join(f"{float(px)},{float(py)}" for px, py in pts)
        return (f'<polyline points="{path}" fill="none" stroke-width="{float(width)}" '
                f'stroke-linejoin="round" stroke-opacity="{float(opacity)}" style="stroke:{color}"/>')

    parts = [line(every, trace.get("ghost_width") or 1, trace["ghost"])] if trace.get("ghost") else []
    opacity = 1 if trace.get("opacity") is None else trace["opacity"]
    parts.append(line(points, trace.get("width") or 1.8, opacity))
    if marker := trace.get("marker"):
        r = float(marker)
        dots = "".join(f"M{float(x) - r},{float(y)}a{r},{r} 0 1,0 {2 * r},0a{r},{r} 0 1,0 {-2 * r},0"
                       for x, y in points)
        parts.append(f'<path d="{dots}" style="fill:{color}"/>')
    segments = trace.get("segments") or []
    if len(points) <= len(segments) and segments[len(points) - 1]:
        x1, y1, x2, y2 = map(float, segments[len(points) - 1])
        dash = esc(str(trace.get("dash") or "5,2.5"))
        parts.append(f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke-width="'
                     f'{float(trace.get("segment_width") or 1.6)}" stroke-dasharray="{dash}" '
                     f'style="stroke:{esc(str(trace.get("segment_color") or color))}"/>')
    radius = trace.get("radius")
    radius = 3.5 if radius is None else float(radius)
    if radius > 0:
        x, y = points[-1]
        halo = f";stroke:{esc(str(trace['halo']))}" if trace.get("halo") else ""
        parts.append(f'<circle cx="{float(x)}" cy="{float(y)}" r="{radius}" '
                     f'stroke-width="{1.5 if halo else 0}" style="fill:{color}{halo}"/>')
    body = "".join(parts)
    if trace.get("clip"):
        x, y, w, h = map(float, trace["clip"])
        body = (f'<svg x="{x}" y="{y}" width="{w}" height="{h}" viewBox="{x} {y} {w} {h}" '
                f'overflow="hidden">{body}</svg>')
    return body
