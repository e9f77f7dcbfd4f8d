"""Every lesson (lessons/01_*.ipynb ... 10_*.ipynb, whichever exist) in JupyterLab in Chromium.

For each lesson: open it, Run All through JupyterLab, wait until every cell ran and the kernel is
idle, check that no cell shows an error, that its gradviz widgets rendered, and, for each kind of
widget the lesson shows, move one control and check that the view changed. A screenshot of each
lesson goes to artifacts/screenshots/lesson_XX.png (and one of each widget kind after the
interaction to lesson_XX_<kind>.png). The kernel-free widgets (gradviz/widgets/frames_view.js:
backprop, tape, clipping, check_gradients, flow, descent) have every control moved
(tests/browser/frames_controls.py).

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
from frames_controls import move_every_control

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LESSONS = sorted(p for p in ROOT.glob("lessons/[0-9][0-9]*_*.ipynb") if not p.name.startswith("00_"))
RENDER_TIMEOUT_MS = 30_000
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"

# The widget kinds, by the gradviz call that makes them (gv.<kind>(...)).
KINDS = ("graph", "tape", "backprop", "flow", "clipping", "descent", "check_gradients", "memory")
# The kernel-free widgets: ``[data-gv-widget=KIND]`` (gradviz/widgets/frames_view.js).
FRAMES = ("backprop", "tape", "clipping", "check_gradients", "flow", "descent", "memory")


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
    return page.locator(".jp-OutputArea-output").filter(
        has=page.locator(".jupyter-widgets, .gv-root, [data-gv-widget]")
    )


def outputs_of(page: Any, kind: str) -> Any:
    """The widget outputs of one kind.

    graph draws with gradviz/widgets/svg_view.js (``.gv-root`` > ``.gv-svg`` + ``.gv-side``); the
    kernel-free widgets are ``[data-gv-widget=KIND]``.
    """
    outs = widget_outputs(page)
    if kind == "graph":
        return outs.filter(has=page.locator(".gv-root"))
    return outs.filter(has=page.locator(f'[data-gv-widget="{kind}"]'))


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


def check_frames_rendered(out: Any) -> None:
    """A kernel-free widget: its controls, and a picture (a vector SVG of non-trivial size) or a
    panel with content."""
    out.scroll_into_view_if_needed()
    root = out.locator("[data-gv-widget]").first
    root.locator("[data-gv-control]").first.wait_for(timeout=RENDER_TIMEOUT_MS)
    svg = root.locator("[data-gv-output=picture] svg")
    if svg.count():
        box = svg.first.bounding_box()
        assert box and box["width"] >= 200 and box["height"] >= 100, f"the picture is drawn at {box}"
    else:
        panel = root.locator("[data-gv-output=panel]")  # text_content: also while scrolled out of sight
        assert (panel.text_content() or "").strip(), "an empty widget"


RENDERED: dict[str, Callable[[Any], None]] = {
    "graph": check_svg_rendered,
    **{kind: check_frames_rendered for kind in FRAMES},
}


# ---- one interaction per kind ----------------------------------------------------------------------


def interact_graph(out: Any) -> None:
    """Click a node: the side panel adds that node's details."""
    side = out.locator(".gv-side").first
    before, before_text = side.inner_html(), side.inner_text()
    out.locator(".gv-svg svg g.node").first.click()
    wait_for_change(side, before, attribute=None)
    assert len(side.inner_text()) > len(before_text), "the details panel got no details"


def interact_frames(out: Any) -> None:
    """Move every control: each changes the picture or the panel (no kernel involved)."""
    moved, unchanged = move_every_control(out.locator("[data-gv-widget]").first)
    assert moved, "a kernel-free widget with no control to move"
    assert not unchanged, f"controls that changed nothing: {unchanged}"


INTERACT: dict[str, Callable[[Any], None]] = {
    "graph": interact_graph,
    **{kind: interact_frames for kind in FRAMES},
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
    number = lesson.name.split("_")[0]  # "06", or "06b" for a lesson between 06 and 07
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
                    .filter((o) => o.querySelector('.jupyter-widgets, .gv-root, [data-gv-widget]'))
                    .length >= n""",
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
    widgets = page.locator(".jupyter-widgets, .gv-root, [data-gv-widget]")
    scroll_to(page.locator(".jp-CodeCell").filter(has=widgets).first)
    screenshot(page, f"lesson_{number}")

    for kind, view in found.items():
        view.scroll_into_view_if_needed()
        INTERACT[kind](view)
        widget_screenshot(view, f"lesson_{number}_{kind}")
