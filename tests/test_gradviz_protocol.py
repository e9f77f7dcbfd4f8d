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
from gradviz.render.graph_info import node_info

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


# ---- identities and values (issue 28: what the reader drew wrongly without a word) ---------------------


def _edges(model):
    return sorted((model.nodes[e.src].label, model.nodes[e.dst].label, e.index) for e in model.edges)


def test_two_records_with_the_same_op_id_are_both_drawn():
    """Record identity is the record object: an ``op_id`` (the learner's counter, reset or copied) is
    only shown."""
    x, y, z = Value(2.0, "x"), Value(4.0, "y"), Value(54.6, "z")
    first, second = Record("multiply", [x, x], [y]), Record("exp", [y], [z])
    first.op_id = second.op_id = 7
    model = gv.build_model(z, _tape(first, second))
    assert sorted(n.label for n in model.nodes.values() if n.kind == "op") == ["exp", "×"]
    drawn = [("x", "×", 0), ("x", "×", 1), ("×", "y", 0), ("y", "exp", 0), ("exp", "z", 0)]
    assert _edges(model) == sorted(drawn)
    shown = [node_info(n, model) for n in model.nodes.values() if n.kind == "op"]
    assert all(re.search(r"op id\D+7\b", html.unescape(text)) for text in shown)  # shown, not a key
    steps = backward(_tape(first, second), z)
    bp = gv.backprop(steps)
    assert [s.record.op for s in bp.steps] == ["exp", "multiply"]
    assert bp.highlighted is None
    bp.go(1)
    exp_node = bp.highlighted
    bp.go(2)
    assert bp.highlighted != exp_node  # two ops, two nodes


def test_a_record_listed_many_times_is_drawn_once_with_a_note():
    x, w = Value(2.0, "x"), Value(3.0, "w")
    y = Value(6.0, "y")
    r = Record("multiply", [x, w], [y])
    with pytest.warns(UserWarning, match=r"lists the same record more than once \(record 0, op 'multiply': "
                                         r"100 times; 1 record\(s\) in all\); each is drawn once"):
        view = gv.graph(y, _tape(*[r] * 100))
    model = view.full_model
    assert len(model.edges) == 3 and len(model.nodes) == 4  # not 300 edges
    op = next(n for n in model.nodes.values() if n.kind == "op")
    assert op.record.repeats == 100
    assert "listed 100 times in tape.records" in node_info(op, model)
    with pytest.warns(UserWarning, match="2 times"):
        assert len(gv.build_model(y, _tape(r, r)).edges) == 3
    with pytest.warns(UserWarning, match="3 times"):
        page = gv.tape(_tape(r, r, r)).to_html()
    assert page.count("<tr") == 2 and "listed 3 times: shown once" in page


def _fresh_kernel(code):
    """Run ``code`` in a new interpreter (the engine's first tensor has id 1 there, as in a new kernel)."""
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415
    from pathlib import Path  # noqa: PLC0415

    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=120,
                          env={**__import__("os").environ, "ENGINE_DISABLE_GPU": "1"})
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_learners_value_never_shares_an_identity_with_an_engine_tensor():
    """In a new kernel the engine's first tensor has id 1, the very key a counter would give the
    learner's first value: both must be drawn."""
    out = _fresh_kernel(
        "import numpy as np, engine as eg, gradviz as gv\n"
        "t = eg.constant([1.0, 2.0], name='w')\n"
        "class V:\n"
        "    def __init__(self, a, name): self.value, self.name = np.asarray(a, float), name\n"
        "class R:\n"
        "    def __init__(self, op, i, o): self.op, self.inputs, self.outputs = op, i, o\n"
        "class T: pass\n"
        "x, y = V([3.0, 4.0], 'x'), V([3.0, 8.0], 'y')\n"
        "tape = T(); tape.records = [R('multiply', [x, t], [y])]\n"
        "m = gv.build_model(y, tape)\n"
        "keys = [m.reader.key(v) for v in (x, t, y)]\n"
        "print(t.id, len(set(keys)), sorted(n.label for n in m.nodes.values()))\n")
    assert out == "1 3 ['w', 'x', 'y', '×']"


