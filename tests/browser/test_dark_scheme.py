"""Widgets follow the reader's colour scheme where no JupyterLab theme is set: an exported page (made by
tools/export_html.py, no kernel) opened in Chromium whose reader prefers dark shows dark widgets with
light text (contrast >= 4.5:1, WCAG AA), graph pictures included; a reader who prefers light gets light
ones. Nothing is loaded from outside the page's folder."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from browser_helpers import ROOT, contrast, luminance, screenshot

sys.path.insert(0, str(ROOT / "tools"))
from page_assets import unavailable  # noqa: E402

pytestmark = pytest.mark.browser

CELLS = [
    "import engine as eg, gradviz as gv\n"
    "x = eg.constant(2.0)\n"
    "with eg.GradientTape(persistent=True) as tape:\n"
    "    tape.watch(x)\n"
    "    f = x * x\n"
    "gv.backprop(tape, f, [x], names={'x': x, 'f': f})",
    "gv.graph(f, tape, names={'x': x, 'f': f})",
]
LOCAL = ("file:", "data:", "blob:")

# The computed colours of each widget's root and of each SVG text against its node's shape.
COLOURS = """() => {
  const rgba = (t) => (t.match(/[\\d.]+/g) || []).slice(0, 3).map(Number);
  const roots = [...document.querySelectorAll('.widget-subarea .gvf-root, .widget-subarea .gv-root')];
  const widgets = roots.map((r) => ({kind: r.className, background: rgba(getComputedStyle(r).backgroundColor),
                                      text: rgba(getComputedStyle(r).color)}));
  const labels = [];
  for (const t of document.querySelectorAll('.widget-subarea svg.gv-themed g.node text')) {
    const shape = t.closest('g.node').querySelector('polygon, ellipse, path');
    labels.push({text: t.textContent, fill: rgba(getComputedStyle(t).fill),
                 behind: rgba(getComputedStyle(shape).fill)});
  }
  return {widgets, labels, body: rgba(getComputedStyle(document.body).backgroundColor)};
}"""


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if reason := unavailable():
        pytest.skip(f"cannot build the static pages here: {reason}")
    folder = tmp_path_factory.mktemp("dark")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, folder / "widgets.ipynb")
    subprocess.run([sys.executable, str(ROOT / "tools" / "export_html.py"), str(folder / "widgets.ipynb"),
                    "--out", str(folder / "site")], check=True, timeout=300)
    return folder / "site" / "widgets.html"


def colours(browser, exported: Path, scheme: str) -> dict:
    context = browser.new_context(color_scheme=scheme, viewport={"width": 1200, "height": 900})
    blocked: list[str] = []
    try:
        page = context.new_page()
        page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(LOCAL)
                   else (blocked.append(r.request.url), r.abort()))
        page.goto(exported.as_uri())
        page.locator(".widget-subarea .gvf-root").first.wait_for(state="visible", timeout=60_000)
        page.locator(".widget-subarea .gv-root svg.gv-themed").first.wait_for(state="visible", timeout=60_000)
        screenshot(page, f"exported-{scheme}-scheme")
        assert blocked == [], f"the page asked the network for {blocked}"
        return page.evaluate(COLOURS)
    finally:
        context.close()


def test_a_dark_reader_gets_dark_widgets(browser, exported):
    seen = colours(browser, exported, "dark")
    assert len(seen["widgets"]) == 2 and seen["labels"], seen
    assert luminance(seen["body"]) < 0.1, f"the page itself stayed light: {seen['body']}"
    for widget in seen["widgets"]:
        assert luminance(widget["background"]) < 0.1 and luminance(widget["text"]) > 0.5, widget
        assert contrast(widget["text"], widget["background"]) >= 4.5, widget
    for label in seen["labels"]:
        assert luminance(label["behind"]) < 0.1, label
        assert contrast(label["fill"], label["behind"]) >= 4.5, label


def test_a_light_reader_gets_light_widgets(browser, exported):
    seen = colours(browser, exported, "light")
    assert luminance(seen["body"]) > 0.9
    for widget in seen["widgets"]:
        assert luminance(widget["background"]) > 0.9 and contrast(widget["text"], widget["background"]) >= 4.5
    for label in seen["labels"]:
        assert contrast(label["fill"], label["behind"]) >= 4.5, label
