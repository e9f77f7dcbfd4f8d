"""gradviz: see gradients. Jupyter widgets over the engine's tapes, tensors and optimizers.

>>> import gradviz as gv
>>> {"graph", "tape", "backprop", "flow", "clipping", "descent", "check_gradients"} <= set(gv.__all__)
True

Every widget returns a view that is live in JupyterLab and a static picture elsewhere
(``_repr_html_`` / ``_repr_svg_``), with ``.save("x.svg" | "x.png" | "x.html")``.
Importing gradviz is light: matplotlib, ipywidgets, anywidget and graphviz load only when a
widget is made.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

__version__ = "0.1.0"

# public name → (module, attribute); loaded on first use
_LAZY = {
    "graph": ("graph", "graph"),
    "tape": ("tape_view", "tape"),
    "explain_none": ("tape_view", "explain_none"),
    "backprop": ("backprop", "backprop"),
    "flow": ("flow", "flow"),
    "clipping": ("clipping", "clipping"),
    "descent": ("descent", "descent"),
    "check_gradients": ("gradcheck", "check_gradients"),
    "Recorder": ("recorder", "Recorder"),
    "build_model": ("model", "build_model"),
    "to_dot": ("dot", "to_dot"),
    "render_svg": ("render", "render_svg"),
    "View": ("widget_base", "View"),
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


class _Package(types.ModuleType):
    """Keeps ``gv.graph`` the function when the submodule ``gradviz/graph.py`` is imported.

    Python's import system sets ``gradviz.graph = <module>`` after importing a submodule; for the
    public names that share a submodule's name (graph, backprop, flow, clipping, descent) that
    would hide the function, so that one assignment is ignored (the module stays in sys.modules).
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _LAZY and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
