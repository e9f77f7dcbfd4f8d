"""The details panel of `gv.graph`: what a click on a node shows (HTML, every user string escaped).

>>> import engine as eg
>>> from gradviz.model.graph_model import build_model
>>> x = eg.constant(2.0)
>>> with eg.GradientTape() as tape:
...     tape.watch(x)
...     y = x * x
>>> m = build_model(y, tape, names={"x": x})
>>> "watched tensor" in node_info(m.node_for(x), m)
True
"""

from __future__ import annotations

from typing import Any

from gradviz.model.explain import drawn_id
from gradviz.model.graph_model import GraphModel, Node
from gradviz.render import fmt
from gradviz.render.array_panel import array_html
from gradviz.widgets.base import esc, info_table

__all__ = ["node_info", "OPENS", "OPENS_WITH_KERNEL"]

OPENS = "<div>Click it to open it.</div>"  # a group's hint, when its opened picture is drawn ahead
OPENS_WITH_KERNEL = (  # ... and when it is not (past graph_states.VIEWS_BUDGET)
    "<div>Click it to open it while the notebook's kernel runs: this group is past the pictures drawn "
    "ahead for a page without a kernel. To see it in a static page, draw a part of "
    "the graph: <code>gv.graph(an_intermediate_tensor, tape)</code>.</div>")


def node_info(n: Node, model: GraphModel) -> str:
    """HTML details of one node: kind, shape, dtype, device, full value and gradient, where it comes from."""
    if n.kind == "op":
        r = n.record
        ins = ", ".join(_tensor_ref(model, x) for x in r.inputs)
        rows = [
            ("op", esc(r.op)),
            ("op id", str(r.op_id)),
            ("inputs", ins),
            ("output", _tensor_ref(model, r.output)),
            ("recorded by", esc(", ".join(n.tapes)) or "—"),
        ]
        if r.repeats > 1:
            rows.append(("note", f"listed {r.repeats} times in tape.records (the same record): drawn once"))
        if r.params:
            rows.append(("params", esc(", ".join(f"{k}={v!r}" for k, v in r.params.items()))))
        return f"<div><b>{esc(r.op)}</b>{info_table(rows)}</div>"
    if n.kind == "group":
        inner = [m for m in (model.folded.get(k) or model.nodes.get(k) for k in n.members) if m is not None]
        ops = sum(1 for k in inner if k.kind == "op")
        rows = [("holds", esc(n.detail or f"{ops} ops")), ("nodes", f"{len(n.members)} ({ops} ops)")]
        if n.grad_norm is not None:
            rows.append(("‖grad‖ leaving it", esc(fmt.number(n.grad_norm, 4))))
        return f"<div><b>{esc(n.label)}</b>{info_table(rows)}{OPENS}</div>"
    kind = (
        "Variable"
        if n.variable
        else "watched tensor"
        if n.leaf and n.watched
        else "constant (not watched: no gradient)"
        if n.leaf
        else "tensor"
    )
    rows = [
        ("kind", esc(kind)),
        ("id", f"#{n.uid}"),
        ("shape", esc(fmt.shape_text(n.shape))),
        ("dtype", esc(n.dtype)),
        ("device", esc(n.device)),
    ]
    if n.scope:
        rows.append(("scope", esc(n.scope)))
    body = info_table(rows)
    if n.value is not None:
        body += f"<div>value</div>{array_html(n.value)}"
    if n.dtype.startswith(("float", "complex")):
        grad = array_html(n.grad) if n.grad is not None else "<pre>None</pre>"
        body += f"<div>gradient (d target / d this)</div>{grad}"
    title = esc(n.name) if n.name else f"tensor #{n.uid}"
    return f"<div><b>{title}</b>{body}</div>"


def _tensor_ref(model: GraphModel, t: Any) -> str:
    uid = drawn_id(model.alias, t.id)
    node = model.nodes.get(f"t{uid}")
    name = node.name if node is not None and node.name else None
    return esc(f"{name} {tuple(t.shape)}" if name else f"#{uid} {tuple(t.shape)}")
