"""The static picture an exported page shows under a widget output until the live widget renders.

A widget output carries a view of a model in the notebook's widget state, and often other forms of
the same object: ``text/html``, ``image/svg+xml``, ``image/png``. JupyterLab shows the live widget and
never runs that HTML. The page shows a fallback, so it must not run a third-party widget's HTML either:

* gradviz's own widgets (an anywidget whose saved ``_anywidget_id`` is a ``gradviz.`` class, or the
  ipywidgets box of a gradviz view, with the DOM class ``gradviz-view``): their HTML (escaped names,
  no scripts), else their SVG, else their PNG;
* any other widget: its PNG, else its SVG as an image (``<img>``: scripts in it do not run), else a
  plain-text notice. Its ``text/html`` is never embedded.

>>> page = widget_fallback({"text/html": "<script>alert(1)</script>"}, {"model_module": "some-widget"})
>>> "<script" in page, page.split(">")[1]
(False, '(a some-widget widget: it shows here once its script has loaded)</div')
"""

from __future__ import annotations

import base64
import html
import re
from typing import Any

BASE64 = re.compile(r"[A-Za-z0-9+/=\s]*")


def is_gradviz(model: dict[str, Any] | None) -> bool:
    """Whether a saved widget model is one of gradviz's widgets: an anywidget of a gradviz class, or
    the ipywidgets box of a gradviz view (`gradviz.widgets.plot_widget`).

    >>> is_gradviz({"model_module": "@jupyter-widgets/controls", "state": {"_dom_classes": ["gradviz-view"]}})
    True
    """
    if not isinstance(model, dict):
        return False
    state = model.get("state") if isinstance(model.get("state"), dict) else {}
    if model.get("model_module") == "anywidget":
        widget_class = state.get("_anywidget_id")
        return isinstance(widget_class, str) and widget_class.startswith("gradviz.")
    classes = state.get("_dom_classes")
    return model.get("model_module") == "@jupyter-widgets/controls" and isinstance(classes, list) and \
        "gradviz-view" in classes


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else value if isinstance(value, str) else ""


def widget_fallback(data: dict[str, Any], model: dict[str, Any] | None) -> str:
    """The fallback HTML for a widget output with mime ``data`` whose saved model is ``model``.

    >>> widget_fallback({"image/png": "iVBORw0KGgo="}, None).split("<img ")[1]
    'src="data:image/png;base64,iVBORw0KGgo=" alt="widget (static picture)"></div>'
    """
    ours = is_gradviz(model)
    page_html = _text(data.get("text/html"))
    svg = _text(data.get("image/svg+xml"))
    png = _text(data.get("image/png"))
    if ours and page_html:
        return f'<div class="gradlab-widget-fallback jp-RenderedHTMLCommon jp-RenderedHTML">{page_html}</div>'
    if ours and svg:
        return f'<div class="gradlab-widget-fallback jp-RenderedSVG">{svg}</div>'
    if png and BASE64.fullmatch(png):
        source = "data:image/png;base64," + "".join(png.split())
        return (f'<div class="gradlab-widget-fallback jp-RenderedImage"><img src="{source}" '
                'alt="widget (static picture)"></div>')
    if svg:
        source = "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")
        return (f'<div class="gradlab-widget-fallback jp-RenderedImage"><img src="{source}" '
                'alt="widget (static picture)"></div>')
    module = model.get("model_module") if isinstance(model, dict) else None
    what = f"a {module} widget" if isinstance(module, str) and module else "a widget"
    return (f'<div class="gradlab-widget-fallback gradlab-widget-notice">({html.escape(what[:120])}: it '
            "shows here once its script has loaded)</div>")
