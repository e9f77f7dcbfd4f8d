"""`GraphView`: the widget `gv.graph` returns (a tape's graph; `traced_graph_view` subclasses it).

It holds the full model, folds it (`GraphModel.fold_plan`), draws each state once
(`gradviz.render.dot.to_dot`, then SVG), and answers clicks: a folded box opens, an open frame closes,
a node shows its details. Pictures of the states a click can reach are drawn ahead for pages without
a kernel (`gradviz.widgets.graph_states`).

It lives on `gradviz.widgets.view.View`'s lifecycle, but over the SVG widget rather than frames: a
click can open any fold state, and their number grows with the groups' nesting, so the states a click
reaches are drawn ahead (within a budget) and the rest drawn on demand, which no grid of positions
describes. Its sync still takes the base's two paths: the browser reports a selection or an opened
state (`_follow_browser`), and a change here sends the picture (`_browser_state`, through `View._sync`).

>>> import engine as eg, gradviz as gv
>>> w = eg.Variable([1.0, 2.0])
>>> with eg.GradientTape() as tape:
...     loss = eg.sum(w * w)
>>> view = gv.graph(loss, tape)
>>> isinstance(view, GraphView), len(view.model.nodes), view.collapsible   # w, Mul, w * w, Sum, loss
(True, 5, False)
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

from gradviz.model.checks import expect_labels, expect_tensor
from gradviz.model.edge_flow import edge_magnitudes
from gradviz.model.graph_model import COLLAPSE_THRESHOLD, FOLD_BOXES, GraphModel
from gradviz.render.dot import DEFAULT_SHOW, Drawing, to_dot
from gradviz.render.edges import edge_attributes
from gradviz.render.graph_info import click_hint, frame_info, graph_html, legend, node_info
from gradviz.render.graphviz import render_svg
from gradviz.render.svg import restyle, strip_prolog
from gradviz.render.theme import palette, themed_graph
from gradviz.widgets.graph_states import expanded_in, fold_states, state_of
from gradviz.widgets.view import View, svg_widget_class

__all__ = ["GraphView", "SHOW_FIELDS"]

SHOW_FIELDS = "a tuple of fields, e.g. ('value', 'grad', 'shape')"

_prefixes = itertools.count(1)


class GraphView(View):
    """What `graph` returns: a graph picture, live in JupyterLab, static elsewhere."""

    def __init__(
        self,
        model: GraphModel,
        show: Iterable[str] = DEFAULT_SHOW,
        collapse: bool | None = None,
        theme: str = "auto",
        rankdir: str | None = None,
        edge_magnitude: bool = False,
    ):
        self.full_model = model
        self.edge_magnitude = edge_magnitude  # edges as wide as the gradient along them (gv.flow)
        self.show = expect_labels("gv.graph", "show", show, SHOW_FIELDS)
        self.theme = theme
        self.rankdir = rankdir
        self.opened: frozenset[str] = frozenset()  # the groups open in the picture it starts with
        self.expanded: set[str] = set()  # the groups open now
        # collapse=True folds every run of ops; None folds graphs over the threshold (gradviz.model.fold)
        self.fold_limit = 0 if collapse else FOLD_BOXES
        wanted = collapse if collapse is not None else len(model) > COLLAPSE_THRESHOLD
        self.collapsible = bool(wanted and model.fold_plan(self.fold_limit).groups)
        self.selected: str | None = None  # a node id of `model`
        self.highlight: dict[str, dict[str, str]] = {}  # node id → SVG shape attributes
        self.edge_highlight: dict[tuple[str, str], dict[str, str]] = {}  # (src, dst) node ids → attributes
        self.text_overrides: dict[str, dict[str, dict[str, str]]] = {}  # node id → {text → attributes}
        self.prefix = f"gvg{next(_prefixes)}"
        self._cache: dict[Any, tuple[GraphModel, Drawing, str]] = {}

    # ---- the current picture --------------------------------------------------------------------
    @property
    def palette(self) -> Any:
        """The colours drawn: "auto" draws the light palette and lets CSS follow the page's theme
        (`gradviz.render.theme.themed_graph`); "light" / "dark" are fixed."""
        return palette("light" if self.theme == "auto" else self.theme)

    @property
    def model(self) -> GraphModel:
        """The model as drawn now (collapsed groups, expanded scopes)."""
        return self._layout()[0]

    @property
    def drawing(self) -> Drawing:
        return self._layout()[1]

    def _layout(self, expanded: frozenset[str] | None = None) -> tuple[GraphModel, Drawing, str]:
        expanded = frozenset(self.expanded) if expanded is None else expanded
        key = (expanded, self.palette.name, self.show, self.rankdir, self.collapsible, self.edge_magnitude)
        if key not in self._cache:
            model = self.full_model
            if self.collapsible:
                model = model.collapse(expanded, self.fold_limit)
            edge_attrs = None
            if self.edge_magnitude:
                edge_attrs = edge_attributes(edge_magnitudes(model), theme=self.palette.name)
            drawing = to_dot(model, theme=self.palette, show=self.show, rankdir=self.rankdir,
                             prefix=self.prefix, edge_attrs=edge_attrs)
            svg = render_svg(drawing.source)
            if self.theme == "auto":
                svg = themed_graph(svg)
            if len(self._cache) > 64:
                self._cache.clear()
            self._cache[key] = (model, drawing, svg)
        return self._cache[key]

    def picture(self, expanded: frozenset[str]) -> tuple[str, dict[str, str]]:
        """The SVG with the groups ``expanded`` open (no highlights) and the details of its nodes."""
        model, drawing, svg = self._layout(expanded)
        return strip_prolog(restyle(svg, {}, drawing.text_styles)), self._info(model, drawing)

    def to_svg(self) -> str:
        shapes, texts = self.styles()
        return restyle(self._layout()[2], shapes, texts)

    def styles(
        self, highlights: bool = True, marks: tuple[dict, dict, dict] | None = None
    ) -> tuple[dict, dict]:
        """`restyle`'s arguments for the picture now, by SVG element id: outlines (highlights, the
        selected node) and texts (gradient colours, overridden texts); ``highlights=False``: only what
        every state shares (the gradient colours). ``marks``: (highlight, edge_highlight,
        text_overrides) to draw instead of the view's own (a stepper's frame)."""
        model, drawing, _ = self._layout()
        if not highlights:
            return {}, drawing.text_styles
        highlight, edge_highlight, text_overrides = marks or (
            self.highlight, self.edge_highlight, self.text_overrides)
        shapes = {}
        pal = self.palette
        for nid, attrs in highlight.items():
            sid = drawing.ids.get(model.group_of.get(nid, nid))
            if sid:
                shapes[sid] = attrs
        for (src, dst), attrs in edge_highlight.items():
            key = (model.group_of.get(src, src), model.group_of.get(dst, dst))
            for sid in drawing.edge_ids.get(key, []):
                shapes[sid] = attrs
        if self.selected and self.selected in drawing.ids:
            shapes.setdefault(drawing.ids[self.selected], {"stroke": pal.highlight, "stroke-width": "3"})
        texts = drawing.text_styles
        if text_overrides:
            texts = dict(texts)
            for nid, styles in text_overrides.items():
                sid = drawing.ids.get(nid)
                if sid:
                    texts[sid] = {**texts.get(sid, {}), **styles}
        return shapes, texts

    css_class = "gradviz-graph"

    def legend(self) -> str:
        """What the colours and shapes mean (HTML)."""
        return legend(self.palette)

    def to_html(self) -> str:
        return graph_html(self.css_class, strip_prolog(self.to_svg()), self.legend(), self.details)

    # ---- interaction ----------------------------------------------------------------------------
    @property
    def details(self) -> str:
        """HTML details of the selected node ('' when none is selected)."""
        if not self.selected or self.selected not in self.model.nodes:
            return ""
        return self.describe(self.model.nodes[self.selected], self.model)

    def describe(self, node: Any, model: GraphModel) -> str:
        """HTML details of one drawn node (what a click shows)."""
        return node_info(node, model)

    def select(self, node: Any) -> None:
        """Select a node (by node id, SVG id, or tensor); a group node expands, a scope frame collapses."""
        nid = self._resolve(node)
        model = self.model
        if nid is not None and nid.startswith("c:"):
            self.collapse(nid[2:])
            nid = None
        elif nid is not None and model.nodes[nid].kind == "group":
            self.expand(model.nodes[nid].scope)
            nid = None
        self.selected = nid
        self._sync()

    def expand(self, scope: str) -> None:
        """Show the nodes of ``scope`` (a group) one by one, inside a frame (and the groups inside it
        that the picture started with open)."""
        self.expanded.add(scope)
        group = self.full_model.fold_plan(self.fold_limit).by_key(scope) if self.opened else None
        if group is not None:
            plan = self.full_model.fold_plan(self.fold_limit)
            inside = {g.key for g in plan.groups.values() if group.id in plan.path(g.id)}
            self.expanded |= inside & self.opened
        self._sync()

    def collapse(self, scope: str | None = None) -> None:
        """Fold ``scope`` back into one node, and the groups inside it (every scope when None)."""
        if scope is None:
            self.expanded.clear()
        else:
            self.expanded.discard(scope)
            group = self.full_model.fold_plan(self.fold_limit).by_key(scope) if self.collapsible else None
            if group is not None:
                plan = self.full_model.fold_plan(self.fold_limit)
                self.expanded -= {g.key for g in plan.groups.values() if group.id in plan.path(g.id)}
        self._sync()

    def _resolve(self, node: Any) -> str | None:
        if node is None:
            return None
        if not isinstance(node, str):  # a tensor: compared by identity, never with == (elementwise)
            expect_tensor("GraphView.select", "the node", node,
                          expected="a tensor of this graph or a node id")
            return self.model.node_for(node).id
        if node == "":
            return None
        if node in self.model.nodes:
            return node
        for nid, sid in self.drawing.ids.items():
            if sid == node:
                return nid
        raise KeyError(f"no node {node!r} in this graph.")

    # ---- the live widget: `View`'s two paths over the SVG widget (see the module docstring) --------
    _browser_reports = ("selected", "state")

    def _build_widget(self) -> Any:
        states = fold_states(self)
        state = self._state()
        return svg_widget_class()(
            svg="" if state in states["views"] else strip_prolog(self.to_svg()),  # each picture once
            info={**self._info(), **states["info"]},  # (these say which boxes open without a kernel)
            panel=self._panel_head(),
            views=states["views"],
            opens=states["opens"],
            state=state,
        )

    def _state(self) -> str:
        if not self.collapsible:
            return ""
        return state_of(self.full_model.fold_plan(self.fold_limit), self.expanded, self.opened)

    def _follow_browser(self, name: str, new: Any, old: Any) -> None:
        """A click in the browser: a node selected (``selected``), or a group opened or closed by the
        front end alone, from a view drawn ahead (``state``)."""
        if name == "selected":
            try:
                self.select(new or None)
            except KeyError:
                self.selected = None
            return
        if not new or new == self._state():
            return
        self.expanded = set(expanded_in(self.full_model.fold_plan(self.fold_limit), new, self.opened))
        self.selected = None
        self._sync()

    def _browser_state(self) -> dict[str, Any]:
        """The picture now: a state drawn ahead shows as it is (``state``), any other is sent (``svg``)."""
        w = self._widget
        state = self._state()
        shown = state in w.views and not (self.selected or self.highlight or self.text_overrides)
        return {"svg": "" if shown else strip_prolog(self.to_svg()), "info": {**w.info, **self._info()},
                "state": state if shown else ""}

    def _panel_head(self) -> str:
        return click_hint(self.collapsible)

    def _info(self, model: GraphModel | None = None, drawing: Drawing | None = None) -> dict[str, str]:
        if model is None or drawing is None:
            model, drawing = self.model, self.drawing
        out = {drawing.ids[n]: self.describe(node, model) for n, node in model.nodes.items()}
        for key, sid in drawing.ids.items():
            if key.startswith("c:"):
                out[sid] = frame_info(key[2:])
        return out

    def __repr__(self) -> str:
        m = self.full_model
        ops = sum(1 for n in m.nodes.values() if n.kind == "op")
        return f"<gv.graph: {len(m)} nodes ({ops} ops), targets {[m.nodes[t].label for t in m.targets]}>"
