"""make html (tools/export_html.py, page_assets.py) under bad input: an unreadable notebook is reported
and the others are exported; widget module names from a notebook's state never become paths outside
the site; a third-party widget's HTML is never embedded as its static picture.

No network and no kernel: the page scripts are stand-ins, the notebooks are built here with no code to
run (``execute`` is replaced), and the widget bundles live in a Jupyter folder made for the test.
"""

from __future__ import annotations

import base64
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import export_html  # noqa: E402
import page_assets  # noqa: E402

VIEW = "application/vnd.jupyter.widget-view+json"
THIRD_PARTY_SCRIPT = "<script>window.thirdPartyRan = true</script>"


@pytest.fixture()
def offline(monkeypatch, tmp_path):
    """page_assets without npm: each page script is a small local file; Jupyter's data folder is ours."""

    def fake_script(script, static, folder):
        target = static / folder / script.name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(b'define("@jupyter-widgets/base", [], function () {});' if "manager" in folder
                           else b"// " + script.package.encode())
        return f"{page_assets.STATIC}/{folder}/{script.name}"

    monkeypatch.setattr(page_assets, "_install_script", fake_script)
    jupyter = tmp_path / "jupyter"
    monkeypatch.setenv("JUPYTER_PATH", str(jupyter))
    monkeypatch.setattr(export_html, "execute", lambda nb, cwd, timeout: None)
    return jupyter


def notebook(title: str, outputs: list | None = None, state: dict | None = None) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(f"# {title}")]
    if outputs is not None:
        cell = nbformat.v4.new_code_cell("w")
        cell.outputs = outputs
        nb.cells.append(cell)
    if state is not None:
        nb.metadata["widgets"] = {export_html.WIDGET_STATE: {"version_major": 2, "version_minor": 0,
                                                             "state": state}}
    return nb


# ---- one unreadable notebook does not stop the export ---------------------------------------------


BROKEN = {
    "not JSON": b"{ this is not json",
    "binary": bytes(range(256)),
    "JSON, not a notebook": b'{"cells": 3}',
    "empty": b"",
}


