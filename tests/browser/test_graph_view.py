"""svg_view.js (gv.graph's front end) in Chromium with no kernel: a wide graph starts at a readable
zoom (its labels >= 9 CSS px) and pans by dragging, − / + / fit / 1:1 zoom, clicks still select, and
its colours follow JupyterLab's theme (gradviz.render.theme.themed_graph) with readable text."""

from __future__ import annotations

import json

import numpy as np
import pytest
from browser_helpers import contrast, luminance, render_esm

import engine as eg
import gradviz as gv
from gradviz.widgets.esm import esm_source

pytestmark = pytest.mark.browser

SOURCE = esm_source("svg_view.js")  # what anywidget loads: zoom_view.js, then svg_view.js
# The smallest label, in CSS px as drawn: its font size times the picture's scale on screen.
SMALLEST_TEXT_PX = """() => {
  const svg = document.querySelector('.gv-zoomable svg');
  const scale = svg.getScreenCTM().a;
  const sizes = [...svg.querySelectorAll('text')].map((t) => parseFloat(t.getAttribute('font-size')) * scale);
  return Math.min(...sizes);
}"""
READABLE_PX = 9.0


def wide(branches: int):
    """A loss summing ``branches`` parallel branches: a graph far wider than a notebook column."""
    rng = np.random.default_rng(0)
    ws = [eg.Variable(rng.normal(size=3).astype(np.float32), name=f"w{k}") for k in range(branches)]
    x = eg.constant(np.ones(3, np.float32))
    with eg.GradientTape(persistent=True) as tape:
        loss = sum(eg.sum(eg.tanh(x * w)) for w in ws)
    return tape, loss, ws


def wide_graph(branches: int = 24):
    tape, loss, _ = wide(branches)
    return gv.graph(loss, tape, collapse=False)


def open_widget(page, view, dark: bool = False, source: str = SOURCE):
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    body = ('<body data-jp-theme-light="false" style="background:#111111;--jp-ui-font-color1:#e6e6e6;'
            '--jp-layout-color0:#111111;--jp-layout-color1:#212121;--jp-brand-color1:#42a5f5">'
            if dark else "<body>")
    page.set_content(f"<!DOCTYPE html><html>{body}</body></html>")
    state = json.loads(json.dumps(view.widget.get_state(), default=str))
    render_esm(page, source, state, width="900px")
    return errors


def zoom(page) -> float:
    return float(page.get_attribute(".gv-root", "data-gv-zoom-level"))


def test_a_wide_graph_starts_readable_and_pans_and_zooms(page):
    view = wide_graph()
    errors = open_widget(page, view)
    pic = page.locator(".gv-svg")
    assert page.evaluate(SMALLEST_TEXT_PX) >= READABLE_PX - 0.05
    assert pic.evaluate("(p) => p.scrollWidth > p.clientWidth")  # too wide to show whole: pan it
    start = zoom(page)

    box = pic.bounding_box()
    page.mouse.move(box["x"] + 400, box["y"] + 100)
    page.mouse.down()
    page.mouse.move(box["x"] + 150, box["y"] + 100, steps=5)
    page.mouse.up()
    assert pic.evaluate("(p) => p.scrollLeft") > 100  # dragged to the right part of the graph
    assert page.evaluate("() => window.__model.get('selected')") in ("", None)  # a pan, not a click

    page.click('[data-gv-zoom="in"]')
    assert zoom(page) == pytest.approx(start * 1.25, rel=1e-3)
    page.click('[data-gv-zoom="fit"]')
    assert pic.evaluate("(p) => p.scrollWidth <= p.clientWidth + 1")  # the whole width in view
    page.click('[data-gv-zoom="actual"]')
    assert zoom(page) == pytest.approx(1.0)

    page.click('[data-gv-zoom="fit"]')
    page.locator(".gv-svg g.node").first.click()
    assert page.evaluate("() => window.__model.get('selected')")  # a click still selects a node
    assert errors == []




