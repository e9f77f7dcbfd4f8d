"""Finite-difference checks of first and second derivatives, used by the engine's tests.

First order: the engine's gradient of s(x) = Σ r ⊙ f(x) (a random projection r of the output)
against central differences of s. Second order: the gradient of h(x) = Σ v ⊙ ∇s(x) (a random
projection v of the gradient), computed by nesting two tapes, against central differences of the
engine's own first-order gradient.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

import engine as eg
from engine import backend


def _project(y: eg.Tensor, r: np.ndarray) -> eg.Tensor:
    return eg.sum(y * eg.constant(r).to(y.device))


def first_order(f: Callable, xs: list[eg.Tensor], r: np.ndarray) -> list[np.ndarray]:
    with eg.GradientTape() as tape:
        tape.watch(xs)
        s = _project(f(*xs), r)
    grads = tape.gradient(s, xs, unconnected_gradients="zero")
    return [_on_input_device(g, x) for g, x in zip(grads, xs)]


def second_order(f: Callable, xs: list[eg.Tensor], r: np.ndarray, vs: list[np.ndarray]) -> list[np.ndarray]:
    with eg.GradientTape() as outer:
        outer.watch(xs)
        with eg.GradientTape() as inner:
            inner.watch(xs)
            s = _project(f(*xs), r)
        grads = inner.gradient(s, xs, unconnected_gradients="zero")
        h = _project(grads[0], vs[0])
        for g, v in zip(grads[1:], vs[1:]):
            h = h + _project(g, v)
    hess_v = outer.gradient(h, xs, unconnected_gradients="zero")
    return [_on_input_device(g, x) for g, x in zip(hess_v, xs)]


def _on_input_device(g: eg.Tensor, x: eg.Tensor) -> np.ndarray:
    """``g`` as NumPy, after checking it is on ``x``'s device, really (not only labelled so)."""
    real = backend.device_of_array(g._data).name
    assert g.device == real == x.device, f"gradient on {g.device} (array on {real}), input on {x.device}"
    return g.numpy()


def numeric_gradient(scalar: Callable[[list[np.ndarray]], float], arrays: list[np.ndarray],
                     eps: float = 1e-6) -> list[np.ndarray]:
    """Central differences of a scalar function of several arrays, element by element."""
    out = []
    for k, a in enumerate(arrays):
        g = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            plus = [b.copy() for b in arrays]
            minus = [b.copy() for b in arrays]
            plus[k][idx] += eps
            minus[k][idx] -= eps
            g[idx] = (scalar(plus) - scalar(minus)) / (2 * eps)
        out.append(g)
    return out


def check(f: Callable, arrays: Sequence[np.ndarray], device: str = "cpu:0", order: int = 2,
          seed: int = 0, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    """Assert f's first (and second) derivatives match finite differences in float64.

    The inputs are placed on ``device``; ``f`` and the derivatives run outside any device scope, so a
    result that lands on CuPy's current device (gpu:0) instead of its inputs' (gpu:1) fails here.
    """
    rng = np.random.default_rng(seed)
    arrays = [np.asarray(a, dtype=np.float64) for a in arrays]

    def tensors(arrs):
        with eg.device(device):
            return [eg.constant(a) for a in arrs]

    y = f(*tensors(arrays))
    assert y.device == device, f"the result is on {y.device}, its inputs on {device}"
    r = rng.standard_normal(y.shape)

    analytic = first_order(f, tensors(arrays), r)
    numeric = numeric_gradient(lambda arrs: float(_project(f(*tensors(arrs)), r).numpy()), arrays)
    for k, (a, n) in enumerate(zip(analytic, numeric)):
        np.testing.assert_allclose(a, n, rtol=rtol, atol=atol,
                                   err_msg=f"first derivative, input {k}")
    if order < 2:
        return
    vs = [rng.standard_normal(a.shape) for a in arrays]
    analytic2 = second_order(f, tensors(arrays), r, vs)

    def h(arrs):
        grads = first_order(f, tensors(arrs), r)
        return float(sum(np.sum(g * v) for g, v in zip(grads, vs)))

    numeric2 = numeric_gradient(h, arrays)
    for k, (a, n) in enumerate(zip(analytic2, numeric2)):
        np.testing.assert_allclose(a, n, rtol=10 * rtol, atol=10 * atol,
                                   err_msg=f"second derivative, input {k}")
