"""``gv.graph(an eg.Graph)``: a traced step drawn as one graph, forward and backward told apart.

The same pipeline as a tape's graph (`gradviz.model.fold`, `gradviz.render.dot.to_dot`) over the
model of the traced step (`gradviz.model.traced_model`): each node is labelled with its op and the
last part of its name, inside a box per name scope (``sequential_1``, ``gradients``, ``Adam``; a
Variable's read sits in the layer that reads it, so each layer is one box and each Variable appears
once). The step reads left to right in three bands: the forward pass, the gradients and the updates.
Backward nodes (made by ``tape.gradient``, under ``gradients/...``) have their own colour, function
arguments and Variable reads are boxes, assignments and optimizer updates octagons, control
dependencies dashed. A small step starts with every scope open (a click on a frame folds it, a
click on the folded box opens it again); a big one starts folded by scope, then by repeated
structure ("Mul → Add → Tanh × 666"), then by ranges, as `gv.graph` folds a tape's graph. Hovering a
node shows its full name; clicking it shows the name to fetch it by (``graph.run("...")``).
Constants are left out unless ``constants=True``.

>>> import engine as eg, gradviz as gv
>>> f = eg.function(lambda x: eg.tanh(x) * 2)
>>> view = gv.graph(f.get_graph(eg.ones(2)))
>>> "Tanh" in view.to_svg(), view
(True, <gv.graph of eg.Graph '<lambda>': 3 nodes (0 backward), 0 scopes>)
"""

from __future__ import annotations

from typing import Any

from gradviz.model.graph_model import FOLD_BOXES, GraphModel
from gradviz.model.traced_model import traced_model
from gradviz.render.graph_info import TRACED_CLICK_HINT, node_info, traced_info, traced_legend
from gradviz.widgets.graph_view import GraphView

__all__ = ["TracedGraphView", "traced_graph"]

COLLAPSE_OVER = 80  # nodes; a bigger step starts folded
UNFOLDED = 10**9  # a level's boxes before it folds: never (every scope open, nothing else grouped)


def traced_graph(graph: Any, collapse: bool | None = None, constants: bool = False, theme: str = "auto",
                 rankdir: str | None = None) -> TracedGraphView:
    """The view of a traced ``graph`` (what ``gv.graph`` returns for an ``eg.Graph``).

    ``collapse``: None folds a graph over 80 nodes (scopes, then repeats and ranges in a level over
    40 boxes) and opens every scope of a smaller one; True folds repeats everywhere; False opens
    every scope. ``constants``: draw the ``Const`` nodes too.
    """
    return TracedGraphView(graph, collapse=collapse, constants=constants, theme=theme, rankdir=rankdir)


class TracedGraphView(GraphView):
    """A traced step's picture: a `GraphView` of `traced_model` (``expand(scope)``, ``collapse(scope)``,
    ``select(name)``)."""

    css_class = "gradviz-traced"

    def __init__(self, graph: Any, collapse: bool | None = None, constants: bool = False,
                 theme: str = "auto", rankdir: str | None = None):
        self.graph = graph
        model = traced_model(graph, constants=constants)
        # a step reads left to right: forward, gradients, updates
        super().__init__(model, show=("shape",), collapse=False, theme=theme, rankdir=rankdir or "LR")
        fold = collapse if collapse is not None else len(model) > COLLAPSE_OVER
        self.fold_limit = (0 if collapse else FOLD_BOXES) if fold else UNFOLDED
        plan = model.fold_plan(self.fold_limit)
        self.collapsible = bool(plan.groups)
        self.opened = frozenset() if fold else frozenset(g.key for g in plan.groups.values())
        self.expanded = set(self.opened)
        self.by_name = {n.name: n.id for n in model.nodes.values()}

    @property
    def scopes(self) -> list[str]:
        """The scopes drawn as boxes (the keys `expand` and `collapse` take)."""
        plan = self.full_model.fold_plan(self.fold_limit)
        return sorted(g.key for g in plan.groups.values() if g.kind == "scope")

    def _resolve(self, node: Any) -> str | None:
        if isinstance(node, str) and node in self.by_name:  # a traced node's name: "dense_1/kernel"
            nid = self.by_name[node]
            return self.model.group_of.get(nid, nid)  # (its folded box, when it is inside one)
        return super()._resolve(node)

    def describe(self, node: Any, model: GraphModel) -> str:
        return node_info(node, model) if node.kind == "group" else traced_info(node.record, node.detail)

    def legend(self) -> str:
        return traced_legend(self.palette)

    def _panel_head(self) -> str:
        return TRACED_CLICK_HINT

    def __repr__(self) -> str:
        nodes = self.full_model.nodes.values()
        back = sum(n.role == "backward" for n in nodes)
        return (f"<gv.graph of eg.Graph {self.graph.name!r}: {len(self.full_model)} nodes "
                f"({back} backward), {len(self.scopes)} scopes>")

