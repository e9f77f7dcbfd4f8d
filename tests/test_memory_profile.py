"""`eg.memory_profile` and what a tape keeps (issue 33): saved bytes against hand counts from shapes,
linear in the batch, micro-batches keep less, peaks measured by the allocator, the GPU path on the
fake CuPy, and bad input."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import engine as eg

F32 = 4


def _mlp(sizes=(784, 512, 512, 10), seed=0):
    eg.random.set_seed(seed)
    return [eg.layers.Dense(n, activation="relu" if i < len(sizes) - 2 else None)
            for i, n in enumerate(sizes[1:])]


def _data(batch, seed=1):
    rng = np.random.default_rng(seed)
    x = eg.constant(rng.standard_normal((batch, 784)).astype(np.float32))
    labels = eg.constant(rng.integers(0, 10, batch).astype(np.int32))
    return x, labels


def _step(layers, x, labels):
    with eg.GradientTape() as tape:
        h = x
        for layer in layers:
            h = layer(h)
        loss = eg.mean(eg.nn.sparse_softmax_cross_entropy(labels, h))
    return tape.gradient(loss, [v for layer in layers for v in layer.trainable_variables])


def _hand_count(batch):
    """What the VJPs need, from shapes: matmul 1 keeps x; relu 1 and 2 keep their outputs (matmul 2 and
    3 read the same arrays); the loss keeps the logits and the one-hot labels. Weights are Variables."""
    return batch * F32 * (784 + 512 + 512 + 10 + 10)


def _built(layers):
    _step(layers, *_data(2))  # build the weights outside the profile
    return layers


def test_saved_peak_of_an_mlp_step_is_what_the_vjps_need():
    layers = _built(_mlp())
    x, labels = _data(128)
    p = eg.memory_profile(_step, layers, x, labels)
    assert abs(p.saved_peak_bytes - _hand_count(128)) <= 0.25 * _hand_count(128)
    assert p.saved_peak_bytes == _hand_count(128)  # exactly, in fact
    assert p.saved_peak_bytes < 0.5 * 1_990_000  # today's 1.99 MB (every input and output) is gone
    assert len(p.result) == 6
    phases = [e.phase for e in p.timeline]
    assert phases[0] == "forward" and phases[-1] == "backward"
    assert phases.index("backward") > 0 and "forward" not in phases[phases.index("backward"):]
    assert p.timeline[-1].saved_bytes == 0  # a non-persistent tape lets go as the walk goes
    # by layer: dense keeps x, dense_1 the relu output it made, dense_2 its relu output, the loss the rest
    names = [layer.name for layer in layers]
    assert p.by_scope[names[0]] == 128 * 784 * F32 + 128 * 512 * F32
    assert p.by_scope[names[1]] == 128 * 512 * F32
    assert p.by_scope[""] == 2 * 128 * 10 * F32
    assert sum(p.by_scope.values()) == p.saved_peak_bytes
    assert p.peak_bytes >= p.saved_peak_bytes
    assert "MemoryProfile" in repr(p) and "saved" in repr(p)


def test_gradients_are_those_of_a_plain_step():
    layers = _built(_mlp((784, 32, 10)))
    x, labels = _data(16)
    plain = _step(layers, x, labels)
    profiled = eg.memory_profile(_step, layers, x, labels).result
    for a, b in zip(plain, profiled):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_doubling_the_batch_doubles_what_is_saved():
    layers = _built(_mlp())
    small = eg.memory_profile(_step, layers, *_data(128)).saved_peak_bytes
    big = eg.memory_profile(_step, layers, *_data(256)).saved_peak_bytes
    assert 1.9 <= big / small <= 2.1


def test_four_accumulated_micro_batches_keep_a_quarter():
    layers = _built(_mlp())
    x, labels = _data(128)
    # the micro-batches as a data loader gives them (their own arrays, not views of the big batch)
    parts = [(eg.constant(x.numpy()[i * 32:(i + 1) * 32]), eg.constant(labels.numpy()[i * 32:(i + 1) * 32]))
             for i in range(4)]

    def accumulated():
        total = None
        for xs, ls in parts:
            grads = _step(layers, xs, ls)
            total = grads if total is None else [a + b for a, b in zip(total, grads)]
        return [g / 4.0 for g in total]

    full = eg.memory_profile(_step, layers, x, labels)
    micro = eg.memory_profile(accumulated)
    assert micro.saved_peak_bytes <= 0.4 * full.saved_peak_bytes
    assert micro.saved_peak_bytes == _hand_count(32)
    for a, b in zip(full.result, micro.result):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-6)


def test_a_persistent_tape_keeps_everything_until_deleted():
    x = eg.constant(np.ones((100, 10), np.float32))

    def run(persistent):
        with eg.GradientTape(persistent=persistent) as tape:
            tape.watch(x)
            y = eg.sum((x + 1.0) * 2.0)
        tape.gradient(y, x)
        return tape

    lean = eg.memory_profile(run, False)
    kept = eg.memory_profile(run, True)
    assert lean.saved_peak_bytes == 100 * 10 * F32 + F32  # multiply keeps x + 1 and the 2.0; add, sum none
    assert kept.saved_peak_bytes > lean.saved_peak_bytes
    assert kept.timeline[-1].saved_bytes == kept.saved_peak_bytes  # nothing let go during the walk


def test_peak_bytes_are_measured_by_the_allocator_not_estimated():
    def temporary():
        a = np.ones(1_000_000)  # 8 MB, never seen by a tape
        del a
        return eg.constant(1.0) * 2.0

    p = eg.memory_profile(temporary)
    assert p.peak_bytes >= 8_000_000
    assert p.saved_peak_bytes == 0
    assert p.timeline[-1].alive_bytes < 1_000_000


def test_a_record_keeps_only_what_its_vjp_needs():
    x = eg.constant([1.0, 2.0])
    with eg.GradientTape() as tape:
        tape.watch(x)
        y = eg.exp(x)
        z = y + x
    exp_rec, add_rec = tape.records
    assert exp_rec.kept == (False, True)  # exp's gradient is g·y
    assert add_rec.kept == (False, False, False)
    assert exp_rec.inputs[0] is x and add_rec.output is z  # the objects themselves while alive
    np.testing.assert_allclose(tape.gradient(z, x).numpy(), np.exp([1.0, 2.0]) + 1, rtol=1e-6)


def test_a_stand_in_says_it_was_not_kept():
    with eg.GradientTape() as tape:
        x = eg.constant([1.0, 2.0])
        tape.watch(x)
        _ = eg.exp(x * 3.0)
    mul_out = tape.records[0].saved_output
    assert not mul_out.kept and mul_out.shape == (2,) and "not kept" in repr(mul_out)
    with pytest.raises(ValueError, match="not kept"):
        mul_out.numpy()


@pytest.mark.parametrize("device", ["cpu:0", "gpu:0", "gpu:1"])
def test_profiles_on_every_device(device):
    with eg.device(device):
        w = eg.Variable(eg.ones((64, 32)))
        x = eg.ones((16, 64))

    def step():
        with eg.GradientTape() as tape:
            loss = eg.sum(eg.tanh(x @ w))
        return tape.gradient(loss, w)

    p = eg.memory_profile(step)
    assert p.device == device
    assert p.saved_peak_bytes == 16 * 64 * F32 + 16 * 32 * F32
    assert p.peak_bytes >= p.saved_peak_bytes
    assert p.result.device == device
    assert max(e.alive_bytes for e in p.timeline) <= p.peak_bytes


def test_bad_input_and_errors_leave_tracemalloc_as_it_was():
    with pytest.raises(TypeError, match="memory_profile: fn must be callable"):
        eg.memory_profile(3)

    def broken():
        eg.constant(1.0) * 2.0
        raise KeyError("inside")

    assert not tracemalloc.is_tracing()
    with pytest.raises(KeyError, match="inside"):
        eg.memory_profile(broken)
    assert not tracemalloc.is_tracing()
    assert eg.memory_profile(lambda: 1).result == 1  # the profiler stopped cleanly: a new one starts
    tracemalloc.start()
    try:
        with pytest.raises(KeyError):
            eg.memory_profile(broken)
        assert tracemalloc.is_tracing()  # left running, as the caller had it
    finally:
        tracemalloc.stop()
