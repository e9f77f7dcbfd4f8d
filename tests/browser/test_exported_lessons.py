"""Every lesson's page of the course website (`make html`: Sphinx + myst-nb, built once per session by
the ``course_site`` fixture), opened from disk with no kernel and no network: each kernel-free gradviz
widget (``[data-gv-widget]``) has every control moved, and
each move changes the widget's picture or panel; no JavaScript error; each page within its 3 MB
budget. (How fast a control answers is measured by bench/widgets_bench.py; a test asserts no time.)
Each kernel-free widget is screenshotted in a light and a dark page (JupyterLab's theme variables)
into artifacts/screenshots/export_<lesson>_<kind>_<theme>.png. Every widget of the lessons is kernel-free
(gv.descent too).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from browser_helpers import ROOT, SCREENSHOTS
from frames_controls import move_every_control

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LESSONS = sorted(ROOT.glob("lessons/[0-9][0-9]*_*.ipynb"))  # 06b_... sorts after 06_...
PAGE_BUDGET = 3_000_000  # bytes of one lesson page
LOCAL = ("file:", "data:", "blob:")
# JupyterLab's dark theme, as far as the widgets read it (the light values are the fallbacks).
DARK = """:root { --jp-layout-color0: #111111; --jp-layout-color1: #212121; --jp-ui-font-color1: #e6e6e6;
  --jp-ui-font-color2: #aaaaaa; --jp-border-color1: #616161; --jp-border-color2: #424242;
  --jp-border-color3: #333333; } body { background: #111111; color: #e6e6e6; }"""


@pytest.fixture(scope="module")
def site(course_site: Path) -> Callable[[Path], Path]:
    """The site's page of a lesson."""
    return lambda lesson: course_site / f"{lesson.stem}.html"


def _open(page: Any, path: Path, errors: list[str]) -> None:
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(LOCAL) else r.abort())
    page.goto(path.as_uri())
    page.wait_for_load_state("load")


@pytest.mark.parametrize("lesson", LESSONS, ids=[p.stem for p in LESSONS])
def test_every_control_of_an_exported_lesson_works_without_a_kernel(browser, site, lesson):
    html = site(lesson)
    assert html.stat().st_size <= PAGE_BUDGET, f"{html.name} is {html.stat().st_size:,} bytes"
    code = lesson.read_text(encoding="utf-8")
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    try:
        page = context.new_page()
        errors: list[str] = []
        _open(page, html, errors)
        rendered = page.locator(".widget-subarea, .jupyter-widgets")
        if "gv." in code:
            rendered.first.wait_for(timeout=60_000)
        if descents := code.count("gv.descent("):  # the last widget of a page may render last
            page.locator('[data-gv-widget="descent"]').nth(descents - 1).wait_for(timeout=60_000)
        widgets = page.locator("[data-gv-widget]")
        report = {}
        for k in range(widgets.count()):
            root = widgets.nth(k)
            kind = root.get_attribute("data-gv-widget")
            root.scroll_into_view_if_needed()
            moved, unchanged = move_every_control(root)
            report[f"{kind}#{k}"] = moved
            assert not unchanged, f"{lesson.stem}: {kind}: controls that changed nothing: {unchanged}"
            _shoot(page, root, f"export_{lesson.stem.split('_')[0]}_{kind}_{k}")
        assert errors == [], f"JavaScript errors: {errors}"
        if descents:  # kernel-free too: every descent widget of the lesson is moved above
            assert page.locator('[data-gv-widget="descent"]').count() == descents
            moved = {name for key, names in report.items() if key.startswith("descent#") for name in names}
            assert {"step", "learning_rate", "show SGD"} <= moved
    finally:
        context.close()


def _shoot(page: Any, root: Any, name: str) -> None:
    """Screenshots of one widget in the page's light colours and in JupyterLab's dark ones."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    root.screenshot(path=str(SCREENSHOTS / f"{name}_light.png"))
    style = page.add_style_tag(content=DARK)
    try:
        root.screenshot(path=str(SCREENSHOTS / f"{name}_dark.png"))
    finally:
        style.evaluate("(s) => s.remove()")


@pytest.mark.parametrize("lesson", LESSONS, ids=[p.stem for p in LESSONS])
def test_every_graph_node_of_an_exported_lesson_takes_a_click_and_fits_its_label(browser, site, lesson):
    """Each node and frame of each graph picture in the page (gv.graph, traced graphs, the backprop
    stepper's graph) takes a real click (not covered, scrolled into view), and each label sits inside
    its node, in the light page and in JupyterLab's dark colours."""
    from graph_checks import click_every_node, labels_outside

    code = lesson.read_text(encoding="utf-8")
    if "gv." not in code:
        pytest.skip("no gradviz widget in this lesson")
    html = site(lesson)
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    try:
        page = context.new_page()
        errors: list[str] = []
        _open(page, html, errors)
        page.locator(".widget-subarea, .jupyter-widgets").first.wait_for(timeout=60_000)
        page.locator("[data-gv-widget] svg").first.wait_for(timeout=60_000)
        graphs = page.locator("[data-gv-widget]:has(svg g.node)")
        failed, outside = {}, {}
        for k in range(graphs.count()):
            root = graphs.nth(k)
            root.scroll_into_view_if_needed()
            name = f"{root.get_attribute('data-gv-widget')}#{k}"
            if bad := labels_outside(root):
                outside[name] = bad[:3]
            if missed := click_every_node(page, root):
                failed[name] = missed[:5]
        style = page.add_style_tag(content=DARK)
        for k in range(graphs.count()):
            if bad := labels_outside(graphs.nth(k)):
                outside[f"dark #{k}"] = bad[:3]
        style.evaluate("(s) => s.remove()")
        assert not failed, f"{lesson.stem}: nodes that take no click: {failed}"
        assert not outside, f"{lesson.stem}: labels outside their nodes: {outside}"
        assert errors == [], f"JavaScript errors: {errors}"
    finally:
        context.close()
