"""gradviz's graph model, backward trace and None-gradient reasons, against small known graphs."""

from __future__ import annotations

import numpy as np
import pytest

import engine as eg
import gradviz as gv
from gradviz.model import tapeinfo
from gradviz.model.explain import explain_none
from gradviz.model.graph_model import build_model
from gradviz.render import fmt


def small():
    x = eg.constant(2.0)
    w = eg.Variable([1.0, -2.0, 3.0], name="w")
    with eg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        a = x * x
        b = a + w
        loss = eg.sum(b * b)
    return tape, x, w, a, b, loss


def test_nodes_edges_labels_and_gradients():
    tape, x, w, a, b, loss = small()
    m = build_model(loss, tape, names={"x": x, "w": w, "a": a, "loss": loss})
    ops = [n.op for n in m.nodes.values() if n.kind == "op"]
    assert ops == ["multiply", "add", "multiply", "sum"]  # read_variable is folded into w's node
    tensors = {n.label for n in m.nodes.values() if n.kind == "tensor"}
    assert {"x", "w", "a", "loss"} <= tensors
    assert len(m.edges) == 2 + 1 + 2 + 1 + 2 + 1 + 1 + 1  # inputs and outputs of the four ops
    assert m.node_for(w).variable and m.node_for(w).leaf
    assert m.node_for(x).watched and not m.node_for(x).variable
    assert m.node_for(loss).target and m.targets == [m.node_for(loss).id]
    gx, gw = tape.gradient(loss, [x, w])
    np.testing.assert_allclose(m.node_for(x).grad, gx.numpy())
    np.testing.assert_allclose(m.node_for(w).grad, gw.numpy())
    np.testing.assert_allclose(m.node_for(loss).grad, 1.0)
    np.testing.assert_allclose(m.node_for(b).grad, 2 * b.numpy())
    assert (
        m.node_for(w).shape == (3,) and m.node_for(w).dtype == "float32" and m.node_for(w).device == "cpu:0"
    )


def test_variable_reads_map_to_the_variable_node_with_the_value_read():
    w = eg.Variable(3.0, name="w")
    with eg.GradientTape(persistent=True) as tape:
        y = w * w + w  # three reads of w
    w.assign(100.0)  # later updates do not change what the graph shows
    m = build_model(y, tape)
    assert sum(1 for n in m.nodes.values() if n.variable) == 1
    assert float(m.node_for(w).value) == 3.0
    assert float(m.node_for(w).grad) == pytest.approx(7.0)  # 2w + 1


def test_names_by_identity_skip_private_and_reach_into_containers():
    x = eg.constant(1.0)
    with eg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * 3.0
        z = y + 1.0
    m = build_model(z, tape, names={"_": y, "_5": z, "x": x, "pair": [y, z]})
    assert m.node_for(x).label == "x"
    assert m.node_for(y).label == "pair[0]"
    assert m.node_for(z).label == "pair[1]"


def test_only_ancestors_of_the_target_are_kept():
    x = eg.constant(1.0)
    with eg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * 2.0
        unrelated = eg.exp(x)
    m = build_model(y, tape)
    assert [n.op for n in m.nodes.values() if n.kind == "op"] == ["multiply"]
    assert unrelated.id not in {n.uid for n in m.nodes.values()}


def test_unwatched_constant_has_no_gradient_and_is_a_dashed_leaf():
    x, c = eg.constant(2.0), eg.constant(5.0)
    with eg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * c
    m = build_model(y, tape, names={"x": x, "c": c})
    assert m.node_for(c).leaf and not m.node_for(c).watched
    assert m.node_for(c).grad is None
    assert float(m.node_for(x).grad) == 5.0


def test_used_non_persistent_tape_gives_a_clear_error():
    x = eg.constant(2.0)
    with eg.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)
    with pytest.raises(ValueError, match="persistent=True"):
        build_model(y, tape)


def test_target_not_on_the_tape_is_a_clear_error():
    x = eg.constant(2.0)
    with eg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
    z = y + 1.0  # after the block
    with pytest.raises(ValueError, match="not computed on this tape"):
        build_model(z, tape)


