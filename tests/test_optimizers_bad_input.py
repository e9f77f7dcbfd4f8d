"""Optimizers on bad input (issue 13, items 6, 7 and the slots of item 15): nothing half-applied, nothing
silently truncated, nothing kept alive.

- An integer Variable is refused by every optimizer (``w - lr*g`` would be truncated: ``SGD(0.1)`` on
  ``[1, 2]`` with gradient ``[1, 1]`` gave ``[0, 1]``), before any variable of the call is touched.
- `Accumulator.add` checks every pair before adding any; `MultiSteps` keeps what it accumulated when
  the wrapped optimizer's update fails; `apply_gradients` computes every update before writing one.
- A learning-rate schedule that returns something other than a finite number is a clear error.
- Slots die with their Variable: 2,000 dropped Variables no longer keep their Adam slots.
"""

from __future__ import annotations

import gc
import sys
import tracemalloc
import weakref

import numpy as np
import pytest

import engine as eg
from tests import conftest
from tests.helpers import DEVICES

NAMES = ["SGD", "Momentum", "Adagrad", "RMSProp", "Adam"]


def _make(name: str, learning_rate=0.1):
    return getattr(eg.optimizers, name)(learning_rate)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", NAMES + ["MultiSteps"])
@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8"])
def test_an_integer_variable_is_refused_before_anything_is_touched(name, dtype, device):
    with eg.device(device):
        w = eg.Variable([1.0, 2.0], name="w")
        n = eg.Variable(np.array([1, 2], dtype=dtype), name="counts")
        g_w, g_n = eg.constant([1.0, 1.0]), eg.constant(np.array([1, 1], dtype=dtype))
    opt = eg.optimizers.MultiSteps(eg.optimizers.SGD(0.1), every_k=1) if name == "MultiSteps" else _make(name)
    with pytest.raises(TypeError) as err:
        opt.apply_gradients([(g_w, w), (g_n, n)])
    message = str(err.value)
    assert opt.name in message and "'counts'" in message and dtype in message, message
    assert "floating-point" in message and "dtype='float32'" in message, message  # the fix
    np.testing.assert_array_equal(n.numpy(), [1, 2])
    np.testing.assert_array_equal(w.numpy(), [1.0, 2.0])  # validated before the float one was updated
    assert opt.iterations == 0 and opt.slots(w) == {}


def test_an_integer_variable_is_refused_by_the_accumulator():
    acc = eg.optimizers.Accumulator()
    n = eg.Variable([1, 2], name="steps")
    with pytest.raises(TypeError, match=r"Accumulator.add: variable 'steps' has dtype int32"):
        acc.add([(eg.constant([1, 2]), n)])
    assert acc.count == 0 and acc.grads_and_vars() == []


@pytest.mark.parametrize("device", DEVICES)
def test_accumulator_add_is_all_or_nothing(device):
    with eg.device(device):
        a, b = eg.Variable([0.0, 0.0], name="a"), eg.Variable([0.0], name="b")
        acc = eg.optimizers.Accumulator()
        acc.add([(eg.constant([2.0, 2.0]), a)])
        with pytest.raises(ValueError, match="variable 'b' has shape"):
            acc.add([(eg.constant([100.0, 100.0]), a), (eg.constant([1.0, 2.0]), b)])  # b's is wrong
    assert acc.count == 1
    [(mean, var)] = acc.grads_and_vars()  # b was not registered either
    assert var is a and mean.device == device
    np.testing.assert_array_equal(mean.numpy(), [2.0, 2.0])  # not (2 + 100) / 1 = 102


def _failing_once(value: float):
    calls = {"n": 0}

    def schedule(step: int) -> float:
        calls["n"] += 1
        return float("nan") if calls["n"] == 1 else value

    return schedule


@pytest.mark.parametrize("device", DEVICES)
def test_multisteps_keeps_the_accumulated_gradients_when_the_update_fails(device):
    with eg.device(device):
        w = eg.Variable([0.0, 0.0], name="w")
        opt = eg.optimizers.MultiSteps(eg.optimizers.SGD(_failing_once(1.0)), every_k=2)
        assert opt.apply_gradients([(eg.constant([1.0, 1.0]), w)]) is False
        with pytest.raises(ValueError, match="learning rate is nan"):
            opt.apply_gradients([(eg.constant([3.0, 5.0]), w)])
        # nothing changed: still one micro-batch in, w untouched
        assert opt.micro_steps == 1 and opt.iterations == 0
        np.testing.assert_array_equal(opt.get_slot(w, "accumulated").numpy(), [1.0, 1.0])
        np.testing.assert_array_equal(w.numpy(), [0.0, 0.0])
        # calling again (the schedule now works) applies the mean of both micro-batches
        assert opt.apply_gradients([(eg.constant([3.0, 5.0]), w)]) is True
    np.testing.assert_array_equal(w.numpy(), [-2.0, -3.0])
    assert opt.micro_steps == 0 and opt.iterations == 1


