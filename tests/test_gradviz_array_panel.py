"""Big arrays in the side panels: a bounded summary (shape, dtype, min / mean / max, first values) with an
"expand" holding a capped slice (issue 14: lesson 08's graph panel dumped a huge raw array)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import engine as eg
import gradviz as gv
from gradviz.model.array_summary import EXPAND_LIMIT, SMALL, summarise_array
from gradviz.render.array_panel import array_html, array_text

VISIBLE_LIMIT = 600  # characters of text a node's panel shows before "expand"
HTML_LIMIT = 8000  # characters of HTML per node (expand included): the widget state stays small


def visible_text(html: str) -> str:
    closed = re.sub(r"<details.*?</details>", "", html, flags=re.S)
    return re.sub(r"<[^>]+>", "", closed)


def test_summary_numbers_match_numpy():
    rng = np.random.default_rng(3)
    a = rng.normal(size=(5, 7)).astype(np.float32)
    a[1, 2], a[3, 3] = np.nan, np.inf
    s = summarise_array(a)
    finite = a[np.isfinite(a)].astype(np.float64)
    assert (s.shape, s.dtype, s.size, s.nan, s.inf) == ((5, 7), "float32", 35, 1, 1)
    np.testing.assert_allclose([s.min, s.mean, s.max], [finite.min(), finite.mean(), finite.max()],
                               rtol=1e-6)
    assert s.head[:2] == [float(a[0, 0]), float(a[0, 1])] and not s.capped
    z = summarise_array(np.array([3 + 4j, 0j, 1j, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]))
    assert (z.min, z.max) == (0.0, 14.0)
    assert summarise_array(np.arange(20, dtype=np.int64)).max == 19
    assert summarise_array(np.zeros(0)).min is None and summarise_array(np.float32(2.5)).text == "2.5"
    assert summarise_array(np.ones(20, bool)).mean == 1.0


def test_small_arrays_whole_big_ones_summarised_and_capped():
    assert array_html(np.arange(float(SMALL))).startswith('<pre data-gv-array="whole">')
    big = np.arange(EXPAND_LIMIT * 3, dtype=np.float64).reshape(3, -1)
    html = array_html(big)
    assert 'data-gv-array="summary"' in html and "<details data-gv-expand>" in html
    assert f"the first {EXPAND_LIMIT} of {big.size:,} values" in html
    expanded = re.search(r"<pre>(.*?)</pre>", html, re.S).group(1)
    assert len(re.findall(r"\d+\.", expanded)) == EXPAND_LIMIT  # the capped slice, every value of it
    middle = array_html(np.arange(100.0))
    assert "expand: all 100 values" in middle and "99." in middle
    assert "first 0.0, 1.0, 2.0" in array_text(np.arange(100.0))


def lesson08_like():
    """A batch of 8 images through a dense layer, as lesson 08 draws it (shape, device, grad)."""
    rng = np.random.default_rng(0)
    x = eg.constant(rng.normal(size=(8, 28, 28, 1)).astype(np.float32))
    w = eg.Variable((rng.normal(size=(784, 32)) / 28).astype(np.float32), name="dense/kernel")
    b = eg.Variable(np.zeros(32, np.float32), name="dense/bias")
    with eg.GradientTape(persistent=True) as tape:
        h = eg.relu(eg.reshape(x, (8, 784)) @ w + b)
        loss = eg.mean(h**2)
    return tape, loss, x, w


def test_graph_panel_of_big_arrays_is_bounded():
    tape, loss, x, w = lesson08_like()
    view = gv.graph(loss, tape, names={"x": x, "w": w, "loss": loss}, show=("shape", "device", "grad"))
    info = view.widget.info
    assert info
    for sid, html in info.items():
        assert len(visible_text(html)) <= VISIBLE_LIMIT, (sid, visible_text(html)[:300])
        assert len(html) <= HTML_LIMIT, sid
    x_panel = next(html for html in info.values() if "(8, 784)" in html and "6,272" in html)
    xs = x.numpy().astype(np.float64)  # the batch, flattened to (8, 784) by the reshape
    assert "float32" in x_panel
    assert f"min {xs.min():.4g}" in x_panel and f"max {xs.max():.4g}" in x_panel
    w_panel = info[view.drawing.ids[view.full_model.node_for(w).id]]
    assert w_panel.count("<details data-gv-expand>") == 2  # its value and its gradient
    svg = view.to_svg()
    assert len(svg) < 40_000  # tooltips carry summaries, not NumPy's edge items of every axis


@pytest.mark.parametrize("row", [0, 1])
def test_tape_inspector_panel_is_bounded(row):
    tape, loss, x, w = lesson08_like()
    view = gv.tape(tape)
    view.select(row)
    html = view.row_details
    assert "(784, 32)" in html  # both first rows involve the kernel: its summary, not its 25,088 values
    assert len(visible_text(html)) <= 3 * VISIBLE_LIMIT
