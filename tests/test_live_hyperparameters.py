"""Hyperparameters given as Variables (or tensors, or schedules returning tensors) are read when the step
runs, eagerly and in ``eg.function`` graphs alike (API.md, issue 24): a differential test of a traced
step against the same step run eagerly while the Variable changes between calls.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engine as eg

SETTINGS = settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
RATES = st.lists(st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.9]), min_size=2, max_size=4)


def _dropout_run(rates, traced, layer_form):
    rate = eg.Variable(rates[0])
    layer = eg.layers.Dropout(rate, seed=3)

    def step(x):
        if layer_form:
            return layer(x, training=True)
        return eg.nn.dropout(x, rate, seed=5)

    f = eg.function(step) if traced else step
    out = []
    for r in rates:
        rate.assign(r)
        out.append(f(eg.ones((400,))).numpy())
    return out, (f.trace_count if traced else 1)


@SETTINGS
@given(rates=RATES, layer_form=st.booleans())
def test_a_variable_dropout_rate_is_read_on_every_call_traced_as_eagerly(rates, layer_form):
    eager, _ = _dropout_run(rates, traced=False, layer_form=layer_form)
    traced, traces = _dropout_run(rates, traced=True, layer_form=layer_form)
    assert traces == 1  # one trace, replayed with each new rate
    for r, a, b in zip(rates, eager, traced):
        np.testing.assert_allclose(a, b, rtol=1e-6)
        kept = a[a != 0]
        np.testing.assert_allclose(kept, 1 / (1 - r), rtol=1e-6)  # the scale of this call's rate


def test_a_live_dropout_rate_out_of_range_is_refused_naming_dropout():
    rate = eg.Variable(0.5)
    layer = eg.layers.Dropout(rate)
    rate.assign(1.0)
    with pytest.raises(ValueError, match=r"^dropout: rate .* must be a number in \[0, 1\), got 1.0"):
        layer(eg.ones(3), training=True)
    with pytest.raises(TypeError, match=r"^Dropout: rate given as a tensor must be a 0-d floating"):
        eg.layers.Dropout(eg.Variable([0.1, 0.2]))


SCHEDULES = {
    "variable": lambda lr: lr,
    "schedule of a variable": lambda lr: (lambda step: lr * 1.0),
    "schedule returning a tensor": lambda lr: (lambda step: eg.constant(0.1) / (1.0 + step) + lr * 0.0),
    "0-d tensor": lambda lr: eg.constant(0.05),
}


def _train(make_lr, name, values, traced):
    lr = eg.Variable(values[0])
    w = eg.Variable([1.0, -2.0])
    opt = eg.optimizers.get(name, learning_rate=make_lr(lr))

    def step():
        with eg.GradientTape() as tape:
            loss = eg.sum(w * w)
        opt.apply_gradients(opt.compute_gradients(loss, tape=tape))
        return loss

    f = eg.function(step) if traced else step
    out = []
    for v in values:
        lr.assign(v)
        f()
        out.append(w.numpy().copy())
    return out


@pytest.mark.parametrize("kind", sorted(SCHEDULES))
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(["SGD", "Momentum", "Adagrad", "RMSProp", "Adam"]),
       values=st.lists(st.sampled_from([0.01, 0.1, 0.3]), min_size=2, max_size=4))
def test_a_live_learning_rate_is_read_when_the_step_runs_traced_as_eagerly(kind, name, values):
    eager = _train(SCHEDULES[kind], name, values, traced=False)
    traced = _train(SCHEDULES[kind], name, values, traced=True)
    np.testing.assert_allclose(np.array(traced), np.array(eager), rtol=1e-6)


def test_assigning_a_variable_learning_rate_changes_the_next_step():
    lr = eg.Variable(0.1)
    w = eg.Variable(1.0)
    opt = eg.optimizers.SGD(lr)
    opt.minimize(lambda: w * w)                  # w = 1 - 0.1 * 2
    lr.assign(0.5)
    opt.minimize(lambda: w * w)                  # w = 0.8 - 0.5 * 1.6
    assert float(w) == pytest.approx(0.0, abs=1e-6)
    assert opt.current_learning_rate() == 0.5
