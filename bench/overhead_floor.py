"""The cost of one tiny op, from bare NumPy to a recorded engine op: the floor behind W1's numbers.

    uv run python bench/overhead_floor.py

Each line is the CPU time of one multiply of two 16-element float32 arrays (min of 7 runs):
NumPy alone; the least any tape engine must do (compute, wrap the result, append a record); the
engine without a tape; the engine with a tape recording.
"""

from __future__ import annotations

import sys
import time
import timeit
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `engine` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

import engine as eg  # noqa: E402


class _Bare:
    __slots__ = ("data",)


def per_op_costs(number: int = 100_000) -> dict[str, float]:
    """Microseconds per op for each of the four ways of doing it."""
    rng = np.random.default_rng(0)
    a, b = rng.random(16, dtype=np.float32), rng.random(16, dtype=np.float32)
    ta, tb = eg.constant(a), eg.constant(b)
    records: list = []

    def bare_engine_op():
        out = _Bare()
        out.data = a * b
        records.append((a, b, out))
        if len(records) > 1000:
            records.clear()

    tape = eg.GradientTape()

    def recorded_op():
        ta * tb
        if len(tape._records) > 1000:
            tape._records.clear()

    def time_it(fn) -> float:
        timer = timeit.Timer(fn, timer=time.process_time)
        return min(timer.repeat(number=number, repeat=7)) / number * 1e6

    costs = {
        "NumPy a * b": time_it(lambda: a * b),
        "bare tape engine (compute, wrap, record)": time_it(bare_engine_op),
        "engine ta * tb, no tape": time_it(lambda: ta * tb),
    }
    with tape:
        tape.watch(ta)
        costs["engine ta * tb, recorded by a tape"] = time_it(recorded_op)
    return costs


if __name__ == "__main__":
    for what, us in per_op_costs().items():
        print(f"{what:<45}{us:6.2f} µs")
