"""gv.descent: the recorded trace against the engine's optimizers and seed 002's numbers, and the
widget's state after simulated interaction."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import engine as eg
import gradviz as gv
from gradviz.model.descent_runs import evaluate_many
from gradviz.widgets import descent_frames
from gradviz.widgets.descent_frames import MAX_STEPS, step_grid
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
    picture = trace.shown("path0")  # SGD's path, revealed up to the step shown
    controls["step"].value = 7
    assert trace.step == 7 and trace.widget.index["step"] == 7
    assert trace.shown("path0") == picture  # one trace per rate; the step only reveals more of it
    cur = trace.current()
    assert cur["SGD"]["step"] == 7
    np.testing.assert_array_equal(cur["SGD"]["theta"], trace.trajectory("SGD").points[7])
    np.testing.assert_array_equal(cur["SGD"]["delta"], trace.trajectory("SGD").updates[6].delta)
    assert "momentum=" in trace.shown("panel")  # Momentum's slot in the table
    # the learning-rate slider picks the runs at another rate of its grid
    controls["learning_rate"].value = 0.02
    assert trace.learning_rate == 0.02 and trace.trajectory("SGD").learning_rate == 0.02
    assert trace.widget.index["learning_rate"] == trace.rate_grid().index(0.02)
    assert trace.shown("path0") != picture
    np.testing.assert_allclose(trace.trajectory("SGD").points[1], [2 - 0.02 * 4, 1 - 0.02 * 20], rtol=1e-6)
    # optimizer checkboxes
    controls["show Adam"].value = True
    assert trace.selected == ("SGD", "Momentum", "Adam") and "Adam" in trace.current()
    assert trace.widget.index["show Adam"] == 1 and "Adam</td>" in trace.shown("panel")
    trace.selected = ["Adam"]
    assert controls["show SGD"].value is False and trace.selected == ("Adam",)
    assert trace.widget.index["show SGD"] == 0 and trace.shown("path0") == ""
    trace.step = 20
    assert controls["step"].value == 20
    with pytest.raises(ValueError, match="step"):
        trace.step = 21
    with pytest.raises(ValueError, match="no optimizer"):
        trace.selected = ["Nope"]


def _static(trace):
    """The panel of a static page (``to_html``, ``save``): the same, style included (one copy of it)."""
    return trace._panel()


def _move(trace, **positions):
    """Move the kernel-free widget's controls as the browser does (its index), and let Python follow."""
    trace.widget.index = {**trace.widget.index, **positions}


def test_kernel_free_controls_cover_every_optimizer_rate_and_step():
    """Every control of the kernel-free widget: the step slider offers every step, the rate slider a
    grid (its label is the rate run), a checkbox per optimizer of eg.optimizers.names(); each frame is
    what the engine's optimizer did at that rate, and the panel agrees with the slider."""
    trace = gv.descent(half_square, 10.0, optimizers=("SGD",), learning_rate=0.1, steps=10)
    w = trace.widget
    assert w.kind == "descent"
    controls = {c["name"]: c for c in w.controls}
    assert controls["step"]["labels"] == [str(k) for k in range(11)] and controls["step"]["play"]
    rates = trace.rate_grid()
    assert rates == [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0]
    lr = controls["learning_rate"]
    assert lr["labels"][w.index["learning_rate"]] == "0.1" and "12 rates from 0.001 to 5" in lr["note"]
    assert "snaps" in w.note
    assert [n for n in controls if n.startswith("show ")] == [f"show {n}" for n in eg.optimizers.names()]
    for r, rate in enumerate(rates):
        for k, name in enumerate(eg.optimizers.names()):
            boxes = {f"show {n}": int(n == name) for n in eg.optimizers.names()}
            _move(trace, learning_rate=r, step=4, **boxes)
            assert trace.learning_rate == rate and trace.selected == (name,) and trace.step == 4
            assert trace.shown("panel") == _static(trace)  # the frame = the static panel of that state
            assert f"learning rate {lr['labels'][r]}<" in trace.shown("panel")  # label and panel agree
            path = trace.shown(f"path{k}")
            points, _ = manual(eg.optimizers.get(name, learning_rate=rate), half_square, 10.0, 10)
            finite = np.isfinite(points).sum()
            assert len(path["points"]) == finite and path["counts"][4] == min(5, finite)
            assert trace.shown(f"loss{k}")["counts"] == path["counts"]
    _move(trace, **{"show SGD": 1, "show Adam": 1})  # two shown: no trace table, both in the table
    assert "trace</b>" not in trace.shown("panel") and trace.shown("panel") == _static(trace)
    assert "Adam</td>" in trace.shown("panel") and "SGD</td>" in trace.shown("panel")
    _move(trace, **{f"show {n}": 0 for n in eg.optimizers.names()})
    assert "Select an optimizer" in trace.shown("panel") and trace.shown("path0") == ""