def test_gradients_are_computed_without_recording_on_active_tapes():
    x = eg.constant(2.0)
    with eg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x * x
        before = len(tape.records)
        build_model(y, tape)
        assert len(tape.records) == before
    assert float(tape.gradient(y, x)) == 12.0


def test_nested_tapes_label_which_tape_recorded_each_op():
    x = eg.constant(3.0)
    with eg.GradientTape() as outer:
        outer.watch(x)
        with eg.GradientTape() as inner:
            inner.watch(x)
            y = x * x
        dy = inner.gradient(y, x)  # recorded by outer only
    m = build_model(dy, [outer, inner], names={"outer": outer, "inner": inner, "x": x})
    first = next(
        n
        for n in m.nodes.values()
        if n.kind == "op"
        and n.op == "multiply"
        and n.order == min(k.order for k in m.nodes.values() if k.kind == "op")
    )
    assert set(first.tapes) == {"outer"}  # inner freed its records after gradient()
    assert float(m.node_for(dy).value) == 6.0


def layered(layers: int, scoped: bool = True):
    rng = np.random.default_rng(0)
    x = eg.constant(rng.normal(size=3).astype(np.float32))
    ws = [
        eg.Variable(rng.normal(size=3).astype(np.float32), name=f"layer_{k}/w" if scoped else f"w{k}")
        for k in range(layers)
    ]
    with eg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        h = x
        for w in ws:
            h = eg.tanh(h * w)
        loss = eg.sum(h)
    return tape, loss, ws


def test_large_graphs_collapse_by_scope_and_expand():
    tape, loss, ws = layered(30)
    m = build_model(loss, tape)
    assert len(m) > 150
    assert m.node_for(ws[3]).scope == "layer_3"
    c = m.collapse()
    groups = [n for n in c.nodes.values() if n.kind == "group"]
    assert len(groups) == 30 and len(c) < 40
    assert c.node_for(loss).kind == "tensor"  # the target stays visible
    assert c.node_for(ws[3]).kind == "group" and c.node_for(ws[3]).label == "layer_3"
    e = m.collapse(expanded={"layer_3"})
    assert e.node_for(ws[3]).kind == "tensor"
    assert "layer_3" in e.clusters
    assert all(src in e.nodes and dst in e.nodes for src, dst in ((x.src, x.dst) for x in e.edges))


def test_unscoped_large_graphs_collapse_into_series_then_chunks():
    tape, loss, _ = layered(40, scoped=False)
    m = build_model(loss, tape)
    c = m.collapse()
    assert len(c) < len(m) / 3
    assert [n.label for n in c.nodes.values() if n.kind == "group"] == ["multiply → tanh × 40"]
    ops = [eg.tanh, eg.sin, eg.cos, eg.exp, eg.sigmoid, eg.square, eg.abs, eg.negative]
    rng = np.random.default_rng(0)
    x = eg.constant(0.3)
    with eg.GradientTape(persistent=True) as tape:  # no structure to find: ranges of ops
        tape.watch(x)
        h = x
        for k in rng.integers(0, len(ops), 300):
            h = ops[k](h) * 0.5
    m = build_model(h, tape)
    c = m.collapse()
    assert len(c) <= 41
    assert any(n.kind == "group" and n.label.startswith("ops ") for n in c.nodes.values())


@pytest.mark.parametrize("case", ["chain", "broadcast", "matmul", "reads"])
def test_the_engines_steps_sum_to_tape_gradient(case):
    """What gradviz shows is summed from eg.backward_steps: it matches tape.gradient."""
    rng = np.random.default_rng(1)
    a = eg.constant(rng.normal(size=(2, 3)).astype(np.float32))
    b = eg.constant(rng.normal(size=(3,)).astype(np.float32))
    v = eg.Variable(rng.normal(size=(3, 2)).astype(np.float32), name="v")
    with eg.GradientTape(persistent=True) as tape:
        tape.watch([a, b])
        if case == "chain":
            y = eg.sum(eg.tanh(a * a) * 2.0 + a)
        elif case == "broadcast":
            y = eg.sum(eg.exp(a + b) * b)
        elif case == "matmul":
            y = eg.mean(eg.relu(a @ v))
        else:
            y = eg.sum(v * v) + eg.sum(v @ eg.ones((2,)))
    sources = [a, b, v]
    steps, grads = tapeinfo.walk(tape.records, [y], sources)
    assert all(isinstance(st, eg.BackwardStep) for st in steps)
    expected = tape.gradient(y, sources)
    for s, e in zip(sources, expected):
        got = grads.get(s.id)
        if e is None:
            assert got is None
        else:
            np.testing.assert_allclose(got.numpy(), e.numpy(), rtol=1e-5, atol=1e-6)


