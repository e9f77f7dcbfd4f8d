"""Lesson 00 in a real browser: in JupyterLab, and as the static HTML page `make html` builds."""

from __future__ import annotations

import subprocess
import sys

import pytest
from browser_helpers import ROOT, assert_no_errors, open_notebook, output_text, run_all, screenshot

pytestmark = pytest.mark.browser

NOTEBOOK = "lessons/00_start_here.ipynb"
TITLE = "Welcome to gradlab"


def test_start_here_runs_in_jupyterlab(lab_page):
    open_notebook(lab_page, NOTEBOOK)
    assert run_all(lab_page), "JupyterLab reports that a cell failed"
    assert_no_errors(lab_page)
    assert "engine is ready" in output_text(lab_page)
    assert lab_page.locator(".jp-Notebook h1").first.text_content().startswith(TITLE)
    screenshot(lab_page, "00_start_here-run-all")


def test_start_here_static_html(page, tmp_path):
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "tools" / "export_html.py"),
            str(ROOT / NOTEBOOK),
            "--out",
            str(tmp_path),
        ],
        check=True,
        timeout=300,
    )
    html = tmp_path / "00_start_here.html"
    assert html.exists() and (tmp_path / "index.html").exists()

    # (test_static_export.py checks the page's scripts: all local, widgets rendered offline.)
    page.goto(html.as_uri(), wait_until="domcontentloaded")
    assert page.title() == TITLE
    assert page.locator("h1").first.inner_text().startswith(TITLE)
    assert "engine is ready" in page.locator(".jp-OutputArea-output").first.inner_text()
    # Links between lessons point at the exported pages.
    assert page.locator('a[href="01_tensors_and_devices.html"]').count() >= 1
    screenshot(page, "00_start_here-static-html")

    page.goto((tmp_path / "index.html").as_uri())
    page.get_by_role("link", name=TITLE).click()
    assert page.title() == TITLE
