"""Time the engine against its peers on the CPU and print one table of ratios per workload.

    uv run python bench/cpu.py                 # W1-W5, every peer that is installed
    uv run python bench/cpu.py W1 W3 --repeats 11

Peers are optional: a missing one is skipped with a note. Before timing, every implementation runs
one step from the same data and its numbers are compared with the engine's (a benchmark of a wrong
answer is worthless); a mismatch is printed, not hidden.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _limit_threads(argv: list[str]) -> None:
    """``--threads N``: thread pools read these when they load, so set them before NumPy is imported."""
    if "--threads" in argv[:-1]:
        n = argv[argv.index("--threads") + 1]
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = n


if __name__ == "__main__":
    _limit_threads(sys.argv)

import numpy as np  # noqa: E402

from bench import common  # noqa: E402
from bench.common import Skip, Workload  # noqa: E402


def workloads() -> dict[str, Workload]:
    from bench import w1_overhead, w2_mlp, w3_matmul, w4_cnn, w5_hvp  # noqa: PLC0415

    return {m.WORKLOAD.name: m.WORKLOAD for m in (w1_overhead, w2_mlp, w3_matmul, w4_cnn, w5_hvp)}


def agree(a: list[np.ndarray], b: list[np.ndarray], rtol: float, atol: float) -> str | None:
    """None when the two lists of results match, else what differs."""
    if len(a) != len(b):
        return f"{len(a)} results vs {len(b)}"
    for i, (x, y) in enumerate(zip(a, b)):
        x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
        if x.shape != y.shape:
            return f"result {i}: shape {x.shape} vs {y.shape}"
        if not np.allclose(x, y, rtol=rtol, atol=atol):
            return f"result {i}: max abs difference {np.max(np.abs(x - y)):.3g}"
    return None


def run_workload(
    w: Workload,
    repeats: int,
    min_time: float,
    only: list[str] | None = None,
    rtol: float = 2e-3,
    atol: float = 2e-4,
    clock: str = "wall",
) -> tuple[dict[str, float], list[str]]:
    """Build every implementation, check it against the engine, time them; returns (times, notes)."""
    notes: list[str] = []
    runs = {}
    for name, build in w.builders.items():
        if only and name not in only and name != "engine":
            continue
        try:
            runs[name] = build(w.make_data())
        except Skip as why:
            notes.append(f"{name} skipped: {why}")
    if "engine" in runs:
        runs["engine"].step()
        expected = runs["engine"].fetch()
        for name, run in runs.items():
            if name == "engine":
                continue
            run.step()
            problem = agree(expected, run.fetch(), rtol, atol)
            if problem:
                notes.append(f"{name} does NOT match the engine after one step: {problem}")
    times = common.measure(
        {name: run.step for name, run in runs.items()}, repeats=repeats, min_time=min_time, clock=clock
    )
    return times, notes


def profile_engine(w: Workload, steps: int = 50, top: int = 20, impl: str = "engine") -> None:
    """Where the engine's step (``impl="traced"``: the traced one) spends its time: cProfile over
    ``steps`` steps, by own time."""
    import cProfile  # noqa: PLC0415
    import pstats  # noqa: PLC0415

    run = w.builders[impl](w.make_data())
    for _ in range(3):
        run.step()
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(steps):
        run.step()
    profiler.disable()
    print(f"{w.name}  {w.title}: cProfile of {steps} {impl} steps")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(top)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("workloads", nargs="*", help="W1 … W5 (default: all)")
    parser.add_argument("--repeats", type=int, default=7, help="samples per implementation (median)")
    parser.add_argument("--min-time", type=float, default=0.2, help="seconds per sample, at least")
    parser.add_argument("--only", nargs="*", help="peers to run besides the engine")
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="threads for BLAS, OpenMP and PyTorch (default: each library's own choice; "
        "1 gives steadier numbers on a busy machine)",
    )
    parser.add_argument(
        "--clock",
        choices=sorted(common.CLOCKS),
        default="wall",
        help="wall time (default) or this process's CPU time (use with --threads 1)",
    )
    parser.add_argument(
        "--profile", nargs="?", const="engine", choices=["engine", "traced"],
        help="instead of the table: cProfile of the engine's step (--profile traced: the traced step)"
    )
    args = parser.parse_args(argv)
    threads = "library defaults"
    if args.threads:
        torch = common.optional_import("torch")
        if torch is not None:
            torch.set_num_threads(args.threads)
        threads = f"{args.threads} per library"

    print(f"gradlab CPU benchmark: {common.machine_summary()}; threads: {threads}; clock: {args.clock}")
    print("time: median of repeats after warm-up; 'engine / it' below 1 means the engine is faster.\n")
    chosen = workloads()
    names = [n.upper() for n in args.workloads] or list(chosen)
    for name in names:
        w = chosen[name]
        if args.profile:
            profile_engine(w, impl=args.profile)
            continue
        times, notes = run_workload(w, args.repeats, args.min_time, args.only, clock=args.clock)
        print(common.table(w, times, notes))
        if "traced" in times:
            print(common.table(w, times, reference="traced"))
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
