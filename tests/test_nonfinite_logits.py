"""Masked (-inf) and NaN logits in the softmax family and the softmax cross-entropy losses (issue 24).

A differential test over random masks against two oracles: a NumPy float64 one written here from the
definitions (so the test runs where PyTorch is absent), and PyTorch itself when it is installed. What
they agree on, the engine gives, values and gradients:

- a masked class (logit -inf) gets probability 0; the rest stays finite: the loss is finite when the
  label is not masked, +inf when it is, and the gradient with respect to the logits is finite;
- a row with every class masked: NaN for softmax, log_softmax and both losses (values and gradients),
  ``-inf`` for logsumexp (its gradient NaN), as PyTorch;
- a NaN logit makes its whole row NaN.

One difference is chosen: ``softmax_cross_entropy`` with a label of 0 on a masked class counts the term
as 0 (0·log 0 = 0), so it equals the sparse loss; PyTorch's and TensorFlow's dense forms give NaN there.
The oracle for it is therefore PyTorch's sparse loss on the same (one-hot) labels.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import engine as eg

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NAMES = ("sparse", "dense", "softmax", "log_softmax", "logsumexp")


@st.composite
def masked_logits(draw):
    rows, classes = draw(st.integers(1, 4)), draw(st.integers(2, 6))
    x = draw(hnp.arrays(np.float64, (rows, classes), elements=st.floats(-6, 6, allow_nan=False)))
    keep = draw(hnp.arrays(np.bool_, (rows, classes)))
    keep[np.arange(rows), draw(hnp.arrays(np.int64, rows, elements=st.integers(0, classes - 1)))] = True
    x = np.where(keep, x, -np.inf)
    special = draw(st.sampled_from(["none", "none", "all masked", "nan"]))
    row = draw(st.integers(0, rows - 1))
    if special == "all masked":
        x[row] = -np.inf
    elif special == "nan":
        x[row, draw(st.integers(0, classes - 1))] = np.nan
    labels = draw(hnp.arrays(np.int64, rows, elements=st.integers(0, classes - 1)))
    weights = draw(hnp.arrays(np.float64, classes, elements=st.floats(-2, 2, allow_nan=False)))
    return x, labels, weights


def numpy_oracle(x, labels, weights):
    """Values and gradients from the definitions, row by row, in float64."""
    out = {k: [] for k in NAMES}
    grads = {k: [] for k in NAMES}
    for row, label in zip(x, labels):
        m = row.max()
        if np.isnan(m) or np.isnan(row).any() or not np.isfinite(m):  # NaN, all -inf (or +inf): NaN row
            nan = np.full_like(row, np.nan)
            p, logp = nan, nan
        else:
            e = np.exp(row - m)
            p = e / e.sum()
            logp = row - m - np.log(e.sum())
        if np.isnan(row).any():
            lse = np.nan
        elif (row == -np.inf).all():
            lse = -np.inf
        else:
            lse = m + np.log(np.exp(row - m).sum())
        one_hot = np.eye(len(row))[label]
        out["sparse"].append(-logp[label])
        out["dense"].append(-logp[label])
        grads["sparse"].append(p - one_hot)
        grads["dense"].append(p - one_hot)
        out["softmax"].append(p)
        grads["softmax"].append(p * (weights - (weights * p).sum()))
        out["log_softmax"].append(logp)
        grads["log_softmax"].append(weights - p * weights.sum())
        out["logsumexp"].append(lse)
        grads["logsumexp"].append(p)
    return {k: np.array(v) for k, v in out.items()}, {k: np.array(v) for k, v in grads.items()}


def engine_results(x, labels, weights):
    v = eg.Variable(x)
    values, grads = {}, {}
    one_hot = np.eye(x.shape[1])[labels]
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        for name in NAMES:
            with eg.GradientTape() as tape:
                if name == "sparse":
                    y = eg.nn.sparse_softmax_cross_entropy(labels, v)
                    total = eg.sum(y)
                elif name == "dense":
                    y = eg.nn.softmax_cross_entropy(one_hot, v)
                    total = eg.sum(y)
                elif name == "logsumexp":
                    y = eg.logsumexp(v, axis=-1)
                    total = eg.sum(y)
                else:
                    y = getattr(eg, name)(v, axis=-1)
                    total = eg.sum(y * weights)
            values[name], grads[name] = y.numpy(), tape.gradient(total, v).numpy()
    return values, grads


def torch_results(x, labels, weights):
    torch = pytest.importorskip("torch")
    values, grads = {}, {}
    for name in NAMES:
        t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
        w = torch.tensor(weights, dtype=torch.float64)
        if name in ("sparse", "dense"):  # dense one-hot labels: PyTorch's sparse loss (see the docstring)
            y = torch.nn.functional.cross_entropy(t, torch.tensor(labels), reduction="none")
            total = y.sum()
        elif name == "logsumexp":
            y = torch.logsumexp(t, dim=-1)
            total = y.sum()
        else:
            y = getattr(torch, name)(t, dim=-1)
            total = (y * w).sum()
        total.backward()
        values[name], grads[name] = y.detach().numpy(), t.grad.numpy()
    return values, grads


def _same(got, want, what):
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12, equal_nan=True, err_msg=what)


@SETTINGS
@given(case=masked_logits())
def test_masked_and_nan_logits_match_a_numpy_oracle(case):
    x, labels, weights = case
    values, grads = engine_results(x, labels, weights)
    want_values, want_grads = numpy_oracle(x, labels, weights)
    for name in NAMES:
        _same(values[name], want_values[name], f"{name} value for logits {x}")
        _same(grads[name], want_grads[name], f"{name} gradient for logits {x}")


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=masked_logits())
def test_masked_and_nan_logits_match_pytorch(case):
    x, labels, weights = case
    want_values, want_grads = torch_results(x, labels, weights)
    values, grads = engine_results(x, labels, weights)
    for name in NAMES:
        _same(values[name], want_values[name], f"{name} value for logits {x}")
        _same(grads[name], want_grads[name], f"{name} gradient for logits {x}")


def test_a_masked_class_gives_the_finite_loss_and_gradient():
    """The issue's example, kept as a plain regression test (float32, the default dtype)."""
    logits = eg.Variable([[0.0, -np.inf, 1.0]])
    with eg.GradientTape(persistent=True) as tape:
        sparse = eg.nn.sparse_softmax_cross_entropy([0], logits)
        dense = eg.nn.softmax_cross_entropy([[1.0, 0.0, 0.0]], logits)
    for loss in (sparse, dense):
        assert np.isfinite(loss.numpy()).all()
        np.testing.assert_allclose(loss.numpy(), [np.log1p(np.e)], rtol=1e-6)
        assert np.isfinite(tape.gradient(loss, logits).numpy()).all()


def test_training_with_masked_logits_stays_finite():
    w = eg.Variable(np.zeros((3, 4), np.float32))
    mask = np.array([0.0, -np.inf, 0.0, 0.0], np.float32)
    opt = eg.optimizers.SGD(0.5)
    x = np.eye(3, dtype=np.float32)
    for _ in range(5):
        loss = opt.minimize(lambda: eg.mean(eg.nn.sparse_softmax_cross_entropy([0, 2, 3], x @ w + mask)))
        assert np.isfinite(float(loss))
    assert np.isfinite(w.numpy()).all()
