"""eg.layers: naming, lazy building, seeded Glorot initialisation, the maths of each layer, Sequential."""

from __future__ import annotations

import math

import numpy as np
import pytest

import engine as eg
from engine import layers as L
from tests import gradcheck


@pytest.fixture(autouse=True)
def fresh_names():
    L.reset_names()
    yield
    L.reset_names()


def test_names_count_per_class_and_name_the_variables():
    d1, d2, c1 = L.Dense(2), L.Dense(3), L.Conv2D(4, 3)
    assert (d1.name, d2.name, c1.name) == ("dense_1", "dense_2", "conv2d_1")
    assert (L.MaxPool2D().name, L.Flatten().name, L.Dropout(0.1).name, L.Sequential().name) == \
        ("max_pooling2d_1", "flatten_1", "dropout_1", "sequential_1")
    assert L.Dense(1, name="out").name == "out"
    d1(eg.ones((1, 5)))
    c1(eg.ones((1, 6, 6, 2)))
    assert [v.name for v in d1.trainable_variables] == ["dense_1/kernel", "dense_1/bias"]
    assert [v.name for v in c1.variables] == ["conv2d_1/kernel", "conv2d_1/bias"]


def test_dense_builds_lazily_in_the_input_dtype():
    layer = L.Dense(3, seed=0)
    assert not layer.built and layer.trainable_variables == [] and "not built" in repr(layer)
    y = layer(np.ones((4, 5)))                         # NumPy float64 input
    assert layer.built and y.shape == (4, 3) and y.dtype == np.float64
    assert layer.kernel.shape == (5, 3) and layer.bias.shape == (3,) and layer.kernel.dtype == np.float64
    ints = L.Dense(2)(eg.constant([[1, 2]]))          # integer input: float32 variables
    assert ints.dtype == np.float32
    with pytest.raises(ValueError, match="expected inputs with 5 features"):
        layer(np.ones((4, 6)))


def test_dense_computes_x_kernel_plus_bias_and_activations():
    x = np.random.default_rng(0).normal(size=(4, 3))
    for name, fn in [("relu", lambda z: np.maximum(z, 0)), ("tanh", np.tanh),
                     ("sigmoid", lambda z: 1 / (1 + np.exp(-z))),
                     ("softmax", lambda z: np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)),
                     (None, lambda z: z), ("linear", lambda z: z), (eg.square, np.square)]:
        layer = L.Dense(5, activation=name, seed=1)
        y = layer(eg.constant(x)).numpy()
        layer.bias.assign(np.linspace(-1, 1, 5))
        y = layer(eg.constant(x)).numpy()
        z = x @ layer.kernel.numpy() + layer.bias.numpy()
        np.testing.assert_allclose(y, fn(z), rtol=1e-12)
    with pytest.raises(ValueError, match="Unknown activation 'gelu'"):
        L.Dense(2, activation="gelu")
    with pytest.raises(ValueError, match="units"):
        L.Dense(0)
    assert L.Dense(2, use_bias=False)(eg.ones((1, 2))).shape == (1, 2)


def test_glorot_uniform_is_bounded_seeded_and_has_the_right_spread():
    a = L.Dense(300, seed=5)
    a(eg.ones((1, 200)))
    w = a.kernel.numpy()
    limit = math.sqrt(6 / 500)
    assert np.abs(w).max() <= limit and abs(w.std() - limit / math.sqrt(3)) < 0.01 * limit
    b = L.Dense(300, seed=5)
    b(eg.ones((1, 200)))
    np.testing.assert_array_equal(b.kernel.numpy(), w)
    np.testing.assert_array_equal(a.bias.numpy(), np.zeros(300))
    c = L.Dense(300, seed=6)
    c(eg.ones((1, 200)))
    assert not np.array_equal(c.kernel.numpy(), w)


def test_unseeded_layers_follow_the_global_seed():
    def kernels():
        eg.random.set_seed(123)
        first, second = L.Dense(4), L.Dense(4)
        first(eg.ones((1, 3)))
        second(eg.ones((1, 3)))
        return first.kernel.numpy(), second.kernel.numpy()

    (a1, a2), (b1, b2) = kernels(), kernels()
    np.testing.assert_array_equal(a1, b1)
    np.testing.assert_array_equal(a2, b2)
    assert not np.array_equal(a1, a2)


