"""Clipping and norms at the edges of the float range, and bad thresholds (issue 13, item 8).

Exploding gradients are lesson 05's own topic, and in float32 ``1e20² = inf``: the plain
``sqrt(sum(t*t))`` made ``clip_by_norm([1e20, 1e20], 1)`` zeros, ``norm`` inf and ``clip_by_global_norm``
NaN. The norms now scale by the largest magnitude first, so finite inputs give finite norms, correct to
a few ulps against float64 NumPy, and finite, correct gradients (first and second order) without
RuntimeWarnings. Values that really are inf or NaN still give TensorFlow's NaN (tests/test_clip.py). A
NaN, infinite or negative threshold is a ValueError that names the op; a Python threshold is checked on
the host, so clipping on a GPU makes no device→host transfer.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import engine as eg
from tests.helpers import DEVICES, assert_ulps

# inputs whose squares overflow (or underflow) their dtype, with the dtype
EXTREME = [
    ("float32", [1e20, 1e20]),
    ("float32", [3e38, -1e38, 2e37]),       # the norm itself just fits (3.17e38 < 3.4e38)
    ("float32", [1e-30, -2e-30, 3e-31]),    # squares underflow to 0
    ("float32", [5e-40, 1e-39]),            # subnormal inputs
    ("float64", [1e200, -3e199, 1e150]),
    ("float64", [1e-200, 2e-200]),
    ("float16", [300.0, -400.0]),           # 300² > 65504
]


def _f64_norm(x):
    """The reference: Python's math.hypot in float64 (scaled internally, correctly rounded or nearly)."""
    return math.hypot(*np.asarray(x, dtype=np.float64).ravel().tolist())


@pytest.fixture(autouse=True)
def _no_runtime_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no overflow / invalid-value warning anywhere
        yield


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype, values", EXTREME)
def test_norms_of_finite_values_are_finite_and_correct(dtype, values, device):
    x = np.array(values, dtype=dtype)
    expected = _f64_norm(x)
    with eg.device(device):
        t = eg.constant(x)
        for got in (eg.norm(t), eg.norm(t, ord=2), eg.norm(eg.reshape(t, (1, -1)), ord="fro", axis=(0, 1)),
                    eg.global_norm([t]), eg.global_norm([t[:1], t[1:]]), eg.clip_by_global_norm([t], 1.0)[1]):
            assert got.dtype == dtype and got.device == device
            assert_ulps(got.numpy(), expected)


@pytest.mark.parametrize("device", DEVICES)
def test_norms_per_axis_and_p_norms_of_huge_values(device):
    x = np.array([[1e20, -2e20, 2e20], [3e-30, 4e-30, 0.0], [0.0, 0.0, 0.0]], dtype=np.float32)
    with eg.device(device):
        t = eg.constant(x)
        assert_ulps(eg.norm(t, axis=1).numpy(), _row_norms(x))
        assert_ulps(eg.norm(t, axis=1, keepdims=True).numpy(), _row_norms(x)[:, None])
        p3 = np.cbrt(np.sum(np.abs(x[0].astype(np.float64)) ** 3))
        assert_ulps(eg.norm(t[0], ord=3).numpy(), p3)
        assert_ulps(eg.norm(t, ord=1.5, axis=1).numpy(),
                    np.sum(np.abs(x.astype(np.float64)) ** 1.5, axis=1) ** (1 / 1.5))
        # empty slices and tensors: norm 0, no error
        np.testing.assert_array_equal(eg.norm(eg.zeros((0, 3)), axis=0).numpy(), [0.0, 0.0, 0.0])
        assert float(eg.norm(eg.zeros((2, 0)))) == 0.0
        assert eg.clip_by_norm(eg.zeros((0, 2)), 1.0, axes=1).shape == (0, 2)


def _row_norms(x):
    return np.array([_f64_norm(row) for row in x])


@pytest.mark.parametrize("device", DEVICES)
def test_clip_by_norm_of_huge_and_tiny_values(device):
    with eg.device(device):
        assert_ulps(eg.clip_by_norm(eg.constant([1e20, 1e20]), 1.0).numpy(), [2 ** -0.5] * 2)
        x = np.array([[3e20, -4e20], [3e38, 3e38], [3e-30, 4e-30]], dtype=np.float32)
        expected = x.astype(np.float64) * 2.5 / np.maximum(_row_norms(x), 2.5)[:, None]
        assert_ulps(eg.clip_by_norm(eg.constant(x), 2.5, axes=1).numpy(), expected)
        # below the threshold: unchanged, exactly (tiny values and a large threshold too)
        tiny = np.array([1e-44, 2e-40, 1e-30], dtype=np.float32)
        np.testing.assert_array_equal(eg.clip_by_norm(eg.constant(tiny), 1e30).numpy(), tiny)
        huge = eg.constant(np.array([1e200, 1e200]))  # the ratio c/||t|| = 7e-401 underflows float64
        assert_ulps(eg.clip_by_norm(huge, 1e-200).numpy(), [2 ** -0.5 * 1e-200] * 2)


