"""Every lesson (lessons/01_*.ipynb ... 09_*.ipynb, whichever exist) in JupyterLab in Chromium.

For each lesson: open it, Run All through JupyterLab, wait until every cell ran and the kernel is
idle, check that no cell shows an error, that its gradviz widgets rendered, and, for each kind of
widget the lesson shows, move one control and check that the view changed. A screenshot of each
lesson goes to artifacts/screenshots/lesson_XX.png (and one of each widget kind after the
interaction to lesson_XX_<kind>.png).

The lessons are found by globbing when the tests are collected, so a new lesson is tested as soon
as its notebook exists. Which widget kinds a lesson must show is read from its code cells
(``gv.graph(``, ``gv.tape(``, ...); the DOM of each kind is documented next to its check below.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nbformat
import pytest
from browser_helpers import (
    ROOT,
    SCREENSHOTS,
    assert_no_errors,
    cells,
    open_notebook,
    run_all,
    screenshot,
    wait_for_change,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LESSONS = sorted(ROOT.glob("lessons/0[1-9]_*.ipynb"))
RENDER_TIMEOUT_MS = 30_000
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"

# The widget kinds, by the gradviz call that makes them (gv.<kind>(...)).
KINDS = ("graph", "tape", "backprop", "flow", "clipping", "descent", "check_gradients")
# The matplotlib-based views (gradviz/widgets/plot_widget.py) are a VBox whose first child is an HTML
# widget with the view's title in bold.
PLOT_TITLES = {
    "flow": "Gradient flow",
    "clipping": "Clipping lab",
    "descent": "Descent trace",
    "check_gradients": "Gradient check",
}


def expected_kinds(path: Path) -> set[str]:
    """The widget kinds a lesson's code cells create (``gv.<call>(`` outside comments)."""
    nb = nbformat.read(path, as_version=4)
    code = "\n".join(
        line
        for cell in nb.cells
        if cell.cell_type == "code"
        for line in cell.source.splitlines()
        if not line.lstrip().startswith("#")
    )
    return {kind for kind in KINDS if re.search(rf"\bgv\.{kind}\s*\(", code)}


# ---- where each kind of widget is in the page ------------------------------------------------------


def widget_outputs(page: Any) -> Any:
    """Every output area that shows a widget view (ipywidgets' ``.jupyter-widgets``, or gradviz's
    anywidget front end ``.gv-root``)."""
    return page.locator(".jp-OutputArea-output").filter(has=page.locator(".jupyter-widgets, .gv-root"))


def outputs_of(page: Any, kind: str) -> Any:
    """The widget outputs of one kind.

    graph and backprop both draw with gradviz/widgets/svg_view.js (``.gv-root`` > ``.gv-svg`` + ``.gv-side``);
    backprop adds a Play control and prev/next buttons. tape is a VBox holding ``table.gv-tape``
    and the "op" slider. The plot views are found by their title.
    """
    outs = widget_outputs(page)
    if kind == "graph":
        return outs.filter(has=page.locator(".gv-root")).filter(has_not=page.locator(".widget-play"))
    if kind == "backprop":
        return outs.filter(has=page.locator(".gv-root")).filter(has=page.locator(".widget-play"))
    if kind == "tape":
        return outs.filter(has=page.locator("table.gv-tape")).filter(has=page.locator(".widget-slider"))
    title = PLOT_TITLES[kind]
    return outs.filter(has=page.locator(".widget-html-content > b", has_text=re.compile(f"^{title}$")))


# ---- rendering checks ------------------------------------------------------------------------------


def check_svg_rendered(out: Any) -> None:
    """A gradviz SVG view: a visible SVG with nodes."""
    out.scroll_into_view_if_needed()
    svg = out.locator(".gv-svg svg").first
    svg.locator("g.node").first.wait_for(timeout=RENDER_TIMEOUT_MS)
    assert svg.is_visible()
    assert svg.locator("g.node").count() >= 2
    box = svg.bounding_box()
    assert box and box["width"] > 50 and box["height"] > 30, f"the graph SVG is tiny: {box}"


