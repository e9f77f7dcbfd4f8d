"""gradviz draws graph-style engines (API.md, "Graph-style engines"): micrograd's design, no tape, each
value knows its inputs (``_prev``/``parents``) and its op (``_op``/``op``).

A 30-line engine of that design is written here. `gv.graph(root)` must draw it exactly as it draws
the engine's tape of the same function (ops, edges, values, gradients: a differential Hypothesis test
over random small programs), and `gv.backprop(root)` steps through its values in reverse topological
order with the ``.grad`` that engine computed. Cycles and missing attributes are refused, naming the
value.
"""

from __future__ import annotations

import html

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine as eg
import gradviz as gv

# ---- a micrograd-style engine (what a learner writes in lesson 10's second route) ----------------------


class Val:
    def __init__(self, data, _prev=(), _op="", name=None):
        self.data, self._prev, self._op, self.name = np.asarray(data, dtype=float), tuple(_prev), _op, name
        self.grad, self._backward = None, lambda: None

    def _add_grad(self, g):
        self.grad = g if self.grad is None else self.grad + g

    def _new(self, data, prev, op, vjps):
        out = Val(data, prev, op)
        out._backward = lambda: [p._add_grad(vjp(out.grad)) for p, vjp in zip(prev, vjps)]
        return out

    def __add__(self, o):
        return self._new(self.data + o.data, (self, o), "add", (lambda g: g, lambda g: g))

    def __sub__(self, o):
        return self._new(self.data - o.data, (self, o), "subtract", (lambda g: g, lambda g: -g))

    def __mul__(self, o):
        vjps = (lambda g: g * o.data, lambda g: g * self.data)
        return self._new(self.data * o.data, (self, o), "multiply", vjps)

    def tanh(self):
        t = np.tanh(self.data)
        return self._new(t, (self,), "tanh", (lambda g: g * (1 - t * t),))

    def exp(self):
        e = np.exp(self.data)
        return self._new(e, (self,), "exp", (lambda g: g * e,))

    def sum(self):
        return self._new(self.data.sum(), (self,), "sum", (lambda g: g * np.ones_like(self.data),))

    def backward(self):
        order, seen = [], set()

        def visit(v):
            if id(v) not in seen:
                seen.add(id(v))
                for p in v._prev:
                    visit(p)
                order.append(v)

        visit(self)
        self.grad = np.ones_like(self.data)
        for v in order[::-1]:
            v._backward()


# ---- the same random program in both engines -----------------------------------------------------------

BINARY = {"add": (Val.__add__, eg.add), "subtract": (Val.__sub__, eg.subtract),
          "multiply": (Val.__mul__, eg.multiply)}
UNARY = {"tanh": (Val.tanh, eg.tanh), "exp": (Val.exp, eg.exp)}


@st.composite
def programs(draw):
    """Leaves (values), then ops over any earlier values (reuse: diamonds and ``a * a``)."""
    shape = draw(st.sampled_from([(), (3,)]))
    n_leaves = draw(st.integers(1, 3))
    floats = st.floats(-1.5, 1.5, allow_nan=False, width=32)
    leaves = [np.asarray(draw(st.lists(floats, min_size=3, max_size=3))[: 1 if shape == () else 3],
                         float).reshape(shape) for _ in range(n_leaves)]
    ops = []
    for k in range(draw(st.integers(1, 6))):
        n = n_leaves + k
        if draw(st.booleans()):
            ops.append((draw(st.sampled_from(sorted(BINARY))), draw(st.integers(0, n - 1)),
                        draw(st.integers(0, n - 1))))
        else:
            ops.append((draw(st.sampled_from(sorted(UNARY))), draw(st.integers(0, n - 1))))
    return leaves, ops, shape


def run_graph_style(leaves, ops, shape):
    vals = [Val(a, name=f"x{i}") for i, a in enumerate(leaves)]
    for name, *args in ops:
        fn = (BINARY.get(name) or UNARY[name])[0]
        vals.append(fn(*[vals[i] for i in args]))
    if shape != ():
        vals.append(vals[-1].sum())
    vals[-1].backward()
    return vals


def run_engine(leaves, ops, shape):
    vals = [eg.constant(a, name=f"x{i}") for i, a in enumerate(leaves)]
    with eg.GradientTape(persistent=True) as tape:
        tape.watch(vals[:])
        for name, *args in ops:
            fn = (BINARY.get(name) or UNARY[name])[1]
            vals.append(fn(*[vals[i] for i in args]))
        if shape != ():
            vals.append(eg.sum(vals[-1]))
    return tape, vals