@pytest.mark.parametrize("device", DEVICES)
def test_clip_by_global_norm_of_huge_values_is_finite(device):
    a, b = np.array([1e20, -1e20], np.float32), np.array([[2e20], [1e-30]], np.float32)
    n = _f64_norm(np.concatenate([a, b.ravel()]))
    with eg.device(device):
        clipped, norm = eg.clip_by_global_norm([eg.constant(a), None, eg.constant(b)], 1.0)
    assert_ulps(norm.numpy(), n)
    assert clipped[1] is None
    assert_ulps(clipped[0].numpy(), a / n)
    assert_ulps(clipped[2].numpy(), b / n)
    # a norm beyond float32 (4.2e38): the norm is inf, the clipped values are still finite and right
    big = np.array([3e38, 3e38], np.float32)
    with eg.device(device):
        clipped, norm = eg.clip_by_global_norm([eg.constant(big)], 1.0)
    assert np.isinf(float(norm))
    assert_ulps(clipped[0].numpy(), [2 ** -0.5] * 2, ulps=16)  # the ratio 2.4e-39 is subnormal: fewer bits


def _gradients(f, x, v, device):
    """f(t), df/dt·1 (the gradient of sum f) and the Hessian-vector product of sum f with v."""
    with eg.device(device):
        t = eg.constant(x)
        with eg.GradientTape() as outer:
            outer.watch(t)
            with eg.GradientTape() as inner:
                inner.watch(t)
                y = eg.sum(f(t))
            g = inner.gradient(y, t)
        hv = outer.gradient(g, t, output_gradients=eg.constant(v))
    return y.numpy(), g.numpy(), hv.numpy()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype, scale", [("float32", 1e20), ("float32", 1e-30), ("float64", 1e200)])
def test_norm_gradients_at_extreme_values_are_finite_and_correct(dtype, scale, device):
    base = np.array([1.0, -2.0, 2.0])
    x = (base * scale).astype(dtype)
    v = np.array([0.5, 1.0, -1.0], dtype=dtype)
    n, g, hv = _gradients(eg.norm, x, v, device)
    u = base / 3.0  # the unit vector x / ||x||
    assert_ulps(g, u)  # d||x||/dx = x / ||x||
    # Hessian (I - u uᵀ) / ||x||; v - u(u·v) cancels, so compare relative to |v| / ||x||
    expected = (v - u * (u @ v)) / (3.0 * scale)
    np.testing.assert_allclose(hv, expected, rtol=0, atol=16 * np.finfo(dtype).eps * np.abs(expected).max())


@pytest.mark.parametrize("device", DEVICES)
def test_clip_gradients_at_huge_values_are_finite_and_correct(device):
    base = np.array([1.0, -2.0, 2.0])
    x = (base * 1e20).astype(np.float32)
    w = np.array([0.5, 1.0, -1.0], np.float32)
    u, c = base / 3.0, 1.5
    expected = c / 3e20 * (w - u * (u @ w))  # d/dx of w·(c x / ||x||)
    for f in (lambda t: eg.clip_by_norm(t, c) * w, lambda t: eg.clip_by_global_norm([t], c)[0][0] * w,
              lambda t: eg.clip_by_norm(eg.reshape(t, (1, 3)), c, axes=1) * w):
        _, g, hv = _gradients(f, x, w, device)
        np.testing.assert_allclose(g, expected, rtol=0, atol=16 * 2 ** -23 * np.abs(expected).max())
        assert np.all(np.isfinite(hv))  # second order: O(c/||x||²) = 1e-41, below float32's normal range


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("scale", [1e10, 1e150])
def test_clip_second_order_at_large_values_is_correct(device, scale):
    """float64 at 1e150 (squares overflow float64; the Hessian, O(c/||x||²) = 1e-301, is representable) and
    at 1e10, where the NaN rule's (norm - norm) once added +g - g to the norm's gradient (1e-6 errors)."""
    base = np.array([1.0, -2.0, 2.0])
    x, n = base * scale, 3 * scale
    w, v = np.array([0.5, 1.0, -1.0]), np.array([1.0, 0.25, 2.0])
    u, c = base / 3.0, 1.5
    # H v of w·(c x / ||x||): (c/n²)(−w (u·v) − (u·w) v − u (w·v) + 3 (u·w)(u·v) u)
    expected = c / n ** 2 * (-w * (u @ v) - (u @ w) * v - u * (w @ v) + 3 * (u @ w) * (u @ v) * u)
    for f in (lambda t: eg.clip_by_norm(t, c) * w, lambda t: eg.clip_by_global_norm([t], c)[0][0] * w):
        _, g, hv = _gradients(f, x, v, device)
        np.testing.assert_allclose(g, c / n * (w - u * (u @ w)), rtol=1e-14)
        np.testing.assert_allclose(hv, expected, rtol=0, atol=64 * 2 ** -52 * np.abs(expected).max())


