"""How tracing time grows with the number of ops: `eg.function` tracing a chain of n ops against running
the same chain eagerly, for n = 1,000 ... 10,000 (API.md: "tracing time grows linearly with the number of
ops"; the target is a 10,000-op chain traced in under 20× its eager run).

Each row times, interleaved round-robin (median of ``--repeats`` rounds), ``f.get_graph(x)`` on a fresh
`eg.function` (the trace, plan compilation included) and the eager chain. A linear trace keeps the
trace/eager ratio flat as n grows, and the time per op of the trace flat too.

    uv run python bench/trace_time.py [--sizes 1000 5000 10000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

from common import ROOT  # noqa: F401  (puts the repository root on sys.path)

import engine as eg


def chain(n: int):
    """``x → x * 1.0001 + 0.5 → tanh`` repeated: n ops in all (a third each)."""
    def f(x):
        for _ in range(n // 3):
            x = eg.tanh(x * 1.0001 + 0.5)
        return x

    return f


def time_once(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[1000, 2500, 5000, 10000])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    x = eg.constant([0.1, 0.2, 0.3])
    print("| ops | trace (get_graph) | eager run | trace / eager | trace per op |")
    print("| --- | --- | --- | --- | --- |")
    for n in args.sizes:
        f = chain(n)
        traces, eagers = [], []
        for _ in range(args.repeats):  # interleaved: a slow moment hits both
            traces.append(time_once(lambda f=f: eg.function(f).get_graph(x)))
            eagers.append(time_once(lambda f=f: f(x)))
        tr, ea = statistics.median(traces), statistics.median(eagers)
        ops = n // 3 * 3
        print(f"| {ops} | {tr * 1e3:.1f} ms | {ea * 1e3:.1f} ms | {tr / ea:.1f}× | {tr / ops * 1e6:.1f} µs |")


if __name__ == "__main__":
    main()
