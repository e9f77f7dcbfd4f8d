"""Big graphs fold into groups (scopes, then nested runs of ops) and open on click; no renderer trap.

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
from widget_models import deep_mlp, long_chain  # noqa: E402


def boxes(svg: str) -> int:
    return svg.count('class="node"')


def walk(plan, item):
    """Every node id under ``item`` (a node or group id), depth first."""
    group = plan.groups.get(item)
    if group is None:
        return [item]
    return [m for c in group.children for m in walk(plan, c)]


@pytest.mark.parametrize("build", [lambda: long_chain(2000), lambda: deep_mlp(250)], ids=["chain", "mlp"])
def test_every_node_sits_in_exactly_one_place_of_the_plan(build):
    tape, y = build()
    model = build_model(y, tape, grads=False)
    plan = fold_plan(model)
    seen = [m for item in plan.top for m in walk(plan, item)]
    assert sorted(seen) == sorted(model.nodes)  # each node once
    for g in plan.groups.values():
        assert sorted(g.members) == sorted(m for c in g.children for m in walk(plan, c))
        assert len(g.children) >= 2
    assert len({g.key for g in plan.groups.values()}) == len(plan.groups)  # keys name one group each


def test_a_2000_op_chain_draws_at_most_200_boxes_and_opens_group_by_group():
    tape, y = long_chain(2000)
    view = gv.graph(y, tape)
    assert len(view.full_model) > 5000 and view.collapsible
    svg = view.to_svg()
    assert boxes(svg) <= 200 and len(svg) <= 1_500_000
    model = view.model
    # constants and the watched input fold into the ops that read them: only groups and the target show
    assert all(n.kind == "group" or n.target for n in model.nodes.values())
    assert model.node_for(y).target and model.node_for(y).kind == "tensor"
    # open the first group, then the first group inside it, until ops show: every view stays small
    opened = []
    while True:
        group = min((n for n in view.model.nodes.values() if n.kind == "group"), key=lambda n: n.order)
        view.select(group.id)
        opened.append(group.scope)
        svg = view.to_svg()
        assert boxes(svg) <= 200 + 24 * len(opened)
        if any(n.kind == "op" for n in view.model.nodes.values()):
            break
        assert len(opened) < 5
    assert opened[0].startswith("ops 1–") and set(opened) == view.expanded
    assert 'class="cluster"' in svg  # the opened group's frame
    first_op = min((n for n in view.full_model.nodes.values() if n.kind == "op"), key=lambda n: n.order)
    assert first_op.id in view.model.nodes
    view.select(view.drawing.ids[f"c:{opened[-1]}"])  # click the frame: it folds again
    assert opened[-1] not in view.expanded and first_op.id not in view.model.nodes


def test_an_mlp_of_2000_nodes_folds_its_layers_into_runs_of_layers():
    tape, loss = deep_mlp(250)
    view = gv.graph(loss, tape)
    assert len(view.full_model) >= 2000
    svg = view.to_svg()
    assert boxes(svg) <= 200 and len(svg) <= 1_500_000
    labels = [n.label for n in view.model.nodes.values() if n.kind == "group"]
    assert labels[0].startswith("dense_0 … dense_") and labels[-1].endswith("… dense_249")
    view.expand(labels[0])
    inner = [n.label for n in view.model.nodes.values() if n.kind == "group" and n.label.startswith("dense_")]
    assert "dense_1" in inner  # one box per layer inside the run
    view.expand("dense_1")
    assert any(n.name == "dense_1/kernel" for n in view.model.nodes.values())


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