@pytest.mark.parametrize("kind", list(BROKEN))
def test_an_unreadable_notebook_is_reported_and_the_rest_exported(offline, tmp_path, capsys, kind):
    lessons = tmp_path / "lessons"
    lessons.mkdir()
    nbformat.write(notebook("First lesson"), lessons / "01_first.ipynb")
    (lessons / "02_broken.ipynb").write_bytes(BROKEN[kind])
    nbformat.write(notebook("Third lesson"), lessons / "03_third.ipynb")
    out = tmp_path / "site"
    paths = [str(lessons / name) for name in ("01_first.ipynb", "02_broken.ipynb", "03_third.ipynb")]
    status = export_html.main([*paths, "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 1
    assert (out / "01_first.html").is_file() and (out / "03_third.html").is_file()
    assert not (out / "02_broken.html").exists()
    index = (out / "index.html").read_text()
    assert "First lesson" in index and "Third lesson" in index
    assert f"FAILED {lessons / '02_broken.ipynb'}" in err
    assert "1 of 3 notebook(s) failed" in err and "Traceback" not in err


def test_a_missing_notebook_is_reported_too(offline, tmp_path, capsys):
    lessons = tmp_path / "lessons"
    lessons.mkdir()
    nbformat.write(notebook("Only lesson"), lessons / "01_only.ipynb")
    status = export_html.main([str(lessons / "01_only.ipynb"), str(lessons / "nope.ipynb"),
                               "--out", str(tmp_path / "site")])
    assert status == 1 and (tmp_path / "site" / "01_only.html").is_file()
    assert "cannot read it" in capsys.readouterr().err


# ---- widget module names are package names, never paths --------------------------------------------


BAD_NAMES = ["../../../escaped", "..", ".", "/etc", "a/b/c", "@scope/../../x", "widgets\\..\\..\\x",
             "_private", ".hidden", "name with spaces", "x" * 215, "@scope/"]
GOOD_NAMES = ["anywidget", "@jupyter-widgets/controls", "jupyter-matplotlib", "@my.scope/widget_v2.1",
              "bqplot"]


@pytest.mark.parametrize("name", GOOD_NAMES)
def test_package_names_are_accepted(name):
    assert page_assets.is_package_name(name)


@pytest.mark.parametrize("name", BAD_NAMES)
def test_other_names_are_refused(name):
    assert not page_assets.is_package_name(name)
    with pytest.raises(ValueError, match="not an npm package name"):
        page_assets.amd_bundle(name)


def test_module_names_from_the_widget_state_cannot_escape_the_site(offline, tmp_path, capsys):
    jupyter = offline
    # bundles a hostile name would reach: Jupyter's nbextensions/<name>/index.js, resolved
    for name in ("../../../escaped", "good-widget"):
        bundle = jupyter / "nbextensions" / name / "index.js"
        bundle.parent.mkdir(parents=True, exist_ok=True)
        bundle.write_text(f"define('{name}', [], {{}});")
    out = tmp_path / "deep" / "site"
    out.mkdir(parents=True)
    before = {p for p in tmp_path.rglob("*") if out not in p.parents and p != out}
    state = {f"m{k}": {"model_module": name, "model_module_version": "*", "model_name": "M", "state": {}}
             for k, name in enumerate(["../../../escaped", "good-widget", "/etc", "@x/../../y"])}
    nb = notebook("Widgets", [], state)
    export_html.to_html(nb, "widgets", out)
    after = {p for p in tmp_path.rglob("*") if out not in p.parents and p != out}
    assert after == before, f"written outside the site: {sorted(map(str, after - before))}"
    assert (out / "_static" / "widgets" / "good-widget" / "index.js").is_file()
    err = capsys.readouterr().err
    for name in ("../../../escaped", "/etc", "@x/../../y"):
        assert f"names the module {name!r}, which is not an npm package name" in err
    assets = page_assets.install(out, {"../../../escaped", "good-widget"})
    assert assets.refused_modules == ["../../../escaped"] and "good-widget" in assets.amd_paths


# ---- a third-party widget's static picture never runs its HTML -------------------------------------


PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n fake").decode()
SVG = '<svg xmlns="http://www.w3.org/2000/svg"><script>window.svgRan = true</script><rect/></svg>'


def widget_output(model_id: str, **data: str) -> nbformat.NotebookNode:
    view = {"version_major": 2, "version_minor": 0, "model_id": model_id}
    return nbformat.v4.new_output("display_data", data={"text/plain": "<widget>", **data, VIEW: view})


def _page(offline, tmp_path, output, model_state: dict, module: str = "third-party-widget") -> str:
    state = {"m1": {"model_module": module, "model_module_version": "*", "model_name": "M",
                    "state": model_state}}
    return export_html.to_html(notebook("Widgets", [output], state), "page", tmp_path / "site")


@pytest.mark.parametrize("data, shown", [
    ({"text/html": THIRD_PARTY_SCRIPT, "image/png": PNG}, f"data:image/png;base64,{PNG}"),
    ({"text/html": THIRD_PARTY_SCRIPT, "image/svg+xml": SVG}, "data:image/svg+xml;base64,"),
    ({"text/html": THIRD_PARTY_SCRIPT}, "(a third-party-widget widget: it shows here once its script"),
    ({"text/html": THIRD_PARTY_SCRIPT, "image/png": 'x" onerror="alert(1)'}, "gradlab-widget-notice"),
])
def test_third_party_widget_html_is_never_embedded(offline, tmp_path, data, shown):
    page = _page(offline, tmp_path, widget_output("m1", **data), {})
    assert "thirdPartyRan" not in page and "svgRan" not in page and "onerror" not in page
    assert shown in page


def test_an_anywidget_that_is_not_gradviz_is_third_party(offline, tmp_path):
    page = _page(offline, tmp_path, widget_output("m1", **{"text/html": THIRD_PARTY_SCRIPT}),
                 {"_anywidget_id": "someone_else.Widget"}, module="anywidget")
    assert "thirdPartyRan" not in page and "(a anywidget widget" in page


def test_gradviz_widgets_keep_their_html_picture(offline, tmp_path):
    html = '<div class="gradviz"><svg><g class="node"></g></svg></div>'
    page = _page(offline, tmp_path, widget_output("m1", **{"text/html": html}),
                 {"_anywidget_id": "gradviz.widgets.frames.FramesWidget"}, module="anywidget")
    assert f'<div class="gradlab-widget-fallback jp-RenderedHTMLCommon jp-RenderedHTML">{html}</div>' in page
    # the ipywidgets box of a gradviz view (gv.descent) keeps its picture too; another box does not
    for classes, kept in ((["gradviz-view"], True), (["someone-else"], False)):
        page = _page(offline, tmp_path, widget_output("m1", **{"text/html": html}),
                     {"_dom_classes": classes}, module="@jupyter-widgets/controls")
        assert (html in page) is kept
    # an SVG-only gradviz output is drawn inline; a third-party one only as an image
    page = _page(offline, tmp_path, widget_output("m1", **{"image/svg+xml": "<svg><rect/></svg>"}),
                 {"_anywidget_id": "gradviz.widgets.view.SvgWidget"}, module="anywidget")
    assert '<div class="gradlab-widget-fallback jp-RenderedSVG"><svg><rect' in page  # (re-serialised)


def test_fallback_without_a_model_in_the_state():
    import widget_fallback

    assert "notice" in widget_fallback.widget_fallback({"text/html": THIRD_PARTY_SCRIPT}, None)
    assert not widget_fallback.is_gradviz({"model_module": "anywidget", "state": ["not", "a", "dict"]})