def test_values_made_while_reading_keep_their_own_identity():
    """A record whose ``.inputs``/``.outputs`` make new objects each time: every object read is one
    node of its own (the reader keeps them alive, so no later object reuses a dead one's id())."""

    class Fresh:
        def __init__(self, k):
            self.op, self.k = "exp", k

        @property
        def inputs(self):
            return [Value(self.k + 0.5)]

        @property
        def outputs(self):
            return [Value(np.exp(self.k + 0.5))]

    model = gv.build_model(None, _tape(*[Fresh(k) for k in range(60)]))
    assert sum(n.kind == "op" for n in model.nodes.values()) == 60
    assert sum(n.kind == "tensor" for n in model.nodes.values()) == 120
    assert len({n.value.item() for n in model.nodes.values() if n.kind == "tensor"}) == 120


class TorchDtype:  # what torch.float32 is to NumPy: not a dtype it can interpret
    def __repr__(self):
        return "torch.float32"


class TorchLike:
    """A PyTorch-like tensor (torch is not installed): ``__array__``, ``.numpy()``, a non-NumPy ``.dtype``."""

    def __init__(self, a, grad=None):
        self._a = np.asarray(a, np.float32)
        self.shape, self.dtype, self.grad = self._a.shape, TorchDtype(), grad

    def __array__(self, dtype=None, copy=None):
        return self._a if dtype is None else self._a.astype(dtype)

    def numpy(self):
        return self._a


def test_values_numpy_asarray_takes_are_read_a_pytorch_like_tensor():
    with pytest.raises(TypeError, match="Cannot interpret 'torch.float32' as a data type"):
        np.dtype(TorchLike(1.0).dtype)  # what the reader used to do
    x = TorchLike([1.0, 2.0], grad=TorchLike([4.0, 5.0]))
    y = TorchLike([2.0, 4.0])
    wrapped = Value(0.0, "z")
    wrapped.value = TorchLike([7.0, 9.0])  # a learner's value holding a tensor in .value
    tape = _tape(Record("add", [x, x], [y]), Record("add", [y, wrapped], [Value([9.0, 13.0], "s")]))
    model = gv.build_model(None, tape, names={"x": x, "y": y})
    node = model.node_for(x)
    assert node.dtype == "float32" and node.shape == (2,)
    np.testing.assert_array_equal(node.value, [1.0, 2.0])
    np.testing.assert_array_equal(node.grad, [4.0, 5.0])
    np.testing.assert_array_equal(model.node_for(wrapped).value, [7.0, 9.0])
    assert "<svg" in gv.graph(None, tape).to_svg() and "add" in gv.tape(tape).to_html()


def test_a_cupy_array_and_a_list_are_read():
    cupy = pytest.importorskip("cupy")
    x = Value(0.0, "x")
    x.value = cupy.asarray([1.0, 2.0])  # a device array: read with .get(), never implicitly
    y = type("L", (), {"data": [2.0, 4.0], "name": "y"})()  # .data a plain list
    model = gv.build_model(y, _tape(Record("add", [x, x], [y])))
    np.testing.assert_array_equal(model.node_for(x).value, [1.0, 2.0])
    np.testing.assert_array_equal(model.node_for(y).value, [2.0, 4.0])
    assert model.node_for(x).dtype == "float64"


def test_a_single_output_steps_bare_upstream_is_taken():
    tape, f, x, y = mine()
    steps = backward(tape, f)
    bare = [Step(s.record, s.upstream[0], s.contributions) for s in steps]  # g, not (g,)
    listed = [Step(s.record, [s.upstream[0]], s.contributions) for s in steps]  # [g]
    floats = [Step(s.record, float(s.upstream[0]), s.contributions) for s in steps]  # a Python float
    tupled = gv.backprop(steps)
    for variant in (bare, listed, floats):
        bp = gv.backprop(variant)
        assert {k: float(v) for k, v in bp.gradients.items()} == pytest.approx(
            {k: float(v) for k, v in tupled.gradients.items()})
        assert [float(u) for s in bp._steps for u in s.upstream] == pytest.approx(
            [float(u) for s in tupled._steps for u in s.upstream])
    with pytest.raises(ProtocolError, match=r"step 0 \(op 'add'\): has an empty \.upstream"):
        gv.backprop([Step(steps[0].record, (), steps[0].contributions), *steps[1:]])


def test_unnamed_values_of_another_engine_are_written_v1_v2_never_a_negative_id():
    x, y = Value(2.0), Value(4.0)
    tape = _tape(Record("multiply", [x, x], [y]))
    page = gv.tape(tape).to_html()
    assert "v1 ()" in page and "v2 ()" in page and "#-" not in page
    model = gv.build_model(y, tape)
    info = node_info(model.node_for(y), model)
    assert "#-" not in info and "tensor v2" in info
