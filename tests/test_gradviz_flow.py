"""gv.flow: per-layer summaries against NumPy, the widget's state after simulated interaction, the
model / pairs / graph forms."""

from __future__ import annotations

import math

import numpy as np
import pytest

import engine as eg
import gradviz as gv
from gradviz.model.graph_model import build_model
from gradviz.widgets.flow_view import edge_magnitudes, summarise


def recorded(steps: int = 5):
    rng = np.random.default_rng(1)
    k1 = eg.Variable(rng.normal(size=(3, 4)).astype(np.float32), name="dense_1/kernel")
    b1 = eg.Variable(np.full(4, 0.1, np.float32), name="dense_1/bias")
    k2 = eg.Variable(rng.normal(size=(4, 1)).astype(np.float32), name="dense_2/kernel")
    x = eg.constant(rng.normal(size=(8, 3)).astype(np.float32))
    y = eg.constant(rng.normal(size=(8, 1)).astype(np.float32))
    variables = [k1, b1, k2]
    opt = eg.optimizers.SGD(0.2)
    rec = gv.Recorder()
    grads, values = [], []
    for step in range(steps):
        pairs = opt.compute_gradients(lambda: eg.mean((eg.tanh(x @ k1 + b1) @ k2 - y) ** 2), variables)
        rec.record(step, grads_and_vars=pairs)
        grads.append([g.numpy().astype(np.float64) for g, _ in pairs])
        values.append([v.numpy().astype(np.float64) for v in variables])
        opt.apply_gradients(pairs)
    return rec, grads, values


def test_summaries_by_layer_match_numpy():
    rec, grads, values = recorded()
    steps, names, norm = summarise(rec, "norm", "layer")
    assert steps == list(range(5)) and names == ["dense_1", "dense_2"]
    for t in range(5):
        layer1 = np.concatenate([grads[t][0].ravel(), grads[t][1].ravel()])
        np.testing.assert_allclose(norm[t], [np.linalg.norm(layer1), np.linalg.norm(grads[t][2])], rtol=1e-10)
    _, _, biggest = summarise(rec, "max", "layer")
    np.testing.assert_allclose(biggest[2, 0], max(np.abs(grads[2][0]).max(), np.abs(grads[2][1]).max()))
    _, _, mean = summarise(rec, "mean", "layer")
    np.testing.assert_allclose(mean[1, 0], np.concatenate([grads[1][0].ravel(), grads[1][1].ravel()]).mean(),
                               rtol=1e-9, atol=1e-15)
    _, _, ratio = summarise(rec, "update_ratio", "layer")
    assert np.isnan(ratio[0]).all()
    w_now = np.concatenate([values[3][0].ravel(), values[3][1].ravel()])
    w_before = np.concatenate([values[2][0].ravel(), values[2][1].ravel()])
    np.testing.assert_allclose(ratio[3, 0], np.linalg.norm(w_now - w_before) / np.linalg.norm(w_before),
                               rtol=1e-9)
    _, names_v, norm_v = summarise(rec, "norm", "variable")
    assert names_v == rec.variable_names
    np.testing.assert_allclose(norm_v[4, 1], np.linalg.norm(grads[4][1]), rtol=1e-10)


def test_flow_widget_state_after_interaction():
    rec, grads, _ = recorded()
    view = gv.flow(rec)
    assert view.step == 4 and view.by == "layer" and view.names == ["dense_1", "dense_2"]
    controls = view.controls
    picture = view.shown("moving")  # the bars and the step marker the slider moves
    controls["step"].value = 1  # the slider's value is the recorded step
    assert view.step == 1 and view.shown("moving") != picture and view.widget.index["step"] == 1
    np.testing.assert_allclose(view.values("norm")[1], np.linalg.norm(grads[1][2]), rtol=1e-10)
    assert "<b>step 1</b>" in view.shown("panel")
    view.widget.index = {**view.widget.index, "step": 2}  # moved in the browser: the state follows
    assert view.step == 2 and "<b>step 2</b>" in view.shown("panel")
    figure = view.shown("figure")
    controls["by"].value = "variable"
    assert view.names == rec.variable_names and len(view.values()) == 3
    controls["stat"].value = "update_ratio"
    assert view.stat == "update_ratio" and view.shown("figure") != figure  # another figure, no kernel
    controls["log"].value = False
    assert view.log is False
    assert "Computed ahead" in view.widget.note and "recorded steps" in view.widget.note
    view.step = 3
    assert controls["step"].value == 3
    with pytest.raises(ValueError, match="not recorded"):
        view.step = 99
    with pytest.raises(ValueError, match="stat"):
        view.stat = "median"


