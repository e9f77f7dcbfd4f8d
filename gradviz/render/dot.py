"""Graph model → DOT text (with the `graphviz` package), every user-supplied string escaped.

Nodes are Graphviz records (the WebAssembly Graphviz has no HTML-like labels): a tensor is
``x = 2.0 | grad 4.0 | ()``, an op is a small oval with its name. Colours that differ inside one
label (the gradient's) are applied to the SVG afterwards (`gradviz.render.svg.restyle`), from the
``text_styles`` this module returns beside the DOT text.

>>> import engine as eg
>>> from gradviz.model.graph_model import build_model
>>> x = eg.constant(3.0)
>>> with eg.GradientTape() as tape:
...     tape.watch(x)
...     y = x * x
>>> d = to_dot(build_model(y, tape, names={"<b>x": x, "y": y}), theme="light")
>>> "\\\\<b\\\\>x = 3.0" in d.source      # record-escaped, never HTML
True
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gradviz.model.checks import expect_labels, wrong_type
from gradviz.model.graph_model import GraphModel, Node
from gradviz.render import fmt
from gradviz.render.array_panel import array_text
from gradviz.render.text import visible
from gradviz.render.text_width import text_width
from gradviz.render.theme import Palette, palette

__all__ = ["Drawing", "to_dot", "escape_text", "escape_record", "DEFAULT_SHOW", "MAX_DRAWN_NODES"]

# Graphviz's layout recursion runs out of stack (a wasm "call stack exhausted" trap) at ~18,000
# nodes; 12,500 take ~3 s and 16 MB of SVG. Beyond this many boxes, to_dot refuses with advice.
MAX_DRAWN_NODES = 10_000
DEFAULT_SHOW = ("value", "grad", "shape")
_SHOWABLE = {"value", "grad", "shape", "dtype", "device", "name"}
_prefixes = itertools.count(1)
_RECORD_SPECIAL = set('\\{}|<>"')


def escape_text(text: str) -> str:
    """A string for a DOT quoted attribute (tooltip, plain label): backslashes and quotes escaped,
    newlines as Graphviz line breaks. Never interpreted as HTML: pass the result through
    ``graphviz.nohtml`` (done by `to_dot`)."""
    text = visible(text).replace("\\", "\\\\").replace('"', '\\"')
    return text.replace("\r", "").replace("\n", "\\n")


def escape_record(text: str) -> str:
    """One field of a record label: record syntax characters ``{ } | < >`` escaped as well."""
    out = []
    for ch in visible(text).replace("\r", "").replace("\n", " "):
        out.append("\\" + ch if ch in _RECORD_SPECIAL else ch)
    return "".join(out)


@dataclass
class Drawing:
    """DOT text plus what the SVG post-processing needs."""

    source: str
    prefix: str
    ids: dict[str, str]  # model node id → the SVG element id
    text_styles: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)
    fields: dict[str, dict[str, str]] = field(default_factory=dict)  # svg id → {"grad": text, ...}
    edge_ids: dict[tuple[str, str], list[str]] = field(default_factory=dict)  # (src, dst) → svg ids
    theme: Palette | None = None


def to_dot(
    model: GraphModel,
    theme: str | Palette | None = "auto",
    show: Iterable[str] = DEFAULT_SHOW,
    rankdir: str | None = None,
    prefix: str | None = None,
    edge_attrs: Callable[[Any], dict[str, str] | None] | None = None,
) -> Drawing:
    """DOT for ``model``.

    ``show``: which fields tensor labels carry: "value", "grad", "shape", "dtype", "device".
    ``rankdir``: "LR", "TB", or None (left to right for shallow graphs, top to bottom for deep ones).
    ``edge_attrs``: an optional callback giving extra Graphviz attributes per `Edge` (colour, width).

    >>> import engine as eg
    >>> import gradviz as gv
    >>> x = eg.constant(2.0)
    >>> with eg.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = x * x
    ...
    >>> gv.to_dot(gv.build_model(y, tape)).source.startswith("digraph")
    True
    """
    import graphviz  # noqa: PLC0415  (heavy-ish; only when drawing)

    if not isinstance(model, GraphModel):
        raise wrong_type("gv.to_dot", "the model", "a graph model (gv.build_model(target, tape))", model)
    if len(model.nodes) > MAX_DRAWN_NODES:
        raise ValueError(
            f"gv.graph: {len(model.nodes):,} boxes are more than Graphviz can lay out here (at most "
            f"{MAX_DRAWN_NODES:,}). Draw it collapsed (gv.graph(y, tape) collapses big graphs by itself; "
            "collapse=True always) and click the groups you want to open, or draw a part of it "
            "(gv.graph(an_intermediate_tensor, tape))."
        )
    pal = palette(theme)
    show = expect_labels("gv.to_dot", "show", show, "a tuple of fields, e.g. ('value', 'grad', 'shape')")
    unknown = set(show) - _SHOWABLE
    if unknown:
        raise ValueError(f"show: unknown field(s) {sorted(unknown)}; choose from {sorted(_SHOWABLE)}.")
    prefix = prefix or f"gv{next(_prefixes)}"
    rankdir = rankdir or ("LR" if _depth(model) <= 8 else "TB")
    multi_device = len(model.devices) > 1
    g = graphviz.Digraph(name=prefix, engine="dot")
    g.attr(
        "graph",
        rankdir=rankdir,
        bgcolor=pal.background,
        fontname=pal.font,
        fontcolor=pal.text,
        nodesep="0.22",
        ranksep="0.32",
        pad="0.15",
        id=prefix,
        tooltip=" ",
    )
    g.attr("node", fontname=pal.font, fontsize="11", fontcolor=pal.text, penwidth="1.1")
    g.attr(
        "edge",
        color=pal.edge,
        arrowsize="0.6",
        penwidth="1.0",
        fontname=pal.font,
        fontsize="9",
        fontcolor=pal.muted,
    )
    drawing = Drawing(source="", prefix=prefix, ids={}, theme=pal)

    clustered = {m: scope for scope, members in model.clusters.items() for m in members}
    in_frame: dict[str, list[tuple]] = {}  # frame key → its nodes' (id, label, attributes, svg id)
    for n in model.nodes.values():
        sid = f"{prefix}_{n.id}"
        drawing.ids[n.id] = sid
        attrs, label_fields, styles = _node(n, pal, show, multi_device, model.folded)
        drawing.fields[sid] = label_fields
        if styles:
            drawing.text_styles[sid] = styles
        attrs["width"] = _width(n, attrs, label_fields, styles)
        label = (
            "|".join(escape_record(f) for f in label_fields.values())
            if n.kind != "op"
            else escape_text(n.label)
        )
        if n.kind != "op" and rankdir != "LR":
            label = "{" + label + "}"  # fields stacked, as in LR: each as wide as the widest
        attrs = {k: graphviz.nohtml(v) for k, v in attrs.items()}
        if n.id in clustered:
            in_frame.setdefault(clustered[n.id], []).append((n.id, label, attrs, sid))
        else:
            g.node(n.id, label=graphviz.nohtml(label), id=sid, **attrs)
    inside: dict[str | None, list[str]] = {}  # frame key (None: the top) → the frames right inside it
    for key in model.clusters:
        inside.setdefault(model.cluster_parent.get(key), []).append(key)
    numbers = {key: k for k, key in enumerate(model.clusters)}

    def frame(parent: Any, key: str) -> None:
        gid = model.cluster_group.get(key)
        cluster_id = f"{prefix}_c{gid}" if gid else f"{prefix}_c{numbers[key]}"  # the same in every view
        drawing.ids[f"c:{key}"] = cluster_id
        with parent.subgraph(name=f"cluster_{numbers[key]}") as c:
            c.attr(
                label=graphviz.nohtml(escape_text(model.cluster_label.get(key, key))),
                id=cluster_id,
                style="rounded,dashed",
                color=pal.border,
                fontcolor=pal.muted,
                fontsize="10",
                labeljust="l",
                tooltip=graphviz.nohtml(escape_text(f"{key}: click to collapse")),
            )
            for nid, label, attrs, sid in in_frame.get(key, ()):
                c.node(nid, label=graphviz.nohtml(label), id=sid, **attrs)
            for child in inside.get(key, ()):
                frame(c, child)

    for key in inside.get(None, ()):
        frame(g, key)
    for k, e in enumerate(model.edges):
        if e.kind == "order":  # a layout hint (the traced step's bands): drawn invisible
            g.edge(e.src, e.dst, style="invis")
            continue
        attrs = {"id": f"{prefix}_e{k}"}
        drawing.edge_ids.setdefault((e.src, e.dst), []).append(attrs["id"])
        if e.kind == "control":  # runs after, no value flows
            attrs.update(style="dashed", arrowhead="odot")
        if e.label:
            attrs["label"] = graphviz.nohtml(escape_text(e.label))
        if e.count > 1:
            attrs["penwidth"] = "1.6"
        if e.index == 0 and not model.nodes[e.src].variable:
            attrs["weight"] = "4"  # keep the main chain (first inputs, outputs) straight
        if edge_attrs is not None:
            extra = edge_attrs(e) or {}
            attrs.update({key: graphviz.nohtml(escape_text(str(v))) for key, v in extra.items()})
        g.edge(e.src, e.dst, **attrs)
    drawing.source = g.source
    return drawing


def _node(
    n: Node, pal: Palette, show: tuple[str, ...], multi_device: bool, model_nodes: dict[str, Node]
) -> tuple[dict[str, str], dict[str, str], dict[str, dict[str, str]]]:
    """Graphviz attributes, label fields (name → text) and per-text SVG styles for one node."""
    if n.kind == "op":
        tip = f"{n.name}  {fmt.shape_text(n.shape)} {n.dtype}" if n.name else f"{n.op} (op #{n.order})"
        if n.tapes:
            tip += "\nrecorded by: " + ", ".join(n.tapes)
        if n.record.params:
            tip += "\nparams: " + ", ".join(f"{k}={v!r}" for k, v in n.record.params.items())
        attrs = {
            "shape": "ellipse",
            "style": "filled",
            "fillcolor": pal.op_fill,
            "color": pal.op_border,
            "fontcolor": pal.op_text,
            "fontsize": "10",
            "margin": "0.04,0.02",
            "height": "0.28",
            "width": "0.28",
            "tooltip": escape_text(tip[:1500]),
        }
        if n.role == "backward":  # made by tape.gradient (a traced step)
            attrs.update(fillcolor=pal.panel_background, color=pal.grad_neg)
        elif n.role == "update":  # an assignment or an optimizer's update
            attrs.update(shape="octagon", fillcolor=pal.variable_fill, color=pal.target_border)
        return attrs, {"op": n.label}, {}
    if n.kind == "group":
        members = [m for m in (model_nodes.get(k) for k in n.members) if m is not None]
        ops = sum(1 for m in members if m.kind == "op")
        fields = {"name": n.label, "size": n.detail or (f"{ops} ops" if ops else f"{len(members)} nodes")}
        norms = [
            f"‖∇{(m.name or '').rsplit('/', 1)[-1]}‖ {fmt.number(fmt.norm(m.grad), 3)}"
            for m in members
            if m.variable and m.grad is not None
        ][:2]
        if not norms and n.grad_norm is not None:
            norms = [f"‖grad out‖ {fmt.number(n.grad_norm, 3)}"]
        if norms:
            fields["grad"] = "  ".join(norms)
        attrs = {
            "shape": "Mrecord",
            "style": "filled",
            "fillcolor": pal.group_fill,
            "color": pal.border,
            "penwidth": "1.4",
            "tooltip": escape_text(f"{n.label}: {len(n.members)} nodes, click to expand"),
        }
        styles = {fields["name"]: {"font-weight": "bold"}, fields["size"]: {"fill": pal.muted}}
        if "grad" in fields:
            styles[fields["grad"]] = {"fill": pal.grad_pos, "class": "gv-grad"}
        return attrs, fields, styles
    fields: dict[str, str] = {}
    styles: dict[str, dict[str, str]] = {}
    head = n.label if n.label and n.label != "t" else ""
    if "value" in show and n.value is not None:
        fields["value"] = f"{head} = {fmt.short(n.value)}" if head else fmt.short(n.value)
    elif "value" in show and n.tensor is not None and not n.tensor.kept:  # the tape let go of it
        fields["value"] = f"{head} = not kept" if head else "not kept"
    elif head:
        fields["value"] = head
    if head:
        styles[fields["value"]] = {"font-weight": "bold"}
    if "grad" in show and n.dtype.startswith(("float", "complex")):
        if n.grad is not None:
            text = f"grad {fmt.short(n.grad)}"
            colour = (
                pal.grad_neg if n.grad.size == 1 and float(n.grad.real.reshape(-1)[0]) < 0 else pal.grad_pos
            )
            styles[text] = {"fill": colour, "class": "gv-grad"}
        else:
            text = "grad None"
            styles[text] = {"fill": pal.muted, "class": "gv-grad"}
        fields["grad"] = text
    meta = []
    if "shape" in show:
        meta.append(fmt.shape_text(n.shape))
    if "dtype" in show or (n.dtype and n.dtype != "float32" and "shape" in show):
        meta.append(n.dtype)
    if "device" in show or multi_device:
        meta.append(n.device)
    if meta:
        fields["meta"] = " ".join(meta)
        styles.setdefault(fields["meta"], {"fill": pal.muted, "font-size": "9.00"})
    if not fields:
        fields["value"] = head or fmt.shape_text(n.shape)
    attrs = {
        "shape": "Mrecord",
        "style": "filled",
        "fillcolor": pal.tensor_fill,
        "color": pal.tensor_border,
        "tooltip": escape_text(_tensor_tooltip(n)[:2000]),
    }
    if n.variable:
        attrs.update(fillcolor=pal.variable_fill, color=pal.variable_border, penwidth="1.6")
    elif n.leaf and n.watched:
        attrs.update(color=pal.watched_border, penwidth="1.6")
    elif n.leaf:
        attrs.update(style="filled,dashed", fontcolor=pal.muted)
    if n.target:
        attrs.update(color=pal.target_border, penwidth="2.2")
    return attrs, fields, styles


LABEL_PAD = 14.0  # points around a record field's text (Graphviz's field margins and the border)


def _width(n: Node, attrs: dict[str, str], fields: dict[str, str], styles: dict) -> str:
    """The node's width in inches, from its texts measured in the font and weight that draw them
    (`gradviz.render.text_width`): Graphviz's own estimate is for another font, and bold comes later."""
    size = float(attrs.get("fontsize", "11"))
    if n.kind == "op":
        text = text_width(n.label, size)
        return f"{max(0.28, (text + 8.0) * 1.25 / 72):.3f}"  # an ellipse around the text's box
    widest = max((text_width(t, float(styles.get(t, {}).get("font-size", size)),
                             styles.get(t, {}).get("font-weight") == "bold") for t in fields.values()),
                 default=0.0)
    return f"{(widest + LABEL_PAD) / 72:.3f}"


