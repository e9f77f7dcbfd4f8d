"""frames_view.js in Chromium with no kernel and no widget manager: every control changes the picture
or the panel, from frames computed in Python (gradviz.widgets.frames), with no console error."""

from __future__ import annotations

import json

import numpy as np
import pytest
from browser_helpers import render_esm

from gradviz.render.plot import new_figure, plot_colors, style_axes, svg_text
from gradviz.widgets.esm import esm_source
from gradviz.widgets.frames import Frames, svg_points, svg_with_layers, themed_svg

pytestmark = pytest.mark.browser

SOURCE = esm_source("frames_view.js")  # what anywidget loads: zoom_view.js, then frames_view.js


def descent_like() -> Frames:
    """A 1-D loss with gradient-descent paths over a grid of learning rates, revealed step by step."""
    colors = plot_colors("light")
    fig = new_figure((4.0, 2.6), theme="light")
    ax = fig.add_subplot()
    style_axes(ax, "light")
    xs = np.linspace(-3, 3, 100)
    ax.plot(xs, 0.5 * xs**2, color=colors["muted"])
    fig.canvas.draw()
    rates = [0.1, 0.5, 0.9, 1.5]
    f = Frames("descent", title="descent on ½x²", note="learning rate: 4 values")
    f.slider("learning_rate", [str(r) for r in rates], index=0, label="learning rate", note="grid: 4 values")
    f.slider("step", [str(k) for k in range(11)], play=True)
    f.checkbox("grid", True, label="show the minimum")

    def path(k: int) -> dict:
        x, xs_, ys_ = 2.5, [], []
        for _ in range(11):
            xs_.append(x)
            ys_.append(0.5 * x * x)
            x -= rates[k] * x
        return {"points": svg_points(ax, xs_, ys_), "color": colors["series"][0]}

    f.picture = themed_svg(svg_with_layers(svg_text(fig), ["path", "minimum"]), colors)
    f.layer("path", "trace", ["learning_rate"], path, reveal="step")
    (mx, my), = svg_points(ax, [0.0], [0.0])
    f.layer("minimum", "svg", ["grid"], lambda on: f'<circle cx="{mx}" cy="{my}" r="5"/>' if on else "")
    f.layer("panel", "html", ["learning_rate", "step"], lambda k, s: f"<p>lr {rates[k]}, step {s}</p>")
    return f


def visible(page) -> str:
    return page.evaluate(
        "() => { const r = document.querySelector('[data-gv-widget]');"
        " return r.querySelector('[data-gv-output=picture]').innerHTML + '|' +"
        " r.querySelector('[data-gv-output=panel]').innerHTML; }"
    )


def test_every_control_changes_the_output_without_a_kernel(page):
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_content("<!DOCTYPE html><html><body></body></html>")
    frames = descent_like()
    state = json.loads(json.dumps(frames.state()))
    render_esm(page, SOURCE, state)
    root = page.locator('[data-gv-widget="descent"]')
    assert root.count() == 1
    assert "var(--jp-layout-color0" in page.inner_html('[data-gv-output="picture"]')  # theme colours

    before = visible(page)
    page.locator('[data-gv-input="step"]').fill("6")  # a range input: fill sets its value
    after_step = visible(page)
    assert after_step != before and "step 6" in after_step
    assert page.locator("[data-gv-layer=path] polyline").get_attribute("points").count(",") == 7

    page.locator('[data-gv-input="learning_rate"]').fill("2")
    assert visible(page) != after_step and "lr 0.9" in visible(page)

    shown = visible(page)
    page.locator('[data-gv-input="grid"]').uncheck()
    assert visible(page) != shown and page.locator("[data-gv-layer=minimum] circle").count() == 0

    shown = visible(page)
    page.locator('[data-gv-control="step:prev"]').click()
    assert "step 5" in visible(page) and visible(page) != shown
    page.locator('[data-gv-control="step:next"]').click()
    assert "step 6" in visible(page)
    page.locator('[data-gv-control="step:play"]').click()
    page.wait_for_function("() => window.__model.get('index').step === 10", timeout=10_000)
    assert "step 10" in visible(page)
    assert page.evaluate("() => window.__saves") >= 5  # every move is saved to the model
    assert errors == []


def test_descent_every_control_without_a_kernel(page):
    """gv.descent's real state (lesson 04's race): every control changes the picture or the panel; the
    slider's label, the panel and the path agree. (How fast a control answers is measured by
    bench/widgets_bench.py, not asserted here.)"""
    from frames_controls import move_every_control

    import engine as eg
    import gradviz as gv

    def valley(v):
        return 0.1 * v[0] ** 2 + 2.0 * v[1] ** 2

    race = gv.descent(valley, [-4.0, 1.0], optimizers=("SGD", "Adam"), learning_rate=0.1, steps=12)
    names = ("kind", "title", "note", "picture", "controls", "index", "layers", "info")
    state = json.loads(json.dumps({k: getattr(race.widget, k) for k in names}))
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_content("<!DOCTYPE html><html><body></body></html>")
    render_esm(page, SOURCE, state)
    root = page.locator('[data-gv-widget="descent"]')
    moved, unchanged = move_every_control(root)
    boxes = {f"show {n}" for n in eg.optimizers.names()}
    assert {"step", "step:prev", "step:next", "step:play", "learning_rate", "momentum"} | boxes <= set(moved)
    assert unchanged == []

    page.locator('[data-gv-input="show SGD"]').check()
    page.locator('[data-gv-input="step"]').fill("5")
    page.locator('[data-gv-input="learning_rate"]').fill(str(race.rate_grid().index(0.02)))
    assert root.locator('[data-gv-control="learning_rate"] .gvf-value').inner_text() == "0.02"
    panel = root.locator("[data-gv-output=panel]").inner_html()
    assert "<b>step 5</b>, momentum 0, learning rate 0.02<" in panel  # the momentum slider was moved to 0
    shows = [c["name"] for c in state["controls"] if c["name"].startswith("show ")]
    sgd = shows.index("show SGD")
    lines = root.locator(f"[data-gv-layer=path{sgd}] polyline")
    assert lines.count() == 2  # the whole path, faded, and the part up to step 5
    assert lines.nth(1).get_attribute("points").count(",") == 6
    assert errors == []


def test_a_hand_on_the_slider_stops_play(page):
    """▶ stops when the user moves the slider (or ‹ ›), and at the end at once: no tick after it moves
    the slider the user just set."""
    page.set_content("<!DOCTYPE html><html><body></body></html>")
    render_esm(page, SOURCE, json.loads(json.dumps(descent_like().state())))
    page.locator('[data-gv-control="step:play"]').click()
    page.wait_for_function("() => window.__model.get('index').step >= 2", timeout=10_000)
    page.locator('[data-gv-input="step"]').fill("1")
    page.wait_for_timeout(1_000)  # two and a half of ▶'s ticks
    assert page.evaluate("() => window.__model.get('index').step") == 1
    assert page.locator('[data-gv-control="step:play"]').inner_text() == "▶"
    page.locator('[data-gv-control="step:play"]').click()
    page.wait_for_function("() => window.__model.get('index').step === 10", timeout=10_000)
    page.locator('[data-gv-input="step"]').fill("4")  # right after the end: no tick moves it on
    page.wait_for_timeout(600)
    assert page.evaluate("() => window.__model.get('index').step") == 4
