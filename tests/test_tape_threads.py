"""Tapes are per thread (as in TensorFlow): a tape records only its own thread's ops, and threads
that enter and leave tapes concurrently all get their gradients."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import engine as eg

THREADS, GRADIENTS = 8, 300


pytestmark = pytest.mark.usefixtures("threads_switch_often")  # (tests/conftest.py)


def test_concurrent_tapes_give_every_thread_its_own_gradients():
    failures: list[str] = []
    barrier = threading.Barrier(THREADS)

    def work(k: int) -> None:
        barrier.wait()  # start together, so the tapes really overlap
        x = eg.constant(float(k + 1))
        w = eg.Variable(float(k + 2))
        for i in range(GRADIENTS):
            with eg.GradientTape() as tape:
                tape.watch(x)
                y = x * x * w + eg.sin(x)
            gx, gw = tape.gradient(y, [x, w])
            want_x = 2 * (k + 1) * (k + 2) + np.cos(np.float32(k + 1))
            if gx is None or gw is None:
                failures.append(f"thread {k}, gradient {i}: None")
            elif abs(float(gx) - want_x) > 1e-4 * abs(want_x) or float(gw) != (k + 1) ** 2:
                failures.append(f"thread {k}, gradient {i}: {float(gx)}, {float(gw)}")
            if [r.op for r in tape.records]:  # a non-persistent tape freed its records
                failures.append(f"thread {k}, gradient {i}: records kept")

    threads = [threading.Thread(target=work, args=(k,)) for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, f"{len(failures)} of {THREADS * GRADIENTS} wrong, e.g. {failures[:3]}"
    assert eg.active_tapes() == ()


def test_a_tape_never_records_another_threads_ops():
    x = eg.constant(2.0)
    entered, done = threading.Event(), threading.Event()
    seen: dict[str, object] = {}

    def other() -> None:
        entered.wait()
        seen["tapes"] = eg.active_tapes()  # the main thread's tape is not active here
        y = eg.constant(3.0)
        with eg.GradientTape() as mine:
            mine.watch([x, y])
            z = x * y  # x is watched by the main thread's tape too: it must not see this op
        seen["mine"] = [r.op for r in mine.records]
        seen["grad"] = float(mine.gradient(z, x))
        done.set()

    t = threading.Thread(target=other)
    t.start()
    with eg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        entered.set()
        assert done.wait(10)
        eg.exp(x)
    t.join()
    assert seen == {"tapes": (), "mine": ["multiply"], "grad": 3.0}
    assert [r.op for r in tape.records] == ["exp"]
    assert eg.active_tapes() == ()


def test_nested_tapes_in_one_thread_still_see_each_other():
    x = eg.constant(1.5)
    with eg.GradientTape() as outer:
        outer.watch(x)
        with eg.GradientTape() as inner:
            inner.watch(x)
            y = x * x * x
            assert eg.active_tapes() == (outer, inner)
        dy = inner.gradient(y, x)
    assert abs(float(outer.gradient(dy, x)) - 9.0) < 1e-6