def ancestors(ops, n_leaves, root):
    """The program's values the root depends on (their indices)."""
    inputs = {n_leaves + k: args for k, (_, *args) in enumerate(ops)}
    if root not in inputs and root >= n_leaves:  # the final sum
        inputs[root] = [root - 1]
    out, todo = set(), [root]
    while todo:
        i = todo.pop()
        if i not in out:
            out.add(i)
            todo.extend(inputs.get(i, []))
    return out


def structure(model, vals, keep):
    """Per program value (by index): (label, producer's op label, the producer's inputs by index,
    value); and the number of nodes and edges."""
    index = {model.node_for(v).id: i for i, v in enumerate(vals) if i in keep}
    producer = {e.dst: e.src for e in model.edges if model.nodes[e.src].kind == "op"}
    inputs: dict[str, list] = {}
    for e in model.edges:
        if model.nodes[e.dst].kind == "op":
            inputs.setdefault(e.dst, []).append((e.index, index[e.src]))
    rows = {}
    for nid, i in index.items():
        node, op = model.nodes[nid], producer.get(nid)
        rows[i] = (node.label, model.nodes[op].label if op else None,
                   sorted(inputs.get(op, [])) if op else [], node.value.tolist())
    return rows, len(model.nodes), len(model.edges)


@settings(max_examples=40, deadline=None)
@given(programs())
def test_a_graph_style_engine_is_drawn_as_the_engines_tape(program):
    leaves, ops, shape = program
    mine = run_graph_style(leaves, ops, shape)
    tape, theirs = run_engine(leaves, ops, shape)
    keep = ancestors(ops, len(leaves), len(mine) - 1)
    names_m = {f"x{i}": v for i, v in enumerate(mine[: len(leaves)])}
    names_e = {f"x{i}": v for i, v in enumerate(theirs[: len(leaves)])}
    m1 = gv.graph(mine[-1], names=names_m).full_model
    m2 = gv.graph(theirs[-1], tape, names=names_e).full_model
    (rows1, n1, e1), (rows2, n2, e2) = structure(m1, mine, keep), structure(m2, theirs, keep)
    assert (n1, e1) == (n2, e2)
    assert rows1.keys() == rows2.keys()
    for i in rows1:
        assert rows1[i][:3] == rows2[i][:3], i
        np.testing.assert_allclose(rows1[i][3], rows2[i][3], rtol=1e-12)
        g2 = m2.node_for(theirs[i]).grad
        if g2 is not None:  # each gradient the engine shows, the learner's engine computed alike
            np.testing.assert_allclose(m1.node_for(mine[i]).grad, g2, rtol=1e-9, atol=1e-12)


def test_a_shrunk_diamond_with_a_squared_value():
    """``y = x * x; z = y + x``: x is an input twice of one op and once of another."""
    leaves, ops = [np.asarray(0.5)], [("multiply", 0, 0), ("add", 1, 0)]
    mine = run_graph_style(leaves, ops, ())
    tape, theirs = run_engine(leaves, ops, ())
    keep = {0, 1, 2}
    assert structure(gv.graph(mine[-1]).full_model, mine, keep) == structure(
        gv.graph(theirs[-1], tape).full_model, theirs, keep)
    assert float(mine[0].grad) == pytest.approx(2 * 0.5 + 1)


def test_backprop_steps_through_the_values_in_reverse_topological_order():
    x, w = Val([1.0, -2.0], name="x"), Val([0.5, 0.25], name="w")
    h = (x * w).tanh()
    loss = (h + x).sum()
    loss.name = "loss"
    loss.backward()
    bp = gv.backprop(loss, names={"x": x, "w": w, "h": h, "loss": loss})
    assert [s.record.op for s in bp.steps] == ["sum", "add", "tanh", "multiply"]
    assert [s.record.outputs[0] for s in bp.steps][:1] == [loss]
    assert len(bp) == 5
    bp.go(2)  # add: h's grad is final (only the add uses it); x still feeds the multiply
    panel = html.unescape(bp.panel)
    assert "h.grad is now complete" in panel and "more contributions to come" in panel
    bp.go(4)
    panel = html.unescape(bp.panel)
    assert "x.grad is now complete" in panel and "Done." in panel
    np.testing.assert_allclose(bp.gradients[bp.graph.full_model.reader.key(x)], x.grad)
    np.testing.assert_allclose(bp.gradients[bp.graph.full_model.reader.key(w)], w.grad)
    expect = 1 + (1 - np.tanh(x.data * w.data) ** 2) * w.data
    np.testing.assert_allclose(x.grad, expect)  # the engine's own numbers, shown as they are
    assert len(bp.frames().layers[0]["frames"]) == len(bp)
    assert "<svg" in bp.to_svg() and "tanh" in html.unescape(bp.to_svg())