class _FailsOn(eg.optimizers.Momentum):
    """Momentum whose rule fails for one variable (as a user's own update rule might)."""

    def _update(self, xp, w, g, slots, lr, step):
        if w.shape == (3,):
            raise FloatingPointError("the rule failed for this variable")
        return super()._update(xp, w, g, slots, lr, step)


@pytest.mark.parametrize("device", DEVICES)
def test_apply_gradients_writes_nothing_when_a_later_update_fails(device):
    with eg.device(device):
        first, second = eg.Variable([1.0, 2.0], name="first"), eg.Variable([1.0, 2.0, 3.0], name="second")
        opt = _FailsOn(0.1)
        with pytest.raises(FloatingPointError):
            opt.apply_gradients([(eg.constant([1.0, 1.0]), first), (eg.constant([1.0, 1.0, 1.0]), second)])
    np.testing.assert_array_equal(first.numpy(), [1.0, 2.0])
    assert opt.iterations == 0 and opt.slots(first) == {} and opt.variables() == []


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("schedule, error, match", [
    (lambda step: "fast", TypeError, r"learning rate is str 'fast'.*must be a number"),
    (lambda step: None, TypeError, r"learning rate is NoneType.*must be a number"),
    (lambda step: [0.1], TypeError, r"learning rate is list"),
])
def test_a_bad_learning_rate_from_a_schedule_is_a_clear_error(name, schedule, error, match):
    w = eg.Variable([1.0, 2.0], name="w")
    opt = getattr(eg.optimizers, name)(schedule)
    with pytest.raises(error, match=match) as err:
        opt.apply_gradients([(eg.constant([1.0, 1.0]), w)])
    assert name in str(err.value)
    np.testing.assert_array_equal(w.numpy(), [1.0, 2.0])
    assert opt.iterations == 0 and opt.variables() == []
    opt.learning_rate = lambda step: eg.constant(0.5)  # a one-element tensor is a number
    opt.apply_gradients([(eg.constant([1.0, 1.0]), w)])
    assert opt.iterations == 1


@pytest.mark.parametrize("device", DEVICES)
def test_the_slots_of_dropped_variables_are_freed(device, monkeypatch):
    unraisable: list = []  # an exception in a finalizer is only reported here: collect it
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    opt = eg.optimizers.Adam(0.1)
    with eg.device(device):
        keep = eg.Variable(np.ones(4, np.float32), name="keep")
        grads = eg.ones([1000])
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            dropped = [eg.Variable(np.ones(1000, np.float32)) for _ in range(2000)]
            opt.apply_gradients([(grads, v) for v in dropped] + [(eg.ones([4]), keep)])
            assert len(opt.variables()) == 2 * 2001
            held = tracemalloc.get_traced_memory()[0] - before
            del dropped
            gc.collect()
            after = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
    assert len(opt.variables()) == 2  # keep's m and v
    if device == "cpu:0" or conftest.GPU_BACKEND == "fake":  # tracemalloc sees NumPy memory
        assert held > 2000 * 2 * 4000  # the slots were there (2 × 4 kB per variable) ...
        assert after < held / 20, (held, after)  # ... and are gone (not 16 MB kept)
    assert sorted(opt.slots(keep)) == ["m", "v"] and opt.get_slot(keep, "m").shape == (4,)
    # and the finalizers do not keep the optimizer alive
    ref = weakref.ref(opt)
    del opt
    gc.collect()
    assert ref() is None
    del keep  # its finalizer finds no optimizer: nothing to do, no error
    gc.collect()
    assert unraisable == [], [u.exc_value for u in unraisable]


def test_a_variable_with_elementwise_equality_keeps_its_own_slots():
    """Slots are keyed by a stable identity: two Variables with equal values never share slots."""
    a, b = eg.Variable([1.0, 2.0]), eg.Variable([1.0, 2.0])
    opt = eg.optimizers.Momentum(1.0, momentum=0.5)
    opt.apply_gradients([(eg.constant([1.0, 1.0]), a), (eg.constant([2.0, 2.0]), b)])
    np.testing.assert_array_equal(opt.get_slot(a, "momentum").numpy(), [1.0, 1.0])
    np.testing.assert_array_equal(opt.get_slot(b, "momentum").numpy(), [2.0, 2.0])
    del a
    gc.collect()
    np.testing.assert_array_equal(opt.get_slot(b, "momentum").numpy(), [2.0, 2.0])
    assert len(opt.variables()) == 1
