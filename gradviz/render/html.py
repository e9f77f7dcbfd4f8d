"""The HTML every widget shares, as functions of plain data: a page, a block, a table of facts, the rows a
slider reveals, a matplotlib view's static form.

>>> info_table([("op", "<b>mul</b>")])
'<table><tr><th>op</th><td><b>mul</b></td></tr></table>'
>>> gradviz_block("<svg></svg>", "gradviz-graph")
'<div class="gradviz gradviz-graph"><svg></svg></div>'
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from typing import Any

from gradviz.render.text import esc

__all__ = ["html_page", "info_table", "gradviz_block", "rows_html", "plot_view_html", "png_svg", "bold",
           "grids_note", "layer_slot",
           "frame_key", "layer_frame", "panel_html"]


def html_page(body: str, title: str = "gradviz") -> str:
    """A standalone HTML page around a fragment."""
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
        f"<title>{esc(title)}</title>"
        "<style>body{font-family:Helvetica,Arial,sans-serif;margin:16px} "
        "pre{white-space:pre-wrap} table{border-collapse:collapse} "
        "td,th{padding:2px 8px;text-align:left;vertical-align:top}</style>"
        f"</head><body>\n{body}\n</body></html>\n"
    )


def gradviz_block(inner: str, css_class: str = "") -> str:
    """A widget's static form: ``inner`` in a ``div`` of class ``gradviz`` (and ``css_class``)."""
    return f'<div class="gradviz{" " + css_class if css_class else ""}">{inner}</div>'


def bold(text: Any) -> str:
    """``text``, escaped, in bold."""
    return f"<b>{esc(text)}</b>"


def info_table(rows: list[tuple[str, str]]) -> str:
    """An HTML table from (heading, already-escaped HTML) pairs."""
    cells = "".join(f"<tr><th>{esc(k)}</th><td>{v}</td></tr>" for k, v in rows)
    return f"<table>{cells}</table>"


def rows_html(content: Any, position: int) -> str:
    """A "rows" frame at the reveal control's ``position``, as frames_view.js draws it: ``head``, the
    rows ``position - window + 1 .. position`` (clamped to the rows there are; each row's cells after
    the ``lead`` cells, in ``<td>``; with a window over 1 the last row is ``class="now"``), ``tail``.

    >>> rows_html({"head": "<table>", "rows": [["a"], ["b"], ["c"]], "tail": "</table>", "window": 2}, 5)
    '<table><tr><td>b</td></tr><tr class="now"><td>c</td></tr></table>'
    """
    if not content:
        return ""
    if isinstance(content, str):
        return content
    rows = content.get("rows") or []
    window = int(content.get("window") or 1)
    last = max(0, min(int(position), len(rows) - 1))
    shown = rows[max(0, last + 1 - window) : last + 1]
    lead = list(content.get("lead") or [])
    out = [content.get("head", "")]
    for j, cells in enumerate(shown):
        now = ' class="now"' if window > 1 and j == len(shown) - 1 else ""
        out.append(f"<tr{now}>" + "".join(f"<td>{c}</td>" for c in lead + list(cells)) + "</tr>")
    out.append(content.get("tail", ""))
    return "".join(out)


def plot_view_html(title: str, picture_svg: str | None, panel: str) -> str:
    """A matplotlib view's static form: its title, its picture (inline SVG, at most the page's width),
    its panel."""
    parts = ['<div class="gradviz">']
    if title:
        parts.append(f"<b>{esc(title)}</b><br/>")
    if picture_svg is not None:
        parts.append(f"<style>.gradviz-picture svg{{max-width:100%;height:auto}}</style>"
                     f'<div class="gradviz-picture">{picture_svg}</div>')
    parts.append(panel)
    parts.append("</div>")
    return "".join(parts)


def png_svg(png: bytes, width: int, height: int, title: str) -> str:
    """A light SVG document around PNG bytes of ``width`` × ``height`` pixels."""
    data = base64.b64encode(png).decode("ascii")
    return (f'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
            f'width="{width}" height="{height}" viewBox="0 0 {width} {height}">'
            f"<title>{esc(title)}</title>"
            f'<image width="{width}" height="{height}" xlink:href="data:image/png;base64,{data}"/></svg>')


def grids_note(specs: list[Any]) -> str:
    """The note under a kernel-free widget: the grid each control offers, in words."""
    grids = [f"{c.label or c.name}: {c.note}" for c in specs if c.note]
    return "Computed ahead, no kernel needed: " + "; ".join(grids) + "." if grids else ""


def layer_slot(name: str, inner: str = "") -> str:
    """The place of layer ``name`` in a kernel-free widget's picture (frames_view.js fills it)."""
    return f'<div data-gv-layer="{esc(name)}">{inner}</div>'


def frame_key(positions: Iterable[int]) -> str:
    """The key of one frame of a layer: its controls' positions joined by commas (frames_view.js
    builds the same key in the browser).

    >>> frame_key((2, 0))
    '2,0'
    """
    return ",".join(map(str, positions))


def layer_frame(spec: dict[str, Any], index: dict[str, int]) -> Any:
    """What the layer ``spec`` shows with the controls at ``index`` (a control not in it: at 0), or
    None when that frame is empty.

    >>> layer_frame({"deps": ["k"], "frames": {"1": "one"}}, {"k": 1})
    'one'
    """
    return (spec.get("frames") or {}).get(frame_key(index.get(d, 0) for d in spec.get("deps", [])))


def panel_html(state: dict[str, Any], index: dict[str, int] | None = None) -> str:
    """The panel of a kernel-free widget's ``state`` (`Frames.state`, or a widget's traits) with the
    controls at ``index`` (default: the state's): its "html" and "rows" layers in order, as the browser
    joins them."""
    index = dict(state["index"] if index is None else index)
    out = []
    for spec in state["layers"]:
        if spec["type"] not in ("html", "rows"):
            continue
        content = layer_frame(spec, index) or ""
        rows = spec["type"] == "rows"
        out.append(rows_html(content, index.get(spec["reveal"], 0)) if rows else content or "")
    return "".join(out)
