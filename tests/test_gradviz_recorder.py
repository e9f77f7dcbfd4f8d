"""gv.Recorder: scalars and per-variable gradient statistics, checked against NumPy formulas."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import engine as eg
import gradviz as gv


def train(steps: int = 4, lr: float = 0.1):
    """A tiny two-layer regression trained with SGD, recorded after each update."""
    rng = np.random.default_rng(0)
    k1 = eg.Variable(rng.normal(size=(3, 4)).astype(np.float32), name="dense_1/kernel")
    b1 = eg.Variable(np.zeros(4, np.float32), name="dense_1/bias")
    k2 = eg.Variable(rng.normal(size=(4, 1)).astype(np.float32), name="dense_2/kernel")
    x = eg.constant(rng.normal(size=(8, 3)).astype(np.float32))
    y = eg.constant(rng.normal(size=(8, 1)).astype(np.float32))
    variables = [k1, b1, k2]
    opt = eg.optimizers.SGD(lr)
    rec = gv.Recorder()
    snapshots, grads_seen = [], []
    for step in range(steps):
        def loss_fn():
            return eg.mean((eg.tanh(x @ k1 + b1) @ k2 - y) ** 2)

        pairs = opt.compute_gradients(loss_fn, variables)
        opt.apply_gradients(pairs)
        rec.record(step, loss=loss_fn(), grads_and_vars=pairs, lr=lr)
        snapshots.append([v.numpy().astype(np.float64) for v in variables])
        grads_seen.append([g.numpy().astype(np.float64) for g, _ in pairs])
    return rec, variables, snapshots, grads_seen


def test_statistics_match_numpy():
    rec, variables, snaps, grads = train()
    assert rec.steps == [0, 1, 2, 3]
    assert rec.variable_names == ["dense_1/kernel", "dense_1/bias", "dense_2/kernel"]
    for j, var in enumerate(variables):
        st = rec.gradient_stats(var.name)
        assert st["step"] == [0, 1, 2, 3]
        for t in range(4):
            g = grads[t][j]
            np.testing.assert_allclose(st["norm"][t], np.linalg.norm(g), rtol=1e-12)
            np.testing.assert_allclose(st["mean"][t], g.mean(), rtol=1e-12, atol=1e-15)
            np.testing.assert_allclose(st["max"][t], np.abs(g).max(), rtol=1e-12)
            np.testing.assert_allclose(st["weight_norm"][t], np.linalg.norm(snaps[t][j]), rtol=1e-12)
        assert math.isnan(st["update_ratio"][0])  # nothing to compare the first record with
        for t in range(1, 4):
            expected = np.linalg.norm(snaps[t][j] - snaps[t - 1][j]) / np.linalg.norm(snaps[t - 1][j])
            np.testing.assert_allclose(st["update_ratio"][t], expected, rtol=1e-10)


def test_scalars_and_tensor_values():
    rec, *_ = train(steps=3)
    steps, losses = rec.scalar("loss")
    assert steps == [0, 1, 2] and all(isinstance(v, float) for v in losses)
    assert rec.scalar("lr")[1] == [0.1, 0.1, 0.1]
    assert rec.scalar_names == ["loss", "lr"]
    # what seed 002 wrote to TensorBoard: the variable x and the transformed gradient dydx
    rec2 = gv.Recorder()
    x = eg.Variable(10.0, name="x")
    rec2.record(0, x=x, dydx=eg.constant(0.9) * 9.0)
    assert rec2.scalar("x")[1] == [10.0]
    assert rec2.scalar("dydx")[1] == pytest.approx([8.1], rel=1e-6)
    with pytest.raises(ValueError, match="shape"):
        rec2.record(1, bad=eg.constant([1.0, 2.0]))
    with pytest.raises(KeyError, match="recorded"):
        rec2.scalar("nope")


def test_none_and_non_finite_gradients_stay_visible():
    w = eg.Variable([1.0, 2.0], name="w")
    u = eg.Variable([3.0], name="u")
    rec = gv.Recorder()
    rec.record(0, grads_and_vars=[(None, w), (np.array([np.inf], np.float32), u)])
    rec.record(1, grads_and_vars=[(np.array([np.nan, 1.0], np.float32), w), (np.array([1.0], np.float32), u)])
    assert math.isnan(rec.gradient_stats("w")["norm"][0])
    assert math.isinf(rec.gradient_stats("u")["norm"][0])
    assert math.isnan(rec.gradient_stats("w")["norm"][1])
    assert rec.gradient_stats("u")["norm"][1] == 1.0


def test_names_unnamed_and_duplicates_kept_apart():
    a, b, c = eg.Variable(1.0, name="w"), eg.Variable(2.0, name="w"), eg.Variable(3.0)
    rec = gv.Recorder()
    rec.record(0, grads_and_vars=[(1.0, a), (2.0, b), (3.0, c)])
    rec.record(1, grads_and_vars=[(1.0, a), (2.0, b), (3.0, c)])
    assert rec.variable_names == ["w", "w_2", "variable_2"]
    assert rec.gradient_stats("w_2")["norm"] == [2.0, 2.0]
    with pytest.raises(TypeError, match="pairs"):
        rec.record(2, grads_and_vars=[a])


def test_layers_grouping_and_round_trip():
    rec, *_ = train(steps=2)
    assert rec.layers() == {"dense_1": ["dense_1/kernel", "dense_1/bias"], "dense_2": ["dense_2/kernel"]}
    data = json.loads(json.dumps(rec.to_dict()).replace("NaN", "null").replace("null", "NaN"))
    again = gv.Recorder.from_dict(data)
    assert again.steps == rec.steps and again.scalar("loss") == rec.scalar("loss")
    assert again.gradient_stats("dense_2/kernel")["norm"] == rec.gradient_stats("dense_2/kernel")["norm"]
    assert rec.history == rec.to_dict()
    assert "3 variables" in repr(rec) and len(rec) == 2


def test_recording_inside_a_tape_records_nothing_on_it():
    w = eg.Variable([1.0, 2.0], name="w")
    rec = gv.Recorder()
    with eg.GradientTape() as tape:
        loss = eg.sum(w * w)
        n = len(tape.records)
        rec.record(0, loss=loss, grads_and_vars=[(eg.constant([2.0, 4.0]), w)])
        assert len(tape.records) == n
    assert tape.gradient(loss, w).numpy().tolist() == [2.0, 4.0]


def test_plot_is_a_pyplot_free_figure():
    from matplotlib.figure import Figure

    from gradviz.render.plot import png_bytes

    rec, *_ = train(steps=3)
    fig = rec.plot()
    assert isinstance(fig, Figure)
    assert [ax.get_title() for ax in fig.axes] == ["loss", "lr"]
    assert png_bytes(fig)[:8] == b"\x89PNG\r\n\x1a\n"
    assert [ax.get_title() for ax in rec.plot(names=["lr"]).axes] == ["lr"]
    assert rec.plot(log=True).axes[0].get_yscale() == "log"
    assert len(gv.Recorder().plot().axes) == 1  # empty: a hint, not an error
    with pytest.raises(KeyError):
        rec.plot(names=["missing"])


def test_plotting_widgets_never_import_pyplot():
    """The matplotlib widgets draw on Figure + Agg directly: no pyplot, no backend switching."""
    import subprocess
    import sys

    code = (
        "import sys, engine as eg, gradviz as gv\n"
        "assert 'matplotlib' not in sys.modules\n"
        "rec = gv.Recorder(); w = eg.Variable([1.0, 2.0], name='d/w')\n"
        "for s in range(3):\n"
        "    rec.record(s, loss=1.0 / (s + 1), grads_and_vars=[(eg.constant([0.1, s + 0.2]), w)])\n"
        "rec.plot(); gv.flow(rec).widget; gv.clipping([[3.0, 4.0]]).widget\n"
        "gv.descent(lambda v: v[0] ** 2 + v[1] ** 2, [1.0, 1.0], steps=3).widget\n"
        "gv.check_gradients(lambda x: x * x, 2.0).widget\n"
        "assert 'matplotlib' in sys.modules and 'matplotlib.pyplot' not in sys.modules\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "ok", out.stderr