def test_the_line_panel_apart_draws_the_whole_figures_picture():
    """The kernel-free figure is drawn once per (by, log) without the line panel, which a "lines" layer
    draws for every stat: together, for every combination, the same paths and texts as the whole
    figure plot_frames draws (one per by × log × stat), and the x axis is the same for every stat."""
    import re  # noqa: PLC0415

    from gradviz.render.static_state import _fill  # noqa: PLC0415
    from gradviz.widgets.plot_widget import PlotWidget  # noqa: PLC0415

    rec, _, _ = recorded(steps=12)
    view = gv.flow(rec)
    apart = {spec["name"]: spec for spec in view._make_frames(view._frame_controls()).layers}
    whole = {spec["name"]: spec for spec in PlotWidget._make_frames(view, view._frame_controls()).layers}
    assert len(apart["figure"]["frames"]) == 4 and len(apart["lines"]["frames"]) == 12
    assert len(whole["figure"]["frames"]) == 12 and "lines" not in whole

    def drawn(svg):
        return set(re.findall(r' d="([^"]*)"', svg)), sorted(re.findall(r">([^<>]+)</text>", svg))

    grids: dict[tuple, set] = {}
    for key, svg in whole["figure"]["frames"].items():
        at = dict(zip(whole["figure"]["deps"], key.split(",")))
        base = apart["figure"]["frames"][",".join(at[d] for d in apart["figure"]["deps"])]
        lines = apart["lines"]["frames"][",".join(at[d] for d in apart["lines"]["deps"])]
        assert '<g data-gv-layer="lines"></g><g data-gv-layer="moving">' in base  # under the moving parts
        assert drawn(_fill(base, "lines", lines)) == drawn(svg), at
        vertical = tuple(sorted(p for p in drawn(svg)[0] if p.endswith(" 23.0")))  # grids, all panels
        grids.setdefault((at["by"], at["log"]), set()).add(vertical)
    assert all(len(g) == 1 for g in grids.values())  # the stat never moves the step axis


def test_flow_from_pairs_model_and_dict():
    rec, _, _ = recorded(steps=2)
    again = gv.flow(rec.to_dict())
    assert again.steps == [0, 1]
    w = eg.Variable([3.0, 4.0], name="w")
    one = gv.flow([(eg.constant([0.3, 0.4]), w)])
    assert one.values("norm") == pytest.approx([0.5]) and "one step" in one.to_html()
    eg.layers.reset_names()
    model = eg.layers.Sequential([eg.layers.Dense(4, activation="tanh", seed=0), eg.layers.Dense(1, seed=1)])
    x = eg.constant(np.linspace(-1, 1, 12, dtype=np.float32).reshape(6, 2))
    model(x)
    view = gv.flow(model, loss=lambda: eg.mean(model(x) ** 2), by="variable")
    with eg.GradientTape() as tape:
        loss = eg.mean(model(x) ** 2)
    expected = [float(np.linalg.norm(g.numpy())) for g in tape.gradient(loss, model.trainable_variables)]
    assert view.names == [v.name for v in model.trainable_variables]
    np.testing.assert_allclose(view.values("norm"), expected, rtol=1e-6)
    bare = gv.flow(model)
    assert all(math.isnan(v) for v in bare.values("norm")) and "loss=" in bare.to_html()
    with pytest.raises(ValueError, match="no gradient statistics"):
        gv.flow(gv.Recorder())
    with pytest.raises(TypeError, match="cannot show"):
        gv.flow(42)


def test_edge_magnitudes_on_the_graph():
    x = eg.constant([1.0, -2.0])
    w = eg.Variable([3.0, 0.5], name="w")
    with eg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        h = x * w
        loss = eg.sum(h * h)
    model = build_model(loss, tape, names={"x": x, "w": w, "h": h, "loss": loss})
    mags = edge_magnitudes(model)
    gh = tape.gradient(loss, h).numpy()  # 2h
    gx, gw = tape.gradient(loss, [x, w])
    mul = model.op_id(next(r for r in model.records if r.op == "multiply" and r.output.obj is h))
    assert mags[(mul, model.node_for(h).id)] == pytest.approx(np.linalg.norm(gh))
    assert mags[(model.node_for(x).id, mul)] == pytest.approx(np.linalg.norm(gx.numpy()))
    assert mags[(model.node_for(w).id, mul)] == pytest.approx(np.linalg.norm(gw.numpy()))
    view = gv.flow(loss, tape, names={"x": x, "w": w, "h": h, "loss": loss})
    svg = view.to_svg()
    assert "gradient norm" in svg and 'stroke-width="' in svg
    widths = {float(v) for v in __import__("re").findall(r'stroke-width="([0-9.]+)"', svg)}
    assert len(widths) > 2  # edges of different widths


def test_static_forms_and_save(tmp_path):
    rec, _, _ = recorded(steps=3)
    view = gv.flow(rec, theme="dark")
    assert view._repr_svg_().startswith("<svg") and view.png()[:4] == b"\x89PNG"
    assert "dense_1" in view._repr_html_()
    for ext in ("png", "svg", "html"):
        assert view.save(tmp_path / f"flow.{ext}").stat().st_size > 1000


def test_graph_edge_magnitude_option_widens_edges_with_the_gradient():
    import engine as eg
    import gradviz as gv

    x = eg.constant([1.0, 2.0], name="x")
    with eg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = eg.sum(eg.tanh(x * 3.0) * 100.0)
    plain = gv.graph(y, tape, names={"x": x, "y": y})
    wide = gv.graph(y, tape, names={"x": x, "y": y}, edge_magnitude=True)
    assert "penwidth" in wide.drawing.source and "gradient norm" in wide.drawing.source
    assert "gradient norm" not in plain.drawing.source
