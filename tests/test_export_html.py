"""tools/export_html.py's pages: local scripts instead of CDNs, and a static picture under each widget.

(tests/browser/test_static_export.py opens a real exported lesson in Chromium.)
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import export_html  # noqa: E402
import page_assets  # noqa: E402

VIEW = "application/vnd.jupyter.widget-view+json"
CDN = re.compile(r"https?://(?:cdnjs\.cloudflare\.com|unpkg\.com|cdn\.jsdelivr\.net)/[^\"'\s]*")


def widget_notebook(modules: dict[str, str]) -> nbformat.NotebookNode:
    """A notebook whose one output is a widget view (with an HTML fallback), and a state with one
    model per ``modules`` entry (model id → module)."""
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("gv.graph(y, tape)")
    cell.outputs = [
        nbformat.v4.new_output(
            "display_data",
            data={
                "text/plain": "<gv.graph>",
                "text/html": '<div class="gradviz gradviz-graph"><svg><g class="node"></g></svg></div>',
                VIEW: {"version_major": 2, "version_minor": 0, "model_id": next(iter(modules))},
            },
        )
    ]
    nb.cells = [nbformat.v4.new_markdown_cell("# A page\n\nSome math: $x^2$."), cell]
    # an anywidget model is gradviz's (as its saved state says): its HTML is the page's fallback
    gradviz = {"_anywidget_id": "gradviz.widgets.view.SvgWidget"}
    state = {
        model_id: {"model_module": module, "model_module_version": "*", "model_name": "M",
                   "state": dict(gradviz) if module == "anywidget" else {}}
        for model_id, module in modules.items()
    }
    nb.metadata["widgets"] = {
        export_html.WIDGET_STATE: {"version_major": 2, "version_minor": 0, "state": state}
    }
    return nb


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    if reason := page_assets.unavailable():
        pytest.skip(f"cannot build the static pages here: {reason}")
    out = tmp_path_factory.mktemp("site")
    nb = widget_notebook({"m1": "anywidget", "m2": "@jupyter-widgets/controls"})
    return export_html.to_html(nb, "page", out), out


def test_widget_modules_of_the_state():
    nb = widget_notebook({"a": "anywidget", "b": "@jupyter-widgets/controls"})
    assert export_html.widget_modules(nb) == {"anywidget", "@jupyter-widgets/controls"}
    assert export_html.widget_modules(nbformat.v4.new_notebook()) == set()


def test_page_loads_no_script_from_a_cdn(page):
    body, out = page
    # Only nbconvert's Mermaid loader names a CDN, and it imports it only for Mermaid diagrams.
    assert {url for url in CDN.findall(body) if "mermaid" not in url} == set()
    scripts = re.findall(r'<script[^>]*\ssrc="([^"]+)"', body)
    assert "_static/requirejs/require.js" in scripts and "_static/mathjax/tex-chtml-full.js" in scripts
    assert "var widgetRendererSrc = '_static/html-manager/embed-amd.js'" in body
    for url in scripts + ["_static/html-manager/embed-amd.js"]:
        assert (out / url).is_file(), url
    assert list((out / "_static/html-manager").glob("*.woff2")), "the widgets' icon fonts"
    assert list((out / "_static/mathjax/output/chtml/fonts/woff-v2").glob("*.woff"))


def test_requirejs_finds_the_widget_modules_locally(page):
    body, out = page
    match = re.search(r"requirejs\.config\(\{paths: (\{.*?\})\}\);", body)
    assert match, "no RequireJS paths in the page"
    paths = json.loads(match.group(1))
    assert paths["anywidget"] == "_static/widgets/anywidget/index"
    assert (out / "_static/widgets/anywidget/index.js").read_text().count("@jupyter-widgets/base") >= 1
    # embed-amd.js's own modules point at its folder, where it then finds its fonts.
    assert paths["@jupyter-widgets/base"] == "_static/html-manager/base"


def test_each_widget_output_keeps_its_static_picture(page):
    body, _ = page
    fallback = re.search(r'<div class="gradlab-widget-fallback[^"]*">(.*?)</div>\s*<script', body, re.DOTALL)
    assert fallback, "no static picture before the widget view"
    assert 'class="gradviz gradviz-graph"' in fallback.group(1)
    assert ".gradlab-widget-fallback:has(~ .widget-subarea > *)" in body  # hidden once live


def test_unknown_widget_module_is_reported(tmp_path):
    if reason := page_assets.unavailable():
        pytest.skip(f"cannot build the static pages here: {reason}")
    assets = page_assets.install(tmp_path, {"anywidget", "no-such-widget-module"})
    assert assets.missing_modules == ["no-such-widget-module"]
    assert "no-such-widget-module" not in assets.amd_paths


def test_missing_npm_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setattr(page_assets.shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match="needs npm"):
        page_assets.npm_package("requirejs", "0.0.0-not-cached", cache=tmp_path)
