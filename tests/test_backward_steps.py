"""`eg.backward_steps`: the one backward walk, observable. `tape.gradient` runs the same walk, and the
contributions a source receives sum to its gradient (over the oracle suite's random programs)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engine as eg
import engine.backward
from tests.test_oracle_autograd import STEPS, _program


def _received(steps, source):
    """The sum of what ``source`` receives over all steps (None when it receives nothing)."""
    total = None
    for step in steps:
        for x, c in zip(step.record.inputs, step.contributions):
            if x is source and c is not None:
                total = c.numpy() if total is None else total + c.numpy()
    return total


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(indices=st.lists(st.integers(0, len(STEPS) - 1), min_size=1, max_size=6), seed=st.integers(0, 2**16))
def test_contributions_sum_to_the_gradient_on_random_programs(indices, seed):
    rng = np.random.default_rng(seed)
    engine_f, _ = _program(indices)
    x, y = eg.constant(rng.uniform(-1, 1, (4, 4))), eg.constant(rng.uniform(-1, 1, (4, 4)))
    r = eg.constant(rng.standard_normal((4, 4)))
    with eg.GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        s = eg.sum(engine_f(x, y) * r)
    steps = list(eg.backward_steps(tape, s, [x, y]))
    grads = tape.gradient(s, [x, y])
    for source, g in zip((x, y), grads):
        got = _received(steps, source)
        if g is None:
            assert got is None
        else:
            np.testing.assert_allclose(got, g.numpy(), rtol=1e-12, atol=1e-14)
    for step in steps:  # each step: the record, one upstream per output, one contribution per input
        assert isinstance(step, eg.BackwardStep)
        assert len(step.upstream) == len(step.record.outputs) == 1
        assert step.upstream[0].shape == step.record.outputs[0].shape
        assert len(step.contributions) == len(step.record.inputs)
        for x_in, c in zip(step.record.inputs, step.contributions):
            assert c is None or c.shape == x_in.shape


def test_steps_come_in_visit_order_with_upstream_and_contributions():
    a, b = eg.constant(2.0), eg.constant(5.0)
    with eg.GradientTape() as tape:
        tape.watch([a, b])
        p = a * b
        y = p + a
    steps = list(eg.backward_steps(tape, y, [a, b]))
    assert [s.record.op for s in steps] == ["add", "multiply"]
    assert [float(u) for u in steps[1].upstream] == [1.0]
    assert [float(c) for c in steps[1].contributions] == [5.0, 2.0]
    assert steps[1].record.primitive is eg.primitives["multiply"] and steps[1].record.outputs == (p,)
    assert float(tape.gradient(y, a)) == 6.0  # the tape was not consumed by watching the walk


def test_inputs_that_lead_to_no_source_get_none():
    a, b = eg.constant(2.0), eg.constant(5.0)
    with eg.GradientTape() as tape:
        tape.watch([a, b])
        y = a * b
    (step,) = eg.backward_steps(tape, y, [a])
    assert float(step.contributions[0]) == 5.0 and step.contributions[1] is None


def test_variables_reads_are_steps_and_sum_up():
    w = eg.Variable([1.0, 2.0])
    with eg.GradientTape(persistent=True) as tape:
        loss = eg.sum(w * w)
    steps = list(eg.backward_steps(tape, loss, w))
    assert [s.record.op for s in steps] == ["sum", "multiply", "read_variable", "read_variable"]
    np.testing.assert_array_equal(_received(steps, w), tape.gradient(loss, w).numpy())


def test_gradient_runs_the_same_walk(monkeypatch):
    calls = []
    real = engine.backward.walk

    def spy(*args, **kwargs):
        calls.append(kwargs.get("on_step") is not None)
        return real(*args, **kwargs)

    monkeypatch.setattr(engine.backward, "walk", spy)
    x = eg.constant(3.0)
    with eg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
    assert float(tape.gradient(y, x)) == 6.0
    list(eg.backward_steps(tape, y, x))
    assert calls == [False, True]


def test_backward_steps_accepts_records_and_checks_its_arguments():
    x = eg.constant(3.0)
    with eg.GradientTape() as tape:
        tape.watch(x)
        y = eg.exp(x)
    (step,) = eg.backward_steps(tape.records, y, x)
    np.testing.assert_allclose(float(step.contributions[0]), np.exp(np.float32(3.0)), rtol=1e-6)
    with pytest.raises(ValueError, match="sources must be Tensors"):
        eg.backward_steps(tape, y, 3.0)
    tape.gradient(y, x)
    with pytest.raises(RuntimeError, match="persistent"):
        eg.backward_steps(tape, y, x)
