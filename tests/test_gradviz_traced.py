"""gv.graph(an eg.Graph): a traced step drawn with forward and backward told apart, scopes foldable,
every node's name shown so that it can be fetched."""

from __future__ import annotations

import re

import pytest

import engine as eg
import gradviz as gv
from gradviz.render.theme import palette
from gradviz.widgets.traced_view import traced_graph


def _step_graph():
    eg.layers.reset_names()
    model = eg.layers.Sequential([eg.layers.Dense(4, activation="tanh"), eg.layers.Dense(2)])
    opt = eg.optimizers.SGD(0.1)

    def step(x, y):
        with eg.GradientTape() as tape:
            loss = eg.mean(eg.nn.sparse_softmax_cross_entropy(y, model(x)))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss, grads

    return eg.function(step).get_graph(eg.ones((3, 5)), eg.constant([0, 1, 1]))


def test_forward_and_backward_nodes_are_told_apart():
    graph = _step_graph()
    view = gv.graph(graph, theme="light")
    svg = view.to_svg()
    pal = palette("light")
    ids = view._drawing()[1]
    for node in graph.nodes:
        if node.kind != "op":
            continue
        block = re.search(rf'<g id="{ids[node.name]}" class="node">.*?</g>', svg, re.S).group(0)
        colour = pal.grad_neg if node.backward else pal.op_border
        assert colour.lower() in block.lower(), node.name
    assert "backward op (gradients/…)" in view.to_html()


def test_each_node_shows_its_name_and_how_to_fetch_it():
    graph = _step_graph()
    view = gv.graph(graph)
    svg = view.to_svg()
    info = view._info()
    ids = view._drawing()[1]
    for node in graph.nodes:
        if node.kind == "const":
            continue
        assert f"<title>{node.name}" in svg or node.name in svg, node.name  # the tooltip
        assert f"graph.run(&#x27;{node.name}&#x27;, feeds)" in info[ids[node.name]]
    view.select("gradients/sequential_1/dense_1/MatMul_grad/MatMul")
    assert "backward (made by tape.gradient)" in view.details


def test_scopes_fold_and_unfold():
    graph = _step_graph()
    view = gv.graph(graph)
    assert "gradients" in view.scopes and "sequential_1/dense_1" in view.scopes and not view.folded
    before = view.to_svg().count('class="node"')
    view.select(view._sid("scope:gradients"))  # a click on the scope's box folds it
    assert view.folded == {"gradients"}
    folded = view.to_svg()
    assert folded.count('class="node"') < before and "gradients/…" in folded
    view.select(view._sid("folded:gradients"))  # a click on the folded node opens it again
    assert not view.folded and view.to_svg().count('class="node"') == before
    with pytest.raises(KeyError, match="no scope"):
        view.fold("nope")


def test_big_graphs_start_folded_and_constants_are_optional():
    @eg.function
    def deep(x):
        for i in range(30):
            with eg.name_scope(f"block{i}"):
                x = eg.tanh(x * 1.5 + 0.1)
        return x

    graph = deep.get_graph(eg.ones(3))
    view = gv.graph(graph)
    assert view.folded == {f"block{i}" for i in range(30)}
    assert not gv.graph(graph, collapse=False).folded
    assert len(traced_graph(graph, constants=True).nodes) > len(view.nodes)
    assert all(n.kind != "const" for n in view.nodes)


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
    assert widget.svg.startswith("<svg") and widget.info
    widget.selected = view._sid("dense_1/kernel")
    assert view.selected == "dense_1/kernel"
    widget.selected = view._sid("scope:SGD")
    assert "SGD" in view.folded and "SGD/…" in widget.svg
    assert view.save(tmp_path / "g.svg").read_text().lstrip().startswith("<")
    assert "gradviz-traced" in view._repr_html_()
