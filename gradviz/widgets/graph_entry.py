"""``gv.graph``: the computation graph, with value, gradient, shape, dtype and device on each node.

This module is gv.graph's entry: it reads what it is given (tensors and tapes, a tape alone, a
graph-style engine's value, an ``eg.Graph``) and returns the widget that draws it, a
`gradviz.widgets.graph_view.GraphView` (or its `traced_graph_view` subclass).

Hovering a node shows its full value (the SVG's tooltip); clicking one shows its details beside the
graph. Graphs over ~150 nodes collapse into one node per layer / name scope; click a group to
expand it, click an expanded scope's frame to collapse it again (or call ``expand`` / ``collapse``).

>>> import engine as eg, gradviz as gv
>>> x = eg.constant(2.0)
>>> with eg.GradientTape(persistent=True) as tape:
...     tape.watch(x)
...     y = x * x
>>> view = gv.graph(y, tape, names={"x": x, "y": y})
>>> "grad 4.0" in view.to_svg()        # dy/dx at x = 2
True
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from engine import GradientTape, Graph, nest
from gradviz.model import tapeinfo
from gradviz.model.checks import NAMES, expect_mapping, expect_tensors
from gradviz.model.graph_model import build_model
from gradviz.model.graph_style import graph_tape, is_graph_value
from gradviz.model.protocol import is_engine_tape
from gradviz.render.dot import DEFAULT_SHOW
from gradviz.widgets.graph_view import GraphView
from gradviz.widgets.traced_graph_view import traced_graph

__all__ = ["graph", "GRAPH_INPUTS"]


def graph(
    target: Any,
    tape: Any = None,
    names: Mapping[str, Any] | None = None,
    show: Iterable[str] = DEFAULT_SHOW,
    collapse: bool | None = None,
    theme: str = "auto",
    rankdir: str | None = None,
    edge_magnitude: bool = False,
) -> GraphView:
    """The computation graph of ``target`` as ``tape`` recorded it.

    ``target``: a tensor (or a list of them); a tape alone draws everything it recorded.
    ``tape``: the tape (or list of tapes) that recorded it; when omitted, a tape found in ``names``
    or among the tapes gradviz has seen that recorded ``target`` is used.
    ``names``: any name → tensor mapping, e.g. ``names=locals()``, to label nodes.
    ``show``: fields on tensor nodes: "value", "grad", "shape", "dtype", "device".
    ``collapse``: None collapses graphs over 150 nodes by layer / scope; True or False forces it.
    ``theme``: "auto" (follow JupyterLab), "light" or "dark".
    ``edge_magnitude``: draw each edge as wide as the gradient flowing along it (log scale).

    ``target`` may also be an ``eg.Graph`` (what ``eg.function`` traced): see
    `gradviz.widgets.traced_graph_view`; or, with no tape, a graph-style engine's value (micrograd's
    design: ``.parents``/``._prev`` and ``.op``/``._op``), drawn through the same reader as a tape
    (`gradviz.model.graph_style`).

    >>> import engine as eg
    >>> import gradviz as gv
    >>> x = eg.constant(2.0)
    >>> with eg.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = x * x + 1.0
    ...
    >>> "<svg" in gv.graph(y, tape, names={"x": x, "y": y}).to_svg()
    True
    """
    if isinstance(target, Graph):
        return traced_graph(target, collapse=collapse, theme=theme, rankdir=rankdir)  # type: ignore[return-value]

    expect_mapping("gv.graph", "names", names, NAMES)
    if tape is None and _graph_style(target):  # micrograd's design: read as a tape, then as any tape
        tape = graph_tape(target, "gv.graph")
    if isinstance(target, GradientTape | list) and tape is None and _all_tapes(target):
        target, tape = None, target
    if (target is not None or tape is None) and (tape is None or is_engine_tape(tape)):
        expect_tensors("gv.graph", "the target", target, expected=GRAPH_INPUTS)  # (else: the protocol's)
    if tape is None:
        tape = _find_tape(target, names)
    return GraphView(build_model(target, tape, names=names), show=show, collapse=collapse, theme=theme,
                     rankdir=rankdir, edge_magnitude=edge_magnitude)


GRAPH_INPUTS = ("a Tensor computed under a GradientTape (or a list of them), a GradientTape, or an "
                "eg.Graph (what eg.function traced)")


def _graph_style(obj: Any) -> bool:
    items = obj if isinstance(obj, list | tuple) else [obj]
    return bool(items) and all(is_graph_value(v) for v in items)


def _all_tapes(obj: Any) -> bool:
    items = obj if isinstance(obj, list) else [obj]
    return bool(items) and all(isinstance(t, GradientTape) for t in items)


def _find_tape(target: Any, names: Mapping[str, Any] | None) -> Any:
    wanted = {t.id for t in nest.flatten(target)}
    candidates = [v for v in (names or {}).values() if isinstance(v, GradientTape)] + tapeinfo.known_tapes()
    for t in candidates:
        if any(r.output.id in wanted for r in t.records):
            return t
    raise ValueError(
        "gv.graph: which tape recorded this tensor? Pass it: gv.graph(y, tape), or names=locals() "
        "when the tape is a local variable. (A non-persistent tape forgets its records once "
        "tape.gradient has been called: use eg.GradientTape(persistent=True) to draw it afterwards.)"
    )