def test_the_stepper_shows_local_derivatives_and_accumulation():
    x = eg.constant(3.0)
    with eg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x + x
    bp = gv.backprop(tape, y, [x])
    add_step, mul_step = bp.steps
    assert add_step.record.op == "add" and float(add_step.upstream[0]) == 1.0
    adds, muls = bp._arrivals
    assert [float(c.value) for c in adds] == [1.0, 1.0]
    assert not adds[-1].complete  # x still waits for the multiply's contributions
    first, second = muls
    assert float(first.local) == 3.0 and float(first.value) == 3.0
    assert float(first.before) == 1.0 and float(first.after) == 4.0
    assert float(second.after) == 7.0 and second.complete


# ---- why is a gradient None? --------------------------------------------------------------------------


def test_explain_none_not_watched_and_connected():
    x, c = eg.constant(3.0), eg.constant(1.0)
    with eg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * c
    assert explain_none(tape, y, x) is None
    assert explain_none(tape, y, c).startswith("not watched")
    assert tape.gradient(y, c) is None


def test_explain_none_integer_dtype():
    i = eg.constant(3)
    x = eg.constant(1.0)
    with eg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * 2.0
    assert explain_none(tape, y, i).startswith("integer dtype")


def test_explain_none_variables_not_read_or_not_trainable():
    frozen = eg.Variable(2.0, trainable=False)
    unused = eg.Variable(1.0)
    w = eg.Variable(1.0)
    with eg.GradientTape(persistent=True) as tape:
        y = w * frozen
    assert explain_none(tape, y, w) is None
    assert "not trainable" in explain_none(tape, y, frozen)
    assert explain_none(tape, y, unused).startswith("not watched")
    assert tape.gradient(y, unused) is None and tape.gradient(y, frozen) is None


def test_explain_none_tape_already_used():
    x = eg.constant(2.0)
    with eg.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)
    assert explain_none(tape, y, x).startswith("tape already used")


def test_explain_none_wrong_order_of_nested_tapes_is_recording_stopped():
    x = eg.constant(2.0)
    with eg.GradientTape() as tape1:
        tape1.watch(x)
        with eg.GradientTape() as tape2:
            tape2.watch(x)
            y = eg.log(x * x)
        dy_dx = tape1.gradient(y, x)  # the wrong tape: tape1 stops recording here
    assert explain_none(tape2, dy_dx, x).startswith("recording stopped")
    assert tape2.gradient(dy_dx, x) is None


def test_explain_none_recorded_by_another_tape_and_not_connected():
    x = eg.constant(2.0)
    with eg.GradientTape(persistent=True) as outer:
        outer.watch(x)
        other = eg.constant(1.0) * 2.0  # never touches x
        with eg.GradientTape(persistent=True) as inner:
            inner.watch(x)
            y = x * x
        z = y * 3.0  # only the outer tape records this
    assert explain_none(inner, z, x, others=[outer]).startswith("recorded by another tape")
    assert explain_none(outer, other, x).startswith("not connected")
    assert inner.gradient(z, x) is None and outer.gradient(other, x) is None


def test_fmt_never_hides_nan_and_inf():
    assert fmt.short(np.float32(np.nan)) == "nan"
    assert fmt.short(np.array([1.0, np.inf, 2.0, 3.0, 4.0])).endswith("inf!")
    assert fmt.short(np.array([0.5, 1.0])) == "[0.5, 1.0]"
