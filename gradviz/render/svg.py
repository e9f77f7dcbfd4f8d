"""Post-processing of Graphviz SVG: colour single texts inside a node, highlight nodes and edges.

Graphviz writes one ``<g id=".." class="node|edge|cluster">`` group per element; this module finds
them by id and rewrites attributes of their shapes and texts. Every change is to attributes we
write ourselves (colours from the palette), so no user text can become markup.

>>> svg = ('<g id="a_t1" class="node"><title>t1</title><polygon fill="white" stroke="black"/>'
...        '<text x="1" fill="black">grad 4.0</text></g>')
>>> out = restyle(svg, {"a_t1": {"stroke": "red"}}, {"a_t1": {"grad 4.0": {"fill": "blue"}}})
>>> 'stroke="red"' in out and 'fill="blue"' in out
True
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping

from gradviz.render.text import esc, visible

__all__ = ["restyle", "strip_prolog", "size_pt"]

_GROUP = re.compile(r'<g id="([^"]+)" class="(node|edge|cluster)">')
_SHAPE = re.compile(r"<(polygon|ellipse|path|polyline)\b([^>]*?)(/?)>")
_TEXT = re.compile(r"<text\b([^>]*)>([^<]*)</text>")
_ATTR = re.compile(r'\s([a-zA-Z:-]+)="([^"]*)"')


def _set_attrs(attrs: str, changes: Mapping[str, str]) -> str:
    present = dict(_ATTR.findall(attrs))
    for key, value in changes.items():
        value = esc(value, quote=True)
        if key in present:
            attrs = re.sub(
                rf'(\s{re.escape(key)}=")[^"]*(")',
                lambda m, v=value: m.group(1) + v + m.group(2),
                attrs,
                count=1,
            )
        else:
            attrs += f' {key}="{value}"'
    return attrs


def restyle(
    svg: str,
    shapes: Mapping[str, Mapping[str, str]] | None = None,
    texts: Mapping[str, Mapping[str, Mapping[str, str]]] | None = None,
) -> str:
    """``svg`` with new attributes.

    ``shapes``: element id → attributes for its outline (stroke, stroke-width, fill, ...); the special
    key "text-fill" recolours all its texts.
    ``texts``: element id → {text as displayed → attributes}; the special attribute "text" replaces
    the text itself (escaped).
    """
    shapes = shapes or {}
    texts = texts or {}
    if not shapes and not texts:
        return svg
    wanted = set(shapes) | set(texts)
    pieces = []
    pos = 0
    matches = list(_GROUP.finditer(svg))
    for k, m in enumerate(matches):
        gid = html.unescape(m.group(1))
        if gid not in wanted:
            continue
        start = m.end()
        end = matches[k + 1].start() if k + 1 < len(matches) else len(svg)
        body = svg[start:end]
        body = _restyle_group(body, shapes.get(gid), texts.get(gid))
        pieces.append(svg[pos:start])
        pieces.append(body)
        pos = end
    pieces.append(svg[pos:])
    return "".join(pieces)


def _restyle_group(
    body: str, shape: Mapping[str, str] | None, text: Mapping[str, Mapping[str, str]] | None
) -> str:
    if shape:
        outline = {k: v for k, v in shape.items() if k != "text-fill"}
        if outline:

            def fix_shape(m: re.Match) -> str:
                attrs = m.group(2)
                changes = dict(outline)
                if 'fill="none"' in attrs or "fill" not in attrs:
                    changes.pop("fill", None)  # edges' paths stay unfilled
                return f"<{m.group(1)}{_set_attrs(attrs, changes)}{m.group(3)}>"

            body = _SHAPE.sub(fix_shape, body)
        if "text-fill" in shape:
            body = _TEXT.sub(
                lambda m: f"<text{_set_attrs(m.group(1), {'fill': shape['text-fill']})}>{m.group(2)}</text>",
                body,
            )
    if text:
        wanted = {" ".join(visible(k).split()): v for k, v in text.items()}  # as the DOT escapes drew them

        def fix_text(m: re.Match) -> str:
            content = m.group(2)
            style = wanted.get(" ".join(html.unescape(content).split()))
            if not style:
                return m.group(0)
            style = dict(style)
            replacement = style.pop("text", None)
            if replacement is not None:
                content = esc(replacement, quote=False)
            return f"<text{_set_attrs(m.group(1), style)}>{content}</text>"

        body = _TEXT.sub(fix_text, body)
    return body


def strip_prolog(svg: str) -> str:
    """The ``<svg>`` element alone (no XML declaration, doctype or comments before it), for inlining."""
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else svg


def size_pt(svg: str) -> tuple[float, float]:
    """The drawing's width and height in points, from the root element."""
    m = re.search(r'<svg[^>]*\swidth="([\d.]+)pt"[^>]*\sheight="([\d.]+)pt"', svg)
    return (float(m.group(1)), float(m.group(2))) if m else (0.0, 0.0)
