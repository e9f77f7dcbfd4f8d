"""gradviz: see gradients. Jupyter widgets over the engine's tapes, tensors and optimizers.

>>> import gradviz as gv
>>> {"graph", "tape", "backprop", "flow", "clipping", "descent", "check_gradients", "memory"} \\
...     <= set(gv.__all__)
True

Every widget returns a view that is live in JupyterLab and a static picture elsewhere
(``_repr_html_`` / ``_repr_svg_``), with ``.save("x.svg" | "x.png" | "x.html")``.
Importing gradviz is light: matplotlib, ipywidgets, anywidget and graphviz load only when a
widget is made.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# public name → (module, attribute); loaded on first use. The folders are the layers: model/ (data
# built from tapes and optimizers), render/ (DOT, SVG, plots, themes), widgets/ (one module per widget).
_LAZY = {
    "graph": ("widgets.graph_entry", "graph"),
    "tape": ("widgets.tape_view", "tape"),
    "explain_none": ("model.explain", "explain_none"),
    "backprop": ("widgets.backprop_view", "backprop"),
    "flow": ("widgets.flow_view", "flow"),
    "clipping": ("widgets.clipping_lab", "clipping"),
    "descent": ("widgets.descent_trace", "descent"),
    "check_gradients": ("widgets.gradient_check", "check_gradients"),
    "memory": ("widgets.memory_view", "memory"),
    "Recorder": ("render.recorder_plot", "Recorder"),
    "build_model": ("model.graph_model", "build_model"),
    "to_dot": ("render.dot", "to_dot"),
    "render_svg": ("render.graphviz", "render_svg"),
    "View": ("widgets.view", "View"),
}
__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'gradviz' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f"{__name__}.{module}"), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
