"""gv.clipping: the lab's numbers against NumPy formulas, and its state after simulated interaction."""

from __future__ import annotations

import math

import numpy as np
import pytest

import engine as eg
import gradviz as gv
from gradviz.model.clip_results import measure_before
from gradviz.widgets.clipping_lab import METHODS, clip_gradients
from tests.helpers import assert_ulps

# seed 004's clip_by_global_norm example
C1 = np.array([[0, 1, 2], [3, 4, 5]], np.float32)
C2 = np.array([[-2, -4], [2, 4]], np.float32)


def angle(before, after) -> float:
    a = np.concatenate([np.ravel(x) for x in before]).astype(np.float64)
    b = np.concatenate([np.ravel(x) for x in after]).astype(np.float64)
    return float(np.degrees(np.arccos(np.clip(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)), -1, 1))))


def numpy_clip(grads, method, c):
    if method == "value":
        return [np.clip(g, -c, c) for g in grads]
    if method == "global norm":
        n = np.sqrt(sum((g.astype(np.float64) ** 2).sum() for g in grads))
        return [g * c / max(n, c) for g in grads]
    if method == "per-variable norm":
        return [g * c / max(np.linalg.norm(g), c) for g in grads]
    return [g * c / np.maximum(np.linalg.norm(g, axis=-1, keepdims=True), c) for g in grads]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("c", [1.5, 5.0, 100.0])
def test_numbers_match_numpy(method, c):
    grads = [C1, C2]
    r = clip_gradients([eg.constant(C1), eg.constant(C2)], method, c)
    expected = numpy_clip(grads, method, c)
    for got, want in zip(r.numpy(), expected):
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(r.global_norm_before, math.sqrt(95), rtol=1e-6)
    np.testing.assert_allclose(r.global_norm_after, np.sqrt(sum((e ** 2).sum() for e in expected)), rtol=1e-5)
    np.testing.assert_allclose(r.norms_before, [np.linalg.norm(C1), np.linalg.norm(C2)], rtol=1e-6)
    assert r.angle_deg == pytest.approx(angle(grads, expected), abs=1e-3)
    for k in range(2):
        assert r.angles_deg[k] == pytest.approx(angle([grads[k]], [expected[k]]), abs=1e-3)


@pytest.mark.parametrize("method", METHODS)
def test_measuring_before_once_gives_the_same_result(method):
    # the lab measures the gradients once (measure_before) for every method × threshold it explores
    grads = [eg.constant(C1), None, eg.constant(np.zeros(3, np.float32)), eg.constant(C2)]
    before = measure_before(grads)
    assert before.norms[0] == pytest.approx(float(np.linalg.norm(C1)), rel=1e-6)
    assert math.isnan(before.norms[1])
    assert before.units[1] is None and before.units[2] is None  # no gradient; a zero one: no direction
    for c in (0.5, 3.0, 50.0):
        once, fresh = clip_gradients(grads, method, c, before=before), clip_gradients(grads, method, c)
        np.testing.assert_array_equal(once.norms_before, fresh.norms_before)
        np.testing.assert_array_equal(once.norms_after, fresh.norms_after)
        np.testing.assert_array_equal(once.angles_deg, fresh.angles_deg)  # NaN where no direction
        assert (once.global_norm_before, once.global_norm_after) == (fresh.global_norm_before,
                                                                      fresh.global_norm_after)
        assert once.angle_deg == fresh.angle_deg and once.clipped_any == fresh.clipped_any
        assert once.angles_deg[0] == pytest.approx(angle([C1], [numpy_clip([C1], method, c)[0]]), abs=1e-3)


def test_seed_004_global_norm_and_direction_kept():
    r = clip_gradients([C1, C2], "global norm", 9)
    assert r.global_norm_before == pytest.approx(9.746795, abs=1e-6)
    assert_ulps(r.numpy()[0][1], [2.7701416, 3.693522, 4.6169024])
    assert r.angle_deg == 0.0 or r.angle_deg < 1e-5  # one common scale: the direction is kept
    assert r.clipped_any
    unchanged = clip_gradients([C1, C2], "global norm", 10)
    assert not unchanged.clipped_any and unchanged.angle_deg < 1e-5


def test_value_clipping_turns_the_gradient():
    r = clip_gradients([np.float32([3.0, 4.0])], "value", 1.0)
    np.testing.assert_array_equal(r.numpy()[0], [1.0, 1.0])
    assert r.angle_deg == pytest.approx(math.degrees(math.atan2(4, 3)) - 45.0, abs=1e-4)  # 8.13°


