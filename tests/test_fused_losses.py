"""The fused sparse softmax cross-entropy (one primitive, for speed) against its composite form
(log_softmax and a one-hot product, built from primitives): same values, same first and second
derivatives; and its own gradient primitive against finite differences (higher orders)."""

from __future__ import annotations

import numpy as np
import pytest

import engine as eg
from tests import gradcheck
from tests.helpers import DEVICES


def composite(ids, logits):
    one_hot = eg.constant(np.eye(logits.shape[-1])[ids].astype(logits.dtype)).to(logits.device)
    return -eg.sum(one_hot * eg.log_softmax(logits, axis=-1), axis=-1)


def first_and_second(loss, ids, logits, r, v):
    with eg.GradientTape() as outer:
        outer.watch(logits)
        with eg.GradientTape() as inner:
            inner.watch(logits)
            value = eg.sum(loss(ids, logits) * r)
        g = inner.gradient(value, logits)
        gv = eg.sum(g * v)
    return value.numpy(), g.numpy(), outer.gradient(gv, logits).numpy()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", [(5, 4), (2, 3, 6), (1, 1)])
def test_fused_matches_the_composite_to_second_order(device, shape):
    rng = np.random.default_rng(len(shape))
    with eg.device(device):
        logits = eg.constant(rng.normal(size=shape) * 3)
        ids = rng.integers(0, shape[-1], shape[:-1])
        r = eg.constant(rng.normal(size=shape[:-1]))
        v = eg.constant(rng.normal(size=shape))
        fused = first_and_second(eg.nn.sparse_softmax_cross_entropy, ids, logits, r, v)
        reference = first_and_second(composite, ids, logits, r, v)
    for a, b in zip(fused, reference):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_fused_is_stable_for_large_logits_and_keeps_the_dtype():
    logits = eg.constant([[1e4, 0.0, -1e4], [0.0, 0.0, 0.0]])
    with eg.GradientTape() as tape:
        tape.watch(logits)
        loss = eg.nn.sparse_softmax_cross_entropy([1, 2], logits)
    assert loss.dtype == np.float32
    np.testing.assert_allclose(loss.numpy(), [1e4, np.log(3)], rtol=1e-6)
    np.testing.assert_allclose(
        tape.gradient(loss, logits).numpy(), [[1, -1, 0], [1 / 3, 1 / 3, -2 / 3]], atol=1e-6
    )


@pytest.mark.parametrize("device", DEVICES)
def test_fused_loss_and_its_gradient_primitive_against_finite_differences(device):
    rng = np.random.default_rng(3)
    logits = rng.normal(size=(3, 4))
    gradcheck.check(lambda z: eg.nn.sparse_softmax_cross_entropy([1, 0, 3], z), [logits], device=device)
    one_hot = np.eye(4)[[2, 2, 0]]
    grad_prim = eg.primitives["sparse_softmax_cross_entropy_grad"]
    gradcheck.check(lambda z: grad_prim(z, eg.constant(one_hot).to(z.device)), [logits], device=device)
