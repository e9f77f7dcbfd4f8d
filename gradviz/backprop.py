"""``gv.backprop``: walk the backward pass one op at a time.

Step 0 seeds d target / d target = 1. Each later step takes one recorded op, last to first: the
gradient arriving at its output (upstream) times the op's local derivative gives each input's
contribution; a tensor that feeds several ops adds up their contributions (the accumulation is
shown). The graph highlights the op (orange), where the gradient comes from (red) and where it goes
(green); gradients not yet complete read "grad ?". All numbers come from the engine's own VJPs
(`gradviz.trace`), computed once when the view is made.

>>> import engine as eg, gradviz as gv
>>> x = eg.constant(3.0)
>>> with eg.GradientTape(persistent=True) as tape:
...     tape.watch(x)
...     y = x * x + x
>>> bp = gv.backprop(tape, y, [x], names={"x": x, "y": y})
>>> bp.go(2); bp.op
'multiply'
>>> "accumulate" in bp.panel       # x feeds both ops: 3.0 (from +) + 6.0 (from ×)
True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import fmt, tapeinfo
from .graph import GraphView
from .model import OP_SYMBOLS, build_model
from .svg import strip_prolog
from .trace import Step, backward_steps
from .widget_base import View, esc, svg_widget_class

__all__ = ["backprop", "BackpropView", "LOCAL_RULES"]

# How each op's local derivative reads, for the panel (the numbers always come from the engine).
LOCAL_RULES: dict[str, tuple[str, ...]] = {
    "add": ("1", "1"),
    "subtract": ("1", "−1"),
    "multiply": ("{1}", "{0}"),
    "divide": ("1/{1}", "−{0}/{1}²"),
    "pow": ("{1}·{0}^({1}−1)", "{0}^{1}·ln {0}"),
    "negative": ("−1",),
    "exp": ("exp({0}) = {y}",),
    "log": ("1/{0}",),
    "log1p": ("1/(1 + {0})",),
    "sqrt": ("1/(2·{y})",),
    "square": ("2·{0}",),
    "sin": ("cos {0}",),
    "cos": ("−sin {0}",),
    "tan": ("1 + {y}²",),
    "tanh": ("1 − {y}²",),
    "sigmoid": ("{y}·(1 − {y})",),
    "relu": ("1 where {0} > 0, else 0",),
    "softplus": ("sigmoid({0})",),
    "abs": ("sign({0})",),
    "maximum": ("1 where {0} ≥ {1}", "1 where {1} > {0}"),
    "minimum": ("1 where {0} ≤ {1}", "1 where {1} < {0}"),
    "clip": ("1 inside the bounds, else 0",),
    "matmul": ("upstream @ {1}ᵀ", "{0}ᵀ @ upstream"),
    "sum": ("upstream copied to every summed element",),
    "mean": ("upstream / n, copied to every element",),
    "reshape": ("upstream reshaped back",),
    "transpose": ("upstream transposed back",),
    "broadcast_to": ("upstream summed over the copies",),
    "getitem": ("upstream placed at the indexed positions, 0 elsewhere",),
    "max": ("upstream at the maximum (split among ties)",),
    "min": ("upstream at the minimum (split among ties)",),
}


def backprop(
    tape: Any, target: Any, sources: Any = None, names: Mapping[str, Any] | None = None, theme: str = "auto"
) -> BackpropView:
    """The backprop stepper for ``target`` over what ``tape`` recorded.

    ``sources``: the tensors whose gradients we are after (default: every tensor and Variable the
    tape watches). ``names``: a name → tensor mapping such as ``locals()``, for labels.
    The tape is not consumed: it may be non-persistent, as long as its gradient() was not called yet.
    """
    return BackpropView(tape, target, sources=sources, names=names, theme=theme)


class BackpropView(View):
    """What `backprop` returns: the steps, the graph, and the controls that walk them."""

    def __init__(
        self,
        tape: Any,
        target: Any,
        sources: Any = None,
        names: Mapping[str, Any] | None = None,
        theme: str = "auto",
    ):
        from engine import Tensor, nest  # noqa: PLC0415

        tapes = tapeinfo.as_tapes(tape)
        records = [r for r, _ in tapeinfo.merged_records(tapes)]
        if not records:
            raise tapeinfo.no_records_error("gv.backprop", tapes[0])
        if not isinstance(target, Tensor):
            raise TypeError(f"gv.backprop: the target must be a Tensor, got {type(target).__name__}.")
        if sources is None:
            sources = [t for tp in tapes for t in (*tp.watched_variables(), *tp.watched_tensors())]
        self.sources = nest.flatten(sources)
        self.target = target
        self.tapes = tapes
        self._names = tapeinfo.names_by_id(names)
        self.graph = GraphView(build_model(target, tapes, names=names), theme=theme)
        model = self.graph.full_model
        self.steps: list[Step]
        reads = {r.inputs[0].id for r in model.records if r.op == "read_variable"}
        watched = [s for s in self.sources if s.id in reads or any(tp.is_watching(s) for tp in tapes)]
        self.steps, grads = backward_steps(model.records, [target], watched)
        self.gradients = {
            s.id: (grads.get(model.alias.get(s.id, s.id)) if s.dtype.kind in "fc" else None) for s in watched
        }
        self._producers = {model.alias.get(r.output.id, r.output.id): r for r in model.records}
        self.position = 0
        self._panels: dict[int, str] = {}
        self._show()

    # ---- state -------------------------------------------------------------------------------------
    @property
    def step(self) -> Step | None:
        """The step shown now (None at position 0, the seed)."""
        return self.steps[self.position - 1] if self.position > 0 else None

    @property
    def op(self) -> str | None:
        """The op highlighted now (None at the seed)."""
        return self.step.op if self.step is not None else None

    @property
    def highlighted(self) -> str | None:
        """The graph node id of the highlighted op."""
        return f"o{self.step.record.op_id}" if self.step is not None else None

    @property
    def panel(self) -> str:
        """The explanation of the current step (HTML)."""
        if self.position not in self._panels:
            self._panels[self.position] = self._explain(self.position)
        return self._panels[self.position]

    def __len__(self) -> int:
        return len(self.steps) + 1

    def go(self, position: int) -> None:
        """Show step ``position`` (0 = the seed, ``len(view) - 1`` = the last op)."""
        if not 0 <= position < len(self):
            raise IndexError(f"step {position} is out of range 0..{len(self) - 1}.")
        self.position = position
        self._show()
        self._sync()

    def next(self) -> None:
        self.go(min(self.position + 1, len(self) - 1))

    def prev(self) -> None:
        self.go(max(self.position - 1, 0))

    # ---- drawing ----------------------------------------------------------------------------------
    def _show(self) -> None:
        """Set the graph's highlights and hidden gradients for the current position."""
        g, pal, model = self.graph, self.graph.palette, self.graph.full_model
        g.highlight, g.edge_highlight, g.text_overrides = {}, {}, {}
        complete = (
            self.step.complete if self.step is not None else {model.alias.get(self.target.id, self.target.id)}
        )
        drawing = g.drawing
        for nid, node in model.nodes.items():
            if node.kind != "tensor" or node.grad is None:
                continue
            if (
                node.tensor.id not in complete
                and model.alias.get(node.tensor.id, node.tensor.id) not in complete
            ):
                text = drawing.fields.get(drawing.ids.get(nid, ""), {}).get("grad")
                if text:
                    g.text_overrides[nid] = {text: {"text": "grad ?", "fill": pal.muted}}
        step = self.step
        if step is None:
            tid = model.tensor_id(self.target.id)
            g.highlight[tid] = {"stroke": pal.upstream, "stroke-width": "3"}
            return
        oid = f"o{step.record.op_id}"
        out = f"t{step.output_key}"
        g.highlight[oid] = {"stroke": pal.highlight, "stroke-width": "3.5"}
        g.highlight[out] = {"stroke": pal.upstream, "stroke-width": "3"}
        g.edge_highlight[(oid, out)] = {"stroke": pal.upstream, "fill": pal.upstream, "stroke-width": "2.5"}
        for c in step.contributions:
            src = f"t{c.key}"
            g.highlight[src] = {"stroke": pal.receive, "stroke-width": "3"}
            g.edge_highlight[(src, oid)] = {"stroke": pal.receive, "fill": pal.receive, "stroke-width": "2.5"}

    def to_svg(self) -> str:
        return self.graph.to_svg()

    def to_html(self) -> str:
        return (
            f"<div class='gradviz gradviz-backprop' style='display:flex;gap:12px;align-items:flex-start'>"
            f"<div style='flex:1 1 auto;min-width:0'>{strip_prolog(self.to_svg())}</div>"
            f"<div style='flex:0 0 340px'>{self.panel}</div></div>"
        )

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
        args = [self._name(model.alias.get(x.id, x.id), depth - 1) for x in record.inputs]
        sym = OP_SYMBOLS.get(record.op)
        if sym and len(args) == 2 and len(sym) == 1:
            return f"({args[0]} {sym} {args[1]})"
        return f"{record.op}({', '.join(args)})"

    def _explain(self, position: int) -> str:
        n = len(self.steps)
        tname = esc(self._name(self.graph.full_model.alias.get(self.target.id, self.target.id)))
        if position == 0:
            return (
                f"<div><b>Step 0 of {n}: the seed</b></div><div>d {tname} / d {tname} = 1 "
                f"(ones shaped {esc(fmt.shape_text(self.target.shape))}). The backward pass now visits the "
                "recorded ops from last to first.</div>" + self._summary(final=n == 0)
            )
        s = self.steps[position - 1]
        r = s.record
        outname = esc(self._name(s.output_key))
        ins = ", ".join(esc(self._name(self.graph.full_model.alias.get(x.id, x.id))) for x in r.inputs)
        named = self.graph.full_model.nodes.get(f"t{s.output_key}")
        head = f"{outname} = " if named is not None and named.name else ""
        parts = [
            f"<div><b>Step {position} of {n}: {esc(r.op)}</b> (op #{r.op_id}): "
            f"{head}{esc(r.op)}({ins})</div>",
            f"<div style='margin-top:4px'>upstream d {tname} / d {outname} = "
            f"<code>{esc(_val(s.upstream))}</code></div>",
        ]
        rules = LOCAL_RULES.get(r.op, ())
        in_names = [self._name(self.graph.full_model.alias.get(x.id, x.id)) for x in r.inputs]
        for c in s.contributions:
            cname = esc(self._name(c.key))
            rule = rules[c.index] if c.index < len(rules) else (rules[0] if len(rules) == 1 else "")
            try:
                rule = rule.format(*in_names, y=self._name(s.output_key))
            except (IndexError, KeyError):
                pass
            rule_txt = f" = {esc(rule)}" if rule else ""
            up, contrib = _code(s.upstream), _code(c.value)
            if c.local is not None:
                local = _code(c.local)
                line = (
                    f"→ <b>{cname}</b>: local d {outname} / d {cname}{rule_txt} = {local}; "
                    f"upstream × local = {up} × {local} = {contrib}"
                )
            else:
                line = (
                    f"→ <b>{cname}</b>: contribution = the op's vector-Jacobian product of the upstream"
                    f"{rule_txt}: <code>{esc(_val(c.value))}</code> {esc(fmt.shape_text(c.value.shape))}"
                )
            if c.before is not None:
                before = _code(c.before)
                line += (
                    f"<br>&nbsp;&nbsp;accumulate: {cname} already had {before} from a later op; "
                    f"{before} + {contrib} = {_code(c.after)}"
                )
            if c.key not in s.complete:
                line += "<br>&nbsp;&nbsp;(more contributions to come: it feeds other ops too)"
            parts.append(f"<div style='margin-top:4px'>{line}</div>")
        parts.append(self._summary(final=position == n))
        return "".join(parts)

    def _summary(self, final: bool) -> str:
        if not final:
            return ""
        from .tape_view import explain_none  # noqa: PLC0415

        items = []
        for s in self.sources:
            g = self.gradients.get(s.id)
            label = esc(self._name(self.graph.full_model.alias.get(s.id, s.id)))
            if g is not None:
                items.append(f"<li>d / d {label} = <code>{esc(_val(g.numpy()))}</code></li>")
            else:
                reason = _reason(explain_none, self.tapes, self.target, s)
                items.append(f"<li>d / d {label} = None: {esc(reason)}</li>")
        return f"<div style='margin-top:6px'><b>Done.</b> The gradients:<ul>{''.join(items)}</ul></div>"

    # ---- the live widget --------------------------------------------------------------------------
    def _build_widget(self) -> Any:
        import ipywidgets as w  # noqa: PLC0415

        last = len(self) - 1
        self._slider = w.IntSlider(
            value=self.position, min=0, max=last, description="step", continuous_update=True
        )
        self._play = w.Play(value=self.position, min=0, max=last, interval=1200, description="play")
        w.jslink((self._play, "value"), (self._slider, "value"))
        prev_b = w.Button(description="◀ prev", layout=w.Layout(width="80px"))
        next_b = w.Button(description="next ▶", layout=w.Layout(width="80px"))
        prev_b.on_click(lambda _: self.prev())
        next_b.on_click(lambda _: self.next())
        self._slider.observe(lambda ch: self.go(ch["new"]), names="value")
        self._pic = svg_widget_class()(
            svg=strip_prolog(self.to_svg()),
            panel=self.panel,
            info=self.graph._info(),
            theme_mode=self.graph.theme,
            max_height=560,
        )
        self._pic.observe(self._on_theme, names="page_dark")
        return w.VBox([w.HBox([self._play, prev_b, next_b, self._slider]), self._pic])

    def _on_theme(self, change: dict) -> None:
        self.graph._page_dark = bool(change["new"])
        self._show()
        self._sync()

    def _sync(self) -> None:
        if self._widget is None:
            return
        if self._slider.value != self.position:
            self._slider.value = self.position  # its observer calls go(), which is then a no-op refresh
        self._pic.svg = strip_prolog(self.to_svg())
        self._pic.panel = self.panel

    def __repr__(self) -> str:
        return f"<gv.backprop: {len(self.steps)} steps, at step {self.position} ({self.op or 'seed'})>"


def _val(a: Any) -> str:
    return fmt.short(a, max_items=6)


def _code(a: Any) -> str:
    return f"<code>{esc(_val(a))}</code>"


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
