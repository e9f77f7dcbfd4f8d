"""gv.check_gradients: analytic (engine) vs central differences in float64, pass/fail and the widget."""

from __future__ import annotations

import contextlib
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine as eg
import gradviz as gv
from engine.primitive import REGISTRY


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


# ---- tolerances that scale with the sum and the dtype (issue 28) -------------------------------------


def test_a_correct_gradient_of_a_large_sum_is_not_flagged():
    """2x is exact; the central differences of a sum of 10⁴ squares carry its rounding noise
    (u·F/h ≈ 3e-7 here), which a fixed rtol mistook for 7 wrong elements."""
    check = gv.check_gradients(lambda a: eg.sum(a * a), np.linspace(0, 1, 10_000))
    assert check.ok, check.summary()
    assert len(check.checked[0]) == 2000 and all(r["abs_error"] <= r["bound"] for r in check.rows())
    small = check.rows()[0]  # the element nearest 0: tiny gradient, the same absolute noise
    assert small["bound"] > 1e-7 + 1e-5 * abs(small["analytic"])  # the rounding term is what lets it pass


def test_a_large_input_is_sampled_within_a_bounded_number_of_evaluations():
    from gradviz.model.gradient_check import MIN_SAMPLE, WORK, sample_size

    assert sample_size(10**6, 10**6, 2000) * 2 * 10**6 <= WORK
    assert sample_size(10**9, 10**9, 2000) == MIN_SAMPLE and sample_size(50, 50, 2000) == 50
    check = gv.check_gradients(lambda a: eg.sum(eg.sin(a)), np.linspace(-1, 1, 300_000), max_elements=500)
    assert check.ok and len(check.checked[0]) == sample_size(300_000, 300_000, 500) < 500


def test_the_bound_follows_fs_dtype():
    """f computed in float32 inside (a cast): its rounding is float32's, and the bound says so."""
    x = np.linspace(0.5, 1.5, 200)
    check = gv.check_gradients(lambda a: eg.sum(eg.cast(a, "float32") ** 2), x)
    assert check.ok, check.summary()
    check64 = gv.check_gradients(lambda a: eg.sum(a ** 2), x)
    assert np.median(check.bound[0]) > 1000 * np.median(check64.bound[0])


SQUARE_NAME = "gradcheck_test_square"


def _faulty_vjp(g, y, x):
    """The true ∂x = g·2x, times ``scale`` and plus ``add`` (NumPy arrays) when set on the primitive."""
    out = g * 2.0 * x
    if SQUARE.scale is not None:
        out = out * eg.constant(SQUARE.scale)
    if SQUARE.add is not None:
        out = out + eg.constant(SQUARE.add)
    return out


SQUARE = eg.Primitive(
    SQUARE_NAME, lambda xp, x: x * x, vjps=[_faulty_vjp], rule="∂x = g·2x (made wrong on purpose)",
    symbol="sq", elementwise=True)
REGISTRY.pop(SQUARE_NAME)  # a test-only op: eg.primitives lists the engine's (SQUARE works without it)
SQUARE.scale = SQUARE.add = None


@contextlib.contextmanager
def fault(scale=None, add=None):
    """SQUARE's VJP made wrong inside the block: times ``scale``, plus ``add`` (element by element)."""
    SQUARE.scale, SQUARE.add = scale, add
    try:
        yield
    finally:
        SQUARE.scale = SQUARE.add = None


@pytest.mark.parametrize("size", [50, 20_000])
def test_deliberately_wrong_vjps_are_caught(size):
    x = np.linspace(-1.0, 1.0, size) + 0.3
    f = lambda a: eg.sum(eg.sin(SQUARE(a)))  # noqa: E731
    assert gv.check_gradients(f, x).ok  # the true VJP passes
    sampled = gv.check_gradients(f, x).checked[0]
    for scale, wrong in [(np.full(size, 1.01), "all"), (np.full(size, -1.0), "all"),
                         (np.where(np.arange(size) == sampled[len(sampled) // 2], 0.0, 1.0), "one")]:
        with fault(scale=scale):
            check = gv.check_gradients(f, x)
        assert not check.ok
        bad = check.checked[0][~check.passed[0]]
        g_true = np.cos(x[bad] ** 2) * 2 * x[bad]
        if wrong == "one":  # only the missing element is flagged
            assert bad.tolist() == [sampled[len(sampled) // 2]]
        else:  # every element whose gradient is not ~0 is flagged
            xs = x[check.checked[0]]
            strong = check.checked[0][np.abs(np.cos(xs**2) * 2 * xs) > 1e-3]
            assert set(strong) <= set(bad)
        assert np.all(np.abs(g_true) > 0)


ELEMENTWISE = {
    "sin": eg.sin, "tanh": eg.tanh, "square": lambda t: t * t, "gauss": lambda t: eg.exp(-(t * t)),
    "affine": lambda t: t * 0.5 + 1.0, "identity": lambda t: t,
}
REDUCTIONS = {
    "sum": eg.sum, "mean": eg.mean, "sum_sq": lambda t: eg.sum(t * t), "none": lambda t: t,
    "sum_times_sum": lambda t: eg.sum(t) * eg.sum(t),
}


def _program(e1, e2, red):
    return lambda a: REDUCTIONS[red](ELEMENTWISE[e2](ELEMENTWISE[e1](SQUARE(a))))


programs = st.tuples(st.sampled_from(sorted(ELEMENTWISE)), st.sampled_from(sorted(ELEMENTWISE)),
                     st.sampled_from(sorted(REDUCTIONS)))


@settings(max_examples=25, deadline=None)
@given(program=programs, size=st.integers(1, 40_000), seed=st.integers(0, 2**16))
def test_correct_gradients_of_random_functions_are_never_flagged(program, size, seed):
    x = np.random.default_rng(seed).uniform(-1.5, 1.5, size)
    check = gv.check_gradients(_program(*program), x, max_elements=64, seed=seed)
    assert check.ok, (program, size, check.summary())


@settings(max_examples=25, deadline=None)
@given(program=programs, size=st.integers(1, 40_000), seed=st.integers(0, 2**16),
       delta=st.floats(1e-3, 1.0), sign=st.sampled_from([-1.0, 1.0]), pick=st.integers(0, 63))
def test_an_injected_error_on_one_sampled_element_is_flagged(program, size, seed, delta, sign, pick):
    """An error of relative size ≥ 1e-3 (of max(|g_i|, 1e-3)) added to one element's gradient."""
    x = np.random.default_rng(seed).uniform(-1.5, 1.5, size)
    f = _program(*program)
    clean = gv.check_gradients(f, x, max_elements=64, seed=seed)
    i = int(clean.checked[0][pick % len(clean.checked[0])])  # an element the check samples
    g_i = clean.analytic[0].reshape(-1)[i]
    add = np.zeros(size)
    add[i] = sign * delta * max(abs(g_i), 1e-3)
    with fault(add=add):
        check = gv.check_gradients(f, x, max_elements=64, seed=seed)
    flagged = check.checked[0][~check.passed[0]]
    assert flagged.tolist() == [i], (program, size, check.summary())
