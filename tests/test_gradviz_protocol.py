"""gradviz draws any engine through the tape protocol (API.md), and this engine through the same reader.

A 40-line reverse-mode engine, written here, records the same ops as the engine does for the same
function; `gv.graph`, `gv.tape` and `gv.backprop` must draw both alike, node for node and step for
step. Since both go through `gradviz.model.protocol`, these tests guard the engine's pictures too.
Bad protocol input is refused with a message naming the record and what is missing.
"""

from __future__ import annotations

import html
import re

import numpy as np
import pytest

import engine as eg
import gradviz as gv
from gradviz.model.protocol import ProtocolError

# ---- a small engine of our own (what a learner writes in lesson 10) -------------------------------


class Value:
    def __init__(self, value, name=None):
        self.value, self.name, self.grad = np.asarray(value, dtype=float), name, None


class Constant(Value):  # a number in an expression: no gradient flows to it
    pass


class Record:
    def __init__(self, op, inputs, outputs):
        self.op, self.inputs, self.outputs = op, inputs, outputs


class Step:
    def __init__(self, record, upstream, contributions):
        self.record, self.upstream, self.contributions = record, upstream, contributions


class Tape:
    current = None

    def __init__(self):
        self.records = []

    def __enter__(self):
        Tape.current = self
        return self

    def __exit__(self, *exc):
        Tape.current = None


def _op(name, forward, vjp):
    def apply(*inputs):
        inputs = [x if isinstance(x, Value) else Constant(x) for x in inputs]
        out = Value(forward(*[x.value for x in inputs]))
        if Tape.current is not None:
            Tape.current.records.append(Record(name, inputs, [out]))
        return out
    VJPS[name] = vjp
    return apply


VJPS = {}
add = _op("add", np.add, lambda g, a, b, y: (g, g))
subtract = _op("subtract", np.subtract, lambda g, a, b, y: (g, -g))
multiply = _op("multiply", np.multiply, lambda g, a, b, y: (g * b, g * a))
exp = _op("exp", np.exp, lambda g, a, y: (g * y,))


def backward(tape, target):
    """Last record first; each input receives vjp(upstream); a value's gradient is the sum."""
    grads, steps = {id(target): np.ones_like(target.value)}, []
    for r in tape.records[::-1]:
        g = grads.get(id(r.outputs[0]))
        if g is None:
            continue
        contributions = VJPS[r.op](g, *[x.value for x in r.inputs], r.outputs[0].value)
        contributions = tuple(None if isinstance(x, Constant) else c for x, c in zip(r.inputs, contributions))
        steps.append(Step(r, (g,), contributions))
        for x, c in zip(r.inputs, contributions):
            if c is None:
                continue
            grads[id(x)] = grads.get(id(x), 0) + c
            x.grad = grads[id(x)]
    target.grad = grads[id(target)]
    return steps


# ---- the same function in both engines --------------------------------------------------------------


def mine(x0=2.0, y0=1.0):
    x, y = Value(x0, "x"), Value(y0, "y")
    with Tape() as tape:
        f = add(subtract(multiply(x, x), multiply(multiply(2.0, x), y)), multiply(3.0, exp(y)))
    f.name = "f"
    return tape, f, x, y


def theirs(x0=2.0, y0=1.0):
    x, y = eg.constant(x0, name="x"), eg.constant(y0, name="y")
    with eg.GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        f = eg.add(eg.subtract(x * x, eg.multiply(2.0, x) * y), eg.multiply(3.0, eg.exp(y)))
    return tape, f, x, y


def _shape_of(model):
    """The graph as plain data: each node (kind, label, value), each edge by node positions."""
    ids = list(model.nodes)
    nodes = [(n.kind, n.label, None if n.value is None else float(n.value)) for n in model.nodes.values()]
    edges = sorted((ids.index(e.src), ids.index(e.dst), e.index) for e in model.edges)
    return nodes, edges


def test_graph_draws_a_foreign_engine_node_for_node():
    tape, f, x, y = mine()
    etape, ef, ex, ey = theirs()
    steps = backward(tape, f)
    assert len(steps) == len(tape.records)
    ours = gv.build_model(f, tape, names={"x": x, "y": y, "f": f})
    engine = gv.build_model(ef, etape, names={"x": ex, "y": ey, "f": ef})
    (n1, e1), (n2, e2) = _shape_of(ours), _shape_of(engine)
    assert [k[:2] for k in n1] == [k[:2] for k in n2] and e1 == e2
    np.testing.assert_allclose([v for *_, v in n1 if v is not None], [v for *_, v in n2 if v is not None],
                               rtol=1e-6)
    for a, b in zip(ours.nodes.values(), engine.nodes.values()):
        if b.grad is not None:  # every gradient the engine shows, ours shows the same
            assert a.grad is not None and float(a.grad) == pytest.approx(float(b.grad), rel=1e-6)
    assert float(ours.node_for(x).grad) == pytest.approx(2.0 * 2.0 - 2.0 * 1.0)  # 2x − 2y
    svg = gv.graph(f, tape, names={"x": x, "y": y, "f": f}).to_svg()
    assert "<svg" in svg and "×" in svg and "exp" in svg


