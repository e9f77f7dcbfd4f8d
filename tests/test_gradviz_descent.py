"""gv.descent: the recorded trace against the engine's optimizers and seed 002's numbers, and the
widget's state after simulated interaction."""

from __future__ import annotations

import math

import numpy as np
import pytest

import engine as eg
import gradviz as gv
from gradviz.model.descent_runs import evaluate_many
from tests.helpers import assert_ulps

# seeds_digest.md, seed 002: ½(x − 1)², x₀ = 10, after = before − decay·(before − 1), float32
DECAY_01 = [10.0, 9.1, 8.29, 7.561, 6.9049, 6.31441, 5.782969, 5.3046722, 4.874205, 4.4867845, 4.138106]
DECAY_09 = [10.0, 1.9000006, 1.0900002, 1.0090001, 1.0009, 1.00009, 1.0000091, 1.000001, 1.0000001,
            1.0, 1.0, 1.0, 1.0, 1.0, 1.0]


def half_square(x):
    return 0.5 * (x - 1.0) ** 2


@pytest.mark.parametrize(("lr", "steps", "expected"), [(0.1, 10, DECAY_01), (0.9, 14, DECAY_09)])
def test_seed_002_trace(lr, steps, expected):
    trace = gv.descent(half_square, 10.0, learning_rate=lr, steps=steps)
    assert trace.mode == "1d"
    rows = trace.rows("SGD")
    assert [r["step"] for r in rows] == list(range(1, steps + 1))
    assert_ulps([r["before"] for r in rows], expected[:-1])
    assert_ulps([r["after"] for r in rows], expected[1:])
    assert_ulps([r["gradient"] for r in rows], np.float32(expected[:-1]) - np.float32(1))
    assert_ulps([r["expected_after"] for r in rows], [r["after"] for r in rows])
    assert all(r["before"].dtype == np.float32 for r in rows)
    trace.step = 3
    html = trace.to_html()
    assert "expected after" in html and f"<td>{expected[3]:g}</td>" in html.replace("7.561", "7.561")


def manual(opt, f, start, steps):
    v = eg.Variable(np.float32(start), name="theta")
    points, slots = [v.numpy()], []
    for _ in range(steps):
        opt.minimize(lambda: f(v), [v])
        points.append(v.numpy())
        slots.append({k: s.numpy() for k, s in opt.slots(v).items()})
    return np.array(points), slots


def bowl(v):
    return v[0] ** 2 + 10.0 * v[1] ** 2


@pytest.mark.parametrize("name", ["SGD", "Momentum", "Adagrad", "RMSProp", "Adam"])
def test_paths_are_the_engine_optimizers(name):
    trace = gv.descent(bowl, [2.0, 1.0], optimizers=(name,), learning_rate=0.05, steps=12)
    traj = trace.trajectory(name)
    kwargs = {"momentum": 0.9} if name == "Momentum" else {}
    points, slots = manual(getattr(eg.optimizers, name)(learning_rate=0.05, **kwargs), bowl, [2.0, 1.0], 12)
    np.testing.assert_array_equal(traj.points, points)
    for u, s in zip(traj.updates, slots):
        assert u.slots.keys() == s.keys()
        for key in s:
            np.testing.assert_array_equal(u.slots[key], s[key])
        np.testing.assert_array_equal(u.delta, u.after - u.before)
        np.testing.assert_allclose(u.gradient, [2 * u.before[0], 20 * u.before[1]], rtol=1e-6)
        assert u.loss == pytest.approx(float(bowl(eg.constant(u.before))), rel=1e-6)