def test_frames_grow_with_optimizers_times_rates_not_with_every_combination():
    makers = {f"SGD {k}": (lambda lr: eg.optimizers.SGD(lr)) for k in range(5)}  # + the 5 standard ones
    trace = gv.descent(half_square, 3.0, optimizers=makers, steps=5)
    assert len(trace.optimizers) == 10
    counts = {spec["name"]: len(spec["frames"]) for spec in trace.widget.layers}
    # per optimizer: path, loss, 1-D trace table and table row, one frame per rate (12), times the 4
    # momenta for the two the momentum slider drives (Momentum, Adam); then the step marker and header
    # (6 steps each), the momentum header (4), the rate header (12), and 3 fixed pieces of the panel
    assert [n for n in trace.optimizers if trace.follows_momentum(n)] == ["Momentum", "Adam"]
    assert len(trace.momentum_grid()) == 4
    expected = 8 * 4 * 12 + 2 * 4 * 12 * 4 + 6 + 6 + 4 + 12 + 3
    assert max(counts.values()) == 12 * 4 and sum(counts.values()) == expected, counts
    _move(trace, **{f"show {n}": 0 for n in trace.optimizers})
    assert trace.shown("panel") == _static(trace) and "SGD 0" not in trace.shown("panel")


def test_a_rate_set_in_code_off_the_grid_joins_it():
    trace = gv.descent(bowl, [2.0, 1.0], learning_rate=0.05, steps=8)
    trace.widget  # noqa: B018  (made: frames computed)
    trace.learning_rate = 0.0333
    labels = next(c["labels"] for c in trace.widget.controls if c["name"] == "learning_rate")
    assert labels[trace.widget.index["learning_rate"]] == "0.0333"
    assert "learning rate 0.0333<" in trace.shown("panel")
    assert 0.05 in trace.rate_grid() and 0.0333 in trace.rate_grid()


def test_long_runs_use_a_step_grid_that_the_slider_names(monkeypatch):
    assert len(step_grid(1000)) == 101 and step_grid(1000)[:3] == [0, 10, 20]
    assert step_grid(100) == [*range(101)]
    monkeypatch.setattr(descent_frames, "STEP_POSITIONS", 11)  # 11 positions, not 101: a quicker test
    trace = gv.descent(half_square, 3.0, learning_rate=0.1, steps=40)
    grid = trace.step_grid()
    assert grid == list(range(0, 41, 4))
    step = next(c for c in trace.widget.controls if c["name"] == "step")
    assert step["labels"] == [str(s) for s in grid] and "11 of the 40 steps" in step["note"]
    _move(trace, step=5)
    assert trace.step == 20 and "<b>step 20</b>" in trace.shown("panel")
    path = trace.shown("path0")  # the points of the grid's steps: 0, 4, ..., 40
    assert len(path["points"]) == 11 and path["counts"][5] == 6 and "<td>20</td>" in trace.shown("trace0")
    trace.step = 21  # off the grid: the grid takes it in
    assert 21 in trace.step_grid() and "<b>step 21</b>" in trace.shown("panel")


def test_the_lessons_race_fits_the_page_budget():
    """Lesson 04's race: every optimizer × rate × step (× momentum for Momentum and Adam) kept compactly
    (a lesson page is <= 3 MB; 0.71 MB before the momentum slider, 1.36 MB with it)."""
    def valley(v):
        return 0.1 * v[0] ** 2 + 2.0 * v[1] ** 2

    race = gv.descent(valley, [-4.0, 1.0], optimizers=("SGD", "Momentum", "Adagrad", "Adam"),
                      learning_rate=0.1, steps=60)
    state = {k: getattr(race.widget, k) for k in ("picture", "controls", "index", "layers", "info")}
    size = len(json.dumps(state, separators=(",", ":")).encode())
    assert size < 1_500_000, f"{size:,} bytes"
    assert "var(--jp-layout-color0" in race.widget.picture  # theme colours


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_contour_fill_follows_the_theme(theme):
    """The 2-D contour's fill is the theme's text colour (a CSS variable in the kernel-free picture), more
    opaque uphill: no fixed grey that stays light on JupyterLab's dark background."""
    import re  # noqa: PLC0415

    view = gv.descent(lambda v: 0.1 * v[0] ** 2 + 2.0 * v[1] ** 2, [-4.0, 1.0], steps=5, theme=theme)
    fills = re.findall(r"fill: ([^;\"]+); fill-opacity: ([\d.]+)", view.widget.picture)
    shaded = sorted(float(a) for c, a in fills if c == "var(--gv-text)")
    assert len(shaded) >= 10 and shaded[0] < 0.05 and 0.25 <= shaded[-1] <= 0.3, fills[:5]
    greys = [c for c, _ in fills if not c.startswith("var(")]
    assert not greys, f"fills in fixed colours: {sorted(set(greys))[:5]}"


