"""A widget's notebook output carries its picture once (issue 14): the widget state holds it, the
output's ``text/html`` is a short notice, and an exported page draws the static picture back from the
saved state (tools/export_html.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest

import engine as eg
import gradviz as gv
from gradviz.render.static_state import static_html

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import export_html  # noqa: E402

VIEW = "application/vnd.jupyter.widget-view+json"


def chain(n_ops: int):
    x = eg.constant(0.5)
    with eg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        h = x
        for _ in range(n_ops // 2):
            h = eg.tanh(h * 1.01)
    return tape, h, x


def mlp_step():
    rng = np.random.default_rng(0)
    x = eg.constant(rng.normal(size=(8, 4)).astype(np.float32))
    params = [eg.Variable((rng.normal(size=(4, 4)) / 2).astype(np.float32), name=f"dense_{k}/kernel")
              for k in range(30)]
    with eg.GradientTape(persistent=True) as tape:
        h = x
        for w in params:
            h = eg.relu(h @ w)
        loss = eg.mean(h**2)
    return tape, loss, params


def recorder():
    w = eg.Variable([1.0, -2.0], name="dense/kernel")
    rec = gv.Recorder()
    for step in range(4):
        with eg.GradientTape() as tape:
            loss = eg.sum(w * w)
        g = tape.gradient(loss, w)
        rec.record(step, loss=loss, grads_and_vars=[(g, w)])
        w.assign_sub(0.1 * g)
    return rec


def views():
    tape, h, x = chain(2000)
    mtape, loss, params = mlp_step()
    small_tape, y, sx = chain(4)
    return {
        "graph: 2,000-op chain": lambda: gv.graph(h, tape),
        "graph: MLP step": lambda: gv.graph(loss, mtape),
        "backprop": lambda: gv.backprop(small_tape, y, [sx]),
        "tape": lambda: gv.tape(small_tape),
        "flow": lambda: gv.flow(recorder()),
        "clipping": lambda: gv.clipping([eg.constant([3.0, 4.0])], threshold=1.0),
    }


VIEWS = views()


@pytest.mark.parametrize("name", list(VIEWS))
def test_the_output_carries_the_picture_once(name):
    view = VIEWS[name]()
    bundle = view._repr_mimebundle_()
    assert VIEW in bundle
    fallback = bundle["text/html"]
    assert "<svg" not in fallback and len(fallback) < 1000, "the fallback repeats the picture"
    assert "data-gv-notice" in fallback
    state = view.widget.get_state()
    json.dumps(state)  # what a notebook saves
    static = static_html(state)
    assert static is not None  # a page without JavaScript still gets the picture (the tape: its table)
    assert ("<table" if name == "tape" else "<svg") in static
    if name.startswith("graph"):
        data = {k: v for k, v in state.items() if k != "_esm"}  # the front end's code, not a picture
        # each picture once: the one shown, and each state a folded box opens to (drawn ahead)
        pictures = max(1, len(state.get("views") or {}))
        assert json.dumps(bundle).count("<svg") + json.dumps(data).count("<svg") == pictures


def test_static_picture_of_a_kernel_free_widget_follows_the_saved_positions():
    tape, y, x = chain(4)
    view = gv.backprop(tape, y, [x])
    w = view.widget
    first = static_html(w.get_state())
    w.index = {"step": 2}  # what a click on › › does in the browser
    second = static_html(w.get_state())
    assert first != second and "step: 2" in second
    frames = view.frames()
    assert frames.lookup("panel", step=2) in second  # the panel of the saved position


def test_export_draws_the_static_picture_from_the_saved_state():
    tape, h, x = chain(40)
    view = gv.graph(h, tape)
    bundle = view._repr_mimebundle_()
    model_id = bundle[VIEW]["model_id"]
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("gv.graph(h, tape)")
    cell.outputs = [nbformat.v4.new_output("display_data", data=bundle)]
    other = nbformat.v4.new_code_cell("w")
    other.outputs = [nbformat.v4.new_output("display_data", data={
        "text/html": "<b>someone else's widget</b>", VIEW: {"model_id": "other"}})]
    nb.cells = [cell, other]
    nb.metadata["widgets"] = {export_html.WIDGET_STATE: {"state": {
        model_id: {"model_module": "anywidget", "state": view.widget.get_state()},
        "other": {"model_module": "x", "state": {"value": 1}},
    }}}
    assert export_html.restore_static_pictures(nb) == 1
    restored = nb.cells[0].outputs[0]["data"]["text/html"]
    assert restored.startswith('<div class="gradviz gradviz-graph') and "<svg" in restored
    assert nb.cells[1].outputs[0]["data"]["text/html"] == "<b>someone else's widget</b>"