def test_widget_state_after_interaction():
    trace = gv.descent(bowl, [2.0, 1.0], optimizers=("SGD", "Momentum"), learning_rate=0.05, steps=20)
    assert trace.mode == "2d" and trace.selected == ("SGD", "Momentum")
    controls = trace.controls
    picture = trace._image.value
    controls["step"].value = 7
    assert trace.step == 7 and trace._image.value != picture
    cur = trace.current()
    assert cur["SGD"]["step"] == 7
    np.testing.assert_array_equal(cur["SGD"]["theta"], trace.trajectory("SGD").points[7])
    np.testing.assert_array_equal(cur["SGD"]["delta"], trace.trajectory("SGD").updates[6].delta)
    assert "momentum=" in trace._html.value  # Momentum's slot in the table
    # the learning-rate slider re-runs the optimizers
    controls["learning_rate"].value = 0.02
    assert trace.learning_rate == 0.02 and trace.trajectory("SGD").learning_rate == 0.02
    np.testing.assert_allclose(trace.trajectory("SGD").points[1], [2 - 0.02 * 4, 1 - 0.02 * 20], rtol=1e-6)
    # optimizer checkboxes
    controls["show Adam"].value = True
    assert trace.selected == ("SGD", "Momentum", "Adam") and "Adam" in trace.current()
    trace.selected = ["Adam"]
    assert controls["show SGD"].value is False and trace.selected == ("Adam",)
    trace.step = 20
    assert controls["step"].value == 20
    with pytest.raises(ValueError, match="step"):
        trace.step = 21
    with pytest.raises(ValueError, match="no optimizer"):
        trace.selected = ["Nope"]


def test_optimizer_specs_and_errors():
    inst = eg.optimizers.Momentum(learning_rate=0.5, momentum=0.5)
    trace = gv.descent(half_square, 3.0, optimizers={"heavy ball": inst, "adam": eg.optimizers.Adam,
                                                     "mine": lambda lr: eg.optimizers.SGD(lr)},
                       learning_rate=0.1, steps=5)
    assert trace.selected == ("heavy ball", "adam", "mine")
    assert inst.iterations == 0  # the given instance is copied, never stepped
    points, _ = manual(eg.optimizers.Momentum(learning_rate=0.1, momentum=0.5), half_square, 3.0, 5)
    np.testing.assert_array_equal(trace.trajectory("heavy ball").points, points)
    with pytest.raises(ValueError, match="unknown optimizer"):
        gv.descent(half_square, 3.0, optimizers=("LBFGS",))
    inst.minimize(lambda: half_square(eg.Variable(1.0)))
    with pytest.raises(ValueError, match="fresh"):
        gv.descent(half_square, 3.0, optimizers=(inst,))
    with pytest.raises(ValueError, match="scalar .* or a 2-vector"):
        gv.descent(lambda v: eg.sum(v), [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="scalar loss"):
        gv.descent(lambda v: v * 2.0, [1.0, 2.0])
    with pytest.raises(ValueError, match="does not depend"):
        gv.descent(lambda v: eg.stop_gradient(v) * 2.0, 1.0)


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning")
def test_divergence_is_shown_not_hidden():
    trace = gv.descent(half_square, 10.0, learning_rate=2.5, steps=200)
    traj = trace.trajectory("SGD")
    assert traj.diverged_at is not None and traj.diverged_at <= 200
    assert not np.all(np.isfinite(traj.points[-1])) or not math.isfinite(traj.losses[-1])
    trace.step = 200
    assert "diverged" in trace.to_html()


def test_grid_evaluation_vectorised_or_not():
    pts = np.array([[0.0, 1.0], [2.0, -1.0], [0.5, 0.5], [-1.0, 3.0], [1.0, 1.0]], np.float32)
    expected = [float(bowl(eg.constant(p))) for p in pts]
    np.testing.assert_allclose(evaluate_many(bowl, pts, np.float32), expected, rtol=1e-6)
    summed = lambda v: eg.sum(v * v * eg.constant([1.0, 10.0]))  # noqa: E731  (not vectorisable)
    np.testing.assert_allclose(evaluate_many(summed, pts, np.float32), expected, rtol=1e-6)
    trace = gv.descent(summed, [2.0, 1.0], steps=5)
    assert trace._grid[2].shape == (60, 60) and np.isfinite(trace._grid[2]).all()


def test_static_forms_and_save(tmp_path):
    trace = gv.descent(bowl, [2.0, 1.0], optimizers=("SGD", "Adam"), learning_rate=0.05, steps=10)
    trace.step = 4
    assert trace._repr_svg_().startswith("<svg") and trace.png()[:4] == b"\x89PNG"
    assert "step 4" in trace._repr_html_()
    for ext in ("png", "svg", "html"):
        assert trace.save(tmp_path / f"d.{ext}").stat().st_size > 1000
    one = gv.descent(half_square, 10.0, steps=3, theme="dark")
    assert one.theme == "dark" and one.png()[:4] == b"\x89PNG"
