"""gv.graph(an eg.Graph): a traced step drawn through the same model, fold and DOT pipeline as a tape's
graph, forward and backward told apart, scopes nested and foldable, repeats folded "× n", every node's
name shown so that it can be fetched."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

import engine as eg
import gradviz as gv
from gradviz.model.traced_model import traced_model
from gradviz.render.theme import palette
from gradviz.widgets.graph_states import fold_states
from gradviz.widgets.graph_view import GraphView
from gradviz.widgets.traced_graph_view import traced_graph

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from widget_models import chain3, traced_chain3, traced_per_sample_step  # noqa: E402


def _step_graph(optimizer=None):
    eg.layers.reset_names()
    model = eg.layers.Sequential([eg.layers.Dense(4, activation="tanh"), eg.layers.Dense(2)])
    opt = optimizer or eg.optimizers.SGD(0.1)

    def step(x, y):
        with eg.GradientTape() as tape:
            loss = eg.mean(eg.nn.sparse_softmax_cross_entropy(y, model(x)))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss, grads

    return eg.function(step).get_graph(eg.ones((3, 5)), eg.constant([0, 1, 1]))


def _sid(view, name):
    return view.drawing.ids[view.by_name[name]]


def test_the_traced_view_is_a_graph_view_over_the_common_pipeline():
    view = gv.graph(_step_graph())
    assert isinstance(view, GraphView)  # one drawing path: fold plan, collapse, to_dot
    assert view.full_model.nodes == traced_model(view.graph).nodes


def test_forward_and_backward_nodes_are_told_apart():
    graph = _step_graph()
    view = gv.graph(graph, theme="light")
    svg = view.to_svg()
    pal = palette("light")
    for node in graph.nodes:
        if node.kind != "op":
            continue
        block = re.search(rf'<g id="{_sid(view, node.name)}" class="node">.*?</g>', svg, re.S).group(0)
        colour = pal.grad_neg if node.backward else pal.op_border
        assert colour.lower() in block.lower(), node.name
    assert "backward op (gradients/…)" in view.to_html()


def test_each_node_shows_its_name_and_how_to_fetch_it():
    graph = _step_graph()
    view = gv.graph(graph)
    svg = view.to_svg()
    info = view._info()
    for node in graph.nodes:
        if node.kind == "const":
            continue
        assert node.name in svg, node.name  # the tooltip
        assert f"graph.run(&#x27;{node.name}&#x27;, feeds)" in info[_sid(view, node.name)]
    view.select("gradients/sequential_1/dense_1/MatMul_grad/MatMul")
    assert "backward (made by tape.gradient)" in view.details


def test_scopes_nest_and_each_variable_is_drawn_once_inside_its_layer():
    view = gv.graph(_step_graph(eg.optimizers.Adam(0.01)))
    model = view.model
    assert model.cluster_parent["sequential_1/dense_1"] == "sequential_1"
    assert model.cluster_label["sequential_1/dense_1"] == "dense_1"
    assert model.cluster_parent["gradients/sequential_1/dense_1"] == "gradients/sequential_1"
    reads = [n for n in model.nodes.values() if n.variable]
    assert sorted(n.label for n in reads) == ["dense_1/bias", "dense_1/kernel", "dense_2/bias",
                                              "dense_2/kernel"]
    for n in reads:  # in the layer that reads it, not in a second "dense_1" box of its own
        assert n.id in model.clusters[f"sequential_1/{n.label.split('/')[0]}"]
    assert view.to_svg().count(">dense_1<") == 2  # sequential_1/dense_1 and gradients/…/dense_1


def test_reads_of_one_value_are_one_box_and_a_read_after_an_update_another():
    w = eg.Variable(2.0, name="w")

    @eg.function
    def f(x):
        a = w * x
        b = w + x  # the same value of w: the same box
        w.assign_add(1.0)
        return a + b + w  # read after the update: a new value, a box of its own

    view = gv.graph(f.get_graph(eg.constant(1.0)))
    boxes = [n for n in view.full_model.nodes.values() if n.variable]
    assert [n.label for n in boxes] == ["w", "w/read_1"] and boxes[0].detail == "read 2 times"
    kinds = {(view.full_model.nodes[e.src].label, e.kind) for e in view.full_model.edges
             if e.dst == boxes[1].id}
    assert ("AssignAdd", "control") in kinds  # the read after the write, dashed
    assert "drawn once" in view.describe(boxes[0], view.full_model)


def test_the_step_reads_in_bands_forward_gradients_updates():
    view = gv.graph(_step_graph(), theme="light")
    order = [e for e in view.full_model.edges if e.kind == "order"]
    nodes = view.full_model.nodes
    assert order and all(nodes[e.src].role != nodes[e.dst].role for e in order)
    svg = view.to_svg()

    def x_of(name):
        return float(re.search(rf'<g id="{_sid(view, name)}" class="node">.*?(?:cx|points)="([-\d.]+)',
                               svg, re.S).group(1))

    forward = x_of("sequential_1/dense_1/MatMul")
    backward = x_of("gradients/sequential_1/dense_1/MatMul_grad/MatMul")
    update = x_of("SGD/update_dense_1/kernel/Assign")
    assert forward < backward < update


def test_clicks_fold_and_open_scopes_also_without_a_kernel():
    view = gv.graph(_step_graph())
    assert "gradients" in view.scopes and "sequential_1/dense_1" in view.scopes
    assert view.expanded == set(view.opened) and "gradients" in view.opened  # a small step: all open
    before = view.to_svg().count('class="node"')
    frame = view.drawing.ids["c:gradients"]
    view.select(frame)  # a click on the scope's frame folds it
    assert "gradients" not in view.expanded
    folded = view.to_svg()
    assert folded.count('class="node"') < before and ">gradients<" in folded
    gid = view.model.group_of[view.by_name["gradients/Mean_grad/Reshape"]]
    view.select(view.drawing.ids[gid])  # a click on the folded box opens it again
    assert view.expanded == set(view.opened) and view.to_svg().count('class="node"') == before
    states = fold_states(view)  # the same, drawn ahead for a page without a kernel
    closed = states["opens"][frame]
    assert states["opens"][f"{view.prefix}_{gid}"] == "top"
    assert ">gradients<" in states["views"][closed] and "Mean_grad" not in states["views"][closed]
    view.widget.state = closed  # the front end switched pictures: Python follows
    assert "gradients" not in view.expanded and "sequential_1" in view.expanded
    with pytest.raises(KeyError, match="no node"):
        view.select("nope")


def test_big_graphs_start_folded_and_constants_are_optional():
    @eg.function
    def deep(x):
        for i in range(30):
            with eg.name_scope(f"block{i}"):
                x = eg.tanh(x * 1.5 + 0.1)
        return x

    graph = deep.get_graph(eg.ones(3))
    view = gv.graph(graph)
    assert not view.expanded
    blocks = {f"block{i}" for i in range(30)}
    assert {n.label for n in view.model.nodes.values() if n.kind == "group"} == blocks
    assert gv.graph(graph, collapse=False).expanded >= {f"block{i}" for i in range(30)}
    assert len(traced_graph(graph, constants=True).full_model) > len(view.full_model)
    assert all(n.record.kind != "const" for n in view.full_model.nodes.values())


def test_a_long_traced_chain_folds_as_a_series_like_the_eager_one():
    view = gv.graph(traced_chain3(666))
    groups = [n for n in view.model.nodes.values() if n.kind == "group"]
    assert [(g.label, g.group_kind) for g in groups] == [("Mul → Add → Tanh × 666", "series")]
    tape, h = chain3(666)
    eager = gv.graph(h, tape, collapse=True)
    (same,) = [n for n in eager.model.nodes.values() if n.kind == "group"]
    assert (same.group_kind, same.label.rsplit(" × ", 1)[1]) == ("series", "666")
    view.expand(groups[0].scope)  # opened: its first copy and the other 665 behind one box
    opened = view.model
    assert [n.label for n in opened.nodes.values() if n.kind == "op"] == ["Mul", "Add", "Tanh"]
    assert [n.label for n in opened.nodes.values() if n.kind == "group"] == ["copies 2–666"]


def test_a_per_sample_training_step_folds_by_layer_and_repeat():
    view = gv.graph(traced_per_sample_step(24))
    shown = view.model.nodes.values()
    assert len(view.model) <= 40
    labels = {n.label: n for n in shown if n.kind == "group"}
    assert {"dense_1", "dense_2", "dense_3", "gradients", "SGD"} <= set(labels)
    plan = view.full_model.fold_plan(view.fold_limit)
    series = [plan.groups[n.id] for n in shown if n.group_kind == "series" and n.label.endswith("× 23")]
    first_copy = {plan.groups[c].label for s in series for c in s.children if c in plan.groups}
    assert {"dense_1_1", "dense_2_1", "dense_3_1"} <= first_copy  # samples 2–24: the layers' later calls
    assert labels["dense_1"].variable  # the layer's box holds its Variables, drawn once
    inner = plan.by_key("gradients")
    assert any(plan.groups[c].kind == "series" and plan.groups[c].count == 24 for c in inner.children
               if c in plan.groups)  # the backward pass of the samples, "× 24" inside "gradients"


def test_user_text_is_escaped():
    @eg.function
    def f(x):
        with eg.name_scope('<script>"evil"</script>'):
            return x * 2

    view = gv.graph(f.get_graph(eg.ones(2)))
    html = view.to_html() + "".join(view._info().values())
    assert "<script>" not in html


def test_live_widget_and_static_forms(tmp_path):
    view = gv.graph(_step_graph())
    widget = view.widget
    assert widget.info and (widget.svg.startswith("<svg") or widget.state in widget.views)
    widget.selected = _sid(view, "dense_1/kernel")
    assert view.selected == view.by_name["dense_1/kernel"]
    widget.selected = view.drawing.ids["c:SGD"]
    assert "SGD" not in view.expanded and ">SGD<" in view.to_svg()
    assert view.save(tmp_path / "g.svg").read_text().lstrip().startswith("<")
    assert "gradviz-traced" in view._repr_html_()


def test_a_box_past_the_pictures_drawn_ahead_says_it_opens_with_a_kernel():
    from gradviz.render.graph_info import OPENS, OPENS_WITH_KERNEL

    view = gv.graph(traced_per_sample_step(12))
    states = fold_states(view, budget=1)  # nothing but the first picture fits: every box says so
    boxes = [sid for sid in states["info"] if sid.removeprefix(f"{view.prefix}_") in
             view.full_model.fold_plan(view.fold_limit).groups]
    assert boxes and all(OPENS_WITH_KERNEL in states["info"][s] and OPENS not in states["info"][s]
                         for s in boxes if s not in states["opens"])
    states = fold_states(view)
    opened_ahead = [s for s in boxes if s in states["opens"]]
    assert opened_ahead and all(OPENS in states["info"][s] for s in opened_ahead)
