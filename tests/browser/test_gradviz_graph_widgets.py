"""gv.graph and gv.backprop in JupyterLab: the anywidget front ends draw the SVG, a click shows a
node's details, the stepper's "next" moves the highlighted op and its explanation (no kernel round
trip: gradviz/widgets/frames_view.js switches frames computed in Python)."""

from __future__ import annotations

import nbformat
import pytest
from browser_helpers import assert_no_errors, open_notebook, run_all, screenshot, wait_for_change

pytestmark = pytest.mark.browser

CELLS = [
    "import engine as eg, gradviz as gv\n"
    "x, y = eg.constant(2.0), eg.constant(1.0)\n"
    "with eg.GradientTape(persistent=True) as tape:\n"
    "    tape.watch([x, y])\n"
    "    f = x * x - 2.0 * x * y + 3.0 * y",
    "gv.graph(f, tape, names=locals())",
    "gv.backprop(tape, f, [x, y], names=locals())",
]


def test_graph_and_backprop_widgets(lab_page, jupyter_server):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(src) for src in CELLS])
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
    }
    nbformat.write(nb, jupyter_server.root_dir / "gradviz_widgets.ipynb")
    open_notebook(lab_page, "gradviz_widgets.ipynb")
    assert run_all(lab_page), "JupyterLab reports that a cell failed"
    assert_no_errors(lab_page)

    graph, stepper = lab_page.locator(".gv-root").first, lab_page.locator('[data-gv-widget="backprop"]').first
    graph.locator("svg g.node").first.wait_for()
    assert graph.locator("svg g.node").count() >= 10
    assert "grad 2.0" in graph.locator("svg").text_content()

    graph.locator("svg g.node", has_text="x = 2.0").first.click()  # the details panel shows x
    side = graph.locator(".gv-side")
    side.get_by_text("watched tensor").wait_for()
    assert "gradient" in side.inner_text()
    screenshot(lab_page, "gradviz-graph-click")

    picture = stepper.locator("[data-gv-output=picture]")
    before = picture.inner_html()
    stepper.locator('[data-gv-control="step:next"]').click()  # the browser alone switches frames
    wait_for_change(picture, before, attribute=None)
    assert "Step 1 of" in stepper.locator("[data-gv-output=panel]").inner_text()
    assert stepper.locator('[data-gv-input="step"]').input_value() == "1"
    screenshot(lab_page, "gradviz-backprop-step1")
