"""``gv.graph(an eg.Graph)``: a traced step drawn as one graph, forward and backward told apart.

Each node is labelled with its op and the last part of its name, inside a box per name scope
(``sequential_1``, ``gradients``, ``Adam``; a Variable's read sits in the layer that reads it, so each
layer is one box and each Variable appears once). The step reads left to right in three bands: the
forward pass, the gradients (after the loss they start from) and the updates. Backward nodes (made by
``tape.gradient``, under ``gradients/...``) have their own colour, Variable reads and inputs are boxes,
assignments and optimizer updates octagons, control dependencies dashed (an update's dependency on its
Variable's read is not drawn: the update's label names the Variable, its details list it). Hovering
a node shows its full name; clicking it shows the name to fetch it by (``graph.run("...")``).
Clicking a scope's box folds it into one node, clicking that node opens it again. Constants are left
out unless ``constants=True``.

>>> import engine as eg, gradviz as gv
>>> f = eg.function(lambda x: eg.tanh(x) * 2)
>>> view = gv.graph(f.get_graph(eg.ones(2)))
>>> "Tanh" in view.to_svg(), view
(True, <gv.graph of eg.Graph '<lambda>': 3 nodes shown (0 backward), 0 scopes>)
"""

from __future__ import annotations

import itertools
from typing import Any

from gradviz.render.dot import escape_text
from gradviz.render.graphviz import render_svg
from gradviz.render.svg import strip_prolog
from gradviz.render.theme import palette, themed_graph
from gradviz.widgets.base import View, esc, info_table, svg_widget_class

__all__ = ["TracedGraphView", "traced_graph"]

_prefixes = itertools.count(1)
COLLAPSE_OVER = 80  # nodes shown; bigger graphs start with every top-level scope folded


def traced_graph(graph: Any, collapse: bool | None = None, constants: bool = False, theme: str = "auto",
                 rankdir: str | None = None) -> TracedGraphView:
    """The view of a traced ``graph`` (what ``gv.graph`` returns for an ``eg.Graph``).

    ``collapse``: None folds every top-level scope of a graph over 80 nodes; True folds them always,
    False never. ``constants``: draw the ``Const`` nodes too.
    """
    return TracedGraphView(graph, collapse=collapse, constants=constants, theme=theme, rankdir=rankdir)


def _scope(name: str) -> str:
    return name.rsplit("/", 1)[0] if "/" in name else ""


def _placement(nodes: list) -> dict[str, str]:
    """The scope each node is drawn in: its name's, except a Variable's read, drawn inside the layer
    that reads it ("dense_1/kernel" in "sequential_1/dense_1"), so each layer is one box."""
    place = {n.name: _scope(n.name) for n in nodes}
    readers: dict[str, list] = {}
    for m in nodes:
        for i in m.inputs:
            readers.setdefault(i.name, []).append(m)
    for n in nodes:
        own = place[n.name]
        if n.kind != "read" or not own:
            continue
        for m in readers.get(n.name, ()):
            where = place[m.name]
            if not m.backward and (where == own or where.endswith("/" + own)):
                place[n.name] = where
                break
    return place


def _prefixes_of(scope: str) -> list[str]:
    parts = scope.split("/") if scope else []
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


