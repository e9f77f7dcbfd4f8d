"""Big graphs fold by meaning (scopes, then repeated structure "× n", then ranges of ops) and open on
click; no renderer trap.

Box counts and sizes are checked here; timings are measured in bench/widgets_bench.py ("big graphs").
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import engine as eg
import gradviz as gv
from gradviz.model.fold import fold_plan
from gradviz.model.graph_model import build_model
from gradviz.render import graphviz as render
from gradviz.render.dot import MAX_DRAWN_NODES, to_dot

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from widget_models import chain3, deep_mlp, long_chain, per_sample_mlp  # noqa: E402


def boxes(svg: str) -> int:
    return svg.count('class="node"')


def walk(plan, item):
    """Every node id under ``item`` (a node or group id), depth first."""
    group = plan.groups.get(item)
    if group is None:
        return [item]
    return [m for c in group.children for m in walk(plan, c)]


MODELS = {
    "chain": lambda: long_chain(2000),
    "mlp": lambda: deep_mlp(250),
    "per_sample_mlp": per_sample_mlp,
    "chain3": chain3,
}


@pytest.mark.parametrize("name", list(MODELS))
def test_every_node_sits_in_exactly_one_place_of_the_plan(name):
    tape, y = MODELS[name]()
    model = build_model(y, tape, grads=False)
    plan = fold_plan(model)
    seen = [m for item in plan.top for m in walk(plan, item)]
    assert sorted(seen) == sorted(model.nodes)  # each node once
    for g in plan.groups.values():
        assert sorted(g.members) == sorted(m for c in g.children for m in walk(plan, c))
        assert len(g.children) >= 2
        assert all(plan.groups[c].parent == g.id for c in g.children if c in plan.groups)
    assert len({g.key for g in plan.groups.values()}) == len(plan.groups)  # keys name one group each
    assert len(plan.top) <= 40


def ops_of(plan, model, items):
    return [model.nodes[i].record.op for i in items if i in model.nodes and model.nodes[i].kind == "op"]


def test_a_chain_of_666_multiply_add_tanh_is_one_series_that_opens_on_its_first_copy():
    tape, y = chain3(666)
    view = gv.graph(y, tape)
    plan = view.full_model.fold_plan(view.fold_limit)
    shown = view.model
    assert [n.label for n in shown.nodes.values() if n.kind == "group"] == ["multiply → add → tanh × 666"]
    assert len(shown) == 2 and shown.node_for(y).target  # the series and the target
    series = plan.by_key("multiply → add → tanh × 666")
    assert (series.kind, series.count) == ("series", 666)
    assert "in a chain" in series.detail
    # its members are the 666 copies, op after op
    model = view.full_model
    ops = sorted((model.nodes[m] for m in series.members if model.nodes[m].kind == "op"),
                 key=lambda n: n.order)
    assert [n.record.op for n in ops] == ["multiply", "add", "tanh"] * 666
    # opened: the first copy's three ops, chained, and the 665 others behind one box
    view.expand(series.key)
    opened = view.model
    assert ops_of(plan, model, opened.clusters[series.key]) == ["multiply", "add", "tanh"]
    rest = [opened.nodes[i] for i in opened.clusters[series.key] if opened.nodes[i].kind == "group"]
    assert [g.label for g in rest] == ["copies 2–666"] and rest[0].group_kind == "copies"
    first_tanh = next(n for n in opened.nodes.values() if n.kind == "op" and n.record.op == "tanh")
    out = next(e.dst for e in opened.edges if e.src == first_tanh.id)
    assert any(e.src == out and e.dst == rest[0].id for e in opened.edges)  # copy 1 feeds copy 2
    assert boxes(view.to_svg()) <= 40
    assert shown.nodes[series.id].grad_norm is not None and shown.nodes[series.id].grad_norm > 0


def test_a_per_sample_mlp_folds_into_its_layers_each_a_stack_of_72_samples():
    tape, loss = per_sample_mlp(72)
    view = gv.graph(loss, tape)
    model, plan = view.full_model, view.full_model.fold_plan(view.fold_limit)
    assert 1900 <= len(model) <= 2100
    svg = view.to_svg()
    assert boxes(svg) <= 40 and len(svg) < 200_000
    top = [plan.groups[g] for g in plan.top if g in plan.groups]
    assert [g.label for g in top if g.kind == "scope"] == ["dense_1", "dense_2", "dense_3"]
    for g, ops in zip(top[:3], (["matmul", "add", "relu"], ["matmul", "add", "relu"], ["matmul", "add"])):
        stacks = [plan.groups[c] for c in g.children if c in plan.groups]
        assert len(stacks) == 1 and (stacks[0].kind, stacks[0].count) == ("stack", 72), g.label
        assert stacks[0].label == " → ".join(ops) + " × 72"
        assert ops_of(plan, model, stacks[0].children) == ops  # the first sample, drawn once
        names = {model.nodes[c].name for c in g.children if c in model.nodes and model.nodes[c].variable}
        assert names == {f"{g.label}/kernel", f"{g.label}/bias"}  # each Variable once, in its layer
        every_op = [model.nodes[m] for m in g.members if model.nodes[m].kind == "op"]
        assert sum(1 for n in every_op if n.record.op == "matmul") == 72
    hinge = next(g for g in top if g.kind == "stack")
    assert (hinge.label, hinge.count) == ("multiply → subtract → relu × 72", 72)
    summed = next(g for g in top if g.kind == "series")
    assert summed.label == "add × 71"  # Python's sum(losses): a chain of adds
    # the default view shows the layers, the per-sample loss and the sum, each with what is inside
    shown = {n.label: n for n in view.model.nodes.values() if n.kind == "group"}
    assert {"dense_1", "dense_2", "dense_3", "multiply → subtract → relu × 72", "add × 71"} <= set(shown)
    assert "side by side" in shown["multiply → subtract → relu × 72"].detail
    assert "dense_1" in svg and "‖∇kernel‖" in svg and "× 72" in svg


def test_a_deep_mlp_of_identical_layers_is_one_series_of_scopes():
    tape, loss = deep_mlp(250)
    view = gv.graph(loss, tape)
    plan = view.full_model.fold_plan(view.fold_limit)
    series = [plan.groups[g] for g in plan.top if g in plan.groups]
    assert [(g.label, g.kind, g.count) for g in series] == [("dense_0 … dense_249 × 250", "series", 250)]
    view.expand(series[0].key)
    inner = [n for n in view.model.nodes.values() if n.kind == "group"]
    assert [n.label for n in inner] == ["dense_0", "copies 2–250"]
    view.expand("dense_0")
    assert any(n.name == "dense_0/kernel" for n in view.model.nodes.values())


def test_every_group_opens_down_to_its_ops_and_every_level_stays_small():
    tape, loss = per_sample_mlp(72)
    view = gv.graph(loss, tape)
    plan = view.full_model.fold_plan(view.fold_limit)
    for g in plan.groups.values():
        assert len(g.children) <= 40 + 8, (g.label, len(g.children))  # one copy of a piece + its constants


def test_collapse_true_folds_an_unscoped_graph_of_any_size():
    tape, y = long_chain(40)
    assert not gv.graph(y, tape).collapsible  # small: drawn as it is
    view = gv.graph(y, tape, collapse=True)
    assert view.collapsible
    assert len(view.model) < len(view.full_model) / 5
    assert boxes(view.to_svg()) == len(view.model)


def test_a_20000_node_graph_folds_and_unfolded_it_gives_a_clear_message():
    tape, y = long_chain(8000)  # 20,001 nodes
    view = gv.graph(y, tape)
    assert len(view.full_model) > 20_000
    svg = view.to_svg()
    assert 0 < boxes(svg) <= 200
    flat = gv.graph(y, tape, collapse=False)
    with pytest.raises(ValueError, match=r"20,001 boxes .* collapse"):
        flat.to_svg()
    assert len(flat.full_model) > MAX_DRAWN_NODES


def test_a_renderer_trap_becomes_a_clear_message(monkeypatch):
    class Trap(Exception):  # what wasmtime raises when Graphviz exhausts its call stack
        pass

    class Exhausted:
        def render(self, source, format, engine):
            raise Trap("wasm trap: call stack exhausted")

    monkeypatch.setattr(render, "renderer_name", lambda: "wasm")
    monkeypatch.setattr(render, "_WASM", Exhausted())
    render.clear_cache()
    with pytest.raises(ValueError, match="ran out of room .* collapse"):
        render.render_svg("digraph { a -> b -> c }")
    assert render._WASM is None  # the next render starts a fresh instance


def test_scoped_graphs_keep_one_group_per_scope_when_few():
    rng = np.random.default_rng(0)
    ws = [eg.Variable(rng.normal(size=2).astype(np.float32), name=f"layer_{k}/w") for k in range(30)]
    x = eg.constant(np.ones(2, np.float32))
    with eg.GradientTape(persistent=True) as tape:
        h = x
        for w in ws:
            h = eg.tanh(h * w)
        loss = eg.sum(h)
    model = build_model(loss, tape)
    folded = model.collapse()
    assert sorted(n.label for n in folded.nodes.values() if n.kind == "group") == sorted(
        f"layer_{k}" for k in range(30)
    )
    assert len(to_dot(folded, theme="light").source) < len(to_dot(model, theme="light").source) / 3
