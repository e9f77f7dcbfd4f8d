"""A lesson exported by `make html`, opened from disk with every non-local request blocked.

The page must load nothing from the network (RequireJS, the widgets HTML manager, anywidget and
MathJax come from its _static/ folder), render its widgets from the embedded state, keep the
front-end-only interaction (clicking a graph node shows its details), and show each widget's
static picture where JavaScript is off.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_helpers import ROOT, screenshot
from frames_controls import move_every_control

sys.path.insert(0, str(ROOT / "tools"))
from page_assets import unavailable  # noqa: E402

pytestmark = pytest.mark.browser

LESSON = ROOT / "lessons" / "02_gradients_of_functions.ipynb"
LOCAL = ("file:", "data:", "blob:")
GRAPH = ".widget-subarea .gv-svg svg"


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Lesson 02 exported by tools/export_html.py into a temporary folder; the page's path."""
    if reason := unavailable():
        pytest.skip(f"cannot build the static pages here: {reason}")
    out = tmp_path_factory.mktemp("site")
    subprocess.run(
        [sys.executable, str(ROOT / "tools" / "export_html.py"), str(LESSON), "--out", str(out)],
        check=True,
        timeout=300,
    )
    return out / f"{LESSON.stem}.html"


@pytest.fixture
def offline(page: Any) -> Iterator[dict[str, list[str]]]:
    """Abort every request that is not for a local file; collect those and the page's errors."""
    seen: dict[str, list[str]] = {"blocked": [], "errors": []}

    def route(request_route: Any) -> None:
        url = request_route.request.url
        if url.startswith(LOCAL):
            request_route.continue_()
        else:
            seen["blocked"].append(url)
            request_route.abort()

    page.route("**/*", route)
    page.on("pageerror", lambda error: seen["errors"].append(str(error)))
    yield seen


def test_widgets_render_offline(page, offline, exported):
    page.goto(exported.as_uri())
    graph = page.locator(GRAPH).first
    graph.wait_for(state="visible")
    # Every widget output rendered live, so its static picture gave way.
    outputs = page.locator(".jupyter-widgets.jp-OutputArea-output")
    assert outputs.count() >= 2
    assert page.locator(".widget-subarea").count() == outputs.count()
    assert page.locator(".gradlab-widget-fallback:visible").count() == 0
    # The gradient check (kernel-free): its vector picture, and every control changes what it shows.
    check = page.locator('[data-gv-widget="check_gradients"]').first
    assert check.locator("[data-gv-output=picture] svg").first.is_visible()
    moved, unchanged = move_every_control(check)
    assert moved and not unchanged, f"moved {moved}; changed nothing: {unchanged}"

    # Clicking a node shows its details: handled by the widget's JavaScript alone, no kernel here.
    node = page.locator(".widget-subarea .gv-svg g.node", has_text="x = 2.0").first
    side = page.locator(".widget-subarea .gv-side").first
    assert "watched tensor" not in side.inner_text()
    node.click()
    page.wait_for_function("(el) => el.textContent.includes('watched tensor')", arg=side.element_handle())
    details = side.inner_text()
    assert "gradient (d target / d this)" in details and "2.0" in details

    page.wait_for_function("() => document.querySelector('mjx-container') !== null")  # MathJax, locally
    graph.scroll_into_view_if_needed()
    screenshot(page, "02-static-html-offline")
    assert offline["blocked"] == [], f"the page asked the network for {offline['blocked']}"
    assert offline["errors"] == [], f"JavaScript errors: {offline['errors']}"


def test_static_pictures_without_javascript(browser, exported):
    context = browser.new_context(java_script_enabled=False, viewport={"width": 1400, "height": 900})
    try:
        page = context.new_page()
        page.goto(exported.as_uri())
        fallbacks = page.locator(".gradlab-widget-fallback")
        assert fallbacks.count() >= 2
        graph = fallbacks.locator(".gradviz-graph svg").first
        assert graph.is_visible()
        assert graph.locator("g.node", has_text="x = 2.0").count() == 1
        assert page.locator(".widget-subarea").count() == 0
        graph.scroll_into_view_if_needed()
        screenshot(page, "02-static-html-no-javascript")
    finally:
        context.close()