def _panels(view):
    out = []
    for k in range(len(view)):
        view.go(k)
        out.append(re.sub(r"op #\d+", "op #", html.unescape(view.panel)))
    return out


def test_backprop_steps_through_a_foreign_walk_step_for_step():
    tape, f, x, y = mine()
    etape, ef, ex, ey = theirs()
    ours = gv.backprop(backward(tape, f), names={"x": x, "y": y, "f": f})
    engine = gv.backprop(etape, ef, [ex, ey], names={"x": ex, "y": ey, "f": ef})
    assert [s.record.op for s in ours.steps] == [s.record.op for s in engine.steps]
    for a, b in zip(ours._arrivals, engine._arrivals):
        assert [(c.index, c.complete) for c in a] == [(c.index, c.complete) for c in b]
        np.testing.assert_allclose([(c.value, c.after) for c in a], [(c.value, c.after) for c in b],
                                   rtol=1e-6)
    p1, p2 = _panels(ours), _panels(engine)
    assert len(p1) == len(p2)
    for a, b in zip(p1, p2):  # the same explanation, the engine's rules included (ops named alike)
        assert a.split("→")[0] == b.split("→")[0]  # the step, its rule, the upstream gradient
        assert re.findall("→ <b>(.*?)</b>", a) == re.findall("→ <b>(.*?)</b>", b)  # who receives
    assert "∂a = g·b, ∂b = g·a" in p1[-1]
    assert float(ours.gradients[ours.graph.full_model.reader.key(x)]) == pytest.approx(2.0)
    assert float(ours.gradients[ours.graph.full_model.reader.key(y)]) == pytest.approx(-4.0 + 3.0 * np.e)
    assert len(ours.frames().layers[0]["frames"]) == len(ours)


def test_engine_steps_read_like_any_steps():
    etape, ef, ex, ey = theirs()
    from_tape = gv.backprop(etape, ef, [ex, ey])
    from_steps = gv.backprop(list(eg.backward_steps(etape, ef, [ex, ey])))
    assert [s.record for s in from_steps.steps] == [s.record for s in from_tape.steps]
    assert {k: float(v) for k, v in from_steps.gradients.items()} == pytest.approx(
        {k: float(v) for k, v in from_tape.gradients.items()})


def test_tape_inspector_lists_a_foreign_tape():
    tape, f, x, y = mine()
    page = gv.tape(tape, names={"x": x, "y": y, "f": f}).to_html()
    assert page.count("<tr") == len(tape.records) + 1 and "subtract" in page and "f ()" in page


# ---- bad input: which record, what is missing ----------------------------------------------------------


class Bare:
    pass


def _tape(*records):
    t = Tape()
    t.records = list(records)
    return t


def test_a_record_without_op_is_named():
    x, y = Value(1.0), Value(2.0)
    bad = Bare()
    bad.inputs, bad.outputs = [x], [y]
    with pytest.raises(ProtocolError, match=r"gv.graph: record 1: Bare has no \.op"):
        gv.graph(y, _tape(Record("exp", [x], [y]), bad))


def test_a_value_that_is_no_array_is_named():
    x = Value(1.0)
    with pytest.raises(ProtocolError, match=r"record 0 \(op 'exp'\): output 0 is str 'y', not an array"):
        gv.tape(_tape(Record("exp", [x], ["y"])))
    with pytest.raises(ProtocolError, match=r"record 0 \(op 'exp'\): has a Value for \.inputs"):
        gv.tape(_tape(Record("exp", x, [Value(2.0)])))


def test_contributions_must_match_the_records_inputs():
    tape, f, x, y = mine()
    steps = backward(tape, f)
    first = steps[0]
    short = Step(first.record, first.upstream, first.contributions[:1])
    with pytest.raises(ProtocolError, match=r"step 0 \(op 'add'\): has 1 contribution\(s\) for 2 input\(s\)"):
        gv.backprop([short, *steps[1:]])
    wide = Step(first.record, first.upstream, (np.ones(3), first.contributions[1]))
    with pytest.raises(ProtocolError, match=r"contribution 0 has shape \(3,\) but input 0 has shape \(\)"):
        gv.backprop([wide, *steps[1:]])
    with pytest.raises(ProtocolError, match=r"step 1: Bare has no \.record"):
        gv.backprop([first, Bare()])


def test_a_target_not_on_the_tape_is_refused():
    tape, f, x, y = mine()
    with pytest.raises(ValueError, match="matched by identity"):
        gv.graph(Value(3.0), tape)


def test_a_foreign_engines_big_graph_folds_by_repetition_like_the_engines():
    """Folding by meaning reads the graph model, so a learner's tape folds as the engine's does: a chain
    of 200 × (multiply, add, exp) draws as one series box."""
    w = Value([0.5, 0.5], "w")
    with Tape() as tape:
        h = Value([0.1, 0.2], "x")
        for _ in range(200):
            h = exp(add(multiply(h, w), -1.0))
    svg = gv.graph(h, tape).to_svg()
    assert "multiply → add → exp × 200" in html.unescape(svg)
