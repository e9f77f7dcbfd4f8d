"""Every GradientTape behaviour of the API contract."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import engine as eg
from tests.helpers import DEVICES

SECOND_CALL = "GradientTape.gradient can only be called once on non-persistent tapes."


@pytest.fixture(params=DEVICES)
def device(request):
    with eg.device(request.param):
        yield request.param


def test_log_x_squared_first_and_second_derivative(device):
    # y = log x²: dy/dx = 2/x, d²y/dx² = -2/x² (lesson 03's numbers)
    x = eg.constant([1.0, 2.0, 3.0])
    with eg.GradientTape() as outer:
        outer.watch(x)
        with eg.GradientTape() as inner:
            inner.watch(x)
            y = eg.log(x * x)
        dy = inner.gradient(y, x)
    d2y = outer.gradient(dy, x)
    np.testing.assert_allclose(dy.numpy(), [2.0, 1.0, 2 / 3], rtol=1e-6)
    np.testing.assert_allclose(d2y.numpy(), [-2.0, -0.5, -2 / 9], rtol=1e-6)
    assert dy.device == device


def test_third_and_fourth_order():
    x = eg.constant(0.5, dtype="float64")
    with eg.GradientTape() as t4, eg.GradientTape() as t3, eg.GradientTape() as t2, eg.GradientTape() as t1:
        for t in (t1, t2, t3, t4):
            t.watch(x)
        y = eg.sin(x) * x
        d1 = t1.gradient(y, x)
        d2 = t2.gradient(d1, x)
        d3 = t3.gradient(d2, x)
    d4 = t4.gradient(d3, x)
    s, c, v = np.sin(0.5), np.cos(0.5), 0.5
    np.testing.assert_allclose([float(d) for d in (d1, d2, d3, d4)],
                               [c * v + s, 2 * c - s * v, -3 * s - c * v, -4 * c + s * v])


def test_two_tapes_in_one_with_statement():
    x = eg.constant(3.0)
    with eg.GradientTape() as t1, eg.GradientTape() as t2:
        t1.watch(x)
        t2.watch(x)
        y = x * x
    assert float(t1.gradient(y, x)) == 6.0
    assert float(t2.gradient(y, x)) == 6.0


def test_second_gradient_call_on_non_persistent_tape_raises():
    x = eg.constant(3.0)
    with eg.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)
    with pytest.raises(RuntimeError) as info:
        tape.gradient(y, x)
    assert str(info.value).startswith(SECOND_CALL)


def test_persistent_tape_answers_many_times():
    x = eg.constant(3.0)
    with eg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    assert float(tape.gradient(y, x)) == 6.0
    assert float(tape.gradient(z, x)) == 108.0
    assert float(tape.gradient(z, y)) == 18.0


def test_persistent_tape_differentiates_its_own_gradient():
    x = eg.constant(2.0)
    with eg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x ** 3
        dy = tape.gradient(y, x)  # recorded by the same (still recording) persistent tape
    assert float(tape.gradient(dy, x)) == 12.0


def test_gradient_inside_with_stops_a_non_persistent_tape():
    x = eg.constant(2.0)
    with eg.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        g = tape.gradient(y, x)
        assert not tape.is_recording
        _ = x * g  # not recorded
    assert float(g) == 4.0
    assert tape.records == []  # and what it saved is released


def test_wrong_nesting_order_gives_none():
    # The outer tape must be active while the inner gradient is computed, or it records nothing.
    x = eg.constant(3.0)
    with eg.GradientTape() as outer:
        outer.watch(x)
        with eg.GradientTape() as inner:
            inner.watch(x)
            y = x * x * x
    dy = inner.gradient(y, x)  # computed after the outer tape stopped
    assert float(dy) == 27.0
    assert outer.gradient(dy, x) is None


def test_unwatched_constant_gives_none_and_zero_on_request():
    x = eg.constant(3.0)
    c = eg.constant(2.0)
    with eg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * c
    assert tape.gradient(y, c) is None
    assert float(tape.gradient(y, c, unconnected_gradients="zero")) == 0.0
    with pytest.raises(ValueError, match="unconnected_gradients"):
        tape.gradient(y, x, unconnected_gradients="zeros")


def test_variables_are_watched_automatically_and_constants_are_not():
    v = eg.Variable(2.0, name="v")
    frozen = eg.Variable(5.0, name="frozen", trainable=False)
    with eg.GradientTape(persistent=True) as tape:
        y = v * v * frozen
    assert tape.watched_variables() == (v,)
    assert float(tape.gradient(y, v)) == 20.0
    assert tape.gradient(y, frozen) is None


def test_watch_accessed_variables_false():
    v = eg.Variable(2.0)
    w = eg.Variable(3.0)
    with eg.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(w)
        y = v * w
    assert tape.watched_variables() == (w,)
    assert float(tape.gradient(y, w)) == 2.0


def test_variable_snapshot_survives_assignment():
    # The tape records the value that was read, even if the variable changes before `gradient`.
    v = eg.Variable(3.0)
    with eg.GradientTape() as tape:
        y = v * v
    v.assign(100.0)
    assert float(tape.gradient(y, v)) == 6.0


def test_watch_rejects_non_tensors_and_warns_for_integers():
    with eg.GradientTape() as tape:
        with pytest.raises(ValueError, match="not a Tensor"):
            tape.watch(3.0)
        with pytest.warns(UserWarning, match="must be floating"):
            tape.watch(eg.constant(3))


def test_integer_sources_get_none():
    i = eg.constant(3)
    with eg.GradientTape() as tape:
        with pytest.warns(UserWarning):
            tape.watch(i)
        y = eg.cast(i, "float32") * 2.0
    assert tape.gradient(y, i) is None


def test_stop_recording():
    x = eg.constant(2.0)
    with eg.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        with tape.stop_recording():
            z = y * x  # invisible
        w = y + z
    assert float(tape.gradient(w, x)) == 4.0


def test_reset():
    x = eg.constant(2.0)
    with eg.GradientTape() as tape:
        tape.watch(x)
        _ = x * x * x
        tape.reset()
        tape.watch(x)
        y = x * x
    assert float(tape.gradient(y, x)) == 4.0


def test_structured_sources_and_targets():
    a, b, c = eg.constant(1.0), eg.constant(2.0), eg.constant(3.0)
    with eg.GradientTape(persistent=True) as tape:
        tape.watch([a, b, c])
        y = a * b * c
        z = a + b
    grads = tape.gradient(y, {"a": a, "rest": [b, (c,)]})
    assert float(grads["a"]) == 6.0 and float(grads["rest"][0]) == 3.0 and float(grads["rest"][1][0]) == 2.0
    assert isinstance(grads["rest"][1], tuple)
    summed = tape.gradient([y, z], [a, b])  # a list of targets is summed
    assert [float(g) for g in summed] == [7.0, 4.0]


def test_output_gradients():
    x = eg.constant([1.0, 2.0])
    with eg.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    g = tape.gradient(y, x, output_gradients=eg.constant([10.0, 100.0]))
    np.testing.assert_allclose(g.numpy(), [20.0, 400.0])


def test_output_gradients_shape_is_checked():
    x = eg.constant([1.0, 2.0])
    with eg.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    with pytest.raises(ValueError, match="shape"):
        tape.gradient(y, x, output_gradients=eg.constant([1.0, 2.0, 3.0]))


def test_gradient_with_respect_to_intermediate_and_target_itself():
    x = eg.constant(3.0)
    with eg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        h = x * x
        y = h * 2.0
    assert float(tape.gradient(y, h)) == 2.0
    assert float(tape.gradient(y, y)) == 1.0


def test_jacobian(device):
    x = eg.constant([1.0, 2.0, 3.0])
    with eg.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    jac = tape.jacobian(y, x)
    assert jac.shape == (3, 3)
    np.testing.assert_allclose(jac.numpy(), np.diag([2.0, 4.0, 6.0]))


def test_jacobian_matrix_shapes_and_batch_jacobian():
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((3, 2))
    x0 = rng.standard_normal((4, 3))
    w, x = eg.constant(w0), eg.constant(x0)
    with eg.GradientTape(persistent=True) as tape:
        tape.watch([w, x])
        y = eg.tanh(x @ w)
    jac = tape.jacobian(y, w)
    assert jac.shape == (4, 2, 3, 2)
    bj = tape.batch_jacobian(y, x)
    assert bj.shape == (4, 2, 3)
    dt = 1 - np.tanh(x0 @ w0) ** 2
    np.testing.assert_allclose(bj.numpy(), dt[:, :, None] * w0.T[None], rtol=1e-12)


def test_long_chain_does_not_recurse():
    x = eg.constant(1.0, dtype="float64")
    with eg.GradientTape() as tape:
        tape.watch(x)
        y = x
        for _ in range(100_000):
            y = y + 1e-6
    assert float(tape.gradient(y, x)) == 1.0


def test_records_describe_what_was_recorded():
    x = eg.constant([1.0, 2.0], name="x")
    v = eg.Variable(3.0, name="v")
    with eg.GradientTape() as outer, eg.GradientTape() as inner:
        inner.watch(x)
        outer.watch(x)
        y = eg.sum(x * v)
    ops = [r.op for r in inner.records]
    assert ops == ["read_variable", "multiply", "sum"]
    mul = inner.records[1]
    assert mul.input_ids[0] == x.id and mul.output.shape == (2,)
    info = mul.to_dict()
    assert info["inputs"][0]["name"] == "x" and info["inputs"][0]["dtype"] == "float32"
    assert info["outputs"][0]["device"] == "cpu:0"
    assert [r.op_id for r in outer.records] == [r.op_id for r in inner.records]
    assert y.id == inner.records[-1].output_ids[0]


def test_non_persistent_tape_frees_intermediates():
    x = eg.constant(np.ones(1000))
    with eg.GradientTape() as tape:
        tape.watch(x)
        h = eg.exp(x)
        y = eg.sum(h * h)
    ref = weakref.ref(h)
    del h
    tape.gradient(y, x)
    gc.collect()
    assert ref() is None


def test_tape_cannot_be_entered_twice():
    tape = eg.GradientTape()
    with tape, pytest.raises(RuntimeError, match="already active"):
        tape.__enter__()