def test_lab_state_after_interaction():
    lab = gv.clipping([eg.constant([3.0, 4.0]), eg.constant([0.5, -2.0])], threshold=2.0)
    assert lab.view == "arrows" and lab.method == "global norm" and lab.threshold == 2.0
    controls = lab.controls
    first = lab.shown("moving")  # the parts of the picture the controls move
    controls["threshold"].value = 1.0  # as a user drags the slider
    assert lab.threshold == 1.0
    assert lab.result.global_norm_after == pytest.approx(1.0, rel=1e-6)
    assert lab.shown("moving") != first and "threshold 1" in lab.shown("moving")
    controls["method"].value = "value"
    assert lab.method == "value"
    np.testing.assert_array_equal(lab.result.numpy()[0], [1.0, 1.0])
    assert "clip_by_value(g, -1, 1)" in lab.shown("panel")
    lab.widget.index = {**lab.widget.index, "method": 0}  # moved in the browser: the state follows
    assert lab.method == METHODS[0]
    # and from code: the control follows
    lab.method = "per-variable norm"
    lab.threshold = 50.0  # beyond the slider's end: new frames, the slider grows
    assert controls["method"].value == "per-variable norm" and controls["threshold"].value == 50.0
    (slider,) = [c for c in lab.widget.controls if c["name"] == "threshold"]
    assert slider["labels"][lab.widget.index["threshold"]] == "50" and slider["labels"][-1] == "50"
    assert not lab.result.clipped_any
    with pytest.raises(ValueError, match="method"):
        lab.method = "magic"
    with pytest.raises(ValueError, match="> 0"):
        lab.threshold = 0


def test_inputs_pairs_dicts_none_and_views():
    w = eg.Variable(np.ones((2, 3), np.float32), name="dense/kernel")
    b = eg.Variable(np.ones(3, np.float32), name="dense/bias")
    lab = gv.clipping([(eg.constant(C1), w), (None, b)], threshold=3.0)
    assert lab.names == ["dense/kernel", "dense/bias"] and lab.view == "bars"
    assert lab.result.clipped[1] is None and math.isnan(lab.result.norms_before[1])
    assert "None (no gradient)" in lab.to_html()
    lab2 = gv.clipping({"a": [1.0, 2.0], "b": [3.0, -1.0]}, view="bars")
    assert lab2.names == ["a", "b"] and lab2.view == "bars"
    with pytest.raises(ValueError, match="arrow view"):
        gv.clipping([C1], view="arrows")
    with pytest.raises(TypeError, match="single tensor"):
        gv.clipping(eg.constant([1.0, 2.0]))
    with pytest.raises(TypeError, match="floating"):
        gv.clipping([eg.constant([1, 2])])
    with pytest.raises(ValueError, match="empty"):
        gv.clipping([])


def test_static_forms_and_save(tmp_path):
    lab = gv.clipping([[3.0, 4.0], [0.5, -2.0]], threshold=2.0, method="value")
    page = lab._repr_html_()
    assert page.startswith('<div class="gradviz">') and "<svg" in page
    assert "data:image/png" not in page  # the picture is vector
    assert lab._repr_svg_().startswith("<svg")
    assert lab.png()[:4] == b"\x89PNG"
    for ext in ("png", "svg", "html"):
        path = lab.save(tmp_path / f"lab.{ext}")
        assert path.stat().st_size > 1000
    assert (tmp_path / "lab.svg").read_text().lstrip().startswith("<?xml")
    dark = gv.clipping([[3.0, 4.0]], theme="dark")
    assert dark.theme == "dark" and dark.png() != gv.clipping([[3.0, 4.0]], theme="light").png()


def test_the_starting_threshold_is_a_slider_position():
    # The kernel-free slider's grid holds the starting threshold exactly: 2.0 stays 2.0.
    lab = gv.clipping([eg.constant([3.0, 4.0]), eg.constant([1.0, -2.0])], threshold=2.0)
    (threshold,) = [c for c in lab.widget.controls if c["name"] == "threshold"]
    assert threshold["labels"][lab.widget.index["threshold"]] == "2" and lab.threshold == 2.0
    assert "thresholds from" in lab.widget.note  # which grid the slider uses


def test_every_frame_agrees_with_itself_and_shows_the_after_vectors():
    lab = gv.clipping([eg.constant([3.0, 4.0]), eg.constant([0.5, -2.0])], threshold=2.0)
    w = lab.widget
    grid = lab._threshold_grid()
    for m, name in enumerate(METHODS):
        for k in (0, len(grid) // 2, len(grid) - 1):
            w.index = {"method": m, "threshold": k}  # as the browser sets it
            assert lab.method == name and lab.threshold == grid[k]
            picture, panel = lab.shown("moving"), lab.shown("panel")
            # the picture's text and the panel's code name the same method and threshold
            code = panel.split("</code>")[0]
            shown = f"{grid[k]:.4g}"
            assert f"after {name} clipping" in picture and (f"{shown})" in code or f"{shown}," in code)
            assert picture.count('id="Quiver_') == 1  # the after-vectors, at every threshold
