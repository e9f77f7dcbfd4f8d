"""Graph pictures follow JupyterLab's theme by CSS (issue 14): with theme="auto" every colour a graph
picture uses (gv.graph, a traced graph, the stepper's highlights) has a rule in its <style> that turns
it into a CSS variable, dark under JupyterLab's dark theme; "light" / "dark" stay fixed."""

from __future__ import annotations

import re

import engine as eg
import gradviz as gv
from gradviz.render.theme import DARK, JP_VARS, LIGHT, graph_css

COLOUR = re.compile(r'\s(?:fill|stroke)="(#[0-9a-fA-F]{6})"')


def expression():
    x = eg.Variable([1.0, -2.0], name="x")
    c = eg.constant(3.0)
    with eg.GradientTape(persistent=True) as tape:
        tape.watch(c)
        y = eg.sum(x * x) * c - 1.0
    return tape, x, c, y


def themed_colours(svg: str) -> set[str]:
    return {m.lower() for m in re.findall(r'\[(?:fill|stroke)="(#[0-9a-f]{6})" i\]', svg)}


def assert_every_colour_themed(svg: str) -> None:
    root = svg[svg.index("<svg"):]  # (after graphviz's XML prolog and comments)
    assert root.startswith('<svg class="gv-themed"'), root[:80]
    used = {c.lower() for c in COLOUR.findall(svg)}
    assert used, "no colours found"
    missing = used - themed_colours(svg)
    assert not missing, f"colours that would stay light in a dark theme: {missing}"


def test_graph_auto_is_themed_by_css_and_fixed_themes_are_not():
    tape, x, c, y = expression()
    view = gv.graph(y, tape, names={"x": x, "c": c, "y": y})
    assert_every_colour_themed(view.to_svg())
    view.select(view.full_model.node_for(x).id)  # a highlight: its colour is themed too
    assert_every_colour_themed(view.to_svg())
    assert_every_colour_themed(view.widget.svg)
    for fixed in ("light", "dark"):
        assert "gv-themed" not in gv.graph(y, tape, theme=fixed).to_svg()
    assert DARK.text in gv.graph(y, tape, theme="dark").to_svg()


def test_stepper_frames_and_traced_graphs_are_themed():
    tape, x, c, y = expression()
    frames = gv.backprop(tape, y, [x, c]).frames()
    assert_every_colour_themed(frames.picture[frames.picture.index("<svg"):])
    css = themed_colours(frames.picture)
    for layer in frames.layers:
        for patch in layer["frames"].values() if layer["type"] == "patch" else ():
            for change in patch.values():
                colours = [v for v in change["shapes"].values() if str(v).startswith("#")]
                colours += [v for t in change["texts"].values() for v in t.values() if str(v).startswith("#")]
                assert {v.lower() for v in colours} <= css, colours
    f = eg.function(lambda v: eg.tanh(v) * 2.0)
    assert_every_colour_themed(gv.graph(f.get_graph(eg.ones(2))).to_svg())


def test_css_variables_dark_values_and_jupyterlab_variables():
    css = graph_css()
    for role, var in JP_VARS.items():
        assert f"var({var}, {getattr(LIGHT, role)})" in css
    assert '[data-jp-theme-light="false"] svg.gv-themed' in css
    assert f"--gv-variable-fill: {DARK.variable_fill}" in css and f"--gv-op-text: {DARK.op_text}" in css


def test_flow_graph_edges_are_themed_also_when_a_gradient_is_not_finite():
    x = eg.Variable([-1.0, 4.0], name="x")
    with eg.GradientTape(persistent=True) as tape:
        y = eg.sum(eg.sqrt(x)) * 2.0  # sqrt(-1): a NaN gradient, drawn as a red edge
    svg = gv.flow(y, tape).to_svg()
    assert LIGHT.grad_neg in svg
    assert_every_colour_themed(svg)
