"""Names that look like markup or math text are drawn as written, in every picture and panel.

matplotlib reads "$...$" as math text: a Variable named ``w$1$`` came out as a math "1", and one
named ``x$^{$`` crashed ``gv.flow`` (issue 13). `gradviz.render.plot.plain_texts` turns math text
off at every render site; HTML panels escape names (``<script>`` stays text).
"""

from __future__ import annotations

import html

import numpy as np
import pytest

import engine as eg
import gradviz as gv
from gradviz.render.plot import svg_text

HOSTILE = ["w$1$", "x$^{$", "a_b^c", "back\\slash", "{brace}", "<script>alert(1)</script>"]


def drawn(name: str) -> str:
    """How a name appears in an SVG written by matplotlib (XML-escaped text)."""
    return html.escape(name, quote=False)


def assert_all_drawn(svg: str, names: list[str]) -> None:
    for name in names:
        assert drawn(name) in svg, f"{name!r} is not drawn as written"
    assert "<script>" not in svg


def hostile_recorder() -> gv.Recorder:
    rng = np.random.default_rng(0)
    variables = [eg.Variable(rng.normal(size=3).astype(np.float32), name=name) for name in HOSTILE]
    rec = gv.Recorder()
    for step in range(3):
        with eg.GradientTape() as tape:
            loss = sum(eg.sum(v * v) for v in variables)
        grads = tape.gradient(loss, variables)
        rec.record(step, loss=loss, grads_and_vars=list(zip(grads, variables)))
        for g, v in zip(grads, variables):
            v.assign_sub(0.1 * g)
    return rec


@pytest.mark.parametrize("by", ["variable", "layer"])
def test_flow_draws_hostile_names_as_written(by):
    view = gv.flow(hostile_recorder(), by=by)
    assert_all_drawn(view.to_html(), view.names)
    state = view.widget.get_state()
    frames = [v for layer in state["layers"] for v in layer["frames"].values() if isinstance(v, str)]
    picture = state["picture"] + "".join(frames)
    assert_all_drawn(picture, view.names)
    assert view.png()[:4] == b"\x89PNG" and view.to_png()[:4] == b"\x89PNG"


def test_clipping_draws_hostile_names_as_written():
    grads = [eg.constant(np.full(4, float(k + 1), np.float32)) for k in range(len(HOSTILE))]
    view = gv.clipping(grads, names=HOSTILE, threshold=2.0)
    assert_all_drawn(view.to_html(), HOSTILE)
    assert view.to_png()[:4] == b"\x89PNG"


def test_descent_draws_hostile_optimizer_labels_as_written():
    view = gv.descent(lambda v: v[0] ** 2 + 4.0 * v[1] ** 2, [1.0, 1.0],
                      optimizers={"w$1$": "SGD", "x$^{$": "Adam"}, steps=5)
    assert_all_drawn(view.to_html(), ["w$1$", "x$^{$"])


def test_recorder_plot_draws_hostile_scalar_names_as_written():
    rec = gv.Recorder()
    for step in range(3):
        rec.record(step, loss=1.0 / (step + 1), **{"x$^{$": float(step)})
    fig = rec.plot()
    assert_all_drawn(svg_text(fig), ["x$^{$"])


def test_graph_png_and_svg_with_hostile_names():
    x = eg.Variable([1.0, 2.0], name="x$^{$")
    with eg.GradientTape(persistent=True) as tape:
        y = eg.sum(x * x)
    view = gv.graph(y, tape, names={"x$^{$": x, "<script>y</script>": y})
    svg = view.to_svg()
    assert "x$^{$" in svg and "<script>" not in svg
    assert view.to_png()[:4] == b"\x89PNG"
