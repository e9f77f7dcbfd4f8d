"""Every label fits its node in the PNG: the text matplotlib draws (with the font the box was measured
with, `gradviz.render.text_width`) stays inside the node's shape. The page's side is in
tests/browser/test_graph_view.py (test_every_label_sits_inside_its_node)."""

from __future__ import annotations

import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

import engine as eg
import gradviz as gv
from gradviz.render import raster

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from widget_models import per_sample_mlp  # noqa: E402

NS = "{http://www.w3.org/2000/svg}"


def lesson_like():
    rng = np.random.default_rng(0)
    k = eg.Variable(rng.uniform(-0.55, 0.56, size=(2, 16)).astype(np.float32), name="dense_1/kernel")
    x = eg.constant(rng.normal(size=(3, 2)).astype(np.float32))
    with eg.GradientTape(persistent=True) as tape:
        y = eg.sum(eg.tanh(x @ k) * 0.5)
    return gv.graph(y, tape, names={"x": x, "y": y}, show=("value", "grad", "shape", "dtype", "device"))


def folded_mlp():
    tape, loss = per_sample_mlp(24)
    return gv.graph(loss, tape)


def drawn_texts_and_shapes(svg: str):
    """What svg_to_png draws: each node's shape box and the window extents of its texts, in pixels."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    root = ET.fromstring(svg[svg.find("<svg"):])
    width, height = raster._length(root.get("width")), raster._length(root.get("height"))
    vb = [float(v) for v in re.split(r"[ ,]+", root.get("viewBox").strip())]
    out = []
    for g in root.iter(f"{NS}g"):
        if g.get("class") != "node":
            continue
        fig = Figure(figsize=(width / 72, height / 72), dpi=144)
        canvas = FigureCanvasAgg(fig)
        ax = fig.add_axes((0, 0, 1, 1))
        ax.set_xlim(vb[0], vb[0] + vb[2])
        ax.set_ylim(vb[1] + vb[3], vb[1])
        ax.set_axis_off()
        graph = root.find(f"{NS}g")
        tf = raster._transform(graph.get("transform"), (1.0, 1.0, 0.0, 0.0))
        raster._draw(ax, g, tf, min(width / vb[2], height / vb[3]))
        renderer = canvas.get_renderer()
        boxes = [p.get_window_extent(renderer) for p in ax.patches]
        shape = boxes[0]
        texts = [(t.get_text(), t.get_window_extent(renderer)) for t in ax.texts]
        out.append((g.get("id"), shape, texts))
    return out


@pytest.mark.parametrize("make", [lesson_like, folded_mlp], ids=["lesson_like", "folded_mlp"])
def test_every_label_of_the_png_fits_its_node(make):
    view = make()
    checked = 0
    for node, shape, texts in drawn_texts_and_shapes(view.to_svg()):
        for text, box in texts:
            over = max(shape.x0 - box.x0, box.x1 - shape.x1)
            assert over <= 0.5, f"{node}: {text!r} sticks out of its box by {over:.1f} px"
            checked += 1
    assert checked >= 10


def test_the_png_draws_sans_text_with_the_font_that_measured_it():
    from gradviz.render.text_width import FONT

    assert raster._font_family("Helvetica,sans-Serif") == [FONT]
    assert raster._font_fit() == 1.0
