"""The HTML of `gv.graph`: what a click on a node shows, the legend, the hints (every user string escaped).

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
from gradviz.model.protocol import shown_id
from gradviz.render import fmt
from gradviz.render.array_panel import array_html
from gradviz.render.html import info_table
from gradviz.render.text import esc

__all__ = ["node_info", "traced_info", "OPENS", "OPENS_WITH_KERNEL", "legend", "traced_legend", "click_hint",
           "TRACED_CLICK_HINT", "frame_info", "graph_html"]

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
        ("id", shown_id(n.uid)),
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
    title = esc(n.name) if n.name else f"tensor {shown_id(n.uid)}"
    return f"<div><b>{title}</b>{body}</div>"


def _tensor_ref(model: GraphModel, t: Any) -> str:
    uid = drawn_id(model.alias, t.id)
    node = model.nodes.get(f"t{uid}")
    name = node.name if node is not None and node.name else None
    return esc(f"{name} {tuple(t.shape)}" if name else f"{shown_id(uid)} {tuple(t.shape)}")


def traced_info(n: Any, detail: str = "") -> str:
    """A traced node's details: its name (to fetch it by), op, kind, shape, inputs."""
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
    if detail:
        rows.append(("drawn once", esc(f"{detail} (the same value each time)")))
    fetch = f"<div>fetch it: <code>graph.run({esc(repr(n.name))}, feeds)</code></div>"
    return f"<div><b>{esc(n.name)}</b>{info_table(rows)}{fetch}</div>"


def _legend(pal: Any, items: list[tuple[str, str, str]]) -> str:
    """A line of (colour, mark, meaning) items; a mark that is a word is the meaning's subject."""
    spans = " &nbsp; ".join(f'<span style="color:{color}">{mark}</span> {text}'
                            for color, mark, text in items)
    return f'<div style="font-size:12px;color:{pal.muted};margin-top:4px">{spans}</div>'


def legend(pal: Any) -> str:
    """What the colours and shapes of a tape's graph mean, in the palette ``pal``."""
    return _legend(pal, [
        (pal.variable_border, "■", "Variable"), (pal.watched_border, "■", "watched tensor"),
        (pal.op_border, "●", "op"), (pal.target_border, "■", "target"),
        (pal.grad_pos, "grad", "= d target / d node (hover a node for its full value)"),
    ])


def traced_legend(pal: Any) -> str:
    """What the colours and shapes of a traced step's graph mean, in the palette ``pal``."""
    return _legend(pal, [
        (pal.op_border, "●", "forward op"), (pal.grad_neg, "●", "backward op (gradients/…)"),
        (pal.variable_border, "■", "Variable read"),
        (pal.target_border, "⬣", "assignment / optimizer update"),
        (pal.watched_border, "■", "input"),
    ])


def click_hint(collapsible: bool) -> str:
    """The line above a graph widget's details panel."""
    folds = "; click a group to expand it, a frame to collapse it" if collapsible else ""
    return f'<div style="opacity:.75;font-size:12px">Click a node for details{folds}.</div>'


TRACED_CLICK_HINT = ('<div style="opacity:.75;font-size:12px">Click a node for its name; click a box '
                     "to fold its scope, a folded node to open it.</div>")


def frame_info(scope: str) -> str:
    """What a click on an open scope's frame shows."""
    return f"<b>{esc(scope)}</b>: click again to collapse."


def graph_html(css_class: str, picture: str, legend_html: str, details: str) -> str:
    """A graph's static form: the picture, its legend, the selected node's details."""
    side = f'<div style="margin-top:6px">{details}</div>' if details else ""
    return f'<div class="gradviz {css_class}">{picture}{legend_html}{side}</div>'