BAD_THRESHOLDS = [np.nan, np.inf, -np.inf, float("nan"), np.float32(np.inf), 1e39]  # 1e39: inf in float32


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("bad", BAD_THRESHOLDS, ids=repr)
def test_a_non_finite_threshold_is_a_clear_error(bad, device):
    with np.errstate(over="ignore"):
        bad32 = np.float32(bad)
    with eg.device(device):
        t = eg.constant([3.0, 4.0])
        cases = [
            ("clip_by_norm", lambda: eg.clip_by_norm(t, bad)),
            ("clip_by_global_norm", lambda: eg.clip_by_global_norm([t], bad)),
            ("clip_by_global_norm", lambda: eg.clip_by_global_norm([t], bad, use_norm=5.0)),
            ("clip_by_value", lambda: eg.clip_by_value(t, -1.0, bad)),
            ("clip_by_value", lambda: eg.clip_by_value(t, bad, 1.0)),
            ("clip_by_norm", lambda: eg.clip_by_norm(t, eg.constant(bad32))),  # tensors too
            ("clip_by_value", lambda: eg.clip_by_value(t, eg.constant(-1.0), eg.constant(bad32))),
        ]
        for op, call in cases:
            message = rf"^{op}: .* is -?(nan|inf) \(as float32\); it must be finite"
            with pytest.raises(ValueError, match=message):
                call()


@pytest.mark.parametrize("device", DEVICES)
def test_a_negative_threshold_is_a_clear_error(device):
    with eg.device(device):
        t = eg.constant([3.0, 4.0])
        with pytest.raises(ValueError, match=r"^clip_by_norm: clip_norm must be >= 0, got -1.0"):
            eg.clip_by_norm(t, eg.constant([[-1.0, 2.0]])[0])
        with pytest.raises(ValueError, match=r"^clip_by_global_norm: clip_norm must be a scalar"):
            eg.clip_by_global_norm([t], [1.0, 2.0])


GPUS = [d for d in DEVICES if d.startswith("gpu")]


@pytest.mark.parametrize("device", GPUS)
def test_clipping_with_python_thresholds_makes_no_host_transfer(device, transfers):
    with eg.device(device):
        t, s = eg.constant([3e20, 4e20]), eg.constant([1.0])
    with transfers() as count:
        eg.clip_by_norm(t, 1.0)
        eg.clip_by_norm(t, 1.0, axes=0)
        eg.clip_by_global_norm([t, s], 1.0)
        eg.clip_by_value(t, -1.0, 1.0)
        eg.norm(t)
    assert count.to_host == 0, count


def test_tensor_thresholds_inside_eg_function():
    """A threshold passed into a traced function has no value while tracing: it cannot be checked (as in
    TensorFlow) but must not break the trace; a Python threshold there is still checked when tracing."""
    clip = eg.function(lambda t, c: eg.clip_by_norm(t, c))
    bound = eg.function(lambda t, c: eg.clip_by_value(t, -c, c))
    glob = eg.function(lambda t, c: eg.clip_by_global_norm([t], c)[0][0])
    t = eg.constant([3.0, -4.0])
    for c, norm_clipped, value_clipped in ((1.0, [0.6, -0.8], [1.0, -1.0]), (2.0, [1.2, -1.6], [2.0, -2.0])):
        assert_ulps(clip(t, eg.constant(c)).numpy(), norm_clipped)
        assert_ulps(glob(t, eg.constant(c)).numpy(), norm_clipped)
        np.testing.assert_array_equal(bound(t, eg.constant(c)).numpy(), value_clipped)
    assert clip.trace_count == glob.trace_count == bound.trace_count == 1
    with pytest.raises(ValueError, match="^clip_by_norm: clip_norm must be >= 0"):
        eg.function(lambda t: eg.clip_by_norm(t, -1.0))(t)


def test_checking_a_tensor_threshold_is_not_a_host_read():
    """The check reads the threshold as engine code does: a tape does not hear that its value left
    (gv.explain_none would then blame a .numpy() the user never wrote)."""
    x, v = eg.Variable([3.0, 4.0]), eg.Variable(2.0)
    with eg.GradientTape() as tape:
        y = eg.sum(eg.clip_by_norm(x, v))
    assert tape.host_read(v) is None and tape.host_read(x) is None
    assert tape.gradient(y, v) is not None
