"""Clipping and norms: seed 004's printed outputs, NumPy formulas, TensorFlow's edge cases, gradients."""

from __future__ import annotations

import numpy as np
import pytest

import engine as eg
from tests import gradcheck
from tests.helpers import DEVICES, assert_ulps


def f32(values):
    return np.array(values, dtype=np.float32)


# ---- seed 004: every printed console output, to within a few float32 ulps -------------------------
def test_seed004_clip_by_value_int_and_float():
    num1 = np.linspace(-4, 6, 6)
    p1 = eg.constant(num1.astype(np.int32))
    p2 = eg.constant(num1.astype(np.float32))
    out1 = eg.clip_by_value(p1, -2, 2)
    out2 = eg.clip_by_value(p2, -2.0, 2.0)
    assert out1.dtype == np.int32 and out2.dtype == np.float32
    np.testing.assert_array_equal(out1.numpy(), [-2, -2, 0, 2, 2, 2])
    np.testing.assert_array_equal(out2.numpy(), f32([-2, -2, 0, 2, 2, 2]))


def test_seed004_int_tensor_with_float_bounds_is_a_type_error():
    p1 = eg.constant(np.linspace(-4, 6, 6).astype(np.int32))
    with pytest.raises(TypeError, match=r"expected int32 for clip_value_max, got 2\.0 of type float"):
        eg.clip_by_value(p1, -2.0, 2.0)
    with pytest.raises(TypeError, match="clip_value_min"):
        eg.clip_by_value(p1, -2.0, 2)


def test_seed004_clip_by_norm():
    p3 = eg.constant(np.linspace(-2, 3, 6).reshape(2, 3).astype(np.float32))
    assert_ulps(eg.clip_by_norm(p3, 4).numpy(),
                [[-1.8353258, -0.9176629, 0.0], [0.9176629, 1.8353258, 2.7529888]])
    np.testing.assert_array_equal(eg.clip_by_norm(p3, 5).numpy(), f32([[-2, -1, 0], [1, 2, 3]]))  # unclipped
    assert_ulps(eg.clip_by_norm(p3, 3, axes=1).numpy(), [[-2, -1, 0], [0.8017837, 1.6035674, 2.4053512]])


def test_seed004_clip_by_global_norm():
    c1 = eg.constant([[0.0, 1, 2], [3, 4, 5]])
    c2 = eg.constant([[-2.0, -4], [2, 4]])
    clipped, norm = eg.clip_by_global_norm([c1, c2], 9)
    assert isinstance(clipped, list) and len(clipped) == 2
    assert_ulps(norm.numpy(), 9.746795)
    assert_ulps(clipped[0].numpy(), [[0.0, 0.9233805, 1.846761], [2.7701416, 3.693522, 4.6169024]])
    assert_ulps(clipped[1].numpy(), [[-1.846761, -3.693522], [1.846761, 3.693522]])
    assert_ulps(eg.global_norm([c1, c2]).numpy(), 9.746795)


def test_seed004_norms():
    p4 = eg.constant(np.linspace(-10, 8, 12).reshape(3, 4).astype(np.float32))
    assert_ulps(eg.norm(p4).numpy(), 19.87232)
    # 10.408293 on the machine that printed it, 10.408294 on CPUs whose vector pow rounds differently
    assert_ulps(eg.norm(p4, ord=1.5, axis=0).numpy(), [12.364525, 11.0871725, 10.408293, 10.876119])
    # the largest |entry| of each row: one of the inputs, so exact
    np.testing.assert_array_equal(eg.norm(p4, ord=np.inf, axis=1).numpy(), f32([10.0, 3.4545455, 8.0]))


# ---- clip_by_value ----------------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
def test_clip_by_value_broadcast_bounds_and_gradient(device):
    with eg.device(device):
        x = eg.constant([[-3.0, -1.0, 0.5], [1.0, 2.0, 4.0]])
        lo = eg.constant([-2.0, -0.5, 0.0])
        with eg.GradientTape() as tape:
            tape.watch(x)
            y = eg.clip_by_value(x, lo, 1.0)
        np.testing.assert_array_equal(y.numpy(), [[-2, -0.5, 0.5], [1, 1, 1]])
        # 1 inside the bounds (inclusive: x == 1.0 counts), 0 outside
        np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [[0, 0, 1], [1, 0, 0]])


