"""``gv.backprop``: walk the backward pass one op at a time.

Step 0 seeds d target / d target = 1. Each later step takes one recorded op, last to first: the
gradient arriving at its output (upstream) times the op's local derivative gives each input's
contribution; a tensor that feeds several ops adds up their contributions (the accumulation is
shown). The graph highlights the op (orange), where the gradient comes from (red) and where it goes
(green); gradients not yet complete read "grad ?". The steps are the engine's own
(``eg.backward_steps``: ``.steps`` is that list), and each shows its primitive's own rule text.

>>> import engine as eg, gradviz as gv
>>> x = eg.constant(3.0)
>>> with eg.GradientTape(persistent=True) as tape:
...     tape.watch(x)
...     y = x * x + x
>>> bp = gv.backprop(tape, y, [x], names={"x": x, "y": y})
>>> bp.go(2); bp.op
'multiply'
>>> "accumulate" in bp.panel       # x feeds both ops: 1.0 (from +), then 3.0 and 3.0 (from ×)
True
>>> all(isinstance(s, eg.BackwardStep) for s in bp.steps)
True
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import traitlets

from engine import backward_steps
from gradviz.model import protocol, tapeinfo
from gradviz.model.checks import NAMES, expect_mapping, expect_tensor, expect_tensors, wrong_type
from gradviz.model.explain import drawn_id, explain_none
from gradviz.model.graph_model import build_model
from gradviz.model.graph_style import complete_after, graph_steps, graph_tape, is_graph_value
from gradviz.model.step_totals import Arrival, accumulate
from gradviz.render import fmt
from gradviz.render.backprop_panels import (
    arrival_line,
    backprop_html,
    gradients_summary,
    graph_arrival_line,
    rule_line,
    seed_panel,
    step_title,
    upstream_line,
)
from gradviz.render.html import layer_slot
from gradviz.render.svg import restyle, strip_prolog
from gradviz.widgets.frames import Frames
from gradviz.widgets.graph_view import GraphView
from gradviz.widgets.view import Control, View, Whole

if TYPE_CHECKING:
    from engine import BackwardStep

__all__ = ["backprop", "BackpropView", "Arrival"]


def backprop(
    tape: Any, target: Any = None, sources: Any = None, names: Mapping[str, Any] | None = None,
    theme: str = "auto",
) -> BackpropView:
    """The backprop stepper for ``target`` over what ``tape`` recorded, or over the ``steps`` of a walk.

    ``gv.backprop(tape, target, sources)``: this engine's walk (``eg.backward_steps``) over the tape.
    ``sources``: the tensors whose gradients we are after (default: every tensor and Variable the
    tape watches). ``names``: a name → tensor mapping such as ``locals()``, for labels.
    The tape is not consumed: it may be non-persistent, as long as its gradient() was not called yet.

    ``gv.backprop(steps)``: any walk's steps, in visit order, shaped like ``eg.BackwardStep``
    (``.record``, ``.upstream``, ``.contributions``): the steps of a backward walk you wrote (the tape
    protocol, `gradviz.model.protocol`), or ``list(eg.backward_steps(...))``. ``target`` defaults to
    the output of the first step's record (where the walk starts).

    ``gv.backprop(root)``: a graph-style engine's value (micrograd's design, `gradviz.model.graph_style`)
    after its own backward pass: the values in reverse topological order, each with the ``.grad`` that
    engine computed (nothing is differentiated here).

    >>> import engine as eg
    >>> import gradviz as gv
    >>> x = eg.constant(3.0)
    >>> with eg.GradientTape(persistent=True) as tape:
    ...     tape.watch(x)
    ...     y = x * x
    ...
    >>> bp = gv.backprop(tape, y, [x])
    >>> len(bp.steps), bp.steps[0].record.primitive.rule
    (1, '∂a = g·b, ∂b = g·a')
    >>> len(gv.backprop(list(eg.backward_steps(tape, y, x))).steps)
    1
    """
    return BackpropView(tape, target, sources=sources, names=names, theme=theme)


class BackpropView(View):
    """What `backprop` returns: the steps, the graph, and the controls that walk them."""

    def __init__(
        self,
        tape: Any,
        target: Any = None,
        sources: Any = None,
        names: Mapping[str, Any] | None = None,
        theme: str = "auto",
    ):
        expect_mapping("gv.backprop", "names", names, NAMES)
        self.graph_style = target is None and sources is None and is_graph_value(tape)
        if protocol.is_engine_tape(tape):
            model = self._from_tape(tape, target, sources, names)
        elif self.graph_style:
            model = self._from_graph(tape, names)
        else:
            model = self._from_steps(tape, target, names)
        self.graph = GraphView(model, theme=theme)
        self._names = tapeinfo.names_by_id(names, "gv.backprop") if self.tapes else {}
        alias = model.alias
        key = lambda t: drawn_id(alias, t.id)  # noqa: E731  (a Variable's reads are its own node)
        self._steps = [model.reader.step(s, k) for k, s in enumerate(self.steps)]  # one reader for all
        self._target = model.reader.value(self.target)
        self._arrivals, self._complete, totals = accumulate(self._steps, self._target, key)
        if self.graph_style:  # no contributions kept: each value's .grad, final once its users are visited
            self._complete = complete_after(self._steps, key(self._target), key)
            totals = {key(s): s.grad for s in self._watched}
        self.gradients = {s.id: (totals.get(key(s)) if s.dtype.kind in "fc" else None) for s in self._watched}
        if not self.tapes:  # another engine: the nodes show what its walk summed
            for node in model.nodes.values():
                if node.kind == "tensor" and node.grad is None and key(node.tensor) in totals:
                    node.grad = totals[key(node.tensor)]
        self._producers = {drawn_id(model.alias, r.output.id): r for r in model.records}
        self._panels: dict[int, str] = {}

    def _from_tape(self, tape: Any, target: Any, sources: Any, names: Mapping[str, Any] | None) -> Any:
        """This engine's tape: the model of what it recorded, and the engine's own steps over it."""
        reading = protocol.read_tape(tape, "gv.backprop")
        tapes = reading.tapes
        if not reading.rows:
            raise tapeinfo.no_records_error("gv.backprop", tapes[0])
        expect_tensor("gv.backprop", "the target", target)
        if sources is None:
            sources = [t for tp in tapes for t in (*tp.watched_variables(), *tp.watched_tensors())]
        self.sources = expect_tensors("gv.backprop", "the sources", sources,
                                      "Pass the tensors or Variables to differentiate with respect to.")
        self.target = target
        self.tapes = tapes
        model = build_model(target, reading, names=names, caller="gv.backprop")
        reads = {r.inputs[0].id for r in model.records if r.is_variable_read}
        watched = [s for s in self.sources if s.id in reads or any(tp.is_watching(s) for tp in tapes)]
        with tapeinfo.quiet():
            self.steps: list[Any] = list(backward_steps([r.source for r in model.records], [target], watched))
        self._watched = watched
        return model

    def _from_graph(self, root: Any, names: Mapping[str, Any] | None) -> Any:
        """A graph-style engine's value (micrograd's design): its graph read as a tape, and its values in
        the reverse of their topological order with the ``.grad`` the learner's engine computed."""
        gtape = graph_tape(root, "gv.backprop")
        self.steps = graph_steps(gtape, "gv.backprop")
        self.tapes = []
        self.target = root
        model = build_model(root, gtape, names=names, caller="gv.backprop")
        computed = {id(r.outputs[0]) for r in gtape.records}
        leaves = [model.reader.value(v) for v in gtape.values if id(v) not in computed]
        self.sources = self._watched = [v for v in leaves if v.grad is not None]
        return model

    def _from_steps(self, steps: Any, target: Any, names: Mapping[str, Any] | None) -> Any:
        """Any walk's steps: read through the tape protocol, drawn over the records they visit."""
        stepish = (not hasattr(steps, "records") and not isinstance(steps, str | bytes | Mapping)
                   and isinstance(steps, Iterable))
        self.steps = list(steps) if stepish else []
        if not stepish or (self.steps and not any(hasattr(s, "record") for s in self.steps)):
            raise wrong_type("gv.backprop", "the tape",
                             "an eg.GradientTape (with target and sources), or the steps of a backward walk "
                             "(objects with .record, .upstream, .contributions)", steps,
                             "For your own engine, pass the list of steps your backward walk made.")
        if not self.steps:
            raise ValueError("gv.backprop: no steps to show: the walk visited no record (is the target "
                             "computed from the inputs on this tape?).")
        self.tapes = []
        reader = protocol.Reader("gv.backprop")
        for k, s in enumerate(self.steps[::-1]):  # the records first, in the order they ran
            if getattr(s, "record", None) is not None:
                reader.record(s.record, k)
        views = [reader.step(s, k) for k, s in enumerate(self.steps)]
        ops = [v.record for v in views][::-1]  # visit order is last op first: the tape's order reversed
        reading = protocol.Reading([(op, [0]) for op in ops], [], reader)
        self.target = views[0].record.outputs[0].obj if target is None else target
        model = build_model(self.target, reading, names=names, caller="gv.backprop")
        produced = {o.id for op in ops for o in op.outputs}
        seen: dict[int, Any] = {}
        for v in views:
            for x, c in zip(v.record.inputs, v.contributions):
                if c is not None and x.id not in produced:
                    seen.setdefault(x.id, x)
        self.sources = self._watched = list(seen.values())
        return model

    # ---- state -------------------------------------------------------------------------------------
    @property
    def step(self) -> BackwardStep | None:
        """The step shown now (None at position 0, the seed)."""
        return self.steps[self.position - 1] if self.position > 0 else None

    @property
    def op(self) -> str | None:
        """The op highlighted now (None at the seed)."""
        return self._steps[self.position - 1].record.op if self.position > 0 else None

    @property
    def highlighted(self) -> str | None:
        """The graph node id of the highlighted op."""
        return f"o{self._steps[self.position - 1].record.key}" if self.position > 0 else None

    @property
    def panel(self) -> str:
        """The explanation of the current step (HTML)."""
        return self._panel_at(self.position)

    def _panel_at(self, position: int) -> str:
        """The explanation of step ``position`` (HTML; each made once)."""
        if position not in self._panels:
            self._panels[position] = self._explain(position)
        return self._panels[position]

    def __len__(self) -> int:
        return len(self.steps) + 1

    # ---- state: declared once, checked once ----------------------------------------------------------
    position = Whole(0, where="gv.backprop", help="The step shown: 0 = the seed, len(view) - 1 = the last.")

    @traitlets.validate("position")
    def _check_position(self, proposal: Any) -> int:
        value = int(proposal["value"])
        if not 0 <= value < len(self):
            raise IndexError(f"gv.backprop: position {value} is out of range 0..{len(self) - 1} (0: seed).")
        return value

    @traitlets.observe("position")
    def _moved(self, change: Any) -> None:
        self._sync()  # the one path to the live widget (`View._sync`)

    def go(self, position: int) -> None:
        """Show step ``position`` (0 = the seed, ``len(view) - 1`` = the last op)."""
        self.position = position

    def next(self) -> None:
        self.go(min(self.position + 1, len(self) - 1))

    def prev(self) -> None:
        self.go(max(self.position - 1, 0))

    # ---- drawing ----------------------------------------------------------------------------------
    def _marks(self, position: int) -> tuple[dict, dict, dict]:
        """The graph's highlights at step ``position``: node outlines, edge colours, overridden texts
        ("grad ?" on a gradient not complete yet), by node id (`GraphView.styles`' ``marks``)."""
        g = self.graph
        pal, model = g.palette, g.full_model
        highlight: dict[str, dict[str, str]] = {}
        edges: dict[tuple[str, str], dict[str, str]] = {}
        texts: dict[str, dict[str, dict[str, str]]] = {}
        complete = (
            self._complete[position - 1] if position > 0 else {drawn_id(model.alias, self._target.id)}
        )
        drawing = g.drawing
        for nid, node in model.nodes.items():
            if node.kind != "tensor" or node.grad is None:
                continue
            if (
                node.tensor.id not in complete
                and drawn_id(model.alias, node.tensor.id) not in complete
            ):
                text = drawing.fields.get(drawing.ids.get(nid, ""), {}).get("grad")
                if text:
                    texts[nid] = {text: {"text": "grad ?", "fill": pal.muted}}
        if position == 0:
            tid = model.tensor_id(self._target.id)
            highlight[tid] = {"stroke": pal.upstream, "stroke-width": "3"}
            return highlight, edges, texts
        step = self._steps[position - 1]
        out = f"t{drawn_id(model.alias, step.record.output.id)}"
        highlight[out] = {"stroke": pal.upstream, "stroke-width": "3"}
        if step.record.is_variable_read:  # drawn folded into the Variable's node: no op node
            return highlight, edges, texts
        oid = f"o{step.record.key}"
        highlight[oid] = {"stroke": pal.highlight, "stroke-width": "3.5"}
        edges[(oid, out)] = {"stroke": pal.upstream, "fill": pal.upstream, "stroke-width": "2.5"}
        for k in self._receivers(position):
            src = f"t{k}"
            highlight[src] = {"stroke": pal.receive, "stroke-width": "3"}
            edges[(src, oid)] = {"stroke": pal.receive, "fill": pal.receive, "stroke-width": "2.5"}
        return highlight, edges, texts

    def _receivers(self, position: int) -> list[int]:
        """The keys of the values a step's gradient goes to (its inputs, for a graph-style engine)."""
        if self.graph_style:
            alias = self.graph.full_model.alias
            return list(dict.fromkeys(drawn_id(alias, x.id) for x in self._steps[position - 1].record.inputs))
        return [c.key for c in self._arrivals[position - 1]]

    def to_svg(self) -> str:
        """The graph with the highlights of the step shown (`_marks`; the graph itself is not changed)."""
        shapes, texts = self.graph.styles(marks=self._marks(self.position))
        return restyle(self.graph._layout()[2], shapes, texts)

    def to_html(self) -> str:
        return backprop_html(strip_prolog(self.to_svg()), self.panel)

    # ---- text -------------------------------------------------------------------------------------
    def _name(self, key: int, depth: int = 2) -> str:
        """A tensor's name; for an unnamed one, the expression that made it ("(x × x)") or its value."""
        model = self.graph.full_model
        node = model.nodes.get(f"t{key}")
        if node is not None and node.name:
            return node.name
        if key in self._names:
            return self._names[key]
        record = self._producers.get(key)
        if record is None or depth == 0:
            return fmt.short(node.value) if node is not None and node.value is not None and node.leaf else "…"
        args = [self._name(drawn_id(model.alias, x.id), depth - 1) for x in record.inputs]
        sym = record.primitive.symbol
        if len(args) == 2 and len(sym) == 1:
            return f"({args[0]} {sym} {args[1]})"
        return f"{record.op}({', '.join(args)})"

    def _explain(self, position: int) -> str:
        n = len(self.steps)
        alias = self.graph.full_model.alias
        tname = self._name(drawn_id(alias, self._target.id))
        if position == 0:
            return seed_panel(n, tname, fmt.shape_text(self._target.shape)) + self._summary(final=n == 0)
        s = self._steps[position - 1]
        r = s.record
        out_key = drawn_id(alias, r.output.id)
        outname = self._name(out_key)
        named = self.graph.full_model.nodes.get(f"t{out_key}")
        upstream = s.upstream[0]
        parts = [
            step_title(position, n, r.op, r.op_id, outname if named is not None and named.name else "",
                       [self._name(drawn_id(alias, x.id)) for x in r.inputs]),
            rule_line(r.op, r.primitive.rule),
            upstream_line(tname, outname, _val(upstream)),
        ]
        for c in self._arrivals[position - 1]:
            arg = r.primitive.inputs[min(c.index, len(r.primitive.inputs) - 1)]
            parts.append(arrival_line(
                self._name(c.key), arg, outname, _val(upstream), _val(c.value),
                local=None if c.local is None else _val(c.local), shape=fmt.shape_text(c.value.shape),
                before=None if c.before is None else _val(c.before),
                after="" if c.before is None else _val(c.after), complete=c.complete))
        if self.graph_style:
            parts.extend(self._graph_lines(position, outname))
        parts.append(self._summary(final=position == n))
        return "".join(parts)

    def _graph_lines(self, position: int, outname: str) -> list[str]:
        """A graph-style step: each input the engine's backward adds to, with its ``.grad`` once final."""
        r, model = self._steps[position - 1].record, self.graph.full_model
        lines = []
        for k in self._receivers(position):
            node = model.nodes.get(f"t{k}")
            final = k in self._complete[position - 1] and node is not None and node.grad is not None
            lines.append(graph_arrival_line(self._name(k), r.op, outname, _val(node.grad) if final else None))
        return lines

    def _summary(self, final: bool) -> str:
        if not final:
            return ""
        items = []
        for s in self.sources:
            g = self.gradients.get(s.id)
            label = self._name(drawn_id(self.graph.full_model.alias, s.id))
            reason = "" if g is not None else (
                _reason(explain_none, self.tapes, self.target, s) if self.tapes
                else "no contribution reached it in this walk.")
            items.append((label, None if g is None else _val(g), reason))
        return gradients_summary(items)

    # ---- the live widget: one slider over the positions (`View`'s lifecycle) -----------------------
    def _frame_controls(self) -> list[Control]:
        labels = ["0: the seed"] + [f"{k}: {s.record.op}" for k, s in enumerate(self._steps, 1)]
        return [Control("step", "slider", range(len(self)), labels, play=True,
                        note=f"all {len(self)} positions",
                        get=lambda view: view.position, set=lambda view, p: setattr(view, "position", p))]

    def frames(self) -> Any:
        """Every position's highlights (patches of one graph picture) and explanation, as `Frames`."""
        return self._make_frames(self._frame_controls())

    def _make_frames(self, controls: list[Control]) -> Any:
        """The kernel-free stepper: each position's highlights and explanation, pure functions of the
        position (`_marks`, `_panel_at`); the slider, ‹ › and ▶ switch them in the browser."""
        g = self.graph
        base_shapes, base_texts = g.styles(highlights=False)
        f = Frames("backprop", picture=layer_slot("graph", strip_prolog(restyle(g._layout()[2], base_shapes,
                                                                                   base_texts))))
        f.add_controls(controls, self)

        def patch(p: int) -> dict[str, Any]:
            shapes, texts = g.styles(marks=self._marks(p))
            out = {}
            for sid in set(shapes) | set(texts):
                changed = {k: v for k, v in texts.get(sid, {}).items() if base_texts.get(sid, {}).get(k) != v}
                if shapes.get(sid) or changed:
                    out[sid] = {"shapes": shapes.get(sid, {}), "texts": changed}
            return out

        f.layer("graph", "patch", ["step"], patch)
        f.layer("panel", "html", ["step"], self._panel_at)
        f.info = g._info()
        return f

    def __repr__(self) -> str:
        return f"<gv.backprop: {len(self.steps)} steps, at step {self.position} ({self.op or 'seed'})>"


def _val(a: Any) -> str:
    return fmt.short(a, max_items=6)


def _reason(explain: Any, tapes: list[Any], target: Any, source: Any) -> str:
    others = tapes + [t for t in tapeinfo.known_tapes() if t not in tapes]
    for tp in tapes:
        try:
            reason = explain(tp, target, source, others=others)
        except Exception:  # a tape in an odd state: skip it
            continue
        if reason:
            return reason
    return "not connected to the target."
