"""Gradients of functions: gradients_function, implicit_gradients, grad, value_and_grad."""

from __future__ import annotations

import numpy as np
import pytest

import engine as eg


def f(x, y):
    return x * x - 2 * x * y + 3 * y


def test_gradients_function_lesson_02_numbers():
    gx, gy = eg.gradients_function(f)(2.0, 1.0)
    assert (float(gx), float(gy)) == (2.0, -1.0)
    value, (gx, gy) = eg.value_and_gradients_function(f)(2.0, 1.0)
    assert float(value) == 3.0 and float(gx) == 2.0


def test_gradients_function_accepts_arrays():
    (g,) = eg.gradients_function(lambda x: eg.sum(x**2))(np.array([1.0, 2.0]))
    np.testing.assert_allclose(g.numpy(), [2.0, 4.0])
    assert g.dtype == np.float64


def test_implicit_gradients_pairs_in_read_order():
    w = eg.Variable(2.0, name="w")
    b = eg.Variable(1.0, name="b")
    frozen = eg.Variable(10.0, trainable=False)

    def loss(x):
        return (w * x + b - frozen) ** 2

    pairs = eg.implicit_gradients(loss)(3.0)
    assert [v for _, v in pairs] == [w, b]
    # d/dw = 2(wx + b - 10)·x = 2·(-3)·3, d/db = 2·(-3)
    assert [float(g) for g, _ in pairs] == [-18.0, -6.0]
    value, pairs = eg.implicit_value_and_gradients(loss)(3.0)
    assert float(value) == 9.0 and len(pairs) == 2


def test_implicit_gradients_without_variables_is_a_clear_error():
    with pytest.raises(ValueError, match="no trainable Variable"):
        eg.implicit_gradients(lambda x: x * 2)(eg.constant(1.0))


def test_grad_and_value_and_grad_compose():
    cube = lambda x: x**3  # noqa: E731
    assert float(eg.grad(cube)(2.0)) == 12.0
    assert float(eg.grad(eg.grad(cube))(2.0)) == 12.0
    assert float(eg.grad(eg.grad(eg.grad(cube)))(2.0)) == 6.0
    value, (gx, gy) = eg.value_and_grad(f, argnums=(0, 1))(2.0, 1.0)
    assert (float(value), float(gx), float(gy)) == (3.0, 2.0, -1.0)
    assert float(eg.grad(f, argnums=1)(2.0, 1.0)) == -1.0
    assert float(eg.grad(lambda x, y: x * 2.0)(1.0, 5.0)) == 2.0
    assert float(eg.grad(lambda x, y: x * 2.0, argnums=1)(1.0, 5.0)) == 0.0  # JAX: zeros, not None


def test_non_tensor_output_is_a_clear_error():
    with pytest.raises(TypeError, match="must return a Tensor"):
        eg.grad(lambda x: 3.0)(1.0)
