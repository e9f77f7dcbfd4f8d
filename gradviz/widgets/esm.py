"""The ES modules anywidget loads for gradviz's front ends: the shared parts (zoom_view.js: zoom and pan
of graph pictures) followed by the front end's own file (svg_view.js, frames_view.js). anywidget loads
one module per widget, so the parts are joined here rather than imported in the browser.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["esm_source"]

_SHARED_JS = ("zoom_view.js",)  # what every front end gets in front of its own module


def esm_source(name: str) -> str:
    """The ES module anywidget loads for the front end ``name`` (``"svg_view.js"``,
    ``"frames_view.js"``): the shared parts (zoom_view.js) followed by the file itself.

    >>> source = esm_source("svg_view.js")
    >>> "function zoomable" in source and "export default" in source
    True
    """
    here = Path(__file__).parent
    return "\n".join((here / part).read_text(encoding="utf-8") for part in (*_SHARED_JS, name))
