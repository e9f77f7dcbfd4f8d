"""gv.graph, gv.tape and gv.backprop: Python-side state after simulated interaction, static reprs, save,
and that `import gradviz` stays light."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import engine as eg
import gradviz as gv
from gradviz.render.theme import palette

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def expression():
    """f(x, y) = x² − 2xy + 3y at (2, 1): df/dx = 2, df/dy = −1 (lesson 02)."""
    x, y = eg.constant(2.0), eg.constant(1.0)
    with eg.GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        f = x * x - 2.0 * x * y + 3.0 * y
    return tape, {"x": x, "y": y, "f": f, "tape": tape}


# ---- gv.graph ------------------------------------------------------------------------------------


def test_graph_labels_values_gradients_and_tooltips():
    tape, names = expression()
    view = gv.graph(names["f"], tape, names=names, theme="light")
    svg = view.to_svg()
    assert "x = 2.0</text>" in svg and "y = 1.0</text>" in svg and "f = 3.0</text>" in svg
    assert "grad 2.0</text>" in svg and "grad &#45;1.0</text>" in svg  # Graphviz writes "-" as &#45;
    assert palette("light").grad_neg in svg  # the negative gradient is drawn in its own colour
    assert 'xlink:title="x: watched tensor' in svg  # hover shows the full value
    assert "<svg" in view._repr_svg_() and not view._repr_svg_().startswith("<?xml")


def test_graph_finds_the_tape_in_names():
    tape, names = expression()
    view = gv.graph(names["f"], names=names)
    assert view.full_model.node_for(names["x"]).label == "x"


def test_graph_click_selects_and_shows_details():
    tape, names = expression()
    view = gv.graph(names["f"], tape, names=names, theme="light")
    w = view.widget
    before = w.svg
    x_sid = view.drawing.ids[view.full_model.node_for(names["x"]).id]
    w.selected = x_sid  # what a click in the browser does
    assert view.selected == view.full_model.node_for(names["x"]).id
    assert "<b>x</b>" in view.details and "watched tensor" in view.details
    assert w.svg != before and palette("light").highlight in w.svg
    assert "gradient" in w.info[x_sid]
    w.selected = ""
    assert view.selected is None and view.details == ""


def test_graph_show_fields():
    tape, names = expression()
    view = gv.graph(names["f"], tape, names=names, show=("value", "dtype", "device"))
    svg = view.to_svg()
    assert "grad 2.0" not in svg and "float32 cpu:0" in svg
    with pytest.raises(ValueError, match="unknown field"):
        gv.graph(names["f"], tape, show=("colour",)).to_svg()


def test_graph_collapse_expand_by_clicking():
    rng = np.random.default_rng(0)
    x = eg.constant(rng.normal(size=2).astype(np.float32))
    ws = [eg.Variable(rng.normal(size=2).astype(np.float32), name=f"dense_{k}/kernel") for k in range(40)]
    with eg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        h = x
        for w in ws:
            h = eg.tanh(h * w)
        loss = eg.sum(h)
    view = gv.graph(loss, tape)
    assert view.collapsible and len(view.model) < 50
    w = view.widget
    group = view.model.node_for(ws[5])
    assert group.kind == "group" and "‖∇kernel‖" in (w.svg or w.views[w.state])
    w.selected = view.drawing.ids[group.id]  # click the group: it expands
    assert "dense_5" in view.expanded and view.model.node_for(ws[5]).kind == "tensor"
    assert "dense_5/kernel" in (w.svg or w.views[w.state])
    w.selected = view.drawing.ids["c:dense_5"]  # click its frame: it collapses again
    assert "dense_5" not in view.expanded
    assert not gv.graph(loss, tape, collapse=False).collapsible


# ---- gv.tape -------------------------------------------------------------------------------------


def test_tape_inspector_rows_slider_and_why_none():
    x, c = eg.constant(3.0), eg.constant(1.0)
    with eg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        a = x * x
        y = a + c
    view = gv.tape(tape, names=locals(), target=y, sources=[x, c])
    assert [r.op for r, _ in view.rows] == ["multiply", "add"]
    html = view.to_html()
    assert "watched tensors: x ()" in html and "not watched" in html
    w = view.widget
    assert view.row == 0 and "multiply" in view.row_details
    w.index = {**w.index, "op": 1}  # the browser moved the slider
    assert view.row == 1 and "<b>op #" in view.row_details and "add" in view.row_details
    layers = {layer["name"]: layer["frames"] for layer in w.layers}
    assert "background" in layers["table"]["1"].split("<tr")[3]  # the second op's row is highlighted
    assert "add" in layers["details"]["1"] and "multiply" in layers["details"]["0"]
    labels = [label for label, _ in view._choices]
    w.index = {**w.index, "target": labels.index("y ()"), "source": labels.index("c ()")}
    assert "not watched" in view.why
    w.index = {**w.index, "source": labels.index("x ()")}
    assert "gradient of y () w.r.t. x ()" in view.why and "6.0" in view.why
    view.select(0)  # from code: the browser's slider follows
    assert w.index["op"] == 0


def test_tape_inspector_nested_tapes():
    x = eg.constant(3.0)
    with eg.GradientTape(persistent=True) as outer:
        outer.watch(x)
        with eg.GradientTape(persistent=True) as inner:
            inner.watch(x)
            y = x * x
        dy = inner.gradient(y, x)  # recorded by outer only
    view = gv.tape([outer, inner], names={"outer": outer, "inner": inner, "x": x, "y": y, "dy": dy})
    assert view.labels == ["outer", "inner"]
    first, *rest = view.rows
    assert first[1] == [0, 1]  # y = x * x: both tapes
    assert rest and all(which == [0] for _, which in rest)  # the inner gradient's ops: outer only
    html = view.to_html()
    assert "<th>outer</th><th>inner</th>" in html


def test_tape_inspector_used_tape_says_why_it_is_empty():
    x = eg.constant(3.0)
    with eg.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)
    view = gv.tape(tape)
    assert "used" in view.to_html() and "persistent=True" in view.to_html()
    assert gv.explain_none(tape, y, x).startswith("tape already used")


# ---- gv.backprop ---------------------------------------------------------------------------------


def test_backprop_stepper_walks_the_ops_backwards():
    tape, names = expression()
    x, y, f = names["x"], names["y"], names["f"]
    bp = gv.backprop(tape, f, [x, y], names=names, theme="light")
    assert bp.position == 0 and bp.op is None and "seed" in bp.panel
    ops = []
    for k in range(1, len(bp)):
        bp.go(k)
        ops.append(bp.op)
    recorded = [r.op for r in tape.records]
    assert ops == recorded[::-1]  # every op once, last to first
    gx, gy = tape.gradient(f, [x, y])
    assert float(bp.gradients[x.id]) == float(gx) == 2.0
    assert float(bp.gradients[y.id]) == float(gy) == -1.0
    assert "Done." in bp.panel


def test_backprop_slider_changes_highlight_panel_and_hidden_gradients():
    tape, names = expression()
    bp = gv.backprop(tape, names["f"], [names["x"], names["y"]], names=names, theme="light")
    pal = palette("light")
    w = bp.widget
    layers = {layer["name"]: layer["frames"] for layer in w.layers}
    patches, panels = layers["graph"], layers["panel"]
    assert len(panels) == len(bp) and w.index == {"step": 0}

    def hidden(patch: dict) -> int:
        return sum(t.get("text") == "grad ?" for p in patch.values() for t in p["texts"].values())

    assert hidden(patches["0"]) > 0  # nothing but the seed is known yet
    w.index = {"step": 1}  # the browser moved the slider: Python follows
    assert bp.position == 1 and bp.highlighted == f"o{tape.records[-1].op_id}"
    op_sid = bp.graph.drawing.ids[bp.highlighted]
    assert patches["1"][op_sid]["shapes"]["stroke"] == pal.highlight  # the op of this step is outlined
    for k in range(len(bp)):  # the slider's position and the panel's step never disagree
        assert f"Step {k} of {len(bp) - 1}" in panels[str(k)]
    bp.next()
    assert w.index == {"step": 2} and bp.position == 2
    bp.prev()
    assert bp.position == 1 and w.index == {"step": 1}
    assert hidden(patches[str(len(bp) - 1)]) == 0  # at the end every gradient is known
    assert "grad ?" not in w.picture  # the patches carry the hidden gradients, not the picture
    assert w is bp.widget


def test_backprop_shows_local_derivatives_and_accumulation():
    x = eg.constant(3.0)
    with eg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x + x
    bp = gv.backprop(tape, y, [x], names={"x": x, "y": y})
    bp.go(2)
    assert bp.op == "multiply"
    assert "upstream × local" in bp.panel and "accumulate" in bp.panel
    assert "<code>1.0</code> + <code>3.0</code> = <code>4.0</code>" in bp.panel
    assert "d / d x = <code>7.0</code>" in bp.panel


def test_backprop_reports_none_with_reason():
    x, c = eg.constant(3.0), eg.constant(2.0)
    with eg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * c
    bp = gv.backprop(tape, y, [x, c], names={"x": x, "c": c, "y": y})
    bp.go(len(bp) - 1)
    assert "d / d c = None: not watched" in bp.panel


def test_backprop_needs_records():
    x = eg.constant(3.0)
    with eg.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)
    with pytest.raises(ValueError, match="persistent=True"):
        gv.backprop(tape, y, [x])


# ---- static reprs, save, import -----------------------------------------------------------------


@pytest.mark.parametrize("kind", ["graph", "tape", "backprop"])
def test_static_reprs_and_save(kind, tmp_path):
    tape, names = expression()
    view = {
        "graph": lambda: gv.graph(names["f"], tape, names=names),
        "tape": lambda: gv.tape(tape, names=names),
        "backprop": lambda: gv.backprop(tape, names["f"], [names["x"]], names=names),
    }[kind]()
    html = view._repr_html_()
    assert html.startswith("<div class") and "gradviz" in html
    bundle = view._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert "data-gv-notice" in bundle["text/html"] and "<svg" not in bundle["text/html"]  # picture once
    assert view.save(tmp_path / "v.html").read_text().startswith("<!DOCTYPE html>")
    if kind == "tape":
        with pytest.raises(NotImplementedError, match=".html"):
            view.save(tmp_path / "v.png")
        return
    assert view.save(tmp_path / "v.svg").read_text().count("<svg") == 1
    assert view.save(tmp_path / "v.png").read_bytes().startswith(PNG_MAGIC)
    with pytest.raises(ValueError, match="unsupported"):
        view.save(tmp_path / "v.jpg")


def test_import_gradviz_is_light():
    code = (
        "import sys, gradviz as gv\n"
        "heavy = [m for m in ('matplotlib', 'ipywidgets', 'anywidget', 'graphviz', 'wasmtime', 'traitlets')"
        " if m in sys.modules]\n"
        "assert not heavy, heavy\n"
        "assert callable(gv.graph)\n"
        "import gradviz.widgets.graph_entry, gradviz.widgets.backprop_view\n"  # modules are not the functions
        "assert callable(gv.graph) and callable(gv.backprop)\n"
        "assert gv.graph.__module__ == 'gradviz.widgets.graph_entry'\n"
        "assert gradviz.widgets.backprop_view.backprop is gv.backprop\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
