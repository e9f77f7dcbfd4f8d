"""The course website (`make html`: tools/build_site.py, Sphinx + myst-nb + sphinx-book-theme), opened
from disk with every request off the site blocked: one page per lesson, previous/next navigation, a
search that finds the lessons' words, Binder and JupyterHub launch buttons, and lesson 02's widgets
alive with no kernel (a click on a graph node shows its details; MathJax typesets, from the site)."""

from __future__ import annotations

from pathlib import Path

import pytest
from browser_helpers import ROOT, screenshot

from gradlab.course import lesson_paths

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LESSONS = lesson_paths(ROOT / "lessons")
LOCAL = ("file:", "data:", "blob:")


def _offline(page, seen: dict[str, list[str]]) -> None:
    def route(r):
        if r.request.url.startswith(LOCAL):
            r.continue_()
        else:
            seen["blocked"].append(r.request.url)
            r.abort()

    page.route("**/*", route)
    page.on("pageerror", lambda error: seen["errors"].append(str(error)))


def test_one_page_per_lesson_in_the_navigation(course_site: Path, page):
    assert all((course_site / f"{p.stem}.html").is_file() for p in LESSONS)
    seen: dict[str, list[str]] = {"blocked": [], "errors": []}
    _offline(page, seen)
    page.goto((course_site / "index.html").as_uri())
    nav = page.locator("nav.bd-links a.reference.internal")
    assert nav.count() >= len(LESSONS)
    page.goto((course_site / "02_gradients_of_functions.html").as_uri())
    assert "01_tensors_and_devices.html" in page.locator("a.left-prev").get_attribute("href")
    assert "03_gradient_tape.html" in page.locator("a.right-next").get_attribute("href")
    assert seen["blocked"] == [], seen["blocked"]


def test_launch_buttons_open_the_lesson_on_binder_and_a_jupyterhub(course_site: Path):
    from urllib.parse import unquote

    html = unquote((course_site / "03_gradient_tape.html").read_text(encoding="utf-8")).replace("&amp;", "&")
    repo, lesson = "github.com/gradlab-tests/gradlab", "lessons/03_gradient_tape.ipynb"
    assert f'href="https://mybinder.org/v2/gh/gradlab-tests/gradlab/main?urlpath=lab/tree/{lesson}"' in html
    hub = "http://localhost:8000/hub/user-redirect/git-pull"
    assert f'href="{hub}?repo=https://{repo}&urlpath=lab/tree/gradlab/{lesson}&branch=main"' in html


def test_search_finds_a_lesson(course_site: Path, page):
    seen: dict[str, list[str]] = {"blocked": [], "errors": []}
    _offline(page, seen)
    page.goto((course_site / "search.html").as_uri() + "?q=GradientTape")
    results = page.locator("#search-results li a")
    results.first.wait_for(timeout=60_000)
    found = {results.nth(k).get_attribute("href").split("?")[0] for k in range(results.count())}
    assert "03_gradient_tape.html" in found, found
    assert seen["blocked"] == [] and seen["errors"] == [], seen


def test_lesson_02_widgets_alive_offline(course_site: Path, page):
    seen: dict[str, list[str]] = {"blocked": [], "errors": []}
    _offline(page, seen)
    page.goto((course_site / "02_gradients_of_functions.html").as_uri())
    graph = page.locator(".gv-svg svg").first
    graph.wait_for(state="visible", timeout=60_000)
    node = page.locator(".gv-svg g.node", has_text="x = 2.0").first
    side = page.locator(".gv-side").first
    node.scroll_into_view_if_needed()
    node.click()
    page.wait_for_function("(el) => el.textContent.includes('watched tensor')", arg=side.element_handle())
    page.wait_for_function("() => document.querySelector('mjx-container') !== null")
    screenshot(page, "site-02")
    assert seen["blocked"] == [], f"the page asked the network for {seen['blocked']}"
    assert seen["errors"] == [], f"JavaScript errors: {seen['errors']}"


def test_a_dark_reader_gets_the_site_and_its_widgets_dark(course_site: Path, browser):
    """The book theme follows the reader's scheme (``html[data-theme="dark"]``); so do the widgets."""
    from browser_helpers import contrast, luminance

    context = browser.new_context(color_scheme="dark", viewport={"width": 1300, "height": 900})
    try:
        page = context.new_page()
        page.goto((course_site / "02_gradients_of_functions.html").as_uri())
        root = page.locator(".gv-root").first
        root.wait_for(state="visible", timeout=60_000)
        assert page.evaluate("document.documentElement.dataset.theme") == "dark"
        colours = root.evaluate("""(el) => [getComputedStyle(el).backgroundColor, getComputedStyle(el).color]
            .map((c) => c.match(/[\\d.]+/g).slice(0, 3).map(Number))""")
        background, text = colours
        assert luminance(background) < 0.1 and contrast(text, background) >= 4.5, colours
    finally:
        context.close()