def test_clip_by_value_bounds_must_not_enlarge_the_tensor():
    with pytest.raises(ValueError, match="broadcast"):
        eg.clip_by_value(eg.constant([1.0, 2.0]), eg.zeros((3, 2)), 1.0)
    with pytest.raises(ValueError, match="broadcast"):
        eg.clip_by_value(eg.constant([1.0, 2.0]), eg.zeros((3,)), 1.0)


def test_clip_by_value_errors():
    with pytest.raises(TypeError, match="float64"):
        eg.clip_by_value(eg.constant([1.0]), eg.constant(np.zeros(1)), 1.0)
    with pytest.raises(ValueError, match="greater than"):
        eg.clip_by_value(eg.constant([1.0]), 2.0, 1.0)


def test_clip_by_value_keeps_nan_and_clips_inf():
    y = eg.clip_by_value(eg.constant([np.nan, np.inf, -np.inf, 0.5]), -1.0, 1.0).numpy()
    assert np.isnan(y[0])
    np.testing.assert_array_equal(y[1:], [1.0, -1.0, 0.5])
    np.testing.assert_array_equal(eg.clip_by_value(eg.constant([3.0, -3.0]), 0.0, 0.0).numpy(), [0, 0])


# ---- clip_by_norm -----------------------------------------------------------------------------------
@pytest.mark.parametrize("axes", [None, 0, 1, (0, 1), [1]])
def test_clip_by_norm_matches_numpy(axes):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 4)) * 2
    ax = tuple(axes) if isinstance(axes, list) else axes
    l2 = np.sqrt(np.sum(x * x, axis=ax, keepdims=True))
    expected = x * 2.5 / np.maximum(l2, 2.5)
    np.testing.assert_allclose(eg.clip_by_norm(eg.constant(x), 2.5, axes=axes).numpy(), expected, rtol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("scale", [0.3, 3.0])
def test_clip_by_norm_gradients_first_and_second_order(device, scale):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 3)) * scale  # norm below and above the threshold 1.5
    gradcheck.check(lambda t: eg.clip_by_norm(t, 1.5), [x], device=device)
    gradcheck.check(lambda t: eg.clip_by_norm(t, 1.5, axes=1), [x], device=device)


@pytest.mark.parametrize("device", DEVICES)
def test_clip_by_norm_gradient_is_finite_at_zero(device):
    with eg.device(device):
        t = eg.zeros((2, 3), dtype="float64")
        with eg.GradientTape() as outer:
            outer.watch(t)
            with eg.GradientTape() as tape:
                tape.watch(t)
                y = eg.clip_by_norm(t, 1.0)
            g = tape.gradient(y, t)
        np.testing.assert_array_equal(y.numpy(), np.zeros((2, 3)))
        np.testing.assert_array_equal(g.numpy(), np.ones((2, 3)))  # the identity: norm 0 < 1
        assert np.all(np.isfinite(outer.gradient(g, t).numpy()))


def test_clip_by_norm_edge_cases():
    # zero threshold: zeros; all-zero tensor with zero threshold: 0/0 = NaN, as in TensorFlow
    np.testing.assert_array_equal(eg.clip_by_norm(eg.constant([3.0, 4.0]), 0.0).numpy(), [0, 0])
    assert np.all(np.isnan(eg.clip_by_norm(eg.zeros(2), 0.0).numpy()))
    # inf: the inf entry becomes inf/inf = NaN, the finite ones 0; NaN spreads to everything
    y = eg.clip_by_norm(eg.constant([np.inf, 1.0]), 1.0).numpy()
    assert np.isnan(y[0]) and y[1] == 0
    assert np.all(np.isnan(eg.clip_by_norm(eg.constant([np.nan, 1.0]), 1.0).numpy()))


def test_clip_by_norm_errors():
    with pytest.raises(TypeError, match="floating"):
        eg.clip_by_norm(eg.constant([1, 2]), 1)
    with pytest.raises(ValueError, match=">= 0"):
        eg.clip_by_norm(eg.constant([1.0]), -1.0)
    with pytest.raises(ValueError, match="broadcast"):
        eg.clip_by_norm(eg.constant([1.0, 2.0]), eg.ones((2, 2)))


