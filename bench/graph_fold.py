"""Big graphs folded by meaning (issue 23): the default view of the per-sample MLP step (micrograd
style, 72 samples, three Dense layers, hinge loss, L2 term) and of the 2,000-op chains, recorded by a
tape and traced by eg.function (the traced step with its gradients and updates): time to make
it (build + fold + layout + SVG), its size and its boxes, what the boxes say, the live widget's state
(every folded state drawn ahead), and how fast a folded box opens in headless Chromium (no kernel).

    uv run python bench/graph_fold.py

Targets: each default view < 0.5 s to make, < 0.2 MB, ≤ 40 boxes; opening a box < 50 ms.
"""

from __future__ import annotations

import json
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from widget_models import chain3, long_chain, per_sample_mlp, traced_chain3, traced_per_sample_step  # noqa: E402

MAKE_S, SIZE_MB, BOXES, OPEN_MS = 0.5, 0.2, 40, 50.0

_OPEN = """(ids) => {
  const times = [];
  for (const sid of ids) {
    const g = document.querySelector(`.gv-svg g[id="${sid}"] text`);
    if (!g) continue;
    const t0 = performance.now();
    g.dispatchEvent(new MouseEvent("click", { bubbles: true }));
    document.body.getBoundingClientRect();
    times.push(performance.now() - t0);
    const back = document.querySelector(".gv-svg g.cluster text");  // close it again
    if (back) back.dispatchEvent(new MouseEvent("click", { bubbles: true }));
  }
  times.sort((a, b) => a - b);
  return times;
}"""


def open_ms(view: Any) -> list[float]:
    """Milliseconds to open each top-level folded box in headless Chromium (empty without it)."""
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    try:
        from playwright.sync_api import sync_playwright  # noqa: PLC0415
    except ImportError:
        return []
    if not Path(chromium).exists():
        return []
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "browser"))
    from browser_helpers import render_esm  # noqa: PLC0415

    from gradviz.widgets.esm import esm_source  # noqa: PLC0415

    state = json.loads(json.dumps(view.widget.get_state(), default=str))
    ids = [k for k, v in state["opens"].items() if v in state["views"] and "_c" not in k.rsplit("_", 1)[-1]]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"], headless=True)
        page = browser.new_page(viewport={"width": 1300, "height": 900})
        page.set_content("<!DOCTYPE html><html><body></body></html>")
        render_esm(page, esm_source("svg_view.js"), state, width="900px")
        times = page.evaluate(_OPEN, ids)
        browser.close()
    return times


def measure(label: str, build: Any) -> dict[str, Any]:
    import gradviz as gv  # noqa: PLC0415
    from gradviz.render import graphviz as render  # noqa: PLC0415

    made = build()  # (tape, target), or a traced eg.Graph
    args = made[::-1] if isinstance(made, tuple) else (made,)  # gv.graph(y, tape)
    times = []
    for _ in range(3):
        render.clear_cache()
        t0 = time.perf_counter()
        svg = gv.graph(*args).to_svg()
        times.append(time.perf_counter() - t0)
    view = gv.graph(*args)
    svg = view.to_svg()
    t0 = time.perf_counter()
    widget = view.widget
    widget_s = time.perf_counter() - t0
    state_mb = len(json.dumps(widget.get_state(), default=str).encode()) / 1e6
    groups = [n.label for n in view.model.nodes.values() if n.kind == "group"]
    opened = open_ms(view)
    return {
        "graph": label, "nodes": len(view.full_model), "make_s": statistics.median(times),
        "svg_mb": len(svg) / 1e6, "boxes": svg.count('class="node"'), "groups": groups,
        "widget_s": widget_s, "views": len(widget.views), "state_mb": state_mb,
        "open_ms": statistics.median(opened) if opened else float("nan"),
        "open_max_ms": max(opened) if opened else float("nan"),
    }


def main() -> int:
    import gradviz as gv  # noqa: PLC0415

    x = gv.graph  # load the renderer once (not part of any timing)
    tape, y = long_chain(10)
    x(y, tape).to_svg()
    rows = [measure("per-sample MLP step (72 samples)", per_sample_mlp),
            measure("chain of 666 × (multiply, add, tanh)", chain3),
            measure("2,000-op chain tanh(h * 1.01)", lambda: long_chain(2000)),
            measure("traced: per-sample MLP training step (72 samples)", traced_per_sample_step),
            measure("traced: chain of 666 × (Mul, Add, Tanh)", traced_chain3)]
    ok = True
    for r in rows:
        good = r["make_s"] < MAKE_S and r["svg_mb"] < SIZE_MB and r["boxes"] <= BOXES and not (
            r["open_max_ms"] >= OPEN_MS)
        ok &= good
        boxes = f"{r['boxes']} box" + ("es" if r["boxes"] != 1 else "")
        print(f"{r['graph']}: {r['nodes']:,} nodes → {boxes}, {r['svg_mb']:.3f} MB SVG, "
              f"made in {r['make_s']:.3f} s; widget {r['widget_s']:.2f} s, {r['views']} states drawn ahead, "
              f"state {r['state_mb']:.2f} MB; open a box {r['open_ms']:.1f} ms (slowest "
              f"{r['open_max_ms']:.1f}) {'ok' if good else 'MISSED'}")
        print("    boxes:", "; ".join(r["groups"]))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
