"""Tracing is per thread, like tapes: threads that trace `eg.function`s at the same time each get
their own complete graph, and a thread that does not trace never sees another thread's trace."""

from __future__ import annotations

import threading

import pytest

import engine as eg
from engine import listeners, trace

THREADS, ROUNDS, LINKS = 4, 25, 20


pytestmark = pytest.mark.usefixtures("threads_switch_often")  # (tests/conftest.py)


def _chain(x):
    for _ in range(LINKS):
        x = x * 1.0 + 1.0
    return x


def _run_threads(work) -> list[str]:
    failures: list[str] = []
    barrier = threading.Barrier(THREADS)

    def run(k: int) -> None:
        barrier.wait()
        try:
            work(k, failures)
        except Exception as exc:  # a crash is a failure of this test, not of the thread
            failures.append(f"thread {k}: {type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=run, args=(k,)) for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return failures


def test_threads_tracing_at_once_each_get_their_whole_graph():
    single = eg.function(_chain)
    want_nodes = len(single.get_graph(eg.constant(0.0)).nodes)

    def work(k: int, failures: list[str]) -> None:
        for i in range(ROUNDS):
            f = eg.function(_chain)
            f(eg.constant(float(k)))  # traces
            out = f(eg.constant(float(k)))  # replays the graph
            if f.trace_count != 1 or len(f.graphs[0].nodes) != want_nodes:
                failures.append(f"thread {k}, round {i}: {f.trace_count} traces, "
                                f"{[len(g.nodes) for g in f.graphs]} nodes (want {want_nodes})")
            elif float(out) != k + LINKS:
                failures.append(f"thread {k}, round {i}: replay gave {float(out)}")

    failures = _run_threads(work)
    assert not failures, f"{len(failures)} of {THREADS * ROUNDS} wrong, e.g. {failures[:3]}"
    assert listeners.listening == 0 and trace.current_tracer() is None


def test_a_thread_that_does_not_trace_runs_eagerly_while_another_traces():
    inside, release = threading.Event(), threading.Event()

    @eg.function
    def slow(x):
        inside.set()
        release.wait(10)
        return x * 2.0

    result: dict[str, object] = {}
    tracer_thread = threading.Thread(target=lambda: result.setdefault("y", slow(eg.constant(1.0))))
    tracer_thread.start()
    assert inside.wait(10)
    try:
        assert listeners.listening == 1
        assert trace.current_tracer() is None  # this thread is not tracing
        acc = eg.optimizers.Accumulator()  # refused inside eg.function, fine out here
        v = eg.Variable(1.0)
        acc.add([(eg.constant(2.0), v)])
        with eg.GradientTape() as tape:
            y = v * v
        assert float(tape.gradient(y, v)) == 2.0
        f = eg.function(lambda x: x + 1.0)
        assert float(f(eg.constant(1.0))) == 2.0 and f.trace_count == 1  # traced here, not inlined
    finally:
        release.set()
        tracer_thread.join()
    assert float(result["y"]) == 2.0
    assert [n.op for n in slow.graphs[0].nodes].count("Mul") == 1  # nothing from this thread


def test_init_scope_pauses_only_this_threads_tracer():
    @eg.function
    def f(x):
        with listeners.init_scope():
            assert trace.current_tracer() is None
            w = eg.constant(3.0)
        assert trace.current_tracer() is not None
        return x * w

    assert float(f(eg.constant(2.0))) == 6.0
    assert trace.current_tracer() is None