def test_conv2d_layer_matches_nn_conv2d_plus_bias():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(2, 6, 5, 3))
    layer = L.Conv2D(4, (3, 2), strides=2, padding="VALID", activation="relu", seed=0)
    layer(eg.constant(x))
    layer.bias.assign(rng.normal(size=4))
    expected = eg.relu(eg.nn.conv2d(eg.constant(x), layer.kernel, 2, "VALID") + layer.bias).numpy()
    np.testing.assert_allclose(layer(eg.constant(x)).numpy(), expected, rtol=1e-12)
    assert layer.kernel.shape == (3, 2, 3, 4)
    limit = math.sqrt(6 / (3 * 2 * 3 + 3 * 2 * 4))
    assert np.abs(layer.kernel.numpy()).max() <= limit
    with pytest.raises(ValueError, match="NHWC"):
        L.Conv2D(2, 3)(eg.ones((8, 8)))
    with pytest.raises(ValueError, match="filters"):
        L.Conv2D(0, 3)


def test_pooling_flatten_and_dropout_layers():
    x = eg.constant(np.random.default_rng(3).normal(size=(2, 4, 4, 3)).astype(np.float32))
    np.testing.assert_array_equal(L.MaxPool2D(2)(x).numpy(), eg.nn.max_pool2d(x, 2).numpy())
    assert L.MaxPool2D(3, strides=1, padding="SAME")(x).shape == (2, 4, 4, 3)
    assert L.Flatten()(x).shape == (2, 48)
    drop = L.Dropout(0.5, seed=0)
    assert drop(x) is x                                  # training=False: the identity
    first, second = drop(x, training=True).numpy(), drop(x, training=True).numpy()
    assert not np.array_equal(first == 0, second == 0)  # a new mask each call
    again = L.Dropout(0.5, seed=0)
    np.testing.assert_array_equal(again(x, training=True).numpy(), first)   # ... reproducibly
    with pytest.raises(ValueError, match="rate"):
        L.Dropout(1.5)


def make_cnn():
    return L.Sequential([
        L.Conv2D(4, 3, activation="relu", seed=0),
        L.MaxPool2D(2),
        L.Flatten(),
        L.Dropout(0.5, seed=1),
        L.Dense(3, seed=2),
    ])


def test_sequential_layers_variables_training_flag_and_summary():
    model = make_cnn()
    assert "? = not built" in model.summary()
    x = eg.ones((2, 6, 6, 1))
    y = model(x)
    assert y.shape == (2, 3) and len(model.layers) == 5
    assert [v.name for v in model.trainable_variables] == [
        "conv2d_1/kernel", "conv2d_1/bias", "dense_1/kernel", "dense_1/bias"]
    np.testing.assert_array_equal(model(x).numpy(), y.numpy())             # no dropout at test time
    assert not np.array_equal(model(x, training=True).numpy(), y.numpy())  # dropout while training
    text = model.summary()
    params = 3 * 3 * 1 * 4 + 4 + 36 * 3 + 3
    assert model.count_params() == params
    for piece in ["sequential_1", "conv2d_1 (Conv2D)", "(None, 6, 6, 4)", "(None, 3, 3, 4)", "(None, 36)",
                  "dense_1 (Dense)", f"Total params: {params}"]:
        assert piece in text
    other = make_cnn()
    other.build_for((None, 6, 6, 1))
    assert other.trainable_variables[0].name == "conv2d_2/kernel"
    with pytest.raises(TypeError, match="not a layer"):
        L.Sequential([3])


def test_gradients_flow_through_a_model():
    model = make_cnn()
    x = np.random.default_rng(4).normal(size=(2, 6, 6, 1))
    model(eg.constant(x))   # build in float64
    gradcheck.check(lambda t: model(t), [x], order=1)
    opt = eg.optimizers.Adam(0.01)
    pairs = opt.compute_gradients(lambda: eg.mean(eg.nn.sparse_softmax_cross_entropy(
        [0, 2], model(eg.constant(x), training=True))))
    assert len(pairs) == 4 and all(a is b for (_, a), b in zip(pairs, model.trainable_variables))
    assert all(g is not None and g.shape == v.shape for g, v in pairs)
