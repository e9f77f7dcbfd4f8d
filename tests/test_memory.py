"""Memory: a non-persistent tape frees what it recorded once `gradient` has run, and training does
not accumulate memory from step to step."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import engine as eg
from bench import memory


def test_non_persistent_tape_frees_intermediates_after_gradient():
    recorded, alive = memory.tape_releases_intermediates()
    assert recorded >= 6
    assert alive == 0


def test_intermediates_die_without_a_garbage_collector_pass():
    x = eg.Variable(np.linspace(-1, 1, 6, dtype=np.float32))
    gc.disable()
    try:
        with eg.GradientTape() as tape:
            a = eg.tanh(x * 2.0)
            b = eg.exp(a) + a
            loss = eg.sum(b * b)
        refs = [weakref.ref(t) for t in (a, b)]
        del a, b
        assert all(r() is not None for r in refs)  # the tape still holds them for the backward pass
        grad = tape.gradient(loss, x)
        assert grad is not None
        assert [r() for r in refs] == [None, None]  # freed by reference counting alone
        assert tape.records == []
    finally:
        gc.enable()


def test_persistent_tape_keeps_intermediates_until_it_is_dropped():
    x = eg.constant([1.0, 2.0])
    with eg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = eg.sin(x)
        z = eg.sum(y * y)
    ref = weakref.ref(y)
    del y
    tape.gradient(z, x)
    assert ref() is not None  # a persistent tape can be asked again, so it keeps what it saved
    del tape
    assert ref() is None


@pytest.mark.skipif(memory.rss_bytes() is None, reason="resident memory is readable on Linux only")
def test_training_memory_stays_flat():
    result = memory.training_growth(steps=200, warmup=30, every=100, report=None)
    assert np.isfinite(result["loss"])
    # Loose bound: a leak of the step's tensors (~100 KB per step) would grow ~20 MB here.
    assert result["growth"] < 8 * 2**20, f"RSS grew by {result['growth'] / 2**20:.1f} MiB in 200 steps"


def test_a_training_step_creates_no_reference_cycles():
    """Everything a step makes is freed by reference counting: nothing waits for the garbage collector
    (a recursive closure in `nest.pack_like` once kept every step's gradients alive until it ran)."""
    from bench import w2_mlp, w5_hvp

    for module in (w2_mlp, w5_hvp):
        run = module.engine(module.make_data())
        run.step()
        gc.collect()
        gc.disable()
        try:
            for _ in range(3):
                run.step()
            assert gc.collect() == 0, module.__name__
        finally:
            gc.enable()
