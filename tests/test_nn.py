"""eg.nn: convolution, pooling, dropout and softmax cross-entropy against plain-loop NumPy references,
TensorFlow's SAME/VALID geometry, and finite differences (first and second order, float64)."""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest

import engine as eg
from tests import gradcheck
from tests.helpers import DEVICES

CONV_MODULE = importlib.import_module("engine.nn.conv")


@pytest.fixture(params=["im2col", "bands"])
def conv_path(request, monkeypatch):
    """Run a convolution test through both of conv2d's paths: im2col over whole windows, and the
    bands of window rows inside the image (chosen by the share of padding rows: forced here)."""
    monkeypatch.setattr(CONV_MODULE, "BAND_SHARE", 0.0 if request.param == "bands" else 1.0)
    return request.param


# ---- plain-loop references (slow, obvious, independent of the engine's im2col) ---------------------


def tf_same_pads(size, k, s):
    out = math.ceil(size / s)
    total = max((out - 1) * s + k - size, 0)
    return out, total // 2, total - total // 2


def reference_pad(x, kh, kw, sh, sw, padding, fill=0.0):
    n, h, w, c = x.shape
    if padding == "VALID":
        return x, (h - kh) // sh + 1, (w - kw) // sw + 1
    oh, top, bottom = tf_same_pads(h, kh, sh)
    ow, left, right = tf_same_pads(w, kw, sw)
    return np.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)), constant_values=fill), oh, ow


def reference_conv(x, f, strides, padding):
    kh, kw, c, o = f.shape
    sh, sw = strides
    xp, oh, ow = reference_pad(x, kh, kw, sh, sw, padding)
    out = np.zeros((x.shape[0], oh, ow, o))
    for n in range(x.shape[0]):
        for i in range(oh):
            for j in range(ow):
                patch = xp[n, i * sh:i * sh + kh, j * sw:j * sw + kw, :]
                out[n, i, j] = np.tensordot(patch, f, axes=([0, 1, 2], [0, 1, 2]))
    return out


def reference_pool(x, k, s, padding, kind):
    xp, oh, ow = reference_pad(x, k[0], k[1], s[0], s[1], padding, fill=np.nan)
    out = np.zeros((x.shape[0], oh, ow, x.shape[3]))
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, i * s[0]:i * s[0] + k[0], j * s[1]:j * s[1] + k[1], :]
            out[:, i, j] = np.nanmax(patch, axis=(1, 2)) if kind == "max" else np.nanmean(patch, axis=(1, 2))
    return out


CONV_CASES = [
    # (input shape, filter shape, strides, padding)
    ((2, 5, 6, 3), (3, 3, 3, 4), 1, "SAME"),
    ((2, 5, 6, 3), (3, 3, 3, 4), 1, "VALID"),
    ((1, 7, 7, 2), (3, 3, 2, 2), 2, "SAME"),
    ((1, 7, 8, 2), (2, 2, 2, 3), (2, 3), "SAME"),     # even kernel: the odd pad goes bottom/right
    ((1, 8, 7, 1), (3, 2, 1, 2), (3, 2), "VALID"),    # rows left over at the end are unused
    ((3, 4, 4, 1), (1, 1, 1, 5), [1, 2, 2, 1], "SAME"),
    ((1, 3, 3, 2), (4, 4, 2, 1), 1, "SAME"),          # kernel larger than the image
]


