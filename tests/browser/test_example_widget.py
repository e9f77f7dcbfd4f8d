"""The widget guide's example (docs/WIDGETS.md: gradviz/widgets/tangent_view.py), built in a notebook,
exported to a static page by tools/export_html.py and moved in Chromium offline: its slider and ▶
switch the frames computed in Python, with no kernel and no console error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from browser_helpers import ROOT
from frames_controls import move_every_control, shown

sys.path.insert(0, str(ROOT / "tools"))
from page_assets import unavailable  # noqa: E402

pytestmark = pytest.mark.browser

CELLS = [
    "import engine as eg\nfrom gradviz.widgets.tangent_view import tangent",
    "view = tangent(lambda x: x * x, x=0.0, lo=-2.0, hi=2.0, points=5)\nview",
]


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A notebook showing the example widget, exported as a static page; the page's path."""
    if reason := unavailable():
        pytest.skip(f"cannot build the static pages here: {reason}")
    work = tmp_path_factory.mktemp("example")
    notebook = work / "tangent.ipynb"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, notebook)
    out = work / "site"
    subprocess.run([sys.executable, str(ROOT / "tools" / "export_html.py"), str(notebook), "--out", str(out)],
                   check=True, timeout=300, cwd=ROOT)
    return out / "tangent.html"


def test_the_example_widget_works_in_an_exported_page(page, exported):
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(("file:", "data:", "blob:"))
               else r.abort())
    page.goto(exported.as_uri())
    root = page.locator('[data-gv-widget="tangent"]').first
    root.wait_for(state="visible")
    panel = root.locator("[data-gv-output=panel]")
    assert "slope 0" in panel.inner_text()  # x = 0, where the slider starts
    root.locator('[data-gv-input="x"]').fill("4")  # x = 2: the frame computed for it
    assert "slope 4" in panel.inner_text()
    assert root.locator("[data-gv-layer=tangent] circle").count() == 1
    before = shown(root)
    root.locator('[data-gv-input="x"]').fill("1")
    assert shown(root) != before and "slope -2" in panel.inner_text()
    moved, unchanged = move_every_control(root)
    assert moved and not unchanged, f"moved {moved}; changed nothing: {unchanged}"
    assert not errors, errors
