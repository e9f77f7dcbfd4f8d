"""Memory: does training leak, and does a non-persistent tape let go of what it recorded?

    uv run python bench/memory.py              # 10,000 W2 training steps
    uv run python bench/memory.py --steps 2000

1. Runs W2 (the MLP step) many times and reports the resident memory (RSS) after a warm-up and then
   every so often: flat memory means nothing accumulates from step to step.
2. Records a forward pass on a non-persistent tape, keeps only weak references to its intermediate
   tensors, calls ``gradient``, and checks that every intermediate is gone (freed by reference
   counting, without a garbage-collector pass).
3. The peak memory one W4 (CNN) training step allocates, eager and traced (``eg.function``): a replay
   frees each intermediate right after its last use, so its peak should not exceed eager's. Measured
   with ``tracemalloc``, which sees NumPy's array buffers.
"""

from __future__ import annotations

import argparse
import gc
import sys
import weakref
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def rss_bytes() -> int | None:
    """This process's resident memory now (Linux /proc), or None where that is not readable."""
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    import os  # noqa: PLC0415

    return pages * os.sysconf("SC_PAGE_SIZE")


def training_growth(steps: int, warmup: int = 200, every: int = 1000, report=print,
                    impl: str = "engine") -> dict:
    """Run W2 ``warmup + steps`` times (``impl="traced"``: the traced step); RSS after the warm-up,
    at checkpoints, and the growth."""
    from bench import w2_mlp  # noqa: PLC0415

    run = w2_mlp.WORKLOAD.builders[impl](w2_mlp.make_data())
    for _ in range(warmup):
        run.step()
    gc.collect()
    start = rss_bytes()
    checkpoints = []
    for i in range(1, steps + 1):
        run.step()
        if i % every == 0 or i == steps:
            rss = rss_bytes()
            checkpoints.append((i, rss))
            if report and rss is not None and start is not None:
                report(f"  step {i:>6}: RSS {rss / 2**20:8.1f} MiB ({(rss - start) / 2**20:+.2f} MiB)")
    end = rss_bytes()
    growth = None if start is None or end is None else end - start
    return {
        "start": start,
        "end": end,
        "growth": growth,
        "checkpoints": checkpoints,
        "loss": float(run.fetch()[0]),
    }


def tape_releases_intermediates() -> tuple[int, int]:
    """(intermediates recorded, still alive after `gradient`) for a small MLP on a fresh tape."""
    import numpy as np  # noqa: PLC0415

    import engine as eg  # noqa: PLC0415

    rng = np.random.default_rng(0)
    w1 = eg.Variable(rng.normal(size=(8, 16)).astype(np.float32))
    w2 = eg.Variable(rng.normal(size=(16, 1)).astype(np.float32))
    x = eg.constant(rng.normal(size=(4, 8)).astype(np.float32))
    refs = []
    tape = eg.GradientTape()
    with tape:
        h = eg.tanh(x @ w1)
        y = h @ w2
        loss = eg.mean(y * y)
        for r in tape.records:  # every tensor the tape saved (stand-ins hold no array: Record.kept)
            refs += [weakref.ref(t) for t in (*r.saved_inputs, r.saved_output)
                     if not t._is_variable and t is not x and t.kept]
        del r, h, y
    grads = tape.gradient(loss, [w1, w2])
    del loss
    alive = sum(ref() is not None for ref in refs)
    assert all(g is not None for g in grads)
    return len(refs), alive


def step_peak_bytes(run, warmup: int = 2) -> int:
    """The most memory one ``run.step()`` holds at once beyond what was allocated before it."""
    import tracemalloc  # noqa: PLC0415

    for _ in range(warmup):
        run.step()
    gc.collect()
    tracemalloc.start()
    try:
        run.step()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def cnn_step_peaks() -> dict[str, int]:
    """Peak bytes of one W4 step, eager and traced, from the same data."""
    from bench import w4_cnn  # noqa: PLC0415

    data = w4_cnn.make_data()
    return {name: step_peak_bytes(w4_cnn.WORKLOAD.builders[name](data)) for name in ("engine", "traced")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--every", type=int, default=1000)
    args = parser.parse_args(argv)

    recorded, alive = tape_releases_intermediates()
    print(
        f"non-persistent tape: {recorded} intermediate tensors recorded, {alive} alive after gradient "
        f"({'ok' if alive == 0 else 'LEAK'})"
    )

    for impl in ("engine", "traced"):
        print(f"W2 training ({'eager' if impl == 'engine' else 'traced'}), {args.steps} steps after a "
              "200-step warm-up:")
        result = training_growth(args.steps, every=args.every, impl=impl)
        if result["growth"] is None:
            print("  resident memory is not readable on this system (/proc/self/statm); growth not measured")
        else:
            per_step = result["growth"] / args.steps
            print(
                f"  growth: {result['growth'] / 2**20:+.2f} MiB over {args.steps} steps "
                f"({per_step:+.1f} bytes per step); final loss {result['loss']:.4f}"
            )
    peaks = cnn_step_peaks()
    eager, traced = peaks["engine"], peaks["traced"]
    print(f"W4 CNN step, peak memory allocated during one step: eager {eager / 2**20:.1f} MiB, traced "
          f"{traced / 2**20:.1f} MiB ({traced / eager:.2f}x eager; {'ok' if traced <= eager else 'MORE'})")
    return 0 if alive == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