class TracedGraphView(View):
    """A traced graph's picture; ``fold(scope)`` / ``unfold(scope)``, ``select(name)``."""

    def __init__(self, graph: Any, collapse: bool | None = None, constants: bool = False,
                 theme: str = "auto", rankdir: str | None = None):
        self.graph = graph
        self.theme = theme
        self.rankdir = rankdir or "LR"  # a step reads left to right: forward, gradients, updates
        self.nodes = [n for n in graph.nodes if constants or n.kind != "const"]
        self.place = _placement(self.nodes)  # node name → the scope it is drawn in
        self.scopes = sorted({p for n in self.nodes for p in _prefixes_of(self.place[n.name])})
        fold = collapse if collapse is not None else len(self.nodes) > COLLAPSE_OVER
        self.folded: set[str] = {s for s in self.scopes if "/" not in s} if fold else set()
        self.selected: str | None = None  # a node name, or a folded scope
        self.prefix = f"gvt{next(_prefixes)}"
        self._cache: dict[Any, tuple[str, dict[str, str]]] = {}
        self._sids: dict[str, str] = {}  # what a picture element stands for → its SVG id, stable across folds

    def _sid(self, key: str) -> str:
        return self._sids.setdefault(key, f"{self.prefix}_{len(self._sids)}")

    # ---- state ------------------------------------------------------------------------------------
    def fold(self, scope: str) -> None:
        """Draw ``scope`` as one node."""
        if scope not in self.scopes:
            raise KeyError(f"no scope {scope!r} in this graph; its scopes: {self.scopes}")
        self.folded.add(scope)
        self._sync()

    def unfold(self, scope: str | None = None) -> None:
        """Draw the nodes of ``scope`` again (every scope when None)."""
        if scope is None:
            self.folded.clear()
        else:
            self.folded.discard(scope)
        self._sync()

    def select(self, name: str | None) -> None:
        """Show a node's details (by node name, or the SVG id a click gives); a folded scope unfolds, a
        scope's box folds."""
        key = self._key_of(name) if name else None
        if key is not None and key.startswith("scope:"):
            self.fold(key[6:])
            key = None
        elif key is not None and key.startswith("folded:"):
            self.unfold(key[7:])
            key = None
        self.selected = key
        self._sync()

    def _key_of(self, name: str) -> str:
        ids = self._drawing()[1]
        for key, sid in ids.items():
            if sid == name or key == name:
                return key
        raise KeyError(f"no node {name!r} in this drawing.")

    @property
    def palette(self) -> Any:
        return palette("light" if self.theme == "auto" else self.theme)  # "auto": CSS follows the page

    # ---- drawing ----------------------------------------------------------------------------------
    def _owner(self, scope: str) -> str | None:
        """The outermost folded scope containing ``scope`` (None: drawn as it is)."""
        for p in _prefixes_of(scope):
            if p in self.folded:
                return p
        return None

    def _drawing(self) -> tuple[str, dict[str, str]]:
        key = (frozenset(self.folded), self.palette.name, self.rankdir)
        if key not in self._cache:
            self._cache.clear()
            self._cache[key] = self._dot()
        return self._cache[key]

    def _dot(self) -> tuple[str, dict[str, str]]:
        pal = self.palette
        ids: dict[str, str] = {}  # node name / "folded:<scope>" / "scope:<scope>" → SVG id
        where: dict[str, str] = {}  # node name → the key of what represents it in the picture
        lines = [
            f'digraph "{self.prefix}" {{',
            f'  graph [rankdir={self.rankdir}, bgcolor="transparent", fontname="Helvetica", fontsize=11, '
            f'fontcolor="{pal.muted}", id="{self.prefix}", nodesep=0.25, ranksep=0.35, newrank=true];',
            f'  node [fontname="Helvetica", fontsize=10, color="{pal.op_border}", fontcolor="{pal.text}"];',
            f'  edge [color="{pal.edge}", arrowsize=0.6];',
        ]
        tree: dict[str, list[str]] = {}  # scope ("" = top) → lines inside it
        children: dict[str, set[str]] = {}
        for n in self.nodes:
            scope = self.place[n.name]
            owner = self._owner(scope)
            if owner is not None:
                k = f"folded:{owner}"
                where[n.name] = k
                if k not in ids:
                    ids[k] = self._sid(k)
                    count = sum(1 for m in self.nodes if self._owner(self.place[m.name]) == owner)
                    label = escape_text(f"{owner.rsplit('/', 1)[-1]}/…\n{count} nodes")
                    parent = _scope(owner)
                    tree.setdefault(parent, []).append(
                        f'"{ids[k]}" [id="{ids[k]}", shape=box3d, style="filled", '
                        f'fillcolor="{pal.group_fill}", label="{label}", '
                        f'tooltip="{escape_text(owner)} (click to open)"];')
                    self._register(parent, children)
                continue
            sid = ids[n.name] = self._sid(n.name)
            where[n.name] = n.name
            tree.setdefault(scope, []).append(f'"{sid}" [id="{sid}", {self._style(n, pal)}];')
            self._register(scope, children)
        body: list[str] = []
        self._emit("", tree, children, ids, body, pal, depth=1)
        lines += body
        seen: set[tuple[str, str, bool]] = set()
        for n in self.nodes:
            dst = ids[where[n.name]]
            for deps, control in ((n.inputs, False), (n.control_inputs, True)):
                for m in deps:
                    if m.name not in where:
                        continue  # a constant left out
                    if control and n.kind == "write" and m.kind == "read":
                        continue  # an update after its Variable's read: its label names it, no long edge
                    src = ids[where[m.name]]
                    edge = (src, dst, control)
                    if src == dst or edge in seen:
                        continue
                    seen.add(edge)
                    extra = ', style=dashed, arrowhead=odot' if control else ""
                    lines.append(f'  "{src}" -> "{dst}" [id="{src}__{dst}"{extra}];')
        lines += self._bands(ids, where, seen)
        lines.append("}")
        return "\n".join(lines) + "\n", ids

    def _bands(self, ids: dict[str, str], where: dict[str, str], seen: set) -> list[str]:
        """Invisible edges that put the step's three bands in columns: the backward pass after the
        forward one (it starts from the loss), the updates after both. Each node of a band that
        nothing in its band feeds hangs after the last op of the band before."""
        def band(n: Any) -> int:
            return 2 if n.kind == "write" else 1 if n.backward else 0

        out = []
        last: dict[int, Any] = {}
        for n in self.nodes:
            if n.kind in ("op", "write"):
                last[band(n)] = n
        for n in self.nodes:
            b = band(n)
            before = last.get(b - 1) if b else None
            if before is None or any(band(m) == b for m in n.inputs if m.name in where):
                continue
            src, dst = ids[where[before.name]], ids[where[n.name]]
            if src != dst and (src, dst, False) not in seen:
                seen.add((src, dst, False))
                out.append(f'  "{src}" -> "{dst}" [style=invis];')
        return out

    def _register(self, scope: str, children: dict[str, set[str]]) -> None:
        prefixes = [""] + _prefixes_of(scope)
        for parent, child in zip(prefixes, prefixes[1:]):
            children.setdefault(parent, set()).add(child)

    def _emit(self, scope: str, tree: dict[str, list[str]], children: dict[str, set[str]],
              ids: dict[str, str], out: list[str], pal: Any, depth: int) -> None:
        pad = "  " * depth
        out += [pad + line for line in tree.get(scope, [])]
        for child in sorted(children.get(scope, ())):
            if self._owner(child) is not None:
                continue  # folded: drawn as a node of its parent
            k = f"scope:{child}"
            ids[k] = self._sid(k)
            backward = child.split("/")[0].startswith("gradients")
            colour = pal.grad_neg if backward else pal.border
            out.append(f'{pad}subgraph "cluster_{ids[k]}" {{')
            out.append(f'{pad}  graph [id="{ids[k]}", label="{escape_text(child.rsplit("/", 1)[-1])}", '
                       f'tooltip="{escape_text(child)} (click to fold)", color="{colour}", style="rounded", '
                       'labeljust="l"];')
            self._emit(child, tree, children, ids, out, pal, depth + 1)
            out.append(f"{pad}}}")

    def _style(self, n: Any, pal: Any) -> str:
        short = n.name.rsplit("/", 1)[-1]
        label = escape_text(n.op if short == n.op else f"{n.op}\n{short}")
        tip = escape_text(f"{n.name}  {n.shape} {n.dtype}")
        if n.kind == "input":
            attrs = f'shape=box, style="filled,bold", fillcolor="{pal.tensor_fill}", ' \
                    f'color="{pal.watched_border}"'
        elif n.kind == "read":
            attrs = f'shape=box, style=filled, fillcolor="{pal.variable_fill}", color="{pal.variable_border}"'
        elif n.kind == "write":
            attrs = f'shape=octagon, style=filled, fillcolor="{pal.variable_fill}", ' \
                    f'color="{pal.target_border}"'
        elif n.kind == "const":
            attrs = f'shape=plaintext, fontcolor="{pal.muted}"'
        elif n.backward:
            attrs = f'shape=ellipse, style=filled, fillcolor="{pal.panel_background}", color="{pal.grad_neg}"'
        else:
            attrs = f'shape=ellipse, style=filled, fillcolor="{pal.op_fill}", color="{pal.op_border}"'
        return f'label="{label}", tooltip="{tip}", {attrs}'

    # ---- output -----------------------------------------------------------------------------------
    def to_svg(self) -> str:
        svg = render_svg(self._drawing()[0])
        return themed_graph(svg) if self.theme == "auto" else svg

    def to_html(self) -> str:
        pal = self.palette
        legend = (
            f'<div style="font-size:12px;color:{pal.muted};margin-top:4px">'
            f'<span style="color:{pal.op_border}">●</span> forward op &nbsp; '
            f'<span style="color:{pal.grad_neg}">●</span> backward op (gradients/…) &nbsp; '
            f'<span style="color:{pal.variable_border}">■</span> Variable read &nbsp; '
            f'<span style="color:{pal.target_border}">⬣</span> assignment / optimizer update &nbsp; '
            f'<span style="color:{pal.watched_border}">■</span> input</div>'
        )
        side = f'<div style="margin-top:6px">{self.details}</div>' if self.details else ""
        return f'<div class="gradviz gradviz-traced">{strip_prolog(self.to_svg())}{legend}{side}</div>'

    @property
    def details(self) -> str:
        """HTML details of the selected node ('' when none)."""
        if not self.selected:
            return ""
        return self._info().get(self._drawing()[1].get(self.selected, ""), "")

    def _info(self) -> dict[str, str]:
        ids = self._drawing()[1]
        by_name = {n.name: n for n in self.nodes}
        out = {}
        for key, sid in ids.items():
            if key.startswith("folded:"):
                out[sid] = f"<div><b>{esc(key[7:])}</b>: a folded scope. Click it to open it.</div>"
            elif key.startswith("scope:"):
                out[sid] = f"<div><b>{esc(key[6:])}</b>: click its box again to fold it.</div>"
            else:
                out[sid] = _node_info(by_name[key])
        return out

    def _build_widget(self) -> Any:
        cls = svg_widget_class()
        w = cls(svg=strip_prolog(self.to_svg()), info=self._info(),
                panel='<div style="opacity:.75;font-size:12px">Click a node for its name; click a box '
                      "to fold its scope, a folded node to open it.</div>")
        w.observe(self._on_select, names="selected")
        return w

    def _on_select(self, change: dict) -> None:
        try:
            self.select(change["new"] or None)
        except KeyError:
            self.selected = None

    def _sync(self) -> None:
        if self._widget is not None:
            self._widget.svg = strip_prolog(self.to_svg())
            self._widget.info = self._info()

    def __repr__(self) -> str:
        back = sum(n.backward for n in self.nodes)
        return (f"<gv.graph of eg.Graph {self.graph.name!r}: {len(self.nodes)} nodes shown "
                f"({back} backward), {len(self.scopes)} scopes>")


def _node_info(n: Any) -> str:
    part = "backward (made by tape.gradient)" if n.backward else "forward"
    kind = {"input": "input (a function argument)", "read": "Variable read (its value at this point)",
            "write": "assignment / optimizer update", "const": "constant", "random": "random draw"}.get(
        n.kind, f"op, {part}")
    rows = [("name", f"<code>{esc(n.name)}</code>"), ("op", esc(n.op)), ("kind", esc(kind)),
            ("shape", esc(str(n.shape))), ("dtype", esc(str(n.dtype))), ("device", esc(str(n.device)))]
    if n.inputs:
        rows.append(("inputs", esc(", ".join(m.name for m in n.inputs))))
    if n.control_inputs:
        rows.append(("after", esc(", ".join(m.name for m in n.control_inputs))))
    fetch = f"<div>fetch it: <code>graph.run({esc(repr(n.name))}, feeds)</code></div>"
    return f"<div><b>{esc(n.name)}</b>{info_table(rows)}{fetch}</div>"