# Each label's colour against the fill of the shape behind it (its node's), or the page's background.
LABEL_COLOURS = """() => {
  const rgb = (text) => { const m = text.match(/[\\d.]+/g) || []; return m.slice(0, 4).map(Number); };
  const page = rgb(getComputedStyle(document.body).backgroundColor);
  const background = page.length === 4 && page[3] === 0 ? [255, 255, 255] : page;
  return [...document.querySelectorAll('.gv-svg svg text')].map((t) => {
    const shape = t.closest('g')?.querySelector('polygon, ellipse, path');
    let fill = shape ? rgb(getComputedStyle(shape).fill) : [];
    if (fill.length < 3 || getComputedStyle(shape).fill === 'none') fill = background;
    return { text: t.textContent, color: rgb(getComputedStyle(t).fill), behind: fill };
  });
}"""


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_graph_labels_follow_the_theme_and_stay_readable(page, dark):
    x = eg.Variable([1.0, -2.0], name="x")
    with eg.GradientTape(persistent=True) as tape:
        y = eg.sum(x * x) - 3.0
    errors = open_widget(page, gv.graph(y, tape, names={"x": x, "y": y}), dark=dark)
    labels = page.evaluate(LABEL_COLOURS)
    assert len(labels) >= 6
    for label in labels:
        ratio = contrast(label["color"], label["behind"])
        where = f"{label['color']} on {label['behind']}"
        assert ratio >= 4.5, f"{label['text']!r}: contrast {ratio:.2f} ({where})"
    text_lum = [luminance(label["color"]) for label in labels if label["text"].startswith("x")]
    assert (min(text_lum) > 0.5) if dark else (max(text_lum) < 0.2)  # light text on dark, dark on light
    assert errors == []


def lesson08_graph():
    """Lesson 08's graph (its cell as written, on the CPU): 8 test digits through one dense layer."""
    x_train, y_train, x_test, y_test = eg.data.load_digits(test_fraction=0.2, seed=0)
    w = eg.Variable(eg.random.normal((64, 10), stddev=0.1, seed=0), name="w")
    with eg.GradientTape() as tape:
        images = eg.constant(x_test[:8].reshape(8, 64))
        images_on_device = images.to("cpu:0")
        logits = images_on_device @ w
        loss = eg.mean(eg.nn.sparse_softmax_cross_entropy(y_test[:8], logits))
    names = {"images": images, "images_on_device": images_on_device, "logits": logits, "loss": loss,
             "w": w, "tape": tape}
    return gv.graph(loss, tape=tape, names=names, show=("shape", "device", "grad")), w


def test_lesson08_graph_is_readable_and_its_panel_bounded(page):
    view, w = lesson08_graph()
    errors = open_widget(page, view)
    assert page.evaluate(SMALLEST_TEXT_PX) >= READABLE_PX - 0.05
    w_id = view.drawing.ids[view.full_model.node_for(w).id]
    page.locator(f'.gv-svg g.node[id="{w_id}"]').click()
    side = page.locator(".gv-side")
    side.get_by_text("min / mean / max").first.wait_for()
    text = side.inner_text()
    assert "(64, 10)" in text and len(text) < 1500, len(text)  # a summary, not 640 raw numbers
    side.locator("details[data-gv-expand] summary").first.click()  # "expand": the values, in the browser
    assert len(side.inner_text()) > len(text) + 1000
    assert errors == []


def test_the_steppers_wide_graph_zooms_too(page):
    """gv.backprop shows the same graph with its highlights (frames_view.js): it starts readable and
    pans, and its step buttons still move the highlights."""
    tape, loss, ws = wide(16)
    stepper = gv.backprop(tape, loss, ws)
    errors = open_widget(page, stepper, source=esm_source("frames_view.js"))
    root = page.locator('[data-gv-widget="backprop"]')
    assert root.locator(".gv-tools [data-gv-zoom=fit]").count() == 1
    assert page.evaluate(SMALLEST_TEXT_PX) >= READABLE_PX - 0.05
    picture = root.locator("[data-gv-output=picture]")
    assert picture.evaluate("(p) => p.scrollWidth > p.clientWidth")
    before = picture.inner_html()
    root.locator('[data-gv-control="step:next"]').click()
    assert picture.inner_html() != before
    root.locator("[data-gv-zoom=fit]").click()
    assert picture.evaluate("(p) => p.scrollWidth <= p.clientWidth + 1")
    assert errors == []


# ---- labels fit, folded boxes open without a kernel, controls that would do nothing are disabled ------

