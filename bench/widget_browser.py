"""A kernel-free widget alone in headless Chromium: its front end rendered on a fake model, every
control moved, each move timed (bench/widgets_bench.py's "a control move" rows)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "browser"))
from browser_helpers import render_esm  # noqa: E402  (the browser tests' fake anywidget model)

# Each move: set the control, fire its event (the widget redraws synchronously), force layout.
_MOVES = """(rounds) => {
  const times = [];
  for (const input of document.querySelectorAll("[data-gv-input]")) {
    const n = input.tagName === "SELECT" ? input.options.length : input.type === "checkbox" ? 2
            : Number(input.max) + 1;
    for (let k = 0; k < rounds && n > 1; k++) {
      const t0 = performance.now();
      if (input.type === "checkbox") input.checked = !input.checked;
      else input.value = String((Number(input.value) + 1) % n);
      const change = input.tagName === "SELECT" || input.type === "checkbox";
      input.dispatchEvent(new Event(change ? "change" : "input"));
      document.body.getBoundingClientRect();
      times.push(performance.now() - t0);
    }
  }
  times.sort((a, b) => a - b);
  return [times[Math.floor(times.length / 2)], times[times.length - 1], times.length];
}"""


def browser_moves(widget: Any, rounds: int = 20) -> tuple[float, float, int]:
    """(median, slowest) seconds for a control move of ``widget`` (a kernel-free widget) in headless
    Chromium, and the number of moves; (nan, nan, 0) without Chromium or Playwright."""
    import json  # noqa: PLC0415
    import shutil  # noqa: PLC0415

    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    try:
        from playwright.sync_api import sync_playwright  # noqa: PLC0415
    except ImportError:
        return float("nan"), float("nan"), 0
    if not Path(chromium).exists():
        return float("nan"), float("nan"), 0
    names = ("kind", "title", "note", "picture", "controls", "index", "layers", "info")
    state = json.loads(json.dumps({k: getattr(widget, k) for k in names}))
    from gradviz.widgets.esm import esm_source  # noqa: PLC0415

    source = esm_source("frames_view.js")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"], headless=True)
        page = browser.new_page()
        page.set_content("<!DOCTYPE html><html><body></body></html>")
        render_esm(page, source, state)
        median, slowest, count = page.evaluate(_MOVES, rounds)
        browser.close()
    return median / 1000, slowest / 1000, count
