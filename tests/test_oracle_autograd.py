"""An independent oracle: HIPS autograd differentiates the same random programs, first and second order.

Hypothesis draws a program (a chain of ops mixing two inputs); the engine and autograd run it side by
side, and their gradients and Hessian-vector products must agree.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

import engine as eg
from tests.helpers import DEVICES, assert_rounding_close

anp = pytest.importorskip("autograd.numpy")
autograd = pytest.importorskip("autograd")
logsumexp = pytest.importorskip("autograd.scipy.special").logsumexp

M = np.random.default_rng(7).uniform(-1, 1, (4, 4))

# (name, engine version, autograd version); binary steps take (h, x, y).
UNARY_STEPS = [
    ("tanh", eg.tanh, anp.tanh),
    ("sin", eg.sin, anp.sin),
    ("cos", eg.cos, anp.cos),
    ("sigmoid", eg.sigmoid, lambda h: 1 / (1 + anp.exp(-h))),
    ("softplus", eg.softplus, lambda h: anp.logaddexp(0, h)),
    ("square/4", lambda h: eg.square(h) / 4, lambda h: h**2 / 4),
    ("exp(h/3)", lambda h: eg.exp(h / 3), lambda h: anp.exp(h / 3)),
    ("log1p(h²)", lambda h: eg.log1p(h * h), lambda h: anp.log1p(h * h)),
    ("sqrt(1+h²)", lambda h: eg.sqrt(1 + h * h), lambda h: anp.sqrt(1 + h * h)),
    ("softmax", lambda h: eg.softmax(h, axis=1), lambda h: anp.exp(h - logsumexp(
        h, axis=1, keepdims=True))),
    ("h@M", lambda h: h @ eg.constant(M), lambda h: anp.dot(h, M)),
    ("T@h/4", lambda h: eg.transpose(h) @ h / 4, lambda h: anp.dot(h.T, h) / 4),
    ("mean0", lambda h: h - eg.mean(h, axis=0, keepdims=True),
     lambda h: h - anp.mean(h, axis=0, keepdims=True)),
    ("logsumexp1", lambda h: h - eg.logsumexp(h, axis=1, keepdims=True),
     lambda h: h - logsumexp(h, axis=1, keepdims=True)),
    ("pow1.5", lambda h: eg.pow(1 + h * h, 1.5), lambda h: (1 + h * h) ** 1.5),
    ("flip", lambda h: h[::-1, [1, 0, 3, 2]], lambda h: h[::-1, [1, 0, 3, 2]]),
]
BINARY_STEPS = [
    ("h*x", lambda h, x, y: h * x, lambda h, x, y: h * x),
    ("h+y", lambda h, x, y: h + y, lambda h, x, y: h + y),
    ("h-x*y", lambda h, x, y: h - x * y, lambda h, x, y: h - x * y),
    ("h/(1+y²)", lambda h, x, y: h / (1 + y * y), lambda h, x, y: h / (1 + y * y)),
    ("h*rowsum(y)", lambda h, x, y: h * eg.sum(y, axis=1, keepdims=True),
     lambda h, x, y: h * anp.sum(y, axis=1, keepdims=True)),
    ("where", lambda h, x, y: eg.where(x > 0, h, y * h), lambda h, x, y: anp.where(x > 0, h, y * h)),
    ("h*(y·x)", lambda h, x, y: h * (y @ eg.transpose(x))[:, :1],
     lambda h, x, y: h * anp.dot(y, x.T)[:, :1]),
]
def _ignore_inputs(f):
    return lambda h, x, y: f(h)


STEPS = [(name, _ignore_inputs(f), _ignore_inputs(g)) for name, f, g in UNARY_STEPS] + BINARY_STEPS


def _program(indices):
    def engine_f(x, y):
        h = x
        for i in indices:
            h = STEPS[i][1](h, x, y)
        return h

    def oracle_f(x, y):
        h = x
        for i in indices:
            h = STEPS[i][2](h, x, y)
        return h

    return engine_f, oracle_f


# How close the engine must come to the oracle: both compute in float64, so they differ by rounding only,
# which grows with the values on the way (tests/helpers.py, ROUNDING_ULPS): exp(h/3) reaching 5,482 before
# a softmax made an HVP entry of 37.6 differ by 3.4e-8, and a saturated sigmoid's σ(1−σ) makes entries of
# 3e-10 differ by 1e-13, both plain float64 rounding (the two @examples below).


@pytest.mark.parametrize("device", DEVICES)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(indices=st.lists(st.integers(0, len(STEPS) - 1), min_size=1, max_size=6), seed=st.integers(0, 2**16))
@example(indices=[13, 14, 6, 9], seed=1738)  # exp(h/3) up to 5,482, then softmax: a 3.4e-8 HVP difference
@example(indices=[1, 8, 14, 14, 3], seed=43180)  # a saturated sigmoid: HVP entries of 3e-10 off by 1e-13
def test_random_programs_match_autograd(device, indices, seed):
    rng = np.random.default_rng(seed)
    x0, y0 = rng.uniform(-1, 1, (4, 4)), rng.uniform(-1, 1, (4, 4))
    r, vx, vy = (rng.standard_normal((4, 4)) for _ in range(3))
    engine_f, oracle_f = _program(indices)
    names = [STEPS[i][0] for i in indices]

    def oracle_scalar(x, y):
        return anp.sum(oracle_f(x, y) * r)

    # first order
    warnings.filterwarnings("ignore", "Output seems independent of input")  # autograd, for y unused
    expected = autograd.grad(oracle_scalar, argnum=(0, 1))(x0, y0)
    # second order: the gradient of <grad, v>
    def oracle_gv(x, y):
        gx, gy = autograd.grad(oracle_scalar, argnum=(0, 1))(x, y)
        return anp.sum(gx * vx) + anp.sum(gy * vy)

    expected2 = autograd.grad(oracle_gv, argnum=(0, 1))(x0, y0)
    # The oracle itself sometimes says NaN where the second derivative is finite (autograd's power rule
    # takes log(0) on a branch it multiplies by 0: seen with logsumexp1 → pow1.5): no reference there.
    assume(all(np.isfinite(e).all() for e in (*expected, *expected2)))

    with eg.device(device):
        x, y = eg.constant(x0), eg.constant(y0)
        with eg.GradientTape() as outer:
            outer.watch([x, y])
            with eg.GradientTape() as inner:
                inner.watch([x, y])
                s = eg.sum(engine_f(x, y) * eg.constant(r))
            gx, gy = inner.gradient(s, [x, y], unconnected_gradients="zero")
            gv = eg.sum(gx * eg.constant(vx)) + eg.sum(gy * eg.constant(vy))
        hx, hy = outer.gradient(gv, [x, y], unconnected_gradients="zero")

    np.testing.assert_allclose(float(s), oracle_scalar(x0, y0), rtol=1e-9, err_msg=str(names))
    growth = largest_value(x0, y0, indices)
    for order, got_pair, want_pair in ((1, (gx, gy), expected), (2, (hx, hy), expected2)):
        scale = max(float(np.abs(w).max()) for w in want_pair)
        for got, want in zip(got_pair, want_pair):
            assert_rounding_close(got.numpy(), want, scale=scale, growth=growth, order=order,
                                  err_msg=f"{names} (order {order})")


def largest_value(x0, y0, indices) -> float:
    """max(1, the largest |value| the program computes on the way), with the oracle's forward steps."""
    h, largest = x0, 1.0
    for i in indices:
        h = STEPS[i][2](h, x0, y0)
        largest = max(largest, float(np.abs(h).max()))
    return largest
