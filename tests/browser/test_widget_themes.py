"""Every gradviz widget in JupyterLab's real light and dark themes ("JupyterLab Light" / "JupyterLab
Dark", switched with JupyterLab's own ``apputils:change-theme`` command): a screenshot of each into
artifacts/screenshots/theme_<kind>_<theme>.png (the README's pictures in docs/widgets/ are these), and
every visible text of each widget, HTML and SVG alike, readable: contrast >= 4.5:1 (WCAG AA) against
what is behind it (the shape it sits in, else the first opaque background up the page)."""

from __future__ import annotations

import nbformat
import pytest
from browser_helpers import SCREENSHOTS, assert_no_errors, contrast, luminance, open_notebook, run_all

pytestmark = pytest.mark.browser

SETUP = """\
import numpy as np
import engine as eg, gradviz as gv
x, y = eg.constant(2.0), eg.constant(1.0)
with eg.GradientTape(persistent=True) as tape:
    tape.watch([x, y])
    f = x * x - 2.0 * x * y + 3.0 * y
w = eg.Variable([1.0, -2.0], name="dense/kernel")
rec = gv.Recorder()
for step in range(5):
    with eg.GradientTape() as t:
        loss = eg.sum(w * w)
    g = t.gradient(loss, w)
    rec.record(step, loss=loss, grads_and_vars=[(g, w)])
    w.assign_sub(0.1 * g)
def cube(a, b):
    return eg.sum(a ** 3 * b)
def valley(v):
    return 0.1 * v[0] ** 2 + 2.0 * v[1] ** 2
layer = eg.layers.Dense(16, activation="tanh", name="dense_m")
layer(eg.ones([1, 8]))  # the weights exist before the profiles
def kept_step(n):
    with eg.GradientTape() as t:
        out = eg.sum(layer(eg.ones([n, 8])))
    return t.gradient(out, layer.trainable_variables)
"""
WIDGETS = {
    "graph": "gv.graph(f, tape, names=locals())",
    "backprop": "gv.backprop(tape, f, [x, y], names=locals())",
    "tape": "gv.tape(tape, names=locals())",
    "flow": "gv.flow(rec)",
    "clipping": "gv.clipping([eg.constant([3.0, 4.0]), eg.constant([1.0, -2.0])], threshold=2.0)",
    "check_gradients": "gv.check_gradients(cube, eg.constant([1.0, 2.0]), eg.constant([0.5, -1.0]))",
    "descent": 'setattr(d := gv.descent(valley, [-4.0, 1.0], optimizers=("SGD", "Momentum", "Adam"), '
               'steps=30), "step", 12) or d',  # shown at step 12
    "memory": 'gv.memory({"batch 8": eg.memory_profile(kept_step, 8), '
              '"batch 4": eg.memory_profile(kept_step, 4)})',  # two profiles side by side
}

# Every visible element with its own text: its colour and what is behind it (rgba lists).
TEXTS = """(root) => {
  const rgba = (text) => {
    const m = (text || '').match(/[\\d.]+/g) || [];
    return m.length >= 3 ? [+m[0], +m[1], +m[2], m.length > 3 ? +m[3] : 1] : null;
  };
  const opaque = (c) => c && c[3] > 0.5;
  const backdrop = (el) => {
    for (let e = el; e; e = e.parentElement) {
      const c = rgba(getComputedStyle(e).backgroundColor);
      if (opaque(c)) return c;
    }
    return [255, 255, 255, 1];
  };
  const out = [];
  for (const el of root.querySelectorAll('*')) {
    const own = [...el.childNodes].filter((n) => n.nodeType === 3).map((n) => n.textContent).join('').trim();
    if (!own || !el.checkVisibility || !el.checkVisibility()) continue;
    const box = el.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) continue;
    let color, behind;
    if (el instanceof SVGElement) {
      const style = getComputedStyle(el);
      color = rgba(style.fill);
      if (!color || style.fill === 'none') continue;
      const shape = el.closest('g.node, g.cluster')?.querySelector('polygon, ellipse, path');
      const fill = shape ? rgba(getComputedStyle(shape).fill) : null;
      behind = opaque(fill) ? fill : backdrop(el.ownerSVGElement.parentElement);
    } else {
      color = rgba(getComputedStyle(el).color);
      behind = backdrop(el);
    }
    out.push({ text: own.slice(0, 40), color, behind, svg: el instanceof SVGElement });
  }
  return out;
}"""


# The mean luminance (0 black … 1 white) of the graph's node shapes as drawn.
NODE_FILLS = """(root) => [...root.querySelectorAll('g.node polygon, g.node path, g.node ellipse')]
  .map((s) => getComputedStyle(s).fill).filter((f) => f.startsWith('rgb'))
  .map((f) => (f.match(/[\\d.]+/g) || []).slice(0, 3).map(Number))"""




def set_theme(page, name: str, light: bool) -> None:
    page.evaluate("(name) => window.jupyterapp.commands.execute('apputils:change-theme', {theme: name})",
                  name)
    page.wait_for_function(
        "(light) => document.body.dataset.jpThemeLight === String(light)", arg=light, timeout=30_000
    )
    page.wait_for_timeout(300)  # the theme's stylesheet applied


def widget_roots(page):
    return {kind: page.locator(".jp-OutputArea-output").filter(has=page.locator(
        ".gv-root" if kind == "graph" else f'[data-gv-widget="{kind}"]')).first for kind in WIDGETS}


def test_every_widget_is_readable_in_jupyterlab_light_and_dark(lab_page, jupyter_server):
    cells = [SETUP] + list(WIDGETS.values())
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(src) for src in cells])
    nb.metadata["kernelspec"] = {
        "name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"
    }
    nbformat.write(nb, jupyter_server.root_dir / "gradviz_themes.ipynb")
    open_notebook(lab_page, "gradviz_themes.ipynb")
    assert run_all(lab_page), "JupyterLab reports that a cell failed"
    assert_no_errors(lab_page)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    failures = []
    try:
        for theme, light in (("JupyterLab Light", True), ("JupyterLab Dark", False)):
            set_theme(lab_page, theme, light)
            tag = "light" if light else "dark"
            for kind, root in widget_roots(lab_page).items():
                root.scroll_into_view_if_needed()
                root.locator("svg").first.wait_for(timeout=60_000) if kind != "tape" else None
                lab_page.wait_for_timeout(200)
                root.screenshot(path=str(SCREENSHOTS / f"theme_{kind}_{tag}.png"))
                if kind in ("graph", "backprop"):  # the graph's own colours follow the theme
                    fills = [luminance(c) for c in root.evaluate(NODE_FILLS)]
                    mean = sum(fills) / max(len(fills), 1)
                    ok = mean > 0.6 if light else mean < 0.2
                    assert fills and ok, f"{tag} {kind}: node fills' mean luminance {mean:.2f}"
                texts = root.evaluate(TEXTS)
                assert len(texts) >= 3, f"{kind}: no text found"
                for t in texts:
                    ratio = contrast(t["color"], t["behind"])
                    if ratio < 4.5:
                        where = f"{t['color']} on {t['behind']}"
                        failures.append(f"{tag} {kind}: {t['text']!r} {ratio:.2f} ({where})")
    finally:
        set_theme(lab_page, "JupyterLab Light", True)
    assert not failures, "text below 4.5:1 contrast:\n" + "\n".join(failures[:40])