def lab_graphs():
    """A lesson-like graph with long labels, and the default (folded) view of the per-sample MLP."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from widget_models import per_sample_mlp

    rng = np.random.default_rng(0)
    k = eg.Variable(rng.uniform(-0.55, 0.56, size=(2, 16)).astype(np.float32), name="dense_1/kernel")
    x = eg.constant(rng.normal(size=(3, 2)).astype(np.float32))
    with eg.GradientTape(persistent=True) as tape:
        y = eg.sum(eg.tanh(x @ k) * 0.5)
    small = gv.graph(y, tape, names={"x": x, "y": y}, show=("value", "grad", "shape", "dtype", "device"))
    tape, loss = per_sample_mlp(24)
    return {"small": small, "mlp": gv.graph(loss, tape)}


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
@pytest.mark.parametrize("which", ["small", "mlp"])
def test_every_label_sits_inside_its_node(page, dark, which):
    from graph_checks import labels_outside

    view = lab_graphs()[which]
    errors = open_widget(page, view, dark=dark)
    root = page.locator(".gv-svg")
    for font in ("the page's", "DejaVu Sans"):  # Helvetica as Chromium maps it here; the widest usual sans
        if font == "DejaVu Sans":
            page.add_style_tag(content='.gv-svg svg text { font-family: "DejaVu Sans" !important; }')
        for zoom_to in ("start", "actual"):
            if zoom_to == "actual":
                page.evaluate("() => document.querySelector('[data-gv-zoom=\"actual\"]').click()")
            bad = labels_outside(root)
            assert not bad, (font, bad[:5])
    if which == "mlp":  # opened groups too
        group = page.locator(".gv-svg g.node", has_text="dense_1").first
        group.click()
        page.wait_for_function("() => window.__model.get('state') !== 'top'")
        assert not labels_outside(root)
    assert errors == []


def test_a_folded_box_opens_and_closes_without_a_kernel(page):
    """(How fast it opens is bench/graph_fold.py's to measure: a test asserts no time.)"""
    view = lab_graphs()["mlp"]
    errors = open_widget(page, view)
    pic = page.locator(".gv-svg")
    assert page.evaluate("() => window.__model.get('state')") == "top"
    layer = view.full_model.fold_plan(view.fold_limit).by_key("dense_1")
    sid = f"{view.prefix}_{layer.id}"
    page.evaluate("""(sid) => document.querySelector(`.gv-svg g[id="${sid}"] text`)
      .dispatchEvent(new MouseEvent('click', {bubbles: true}))""", sid)
    assert page.evaluate("() => window.__model.get('state')") == layer.id
    assert pic.locator("g.cluster").count() >= 1 and "dense_1/kernel" in pic.inner_html()
    assert page.evaluate("() => window.__saves") >= 1  # told to Python when a kernel is there
    pic.locator(f'g.cluster[id="{view.prefix}_c{layer.id}"] text').first.click()  # its frame: closes
    assert page.evaluate("() => window.__model.get('state')") == "top"
    assert "dense_1/kernel" not in pic.inner_html()
    assert errors == []


def test_controls_that_would_do_nothing_are_disabled(page):
    x = eg.constant(2.0)
    with eg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
    errors = open_widget(page, gv.graph(y, tape, names={"x": x, "y": y}))
    from playwright.sync_api import expect

    assert zoom(page) == pytest.approx(1.0)  # a small graph fits at 1:1
    expect(page.locator('[data-gv-zoom="fit"]')).to_be_disabled()
    expect(page.locator('[data-gv-zoom="actual"]')).to_be_disabled()
    page.click('[data-gv-zoom="in"]')
    expect(page.locator('[data-gv-zoom="fit"]')).to_be_enabled()
    expect(page.locator('[data-gv-zoom="actual"]')).to_be_enabled()
    page.click('[data-gv-zoom="fit"]')
    assert zoom(page) == pytest.approx(1.0)
    expect(page.locator('[data-gv-zoom="fit"]')).to_be_disabled()
    assert errors == []


class Mg:
    """A micrograd-style value (no tape: ``_prev`` and ``_op``), with its own backward pass."""

    def __init__(self, data, _prev=(), _op="", label=""):
        self.data, self.grad, self._prev, self._op, self.label = float(data), 0.0, tuple(_prev), _op, label
        self._backward = lambda: None

    def __mul__(self, o):
        out = Mg(self.data * o.data, (self, o), "*")
        out._backward = lambda: (self._add(o.data * out.grad), o._add(self.data * out.grad))
        return out

    def __add__(self, o):
        out = Mg(self.data + o.data, (self, o), "+")
        out._backward = lambda: (self._add(out.grad), o._add(out.grad))
        return out

    def _add(self, g):
        self.grad += g

    def backward(self):
        order, seen = [], set()

        def visit(v):
            if id(v) not in seen:
                seen.add(id(v))
                for p in v._prev:
                    visit(p)
                order.append(v)

        visit(self)
        self.grad = 1.0
        for v in order[::-1]:
            v._backward()


def graph_style_root():
    a, b = Mg(2.0, label="a"), Mg(-3.0, label="b")
    c = a * b
    c.label = "c"
    d = c + a
    d.label = "d"
    d.backward()
    return d, {"a": a, "b": b, "c": c, "d": d}


def test_a_graph_style_engines_stepper_steps_without_a_kernel(page):
    """gv.backprop(root) over a micrograd-style value: the browser alone moves the highlighted op and
    shows each value's grad once it is complete."""
    root, names = graph_style_root()
    errors = open_widget(page, gv.backprop(root, names=names), source=esm_source("frames_view.js"))
    stepper = page.locator('[data-gv-widget="backprop"]')
    picture, panel = stepper.locator("[data-gv-output=picture]"), stepper.locator("[data-gv-output=panel]")
    before = picture.inner_html()
    stepper.locator('[data-gv-control="step:next"]').click()
    assert picture.inner_html() != before
    assert "Step 1 of 2" in panel.inner_text() and "c.grad is now complete" in panel.inner_text()
    stepper.locator('[data-gv-control="step:next"]').click()
    text = panel.inner_text()
    assert "Step 2 of 2" in text and "a.grad is now complete: -2" in text and "Done." in text
    assert errors == []


@pytest.mark.parametrize("which", ["small", "mlp", "wide", "traced", "backprop", "graph_style",
                                   "graph_style_backprop"])
def test_every_node_that_looks_clickable_takes_a_click(page, which):
    from graph_checks import click_every_node

    if which.startswith("graph_style"):
        root, names = graph_style_root()
        view = gv.backprop(root, names=names) if which.endswith("backprop") else gv.graph(root, names=names)
        source = esm_source("frames_view.js") if which.endswith("backprop") else SOURCE
    elif which == "traced":
        model = eg.layers.Sequential([eg.layers.Dense(4, activation="relu"), eg.layers.Dense(2)])
        opt = eg.optimizers.Adam(0.01)

        @eg.function
        def step(x, y):
            with eg.GradientTape() as tape:
                loss = eg.mean((model(x) - y) ** 2)
            variables = model.trainable_variables
            opt.apply_gradients(zip(tape.gradient(loss, variables), variables))
            return loss

        view, source = gv.graph(step.get_graph(eg.ones((3, 5)), eg.ones((3, 2)))), SOURCE
    elif which == "backprop":
        tape, loss, ws = wide(6)
        view, source = gv.backprop(tape, loss, ws), esm_source("frames_view.js")
    elif which == "wide":
        view, source = wide_graph(), SOURCE
    else:
        view, source = lab_graphs()[which], SOURCE
    errors = open_widget(page, view, source=source)
    root = page.locator("[data-gv-widget]").first
    failed = click_every_node(page, root)
    assert not failed, failed[:5]
    assert errors == []


def lesson09_graph():
    """Lesson 09's traced training step: two Dense layers, cross-entropy, Adam."""
    x_train, y_train, _, _ = eg.data.load_digits(seed=0)
    eg.layers.reset_names()
    eg.random.set_seed(0)
    model = eg.layers.Sequential([eg.layers.Dense(32, activation="relu"), eg.layers.Dense(10)])
    opt = eg.optimizers.Adam(learning_rate=0.01)

    def train_step(x, y):
        with eg.GradientTape() as tape:
            loss = eg.mean(eg.nn.sparse_softmax_cross_entropy(y, model(x)))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss, grads

    step = eg.function(train_step)
    return gv.graph(step.get_graph(eg.constant(x_train[:32].reshape(32, 64)), eg.constant(y_train[:32])))


def test_the_traced_step_opens_readable_with_an_overview_of_its_shape(page):
    view = lesson09_graph()
    errors = open_widget(page, view)
    assert page.evaluate(SMALLEST_TEXT_PX) >= READABLE_PX - 0.05  # labels legible at the start
    from playwright.sync_api import expect

    mini = page.locator("[data-gv-minimap]")
    expect(mini).to_be_visible()  # the picture does not fit: the overview shows the whole step
    box = mini.bounding_box()
    pic = page.locator(".gv-svg")
    assert pic.evaluate("(p) => p.scrollLeft") == 0
    page.mouse.click(box["x"] + box["width"] - 3, box["y"] + box["height"] / 2)  # the updates' end
    assert pic.evaluate("(p) => p.scrollLeft") > 100
    svg = view.to_svg()
    # each layer one box (its Variables' reads inside it), each Variable once
    assert svg.count(">dense_1<") == 2  # sequential_1/dense_1 and gradients/…/dense_1
    reads = sorted(n.label for n in view.model.nodes.values() if n.variable)
    assert reads == ["dense_1/bias", "dense_1/kernel", "dense_2/bias", "dense_2/kernel"]
    assert all(svg.count(f">{name}<") == 1 for name in reads)
    assert errors == []
