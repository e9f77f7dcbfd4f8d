"""SVG pictures whose parts the browser swaps: matplotlib figures as vector SVG with empty layer slots,
fragments of their moving artists in the same coordinates, and the palette's colours as the CSS
variables every gradviz picture uses (`gradviz.render.theme.graph_css`), so a picture follows the
light / dark theme with no redraw.

>>> svg_with_layers('<svg viewBox="0 0 10 10"><rect/></svg>', ["moving"])
'<svg viewBox="0 0 10 10"><rect/><g data-gv-layer="moving"></g></svg>'
>>> compact_svg('<path d="M 1.23456 2.5  L 3.14159 4.0"/>   <g/>')
'<path d="M 1.2 2.5 L 3.1 4.0"/><g/>'
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from gradviz.render.plot import plain_texts
from gradviz.render.theme import role_vars, themed_graph

__all__ = ["themed_svg", "svg_with_layers", "layer_before", "svg_points", "artists_svg", "compact_svg"]


def themed_svg(svg: str, colors: dict[str, Any]) -> str:
    """``svg`` (a matplotlib document, or a fragment of one) drawn with ``colors`` (`plot.plot_colors`),
    with each colour of gradviz's palette in its style attributes as that role's CSS variable
    (`theme.role_vars`); a whole document also gets the variables' definitions (`theme.themed_graph`),
    so it follows the light / dark theme like a graph does. Plot-only colours (series, grid) stay.

    >>> from gradviz.render.plot import plot_colors
    >>> themed_svg('<path style="fill: #59636e"/>', plot_colors("light"))
    '<path style="fill: var(--gv-muted)"/>'
    """
    swap = role_vars(colors["palette"])
    pattern = re.compile(r"(fill|stroke):\s*(#[0-9a-fA-F]{6})\b")
    svg = pattern.sub(lambda m: f"{m.group(1)}: {swap.get(m.group(2).lower(), m.group(2))}", svg)
    return themed_graph(svg) if svg.lstrip().startswith(("<svg", "<?xml")) else svg


def svg_with_layers(svg: str, names: Sequence[str]) -> str:
    """``svg`` (one ``<svg>`` document) with an empty ``<g data-gv-layer="NAME">`` per name at its end,
    drawn above everything, in the document's own coordinates."""
    start = svg.find("<svg")
    svg = svg[start:] if start >= 0 else svg
    end = svg.rfind("</svg>")
    if end < 0:
        raise ValueError("svg_with_layers: not an SVG document (no </svg>).")
    slots = "".join(f'<g data-gv-layer="{_slot(n)}"></g>' for n in names)
    return svg[:end] + slots + svg[end:]


def _slot(name: str) -> str:
    if not re.fullmatch(r"[\w:.-]+", name):
        raise ValueError(f"svg_with_layers: layer names are letters, digits and _ : . - only, got {name!r}.")
    return name


def svg_points(ax: Any, xs: Sequence[float], ys: Sequence[float], digits: int = 1) -> list[list[float]]:
    """Data coordinates of ``ax`` → the coordinates of the figure's SVG (points, y down), as
    `gradviz.render.plot.svg_text` saves it (the whole figure, no cropping). Draw the figure first."""
    fig = ax.figure
    pixels = ax.transData.transform(np.column_stack([np.asarray(xs, float), np.asarray(ys, float)]))
    scale = 72.0 / fig.dpi
    height = fig.get_figheight() * 72.0
    out = []
    for x, y in pixels:
        if np.isfinite(x) and np.isfinite(y):
            out.append([round(float(x * scale), digits), round(float(height - y * scale), digits)])
    return out


def artists_svg(fig: Any, artists: Sequence[Any]) -> str:
    """An SVG fragment of ``artists`` alone, in the coordinates of the figure's whole SVG (as
    `gradviz.render.plot.svg_text` saves it): what a layer holds when a control moves only these artists.
    Draw (or save) the figure first, so that its layout is settled."""
    from matplotlib.backends.backend_svg import RendererSVG  # noqa: PLC0415 (deferred: matplotlib is heavy)

    for artist in artists:  # the drawn artists only (walking the whole figure is slow)
        plain_texts(artist)
    buffer = io.StringIO()
    dpi = fig.dpi
    width, height = fig.get_size_inches()
    fig.dpi = 72  # what the SVG backend draws at (points)
    try:
        renderer = RendererSVG(width * 72, height * 72, buffer, image_dpi=dpi, metadata={"Date": None})
        for artist in artists:
            if artist.get_visible():
                artist.draw(renderer)
        renderer.finalize()
    finally:
        fig.dpi = dpi
    text = buffer.getvalue()
    start = text.index(">", text.index("<svg")) + 1
    body = text[start : text.rindex("</svg>")]
    body = re.sub(r"<metadata>.*?</metadata>", "", body, flags=re.S)
    body = re.sub(r"<defs>\s*<style[^>]*>[^<]*</style>\s*</defs>", "", body)  # the base has it
    return compact_svg(body).strip()


_PATH_DATA = re.compile(r'\sd="([^"]*)"')
_DECIMALS = re.compile(r"(-?\d+\.\d)\d+")


def compact_svg(svg: str) -> str:
    """``svg`` with path data at 0.1 pt (invisible at any zoom a page allows) and no indentation."""
    svg = _PATH_DATA.sub(lambda m: ' d="' + " ".join(_DECIMALS.sub(r"\1", m.group(1)).split()) + '"', svg)
    return re.sub(r">\s+<", "><", svg)




def layer_before(svg: str, name: str, before: str) -> str:
    """``svg`` with an empty layer ``name`` just before its layer ``before`` (drawn under it).

    >>> layer_before('<svg><g data-gv-layer="moving"></g></svg>', "lines", "moving")
    '<svg><g data-gv-layer="lines"></g><g data-gv-layer="moving"></g></svg>'
    """
    slot = f'<g data-gv-layer="{before}">'
    return svg.replace(slot, f'<g data-gv-layer="{name}"></g>{slot}', 1)
