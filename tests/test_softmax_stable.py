"""Softmax, log_softmax, logsumexp and the cross-entropies are exact in float32 for large logits:
each subtracts the max before exponentiating. References are float64 computations from the same
float32 logits, scaled by 1e3."""

from __future__ import annotations

import numpy as np
import pytest

import engine as eg

F32_EPS = float(np.finfo(np.float32).eps)


def _logits(seed: int) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal((6, 5)) * 1e3).astype(np.float32)


def _log_softmax64(x: np.ndarray) -> np.ndarray:
    z = x.astype(np.float64) - x.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def test_softmax_of_equal_large_logits_is_one_half_exactly():
    assert eg.softmax([1000.0, 1000.0]).numpy().tolist() == [0.5, 0.5]
    assert eg.softmax(eg.constant([1000.0, 1000.0, 1000.0, 1000.0])).numpy().tolist() == [0.25] * 4


@pytest.mark.parametrize("seed", range(5))
def test_softmax_and_log_softmax_match_float64(seed):
    x = _logits(seed)
    want = _log_softmax64(x)
    got = eg.log_softmax(x).numpy()
    assert got.dtype == np.float32
    # within a few float32 roundings of the float64 value (|want| up to ~4e3)
    np.testing.assert_allclose(got, want, rtol=4 * F32_EPS, atol=4 * F32_EPS)
    np.testing.assert_allclose(eg.softmax(x).numpy(), np.exp(want), rtol=8 * F32_EPS, atol=1e-30)
    np.testing.assert_allclose(eg.logsumexp(x, axis=-1).numpy(),
                               np.log(np.exp(x - x.max(-1, keepdims=True).astype(np.float64)).sum(-1))
                               + x.max(-1), rtol=4 * F32_EPS)


@pytest.mark.parametrize("seed", range(5))
def test_cross_entropies_match_float64(seed):
    x = _logits(seed)
    labels = np.random.default_rng(seed).integers(0, 5, 6)
    one_hot = np.eye(5, dtype=np.float32)[labels]
    want = -(_log_softmax64(x) * one_hot).sum(-1)
    np.testing.assert_allclose(eg.nn.softmax_cross_entropy(one_hot, x).numpy(), want,
                               rtol=4 * F32_EPS, atol=4 * F32_EPS)
    np.testing.assert_allclose(eg.nn.sparse_softmax_cross_entropy(labels, x).numpy(), want,
                               rtol=4 * F32_EPS, atol=4 * F32_EPS)


def test_gradients_of_large_logits_match_float64():
    x = _logits(7)
    labels = np.eye(5, dtype=np.float32)[[0, 1, 2, 3, 4, 0]]
    t = eg.constant(x)
    with eg.GradientTape() as tape:
        tape.watch(t)
        loss = eg.sum(eg.nn.softmax_cross_entropy(labels, t))
    want = np.exp(_log_softmax64(x)) - labels
    np.testing.assert_allclose(tape.gradient(loss, t).numpy(), want, rtol=8 * F32_EPS, atol=8 * F32_EPS)