def check_image_rendered(out: Any) -> None:
    """A matplotlib view: a loaded <img> of non-trivial size."""
    out.scroll_into_view_if_needed()
    img = out.locator("img.widget-image").first
    img.wait_for(timeout=RENDER_TIMEOUT_MS)
    out.page.wait_for_function(
        "(img) => img.complete && img.naturalWidth > 0", arg=img.element_handle(), timeout=RENDER_TIMEOUT_MS
    )
    width, height = img.evaluate("(img) => [img.naturalWidth, img.naturalHeight]")
    assert width >= 200 and height >= 100, f"the plot image is {width}x{height} px"
    box = img.bounding_box()
    assert box and box["width"] >= 200 and box["height"] >= 100, f"the plot is drawn at {box}"


def check_tape_rendered(out: Any) -> None:
    out.scroll_into_view_if_needed()
    table = out.locator("table.gv-tape").first
    table.wait_for(timeout=RENDER_TIMEOUT_MS)
    assert table.locator("tbody tr").count() >= 1
    assert out.locator(".widget-slider .noUi-handle").first.is_visible()


RENDERED: dict[str, Callable[[Any], None]] = {
    "graph": check_svg_rendered,
    "backprop": check_svg_rendered,
    "tape": check_tape_rendered,
    **{kind: check_image_rendered for kind in PLOT_TITLES},
}


# ---- one interaction per kind ----------------------------------------------------------------------


def interact_graph(out: Any) -> None:
    """Click a node: the side panel adds that node's details."""
    side = out.locator(".gv-side").first
    before, before_text = side.inner_html(), side.inner_text()
    out.locator(".gv-svg svg g.node").first.click()
    wait_for_change(side, before, attribute=None)
    assert len(side.inner_text()) > len(before_text), "the details panel got no details"


def _highlighted_row(table: Any) -> int:
    """Index of the tape table's highlighted row (the selected op), -1 when none."""
    return table.evaluate(
        """(t) => [...t.querySelectorAll('tbody tr')]
                   .findIndex((r) => /background/.test(r.getAttribute('style') || ''))"""
    )


def interact_tape(out: Any) -> None:
    """Move the "op" slider one step: the highlighted row moves down by one."""
    table = out.locator("table.gv-tape").first
    rows = table.locator("tbody tr").count()
    if rows < 2:
        return  # a single op: the slider cannot move (nothing to check)
    before = _highlighted_row(table)
    assert before == 0, f"the first op should be selected at start, got row {before}"
    html = out.locator(".widget-html-content", has=out.page.locator("table.gv-tape")).first
    old = html.inner_html()
    nudge(out.locator(".widget-slider .noUi-handle").first)
    wait_for_change(html, old, attribute=None)
    assert _highlighted_row(out.locator("table.gv-tape").first) == 1


def interact_backprop(out: Any) -> None:
    """Press "next": the panel explains step 1 and the SVG highlights another op."""
    side, pic = out.locator(".gv-side").first, out.locator(".gv-svg").first
    assert "Step 0 of" in side.inner_text()
    before_side, before_svg = side.inner_html(), pic.inner_html()
    out.locator("button", has_text="next").first.click()
    wait_for_change(side, before_side, attribute=None)
    assert "Step 1 of" in side.inner_text()
    assert pic.inner_html() != before_svg, "the graph's highlight did not move"
    readout = out.locator(".widget-slider .widget-readout").first
    assert readout.inner_text().strip() == "1", "the step slider did not follow the next button"


def _move_plot(out: Any, act: Callable[[], None]) -> None:
    img = out.locator("img.widget-image").first
    before = img.get_attribute("src")
    act()
    wait_for_change(img, before)


def nudge(handle: Any) -> None:
    """Move a slider (its noUiSlider handle) one step: right, or left when it is at its maximum."""
    now, top = handle.evaluate(
        "(h) => [Number(h.getAttribute('aria-valuenow')), Number(h.getAttribute('aria-valuemax'))]"
    )
    handle.press("ArrowLeft" if now >= top else "ArrowRight")


def interact_slider_plot(out: Any) -> None:
    """flow and descent: move the step slider one step; the picture is redrawn."""
    handle = out.locator(".widget-slider .noUi-handle").first
    _move_plot(out, lambda: nudge(handle))


def interact_clipping(out: Any) -> None:
    """Send the threshold slider to its minimum (Home; End if it is there already): the clipping and
    the picture change."""
    handle = out.locator(".widget-slider .noUi-handle").first
    readout = out.locator(".widget-slider .widget-readout").first
    before = readout.inner_text()
    now, low = handle.evaluate(
        "(h) => [Number(h.getAttribute('aria-valuenow')), Number(h.getAttribute('aria-valuemin'))]"
    )
    _move_plot(out, lambda: handle.press("End" if now <= low else "Home"))
    assert readout.inner_text() != before


