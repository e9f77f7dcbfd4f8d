"""gv.check_gradients: analytic (engine) vs central differences in float64, pass/fail and the widget."""

from __future__ import annotations

import math

import numpy as np
import pytest

import engine as eg
import gradviz as gv


def test_correct_gradients_pass():
    check = gv.check_gradients(lambda x, y: x * x - 2 * x * y + 3 * y, 2.0, 1.0)
    assert check.ok and check.names == ["x", "y"]
    assert [float(a) for a in check.analytic] == [2.0, -1.0]  # seed 001
    assert check.max_rel_error < 1e-8
    np.testing.assert_allclose([float(n) for n in check.numeric], [2.0, -1.0], rtol=1e-8)
    assert check.summary().startswith("✓ all 2")


def test_matrices_and_non_scalar_outputs():
    rng = np.random.default_rng(0)
    w, x = rng.normal(size=(4, 3)), rng.normal(size=(5, 4))
    check = gv.check_gradients(lambda w, x: eg.tanh(x @ w), w, x)  # non-scalar: d sum(f)
    assert check.ok
    gw, gx = eg.gradients_function(lambda w, x: eg.sum(eg.tanh(x @ w)))(w, x)
    np.testing.assert_allclose(check.analytic[0], gw.numpy())
    np.testing.assert_allclose(check.numeric[1], gx.numpy(), rtol=1e-6, atol=1e-9)
    assert check.analytic[0].dtype == np.float64 and check.inputs[1].shape == (5, 4)
    rows = check.rows("w")
    assert len(rows) == 12 and rows[5]["index"] == (1, 2)
    a, n = rows[5]["analytic"], rows[5]["numeric"]
    assert rows[5]["abs_error"] == pytest.approx(abs(a - n))
    assert rows[5]["rel_error"] == pytest.approx(abs(a - n) / max(abs(a), abs(n)))


def test_a_wrong_gradient_fails():
    # x · stop_gradient(x): the engine's gradient is x, the function's true derivative 2x
    check = gv.check_gradients(lambda x: eg.sum(x * eg.stop_gradient(x)), [1.0, -2.0, 0.5])
    assert not check.ok
    np.testing.assert_allclose(check.analytic[0], [1.0, -2.0, 0.5])
    np.testing.assert_allclose(check.numeric[0], [2.0, -4.0, 1.0], rtol=1e-8)
    assert check.max_rel_error == pytest.approx(0.5, rel=1e-6)
    assert check.summary().startswith("✗ 3 of 3")
    assert check.to_html().count("✗") >= 3


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
def test_kinks_none_gradients_and_sampling():
    kink = gv.check_gradients(lambda x: eg.relu(x), [0.0, 2.0])
    assert [r["ok"] for r in kink.rows()] == [False, True]  # relu at 0: numerical 0.5, engine 0
    ignored = gv.check_gradients(lambda x, y: x * 3.0, 1.0, 5.0)
    assert ignored.ok and ignored.none_gradient == [False, True]
    assert "gradient for y is None" in ignored.to_html()
    big = gv.check_gradients(lambda x: eg.sum(eg.sin(x)), np.linspace(0, 1, 300), max_elements=20)
    assert big.ok and len(big.checked[0]) == 20 and "sample" in big.summary()
    nan = gv.check_gradients(lambda x: eg.sqrt(x), [-1.0, 4.0])
    assert not nan.ok and math.isnan(nan.max_rel_error)


def test_errors_are_clear():
    with pytest.raises(TypeError, match="float64"):
        gv.check_gradients(lambda x: x * eg.constant(2.0), 1.0)  # a float32 constant inside f
    with pytest.raises(TypeError, match="Tensor"):
        gv.check_gradients(lambda x: 3.0, 1.0)
    with pytest.raises(ValueError, match="inputs"):
        gv.check_gradients(lambda x: x)


def test_widget_and_static_forms(tmp_path):
    check = gv.check_gradients(lambda w, b: eg.sum(eg.relu(w)) + eg.sum(b * b), [-1.0, 0.0, 2.0], [1.0, 2.0])
    controls = check.controls
    assert check.input == "w"
    controls["input"].value = "b"
    assert check.input == "b" and "input b" in check.shown("panel")
    assert check.widget.index == {"input": 1, "failures_only": 0}  # the browser's controls follow
    controls["failures_only"].value = True
    check.input = "w"
    assert controls["input"].value == "w" and check.shown("panel").count("<tr style") == 1  # relu at 0
    check.widget.index = {"input": 1, "failures_only": 0}  # moved in the browser: the state follows
    assert check.input == "b" and not check.failures_only
    assert check._repr_svg_().startswith("<svg") and "analytic" in check._repr_html_()
    for ext in ("png", "svg", "html"):
        assert check.save(tmp_path / f"gc.{ext}").stat().st_size > 1000
