"""Checks on graph pictures in a page, shared by the browser tests: every label inside its node's
shape, and every node that looks clickable answers a click."""

from __future__ import annotations

from typing import Any

# Each text of each node or cluster frame, with how far (CSS px) it sticks out of its shape's box.
LABELS_OUTSIDE = """(root) => {
  const out = [];
  for (const g of root.querySelectorAll('svg g.node')) {
    const shape = g.querySelector('polygon, ellipse, path');
    if (!shape) continue;
    const s = shape.getBoundingClientRect();
    for (const t of g.querySelectorAll('text')) {
      const b = t.getBoundingClientRect();
      if (!b.width) continue;
      const over = Math.max(s.left - b.left, b.right - s.right, s.top - b.top, b.bottom - s.bottom);
      out.push({ node: g.id, text: t.textContent, over, scale: s.width / (shape.getBBox().width || 1) });
    }
  }
  return out;
}"""


def labels_outside(root: Any, tolerance_px: float = 0.5) -> list[dict]:
    """The labels of the graph pictures under ``root`` (a Playwright locator) that stick out of their
    node's shape by more than ``tolerance_px`` at the zoom shown (empty: every label fits)."""
    found = root.evaluate(LABELS_OUTSIDE)
    assert found, "no labelled node found"
    return [f for f in found if f["over"] > tolerance_px * max(1.0, f["scale"])]


def click_every_node(page: Any, root: Any, timeout_ms: float = 3000) -> list[str]:
    """Click each node and cluster frame of the graph picture under ``root`` as a user would
    (Playwright checks that the click lands on it: not covered, scrolled into view); returns the ids
    that could not be clicked. The picture is redrawn after each click that changes it."""
    failed = []
    ids = root.evaluate("(r) => [...r.querySelectorAll('svg g.node, svg g.cluster')].map((g) => g.id)")
    for sid in ids:
        target = root.locator(f'svg g[id="{sid}"]')
        if target.count() == 0:
            continue  # a click before opened or closed a group: that node is not drawn now
        try:
            cluster = "cluster" in (target.get_attribute("class") or "")
            # a frame takes clicks on its title (its inside is the background); a node anywhere on it
            box = target.locator("text" if cluster else "polygon, ellipse, path, text").first
            box.click(timeout=timeout_ms)
        except Exception as error:  # noqa: BLE001 - report every node that does not take a click
            lines = [ln for ln in str(error).splitlines() if ln.strip()]
            failed.append(f"{sid}: " + " | ".join(lines[-3:]))
    return failed