# ---- global norm ------------------------------------------------------------------------------------
def test_global_norm_skips_none_and_handles_empty():
    a, b = eg.constant([3.0]), eg.constant([[4.0]])
    assert float(eg.global_norm([a, None, b])) == 5.0
    assert float(eg.global_norm((a, b))) == 5.0
    empty = eg.global_norm([])
    assert empty.shape == () and float(empty) == 0.0
    assert float(eg.global_norm([None])) == 0.0


@pytest.mark.parametrize("bad", [eg.constant([1.0, 2.0]), np.ones(3), {"a": 1.0}, (t for t in [1.0])])
def test_global_norm_needs_a_list_or_tuple(bad):
    with pytest.raises(TypeError, match="list or tuple"):
        eg.global_norm(bad)
    with pytest.raises(TypeError, match="list or tuple"):
        eg.clip_by_global_norm(bad, 1.0)


def test_global_norm_type_errors():
    with pytest.raises(TypeError, match="floating"):
        eg.global_norm([eg.constant([1, 2])])
    with pytest.raises(TypeError, match="different dtypes"):
        eg.global_norm([eg.constant([1.0]), eg.constant(np.ones(1))])


@pytest.mark.parametrize("device", DEVICES)
def test_global_norm_gradient(device):
    rng = np.random.default_rng(2)
    gradcheck.check(lambda a, b: eg.global_norm([a, b]), [rng.normal(size=(2, 3)), rng.normal(size=4)],
                    device=device)


# ---- clip_by_global_norm ----------------------------------------------------------------------------
def test_clip_by_global_norm_matches_the_formula():
    rng = np.random.default_rng(3)
    xs = [rng.normal(size=(3, 2)), rng.normal(size=5)]
    n = np.sqrt(sum(np.sum(x * x) for x in xs))
    for c in (0.5 * n, 2 * n):
        clipped, norm = eg.clip_by_global_norm([eg.constant(x) for x in xs], c)
        np.testing.assert_allclose(float(norm), n, rtol=1e-12)
        for out, x in zip(clipped, xs):
            np.testing.assert_allclose(out.numpy(), x * c / max(n, c), rtol=1e-12)
        new = np.sqrt(sum(np.sum(o.numpy() ** 2) for o in clipped))
        np.testing.assert_allclose(new, min(n, c), rtol=1e-12)


def test_clip_by_global_norm_none_use_norm_and_zero_threshold():
    a = eg.constant([3.0, 4.0])
    clipped, norm = eg.clip_by_global_norm([None, a], 1.0)
    assert clipped[0] is None
    np.testing.assert_allclose(clipped[1].numpy(), [0.6, 0.8], rtol=1e-6)
    clipped, norm = eg.clip_by_global_norm([a], 1.0, use_norm=10.0)   # the given norm is used
    assert float(norm) == 10.0
    np.testing.assert_allclose(clipped[0].numpy(), [0.3, 0.4], rtol=1e-6)
    clipped, _ = eg.clip_by_global_norm([a], 0.0)
    np.testing.assert_array_equal(clipped[0].numpy(), [0.0, 0.0])
    clipped, norm = eg.clip_by_global_norm([eg.zeros(2)], 1.0)   # zero norm: unchanged, no warning
    np.testing.assert_array_equal(clipped[0].numpy(), [0.0, 0.0])
    assert eg.clip_by_global_norm([], 1.0)[0] == []


@pytest.mark.parametrize("bad", [np.inf, np.nan])
def test_clip_by_global_norm_inf_or_nan_norm_makes_everything_nan(bad):
    clipped, norm = eg.clip_by_global_norm([eg.constant([1.0, bad]), eg.constant([2.0])], 1.0)
    assert np.isnan(float(norm)) or np.isinf(float(norm))
    for t in clipped:
        assert np.all(np.isnan(t.numpy()))
    clipped, _ = eg.clip_by_global_norm([eg.constant([1.0])], 1.0, use_norm=bad)
    assert np.all(np.isnan(clipped[0].numpy()))