@pytest.mark.parametrize(("kwargs", "error", "words"), [
    ({"steps": 10**7}, ValueError, r"steps must be in 1\.\.1,000, got 10,000,000: .*time.*memory"),
    ({"steps": 0}, ValueError, r"steps must be in 1\.\.1,000"),
    ({"steps": 2.5}, TypeError, "steps must be a whole number"),
    ({"steps": True}, TypeError, "steps must be a whole number"),
    ({"learning_rate": 0.0}, ValueError, "learning_rate must be a positive number"),
    ({"learning_rate": -0.1}, ValueError, "learning_rate must be a positive number"),
    ({"learning_rate": math.nan}, ValueError, "learning_rate must be a positive number"),
    ({"learning_rate": math.inf}, ValueError, "learning_rate must be a positive number"),
    ({"learning_rate": "0.1"}, TypeError, "learning_rate must be a number"),
    ({"optimizers": ("SGD", "Adamw")}, ValueError,
     "unknown optimizer 'Adamw'; use one of " + ", ".join(eg.optimizers.names())),
    ({"xlim": (1.0, -1.0)}, ValueError, "xlim must be finite with low < high"),
    ({"ylim": "wide"}, TypeError, "ylim must be a pair"),
])
def test_bad_arguments_are_clear_errors(kwargs, error, words):
    with pytest.raises(error, match=words):
        gv.descent(half_square, 3.0, **kwargs)


def test_given_limits_fix_the_view_in_1d_and_2d():
    """xlim and ylim are kept as given: θ and f(θ) in 1-D (ylim was ignored there), θ[0] and θ[1] in 2-D;
    without them the view spans the paths."""
    one = gv.descent(half_square, 3.0, steps=5, xlim=(-1, 4), ylim=(-2, 20))
    assert (one.xlim, one.ylim) == ((-1.0, 4.0), (-2.0, 20.0))
    free = gv.descent(half_square, 3.0, steps=5)
    assert free.ylim != (-2.0, 20.0) and free.ylim[1] >= half_square(3.0)
    two = gv.descent(lambda v: 0.5 * (v[0] ** 2 + v[1] ** 2), [3.0, 1.0], steps=5, xlim=(-1, 4), ylim=(-3, 3))
    assert (two.xlim, two.ylim) == ((-1.0, 4.0), (-3.0, 3.0))


def test_the_step_cap_is_exact():
    trace = gv.descent(half_square, 3.0, steps=MAX_STEPS)
    assert len(trace.trajectory().updates) == MAX_STEPS == 1000
    with pytest.raises(ValueError, match="steps must be in 1..1,000, got 1,001"):
        gv.descent(half_square, 3.0, steps=MAX_STEPS + 1)


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
    path = trace.shown("path0")  # past the divergence, the path ends at its last finite point
    assert path["counts"][-1] == len(path["points"]) <= traj.diverged_at + 1
    assert f"(diverged at step {traj.diverged_at})" in trace.shown("panel") == _static(trace)


def test_grid_evaluation_vectorised_or_not():
    pts = np.array([[0.0, 1.0], [2.0, -1.0], [0.5, 0.5], [-1.0, 3.0], [1.0, 1.0]], np.float32)
    expected = [float(bowl(eg.constant(p))) for p in pts]
    np.testing.assert_allclose(evaluate_many(bowl, pts, np.float32), expected, rtol=1e-6)
    summed = lambda v: eg.sum(v * v * eg.constant([1.0, 10.0]))  # noqa: E731  (not vectorisable)
    np.testing.assert_allclose(evaluate_many(summed, pts, np.float32), expected, rtol=1e-6)
    trace = gv.descent(summed, [2.0, 1.0], steps=5)
    assert trace.scene.grid[2].shape == (60, 60) and np.isfinite(trace.scene.grid[2]).all()