class Mg:  # micrograd's very names: scalar data, grad 0.0, _prev a set, _op a symbol, label
    def __init__(self, data, _children=(), _op="", label=""):
        self.data, self.grad, self._prev, self._op, self.label = data, 0.0, set(_children), _op, label

    def __mul__(self, other):
        return Mg(self.data * other.data, (self, other), "*")

    def __add__(self, other):
        return Mg(self.data + other.data, (self, other), "+")


def test_micrograds_own_shapes_are_drawn_scalars_sets_and_symbols():
    a, b = Mg(2.0, label="a"), Mg(-3.0, label="b")
    c = a * b + a
    c.grad, (a.grad, b.grad) = 1.0, (-2.0, 2.0)  # what micrograd's backward would leave
    model = gv.graph(c, names={"a": a, "b": b, "c": c}).full_model
    ops = sorted(n.label for n in model.nodes.values() if n.kind == "op")
    assert ops == ["*", "+"]  # not an eg primitive: the engine's own name is shown
    assert float(model.node_for(c).value) == -4.0 and float(model.node_for(a).grad) == -2.0
    svg = html.unescape(gv.graph(c).to_svg())
    assert "<svg" in svg and "*" in svg


def test_parents_and_op_are_read_too():
    class P:
        def __init__(self, value, parents=(), op=""):
            self.value, self.parents, self.op = np.asarray(value, float), parents, op

    x = P(3.0)
    y = P(9.0, [x, x], "multiply")
    model = gv.graph(y).full_model
    assert [n.label for n in model.nodes.values() if n.kind == "op"] == ["×"]
    assert len(model.edges) == 3


def test_a_big_graph_style_chain_folds_like_a_tape():
    h, w = Val([0.1, 0.2], name="x"), Val([0.5, 0.5], name="w")
    for _ in range(200):
        h = (h * w).tanh()
    assert "multiply → tanh × 200" in html.unescape(gv.graph(h).to_svg())


# ---- bad input: which value, what is wrong ---------------------------------------------------------------


def test_a_cycle_is_refused_naming_the_value():
    a = Val(1.0, name="a")
    b = a * a
    b.name = "b"
    a._prev, a._op = (b,), "add"  # a is now computed from itself
    cycle = r"gv.graph: the graph has a cycle: Val 'b' \(op 'multiply', data 1.0\) is an input of itself"
    with pytest.raises(ValueError, match=cycle + r" \(Val 'b' .* → Val 'a' .* → Val 'b'"):
        gv.graph(b)
    with pytest.raises(ValueError, match="cycle"):
        gv.backprop(b)


def test_a_missing_attribute_is_refused_naming_the_value():
    class NoOp:
        def __init__(self, data, _prev=()):
            self.data, self._prev = data, _prev

    with pytest.raises(TypeError, match=r"gv.graph: the value NoOp \(data 2.0\) has no \.op or \._op"):
        gv.graph(NoOp(2.0, (Mg(1.0),)))
    x = Mg(1.0, label="x")
    y = Mg(2.0, (x, 3.0), "*", label="y")  # a bare number as an input
    named = r"input \d of Mg 'y' \(op '\*', data 2.0\), float 3.0, has no \.parents"
    with pytest.raises(TypeError, match=named):
        gv.graph(y)
    z = Mg(2.0, (x,), "", label="z")
    with pytest.raises(TypeError, match=r"Mg 'z' .* has inputs but an empty op name"):
        gv.graph(z)
    with pytest.raises(ValueError, match=r"Mg 'x' \(data 1.0\) has no inputs \(a leaf\)"):
        gv.graph(x)


def test_backprop_before_backward_names_the_value():
    x = Val(1.0, name="x")
    y = x.exp()
    y.name = "y"
    with pytest.raises(ValueError, match=r"gv.backprop: Val 'y' \(op 'exp', data .*\) has no \.grad: run"):
        gv.backprop(y)
