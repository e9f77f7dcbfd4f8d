"""A non-persistent tape lets go of each record as its one backward walk passes it (issue 33).

The walk pops the tape's list of records, so what a record keeps goes as soon as the walk is past it,
skipped records (no gradient flows through them) included; a record that another tape holds stays
with that tape. A walk that fails half way has let go of records: the tape is spent.
"""

import numpy as np
import pytest

import engine as eg

F32 = 4


def _steps(profile):
    return [(e.op, e.saved_bytes) for e in profile.timeline if e.kind == "step"]


def test_a_record_the_walk_skips_goes_with_the_walk():
    x = eg.constant(np.linspace(0.0, 1.0, 1000, dtype=np.float32))

    def step():
        with eg.GradientTape() as tape:
            tape.watch(x)
            y = eg.sum(eg.exp(x))  # exp keeps its output
            _ = eg.tanh(x)  # so does tanh, but no gradient flows through it
        return tape.gradient(y, x)

    p = eg.memory_profile(step)
    assert p.saved_peak_bytes == 2 * 1000 * F32
    assert _steps(p) == [("sum", 1000 * F32), ("exp", 0)]
    np.testing.assert_allclose(p.result.numpy(), np.exp(x.numpy()), rtol=1e-6)


def test_the_outer_walk_lets_go_of_what_the_inner_tape_held_too():
    x = eg.constant(np.linspace(-1.0, 1.0, 100, dtype=np.float32))

    def second_derivative():
        with eg.GradientTape() as outer:
            outer.watch(x)
            with eg.GradientTape() as inner:
                inner.watch(x)
                y = eg.sum(eg.tanh(x))
            g = inner.gradient(y, x)  # 1 - tanh²
            z = eg.sum(g)
        return outer.gradient(z, x)  # -2 tanh (1 - tanh²)

    p = eg.memory_profile(second_derivative)
    assert p.timeline[-1].saved_bytes == 0
    t = np.tanh(x.numpy())
    np.testing.assert_allclose(p.result.numpy(), -2 * t * (1 - t * t), rtol=1e-5, atol=1e-7)


def test_a_walk_that_fails_half_way_spends_the_tape():
    x = eg.constant([1 + 2j, 3 - 1j])
    with eg.GradientTape() as tape:
        tape.watch(x)
        y = eg.abs(x) * 2.0  # abs has no complex gradient: the walk fails at its second record
    with pytest.raises(TypeError, match="complex"):
        tape.gradient(y, x)
    with pytest.raises(RuntimeError, match="only be called once"):
        tape.gradient(y, x)


def test_an_error_before_the_walk_leaves_the_tape_usable():
    x = eg.constant([1.0, 2.0])
    with eg.GradientTape() as tape:
        tape.watch(x)
        y = eg.sum(x * x)
    with pytest.raises(ValueError, match="unconnected_gradients"):
        tape.gradient(y, x, unconnected_gradients="zeros")
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [2.0, 4.0])


def test_a_persistent_tape_keeps_its_records_through_every_walk():
    x = eg.constant([1.0, 2.0])
    with eg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = eg.sum(eg.exp(x))
    first = tape.gradient(y, x)
    assert [r.kept for r in tape.records] == [(True, True), (True, True)]  # it keeps everything
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), first.numpy())