def _tensor_tooltip(n: Node) -> str:
    kind = (
        "Variable"
        if n.variable
        else ("watched tensor" if n.leaf and n.watched else "constant (not watched)" if n.leaf else "tensor")
    )
    lines = [
        f"{n.name or 'tensor'}: {kind}" + (f" #{n.uid}" if n.uid is not None else ""),
        f"shape {fmt.shape_text(n.shape)} {n.dtype} on {n.device}",
    ]
    if n.value is not None:
        lines += ["value:", _tip_array(n.value)]
    if n.grad is not None:
        lines += ["gradient:", _tip_array(n.grad)]
    return "\n".join(lines)


def _tip_array(a: Any) -> str:
    """An array in a tooltip: whole up to 120 values, else its summary and first values."""
    return fmt.full(a, threshold=120) if np.size(a) <= 120 else array_text(a)


def _depth(model: GraphModel) -> int:
    """The number of nodes on the longest path (the graph's depth)."""
    depth: dict[str, int] = {}
    incoming: dict[str, list[str]] = {}
    for e in model.edges:
        incoming.setdefault(e.dst, []).append(e.src)
    order = sorted(model.nodes.values(), key=lambda n: (n.order, 0 if n.kind == "op" else 1))
    best = 0
    for n in order:
        d = 1 + max((depth.get(s, 1) for s in incoming.get(n.id, [])), default=0)
        depth[n.id] = d
        best = max(best, d)
    return best