@pytest.mark.parametrize("device", DEVICES)
def test_clip_by_global_norm_gradient(device):
    rng = np.random.default_rng(4)
    arrays = [rng.normal(size=(2, 2)) * 2, rng.normal(size=3) * 2]

    def f(a, b):
        clipped, _ = eg.clip_by_global_norm([a, b], 1.0)
        return eg.concat([eg.reshape(clipped[0], (-1,)), clipped[1]], axis=0)

    gradcheck.check(f, arrays, device=device)


def test_clip_by_global_norm_errors():
    with pytest.raises(ValueError, match=">= 0"):
        eg.clip_by_global_norm([eg.constant([1.0])], -1.0)
    with pytest.raises(TypeError, match="floating"):
        eg.clip_by_global_norm([eg.constant([1.0])], 1.0, use_norm=eg.constant(2))


# ---- norm -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("ord", ["euclidean", 1, 2, np.inf, 1.5, 3, 0.5])
@pytest.mark.parametrize("axis", [None, 0, -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_vector_norms_match_numpy(ord, axis, keepdims):
    x = np.random.default_rng(5).normal(size=(3, 4))
    np_ord = 2 if ord == "euclidean" else ord
    flat = x.ravel() if axis is None else x
    expected = np.linalg.norm(flat, ord=np_ord, axis=0 if axis is None else axis)
    if keepdims:
        expected = np.reshape(expected, (1, 1)) if axis is None else np.expand_dims(expected, axis)
    got = eg.norm(eg.constant(x), ord=ord, axis=axis, keepdims=keepdims).numpy()
    assert got.shape == np.shape(expected)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


@pytest.mark.parametrize("ord", ["euclidean", "fro", 1, np.inf])
@pytest.mark.parametrize("axis", [(0, 1), (1, 0), (-1, 0), (2, 1)])
def test_matrix_norms_match_numpy(ord, axis):
    x = np.random.default_rng(6).normal(size=(3, 4, 2))
    np_ord = "fro" if ord == "euclidean" else ord
    expected = np.linalg.norm(x, ord=np_ord, axis=axis)
    np.testing.assert_allclose(eg.norm(eg.constant(x), ord=ord, axis=axis).numpy(), expected, rtol=1e-12)
    kept = eg.norm(eg.constant(x), ord=ord, axis=axis, keepdims=True)
    assert kept.shape == np.linalg.norm(x, ord=np_ord, axis=axis, keepdims=True).shape


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"ord": "fro"}, "matrix norm"),
    ({"ord": "fro", "axis": 0}, "matrix norm"),
    ({"ord": 0}, "supported vector norm"),
    ({"ord": -1, "axis": 1}, "supported vector norm"),
    ({"ord": "nuc"}, "supported vector norm"),
    ({"ord": 2, "axis": (0, 1)}, "spectral"),
    ({"ord": 1.5, "axis": (0, 1)}, "supported matrix norm"),
    ({"axis": (0, 0)}, "2 different integers"),
    ({"axis": (0, 1, 2)}, "2 different integers"),
    ({"axis": 5}, "out of range"),
])
def test_norm_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        eg.norm(eg.ones((2, 3)), **kwargs)


def test_norm_of_ints_is_a_type_error():
    with pytest.raises(TypeError, match="floating"):
        eg.norm(eg.constant([3, 4]))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(("ord", "axis"), [("euclidean", None), (1.5, 0), (3, 1), ("fro", (0, 1)),
                                           (1, (0, 1)), (np.inf, (1, 0))])
def test_norm_gradients(device, ord, axis):
    rng = np.random.default_rng(7)
    x = rng.uniform(0.2, 1.0, (3, 4)) * rng.choice([-1.0, 1.0], (3, 4)) + np.arange(12).reshape(3, 4) * 0.05
    gradcheck.check(lambda t: eg.norm(t, ord=ord, axis=axis), [x], device=device)


def test_euclidean_norm_gradient_at_zero_is_zero_not_nan():
    t = eg.zeros(3)
    with eg.GradientTape() as tape:
        tape.watch(t)
        n = eg.norm(t)
    np.testing.assert_array_equal(tape.gradient(n, t).numpy(), [0, 0, 0])