def test_static_forms_and_save(tmp_path):
    trace = gv.descent(bowl, [2.0, 1.0], optimizers=("SGD", "Adam"), learning_rate=0.05, steps=10)
    trace.step = 4
    assert trace._repr_svg_().startswith("<svg") and trace.png()[:4] == b"\x89PNG"
    assert "step 4" in trace._repr_html_()
    for ext in ("png", "svg", "html"):
        assert trace.save(tmp_path / f"d.{ext}").stat().st_size > 1000
    one = gv.descent(half_square, 10.0, steps=3, theme="dark")
    assert one.theme == "dark" and one.png()[:4] == b"\x89PNG"


def test_the_static_picture_of_a_saved_state_is_the_browsers():
    """An exported page without JavaScript draws the saved state as frames_view.js would: the panel
    and the path revealed up to the saved step."""
    import re

    from gradviz.render.static_state import static_html

    trace = gv.descent(half_square, 10.0, steps=10)
    _move(trace, step=3)
    names = ("kind", "title", "note", "picture", "controls", "index", "layers", "info")
    out = static_html(json.loads(json.dumps({k: getattr(trace.widget, k) for k in names})))
    assert _static(trace) in out and "step: 3" in out
    sgd = re.search(r'data-gv-layer="path0">(.*?)</g>', out).group(1)
    ghost, shown = re.findall(r'<polyline points="([^"]*)"', sgd)
    assert len(ghost.split()) == 11 and len(shown.split()) == 4
    assert sgd.count("<line ") == 1  # the tangent at θ3


# ---- the momentum slider (API.md: Momentum's μ and Adam's β₁, computed ahead like the learning rate) ----


def test_the_momentum_slider_runs_the_engines_momentum_and_adam_at_each_value():
    """Every position of the momentum slider is the engine's Momentum(lr, momentum=μ) and
    Adam(lr, beta1=μ) run, without a kernel; SGD does not depend on it; the panel names the value."""
    trace = gv.descent(bowl, [2.0, 1.0], optimizers=("SGD", "Momentum", "Adam"), learning_rate=0.05,
                       steps=12, momentum=0.9)
    controls = {c["name"]: c for c in trace.widget.controls}
    mom = controls["momentum"]
    assert mom["labels"] == ["0", "0.5", "0.9", "0.99"]
    assert mom["labels"][trace.widget.index["momentum"]] == "0.9"
    assert "Momentum's μ and Adam's β₁" in mom["note"]
    names = list(trace.optimizers)
    sgd_path = trace.shown(f"path{names.index('SGD')}")
    for m, mu in enumerate(trace.momentum_grid()):
        _move(trace, momentum=m, step=12)
        assert trace.momentum == mu and f"momentum {mu:g}," in trace.shown("panel")
        assert trace.shown("panel") == _static(trace)
        assert trace.shown(f"path{names.index('SGD')}") == sgd_path  # SGD has no momentum
        for name, opt in (("Momentum", eg.optimizers.Momentum(0.05, momentum=mu)),
                          ("Adam", eg.optimizers.Adam(0.05, beta1=mu))):
            points, _ = manual(opt, bowl, [2.0, 1.0], 12)
            np.testing.assert_array_equal(trace.trajectory(name).points, points)
    heavy, light = trace.run("Momentum", 0.05, 0.99), trace.run("Momentum", 0.05, 0.0)
    np.testing.assert_array_equal(light.points, trace.run("SGD", 0.05).points)  # μ = 0 is SGD
    assert not np.array_equal(heavy.points, light.points)


def test_momentum_given_off_the_grid_joins_it_and_instances_keep_their_own():
    mine = eg.optimizers.Momentum(0.05, momentum=0.3)
    trace = gv.descent(bowl, [2.0, 1.0], optimizers={"mine": mine, "named": "Momentum"}, learning_rate=0.05,
                       steps=6, momentum=0.6)
    assert trace.momentum_grid() == [0.0, 0.5, 0.6, 0.9, 0.99]
    assert not trace.follows_momentum("mine") and trace.follows_momentum("named")
    points, _ = manual(eg.optimizers.Momentum(0.05, momentum=0.3), bowl, [2.0, 1.0], 6)
    for mu in trace.momentum_grid():
        trace.momentum = mu
        np.testing.assert_array_equal(trace.trajectory("mine").points, points)
    for bad in (1.0, -0.1, float("nan")):
        with pytest.raises(ValueError, match=r"momentum must be in \[0, 1\)"):
            gv.descent(bowl, [2.0, 1.0], momentum=bad)
    with pytest.raises(TypeError, match="momentum"):
        gv.descent(bowl, [2.0, 1.0], momentum="0.9")