def interact_check_gradients(out: Any) -> None:
    """Pick another input (or tick "failures only"): the table below the plot changes."""
    panel = out.locator(".widget-html-content", has=out.page.locator("table.gv-gc")).first
    panel.wait_for()
    before = panel.inner_html()
    select = out.locator(".widget-dropdown select")
    if select.count():
        options = select.first.locator("option").all_inner_texts()
        select.first.select_option(index=1)
        wait_for_change(panel, before, attribute=None)
        assert f"input {options[1]}" in panel.inner_text()
    else:
        out.locator(".widget-checkbox input[type=checkbox]").first.check()
        wait_for_change(panel, before, attribute=None)


INTERACT: dict[str, Callable[[Any], None]] = {
    "graph": interact_graph,
    "tape": interact_tape,
    "backprop": interact_backprop,
    "flow": interact_slider_plot,
    "descent": interact_slider_plot,
    "clipping": interact_clipping,
    "check_gradients": interact_check_gradients,
}


def scroll_to(view: Any, block: str = "start") -> None:
    """Scroll a widget into the notebook's view and wait until the page has painted it.

    (With JupyterLab's default ``contentVisibility`` windowing, a screenshot taken right after a
    scroll can show an empty notebook: wait two animation frames.)
    """
    view.evaluate("(el, block) => el.scrollIntoView({block})", block)
    view.page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")


def widget_screenshot(view: Any, name: str) -> None:
    """Screenshot one widget into artifacts/screenshots/<name>.png: its top, as far as the notebook
    shows it (a tall widget is cut at the bottom of the notebook panel rather than stitched)."""
    scroll_to(view)
    box = view.bounding_box()
    panel = view.page.locator(".jp-NotebookPanel-notebook").first.bounding_box()
    top = max(box["y"], panel["y"])
    height = min(box["y"] + box["height"], panel["y"] + panel["height"]) - top
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    clip = {"x": box["x"], "y": top, "width": box["width"], "height": height}
    view.page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), clip=clip)


# ---- the test --------------------------------------------------------------------------------------


@pytest.mark.parametrize("lesson", LESSONS, ids=[p.stem for p in LESSONS])
def test_lesson_in_jupyterlab(lab_page: Any, lesson: Path) -> None:
    page = lab_page
    number = lesson.name[:2]
    kinds = expected_kinds(lesson)
    assert kinds, f"{lesson.name} makes no gradviz widget (every lesson needs at least one)"

    open_notebook(page, f"lessons/{lesson.name}")
    ok = run_all(page)
    assert_no_errors(page)
    assert ok, "JupyterLab reports that Run All stopped"
    not_run = [c["index"] for c in cells(page) if c["cell_type"] == "code" and c["source"].strip()
               and c["execution_count"] is None]  # fmt: skip
    assert not not_run, f"code cells that did not run: {not_run}"

    # Every widget the kernel displayed has a view in the page.
    displayed = sum(WIDGET_MIME in o.get("data", {}) for c in cells(page) for o in c["outputs"])
    assert displayed >= 1, "no cell displayed a widget"
    outs = widget_outputs(page)
    page.wait_for_function(
        """(n) => [...document.querySelectorAll('.jp-OutputArea-output')]
                    .filter((o) => o.querySelector('.jupyter-widgets, .gv-root')).length >= n""",
        arg=displayed,
        timeout=RENDER_TIMEOUT_MS,
    )
    assert outs.count() == displayed, f"{displayed} widgets displayed, {outs.count()} views in the page"
    broken = page.locator(".jp-OutputArea-output", has_text="Error displaying widget")
    assert broken.count() == 0, broken.first.inner_text()

    found = {}
    for kind in sorted(kinds):
        views = outputs_of(page, kind)
        views.first.wait_for(timeout=RENDER_TIMEOUT_MS)
        for view in views.all():
            RENDERED[kind](view)
        found[kind] = views.first
    # The lesson's first widget with the code that made it, at the top of the notebook.
    scroll_to(page.locator(".jp-CodeCell").filter(has=page.locator(".jupyter-widgets, .gv-root")).first)
    screenshot(page, f"lesson_{number}")

    for kind, view in found.items():
        view.scroll_into_view_if_needed()
        INTERACT[kind](view)
        widget_screenshot(view, f"lesson_{number}_{kind}")
