"""gv.memory in Chromium with no kernel: two real profiles side by side (a batch of 128 against 4
accumulated micro-batches of 32), in a page the exporter made (tools/export_html.py, as `make html`)
and from the widget's state alone; every control (each profile's cursor slider, its ‹ › and ▶)
changes the picture or the panel, the panel names the event the slider's label names, and the
picture's colours are the theme's CSS variables: its text turns light in JupyterLab's dark theme."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import nbformat
import pytest
from browser_helpers import ROOT, SCREENSHOTS, luminance, render_esm
from frames_controls import move_every_control

from gradviz.widgets.esm import esm_source

sys.path.insert(0, str(ROOT / "tools"))
from page_assets import unavailable  # noqa: E402

pytestmark = pytest.mark.browser

#: an MLP step profiled at batch 128 and as 4 accumulated micro-batches of 32 (the lesson's comparison)
PROFILES = """\
import numpy as np
import engine as eg
import gradviz as gv

rng = np.random.default_rng(0)
model = eg.layers.Sequential([eg.layers.Dense(64, activation="tanh"), eg.layers.Dense(10)])
x, y = eg.constant(rng.normal(size=(128, 32)).astype("float32")), eg.constant(rng.integers(0, 10, 128))
model(x[:1])

def step(x, y):
    with eg.GradientTape() as tape:
        loss = eg.mean(eg.nn.sparse_softmax_cross_entropy(labels=y, logits=model(x)))
    return tape.gradient(loss, model.trainable_variables)

def accumulated(x, y, k=4):
    m = len(x) // k
    return [step(x[j * m:(j + 1) * m], y[j * m:(j + 1) * m]) for j in range(k)]

profiles = {"batch 128": eg.memory_profile(step, x, y), "4 × 32": eg.memory_profile(accumulated, x, y)}
"""
SOURCE = esm_source("frames_view.js")
# JupyterLab's dark theme, as far as the widgets read it (as tests/browser/test_exported_lessons.py)
DARK = """:root { --jp-layout-color0: #111111; --jp-layout-color1: #212121; --jp-ui-font-color1: #e6e6e6;
  --jp-ui-font-color2: #aaaaaa; --jp-border-color1: #616161; --jp-border-color2: #424242;
  --jp-border-color3: #333333; } body { background: #111111; color: #e6e6e6; }"""


def rgb(css: str) -> list[float]:
    return [float(v) for v in re.findall(r"[\d.]+", css)[:3]]


def _errors(page):
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    return errors


def _check_controls(root):
    moved, unchanged = move_every_control(root)
    assert {"cursor 1", "cursor 2", "cursor 1:prev", "cursor 1:next", "cursor 1:play", "cursor 2:play"} \
        <= set(moved), moved
    assert not unchanged, f"controls that changed nothing: {unchanged}"
    # the slider's label names the op the panel's row shows, for each profile
    for i in (1, 2):
        root.locator(f'[data-gv-input="cursor {i}"]').fill("3")
        label = root.locator(f'[data-gv-control="cursor {i}"] .gvf-value').inner_text()
        op = label.split(": ", 1)[1]
        row = root.locator("[data-gv-output=panel] table.gv-mem tr").nth(i)
        assert row.locator("td").nth(1).inner_text().startswith("4 of ")
        assert row.locator("td b").inner_text() == op
    picture = root.locator("[data-gv-output=picture]").inner_html()
    assert "var(--gv-text)" in picture and 'stroke="var(--gv-highlight)"' in picture


def test_every_control_answers_from_the_widget_state(page):
    namespace: dict = {}
    exec(PROFILES, namespace)
    view = namespace["gv"].memory(namespace["profiles"], theme="light")
    names = ("kind", "title", "note", "picture", "controls", "index", "layers", "info")
    state = json.loads(json.dumps({k: getattr(view.widget, k) for k in names}))
    errors = _errors(page)
    page.set_content("<!DOCTYPE html><html><body></body></html>")
    render_esm(page, SOURCE, state)
    root = page.locator('[data-gv-widget="memory"]')
    assert root.locator("[data-gv-output=picture] svg").count() == 1
    _check_controls(root)
    assert errors == []


def test_every_control_answers_in_an_exported_page(browser, tmp_path):
    if reason := unavailable():
        pytest.skip(f"cannot build the static pages here: {reason}")
    notebook = tmp_path / "memory.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(PROFILES), nbformat.v4.new_code_cell("gv.memory(profiles)")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, notebook)
    out = tmp_path / "site"
    subprocess.run([sys.executable, str(ROOT / "tools" / "export_html.py"), str(notebook), "--out", str(out)],
                   check=True, timeout=600)
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    try:
        page = context.new_page()
        errors = _errors(page)
        page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(("file:", "data:", "blob:"))
                   else r.abort())
        page.goto((out / "memory.html").as_uri())
        root = page.locator('[data-gv-widget="memory"]')
        root.wait_for(timeout=60_000)
        assert root.count() == 1
        root.scroll_into_view_if_needed()
        _check_controls(root)
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        title = root.locator("[data-gv-output=picture] svg text", has_text="kept ≤").first
        light = luminance(rgb(title.evaluate("(t) => getComputedStyle(t).fill")))
        root.screenshot(path=str(SCREENSHOTS / "memory_export_light.png"))
        # JupyterLab's dark theme: its body attribute and colours; the picture follows, no redraw
        page.evaluate("() => { document.body.dataset.jpThemeLight = 'false'; }")
        style = page.add_style_tag(content=DARK)
        dark = luminance(rgb(title.evaluate("(t) => getComputedStyle(t).fill")))
        root.screenshot(path=str(SCREENSHOTS / "memory_export_dark.png"))
        style.evaluate("(s) => s.remove()")
        assert light < 0.1 < 0.6 < dark, (light, dark)  # dark text on light, light text on dark
        assert errors == [], f"JavaScript errors: {errors}"
    finally:
        context.close()