@pytest.mark.parametrize(("xs", "fs", "strides", "padding"), CONV_CASES)
def test_conv2d_matches_the_loop_reference(xs, fs, strides, padding, conv_path):
    rng = np.random.default_rng(0)
    x, f = rng.normal(size=xs), rng.normal(size=fs)
    got = eg.nn.conv2d(eg.constant(x), eg.constant(f), strides=strides, padding=padding).numpy()
    s = (strides, strides) if isinstance(strides, int) else tuple(strides)[-3:-1] if len(strides) == 4 \
        else tuple(strides)
    np.testing.assert_allclose(got, reference_conv(x, f, s, padding), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(("xs", "fs", "strides", "padding"), CONV_CASES)
def test_conv2d_gradients_match_the_loop_reference(xs, fs, strides, padding, conv_path):
    """conv2d_backprop_input and conv2d_backprop_filter: each output gradient times the filters /
    the window it saw, added up by plain loops over the padded image."""
    rng = np.random.default_rng(6)
    x, f = rng.normal(size=xs), rng.normal(size=fs)
    s = (strides, strides) if isinstance(strides, int) else tuple(strides)[-3:-1] if len(strides) == 4 \
        else tuple(strides)
    xpad, oh, ow = reference_pad(x, fs[0], fs[1], s[0], s[1], padding)
    g = rng.normal(size=(xs[0], oh, ow, fs[3]))
    dpad, df = np.zeros(xpad.shape), np.zeros(fs)
    for n, i, j in np.ndindex(xs[0], oh, ow):
        rows, cols = slice(i * s[0], i * s[0] + fs[0]), slice(j * s[1], j * s[1] + fs[1])
        dpad[n, rows, cols] += f @ g[n, i, j]
        df += xpad[n, rows, cols, :, None] * g[n, i, j]
    top = (xpad.shape[1] - xs[1]) // 2 if padding == "SAME" else 0
    left = (xpad.shape[2] - xs[2]) // 2 if padding == "SAME" else 0
    xt, ft = eg.constant(x), eg.constant(f)
    with eg.GradientTape() as tape:
        tape.watch([xt, ft])
        y = eg.nn.conv2d(xt, ft, strides=strides, padding=padding)
    dx, dw = tape.gradient(y, [xt, ft], output_gradients=eg.constant(g))
    want_dx = dpad[:, top:top + xs[1], left:left + xs[2]]
    np.testing.assert_allclose(dx.numpy(), want_dx, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(dw.numpy(), df, rtol=1e-10, atol=1e-12)


def test_conv2d_same_padding_puts_the_extra_row_at_the_bottom_right():
    x = eg.constant(np.arange(1.0, 10.0, dtype=np.float32).reshape(1, 3, 3, 1))
    y = eg.nn.conv2d(x, eg.ones((2, 2, 1, 1)), padding="SAME").numpy()[0, :, :, 0]
    np.testing.assert_array_equal(y, [[12, 16, 9], [24, 28, 15], [15, 17, 9]])
    # stride 2, 3x3 kernel, 4x4 input: out 2x2, total padding 1 → 0 on top/left, 1 on bottom/right
    x = eg.constant(np.arange(16.0, dtype=np.float32).reshape(1, 4, 4, 1))
    y = eg.nn.conv2d(x, eg.ones((3, 3, 1, 1)), strides=2, padding="SAME").numpy()[0, :, :, 0]
    np.testing.assert_array_equal(y, [[45, 39], [66, 50]])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(("xs", "fs", "strides", "padding"),
                         [((2, 4, 5, 2), (3, 3, 2, 2), 1, "SAME"),
                          ((1, 5, 5, 2), (2, 3, 2, 3), (2, 1), "SAME"),
                          ((1, 6, 5, 1), (3, 2, 1, 2), 2, "VALID")])
def test_conv2d_derivatives_first_and_second_order(device, xs, fs, strides, padding, conv_path):
    rng = np.random.default_rng(1)
    # tanh makes the second derivative in each argument non-zero (conv alone is bilinear)
    gradcheck.check(lambda x, f: eg.tanh(eg.nn.conv2d(x, f, strides=strides, padding=padding)),
                    [rng.normal(size=xs), rng.normal(size=fs) * 0.5], device=device)


@pytest.mark.parametrize("device", DEVICES)
def test_conv2d_backprop_ops_have_their_own_derivatives(device, conv_path):
    """The gradient ops are primitives; their VJPs (in both inputs) are checked directly."""
    rng = np.random.default_rng(2)
    x, f = rng.normal(size=(1, 5, 4, 2)), rng.normal(size=(3, 2, 2, 3))
    with eg.device(device):
        y_shape = eg.nn.conv2d(eg.constant(x), eg.constant(f), strides=2).shape
    g = rng.normal(size=y_shape)

    def grads(x, f, g):
        with eg.GradientTape() as tape:
            tape.watch([x, f])
            y = eg.nn.conv2d(x, f, strides=2)
        dx, df = tape.gradient(y, [x, f], output_gradients=g)
        return eg.concat([eg.reshape(dx, (-1,)), eg.reshape(df, (-1,))], axis=0) ** 2

    gradcheck.check(grads, [x, f, g], device=device)
    assert {"conv2d", "conv2d_backprop_input", "conv2d_backprop_filter"} <= set(eg.primitives)


def test_conv2d_errors():
    x = eg.ones((1, 5, 5, 2))
    with pytest.raises(ValueError, match="4-D NHWC"):
        eg.nn.conv2d(eg.ones((5, 5, 2)), eg.ones((3, 3, 2, 1)))
    with pytest.raises(ValueError, match="HWIO"):
        eg.nn.conv2d(x, eg.ones((3, 3, 2)))
    with pytest.raises(ValueError, match="expect 3 input channels"):
        eg.nn.conv2d(x, eg.ones((3, 3, 3, 1)))
    with pytest.raises(ValueError, match="must fit"):
        eg.nn.conv2d(x, eg.ones((6, 3, 2, 1)), padding="VALID")
    with pytest.raises(ValueError, match="'SAME' or 'VALID'"):
        eg.nn.conv2d(x, eg.ones((3, 3, 2, 1)), padding="FULL")
    with pytest.raises(ValueError, match="strides"):
        eg.nn.conv2d(x, eg.ones((3, 3, 2, 1)), strides=0)
    with pytest.raises(TypeError, match="dtypes"):
        eg.nn.conv2d(x, eg.ones((3, 3, 2, 1), dtype="float64"))
    with pytest.raises(TypeError, match="floating"):
        eg.nn.conv2d(eg.ones((1, 3, 3, 1), dtype="int32"), eg.ones((1, 1, 1, 1), dtype="int32"))
    assert eg.nn.conv2d(x, eg.ones((3, 3, 2, 1)), padding="same").shape == (1, 5, 5, 1)


# ---- pooling ----------------------------------------------------------------------------------------
POOL_CASES = [((2, 2), None, "VALID"), ((2, 2), None, "SAME"), ((3, 3), (1, 1), "SAME"),
              ((3, 3), (2, 2), "VALID"), ((2, 3), (1, 2), "SAME"), ((3, 2), (2, 2), "SAME")]


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize(("k", "s", "padding"), POOL_CASES)
def test_pooling_matches_the_loop_reference(kind, k, s, padding):
    x = np.random.default_rng(3).normal(size=(2, 5, 7, 3)) - 2.0   # negative: padding must not win
    op = eg.nn.max_pool2d if kind == "max" else eg.nn.avg_pool2d
    got = op(eg.constant(x), k, s, padding).numpy()
    np.testing.assert_allclose(got, reference_pool(x, k, s or k, padding, kind), rtol=1e-12)


def test_avg_pool_same_leaves_padding_out_of_the_mean():
    x = eg.constant(np.arange(1.0, 10.0, dtype=np.float32).reshape(1, 3, 3, 1))
    y = eg.nn.avg_pool2d(x, 2, strides=1, padding="SAME").numpy()[0, :, :, 0]
    np.testing.assert_allclose(y, [[3, 4, 4.5], [6, 7, 7.5], [7.5, 8.5, 9]])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(("k", "s", "padding"), [((2, 2), None, "VALID"), ((3, 3), (2, 1), "SAME"),
                                                 ((2, 3), (1, 1), "VALID")])
def test_pooling_derivatives_first_and_second_order(device, k, s, padding):
    rng = np.random.default_rng(4)
    shape = (2, 5, 5, 2)
    x = (rng.permutation(np.prod(shape)).reshape(shape) * 0.1 - 2.5)   # distinct values: no ties
    gradcheck.check(lambda t: eg.nn.max_pool2d(t, k, s, padding) ** 2, [x], device=device)
    gradcheck.check(lambda t: eg.nn.avg_pool2d(t * t, k, s, padding) ** 2, [x], device=device)


def test_max_pool_ties_go_to_the_first_maximum_and_overlaps_add():
    x = eg.constant(np.array([[1.0, 3.0, 3.0], [3.0, 0.0, 3.0], [2.0, 2.0, 2.0]]).reshape(1, 3, 3, 1))
    with eg.GradientTape() as tape:
        tape.watch(x)
        y = eg.nn.max_pool2d(x, 2, strides=1, padding="VALID")   # four overlapping 2x2 windows
    np.testing.assert_array_equal(y.numpy()[0, :, :, 0], [[3, 3], [3, 3]])
    g = tape.gradient(y, x).numpy()[0, :, :, 0]
    # windows (0,0) and (0,1) both pick (0,1), the first 3 in row-major order; (1,0) picks (1,0);
    # (1,1) picks (1,2)
    np.testing.assert_array_equal(g, [[0, 2, 0], [1, 0, 1], [0, 0, 0]])


def reference_max_pool_and_grad(x, g, k, s, padding):
    """Max pooling and its gradient ``g`` added at each window's first maximum in row-major order; a
    NaN counts as the maximum (windows without padding)."""
    _, oh, ow = reference_pad(x, k[0], k[1], s[0], s[1], padding)
    y, dx = np.zeros(g.shape), np.zeros(x.shape)
    for n, i, j, c in np.ndindex(x.shape[0], oh, ow, x.shape[3]):
        window = x[n, i * s[0]:i * s[0] + k[0], j * s[1]:j * s[1] + k[1], c].ravel()
        nan = np.flatnonzero(np.isnan(window))
        first = nan[0] if len(nan) else int(np.argmax(window))
        y[n, i, j, c] = window[first]
        dx[n, i * s[0] + first // k[1], j * s[1] + first % k[1], c] += g[n, i, j, c]
    return y, dx


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("shape", "k", "padding"), [((2, 6, 8, 3), (2, 2), "SAME"),
                                                     ((2, 7, 9, 2), (2, 3), "VALID"),
                                                     ((1, 6, 6, 2), (3, 3), "SAME")])
def test_max_pool_tiling_windows_ties_and_nan(device, dtype, shape, k, padding):
    """Windows that tile the image (stride = window) take a fast path: same values, same gradient
    routing (first maximum; NaN; an inf or NaN in g reaches only its own position)."""
    rng = np.random.default_rng(5)
    x = rng.integers(-2, 3, size=shape).astype(dtype)   # small integers: many ties
    x[rng.random(shape) < 0.1] = np.nan
    with eg.device(device):
        xt = eg.constant(x)
        with eg.GradientTape() as tape:
            tape.watch(xt)
            y = eg.nn.max_pool2d(xt, k, padding=padding)
        g = rng.normal(size=y.shape).astype(dtype)
        g.flat[0], g.flat[1] = np.inf, np.nan
        dx = tape.gradient(y, xt, output_gradients=eg.constant(g)).numpy()
    want_y, want_dx = reference_max_pool_and_grad(x, g, k, k, padding)
    np.testing.assert_array_equal(y.numpy(), want_y.astype(dtype))
    np.testing.assert_array_equal(dx, want_dx.astype(dtype))


def test_max_pool_propagates_nan_and_handles_ints():
    y = eg.nn.max_pool2d(eg.constant(np.array([np.nan, 1, 2, 3.0]).reshape(1, 2, 2, 1)), 2).numpy()
    assert np.isnan(y).all()
    ints = eg.constant(np.arange(-8, 8, dtype=np.int32).reshape(1, 4, 4, 1))
    np.testing.assert_array_equal(eg.nn.max_pool2d(ints, 3, 2, "SAME").numpy().ravel(), [2, 3, 6, 7])


def test_pooling_errors():
    with pytest.raises(ValueError, match="4-D NHWC"):
        eg.nn.max_pool2d(eg.ones((4, 4)), 2)
    with pytest.raises(ValueError, match="must fit"):
        eg.nn.avg_pool2d(eg.ones((1, 2, 2, 1)), 3)
    with pytest.raises(ValueError, match="ksize"):
        eg.nn.max_pool2d(eg.ones((1, 4, 4, 1)), (2, 2, 2))
    with pytest.raises(TypeError, match="floating"):
        eg.nn.avg_pool2d(eg.ones((1, 4, 4, 1), dtype="int32"), 2)
    assert eg.nn.max_pool2d(eg.ones((1, 4, 4, 1)), [1, 2, 2, 1], [1, 2, 2, 1], "VALID").shape == (1, 2, 2, 1)


# ---- dropout ----------------------------------------------------------------------------------------
def test_dropout_scales_survivors_and_is_seedable():
    x = eg.ones((200, 50))
    y = eg.nn.dropout(x, rate=0.3, seed=7).numpy()
    assert set(np.unique(y).tolist()) == {0.0, np.float32(1 / 0.7)}
    assert abs((y == 0).mean() - 0.3) < 0.02
    np.testing.assert_array_equal(eg.nn.dropout(x, rate=0.3, seed=7).numpy(), y)
    assert not np.array_equal(eg.nn.dropout(x, rate=0.3, seed=8).numpy(), y)
    assert eg.nn.dropout(x, 0.3, training=False) is x and eg.nn.dropout(x, 0.0) is x


def test_dropout_gradient_is_the_mask_and_noise_shape_broadcasts():
    x = eg.constant(np.arange(1.0, 13.0).reshape(3, 4))
    with eg.GradientTape() as tape:
        tape.watch(x)
        y = eg.nn.dropout(x, rate=0.5, seed=1)
    g = tape.gradient(y, x).numpy()
    np.testing.assert_array_equal(g, (y.numpy() != 0) * 2.0)
    y = eg.nn.dropout(x, rate=0.5, seed=3, noise_shape=(3, 1)).numpy()
    assert all(len(set((row != 0).tolist())) == 1 for row in y)   # whole rows kept or dropped


def test_dropout_errors():
    for rate in (1.0, -0.1, float("nan")):
        with pytest.raises(ValueError, match="rate"):
            eg.nn.dropout(eg.ones(3), rate)
    with pytest.raises(TypeError, match="rate"):  # not a number: a TypeError, as for every number argument
        eg.nn.dropout(eg.ones(3), "0.5")
    with pytest.raises(TypeError, match="floating"):
        eg.nn.dropout(eg.constant([1, 2]), 0.5)


# ---- softmax cross-entropy --------------------------------------------------------------------------
def numpy_xent(labels, logits):
    m = logits.max(axis=-1, keepdims=True)
    log_p = logits - m - np.log(np.exp(logits - m).sum(axis=-1, keepdims=True))
    return -(labels * log_p).sum(axis=-1), np.exp(log_p)


def test_softmax_cross_entropy_matches_numpy_and_its_gradient_is_softmax_minus_labels():
    rng = np.random.default_rng(5)
    logits = rng.normal(size=(6, 4)) * 3
    labels = np.eye(4)[rng.integers(0, 4, 6)]
    expected, softmax = numpy_xent(labels, logits)
    z = eg.constant(logits)
    with eg.GradientTape(persistent=True) as tape:
        tape.watch(z)
        dense = eg.nn.softmax_cross_entropy(labels, z)
        sparse = eg.nn.sparse_softmax_cross_entropy(labels.argmax(axis=1), z)
    np.testing.assert_allclose(dense.numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(sparse.numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(tape.gradient(dense, z).numpy(), softmax - labels, atol=1e-12)
    np.testing.assert_allclose(tape.gradient(sparse, z).numpy(), softmax - labels, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cross_entropy_is_stable_for_huge_logits(dtype):
    logits = np.array([[1e4, 0.0, -1e4], [0.0, 1e4, 1e4]], dtype=dtype)
    z = eg.constant(logits)
    with eg.GradientTape() as tape:
        tape.watch(z)
        loss = eg.nn.sparse_softmax_cross_entropy([0, 0], z)
    np.testing.assert_allclose(loss.numpy(), [0.0, 1e4 + math.log(2)], rtol=1e-6)
    g = tape.gradient(loss, z).numpy()
    np.testing.assert_allclose(g, [[0, 0, 0], [-1, 0.5, 0.5]], atol=1e-6)
    assert np.all(np.isfinite(g))
    dense = eg.nn.softmax_cross_entropy(np.eye(3, dtype=dtype)[[0, 0]], z).numpy()
    np.testing.assert_allclose(dense, loss.numpy(), rtol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_cross_entropy_derivatives_first_and_second_order(device):
    rng = np.random.default_rng(6)
    logits = rng.normal(size=(3, 4)) * 2
    soft = rng.dirichlet(np.ones(4), size=3)
    gradcheck.check(lambda z: eg.nn.sparse_softmax_cross_entropy([1, 0, 3], z), [logits], device=device)
    gradcheck.check(lambda y, z: eg.nn.softmax_cross_entropy(y, z), [soft, logits], device=device)


def test_soft_labels_and_leading_axes():
    rng = np.random.default_rng(7)
    logits = rng.normal(size=(2, 3, 5))
    labels = rng.dirichlet(np.ones(5), size=(2, 3))
    np.testing.assert_allclose(eg.nn.softmax_cross_entropy(labels, eg.constant(logits)).numpy(),
                               numpy_xent(labels, logits)[0], rtol=1e-12)
    ids = rng.integers(0, 5, (2, 3))
    sparse = eg.nn.sparse_softmax_cross_entropy(eg.constant(ids), eg.constant(logits))
    np.testing.assert_allclose(sparse.numpy(), numpy_xent(np.eye(5)[ids], logits)[0], rtol=1e-12)


def test_cross_entropy_errors():
    z = eg.zeros((2, 3))
    with pytest.raises(ValueError, match="out of range for 3 classes"):
        eg.nn.sparse_softmax_cross_entropy([0, 3], z)
    with pytest.raises(ValueError, match="out of range"):
        eg.nn.sparse_softmax_cross_entropy([-1, 0], z)
    with pytest.raises(TypeError, match="integer class ids"):
        eg.nn.sparse_softmax_cross_entropy([0.0, 1.0], z)
    with pytest.raises(ValueError, match="shape"):
        eg.nn.sparse_softmax_cross_entropy([0, 1, 2], z)
    with pytest.raises(ValueError, match="same shape"):
        eg.nn.softmax_cross_entropy([[1.0, 0.0]], z)
    with pytest.raises(TypeError, match="dtype"):
        eg.nn.softmax_cross_entropy(eg.zeros((2, 3), dtype="float64"), z)
    with pytest.raises(TypeError, match="floating"):
        eg.nn.sparse_softmax_cross_entropy([0, 1], eg.zeros((2, 3), dtype="int32"))
