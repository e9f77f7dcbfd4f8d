"""gv.check_gradients at scale (issue 28): how long a check takes, how many elements it samples, and
whether it stays quiet on a correct float64 gradient, for inputs of 10³ … 10⁶ elements.

    uv run python bench/gradcheck_scale.py [--sizes 1000 10000 100000 1000000] [--repeat 3]

Target: a sampled check of a 10⁶-element input under 5 s, with no false alarm (``ok``). The time is
the median of ``--repeat`` runs of the whole widget (the analytic gradient, the central differences,
the verdicts), each on ``eg.sum(a * a)`` at ``np.linspace(0, 1, n)`` (gradient exactly 2a) and on
``eg.mean(eg.tanh(a))`` at random points.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import engine as eg
import gradviz as gv

TARGET_S = 5.0

FUNCTIONS = {
    "sum(a * a)": (lambda a: eg.sum(a * a), lambda n: np.linspace(0.0, 1.0, n)),
    "mean(tanh(a))": (lambda a: eg.mean(eg.tanh(a)), lambda n: np.random.default_rng(0).normal(size=n)),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000, 1_000_000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{'function':<15} {'elements':>10} {'checked':>8} {'ok':>5} {'largest rel. error':>19} "
          f"{'time (median)':>14}")
    for name, (f, point) in FUNCTIONS.items():
        for n in args.sizes:
            x = point(n)
            times = []
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                check = gv.check_gradients(f, x)
                times.append(time.perf_counter() - t0)
            t = statistics.median(times)
            flag = "" if n < 10**6 or t < TARGET_S else f"  (over the {TARGET_S:.0f} s target)"
            print(f"{name:<15} {n:>10,} {len(check.checked[0]):>8} {str(check.ok):>5} "
                  f"{check.max_rel_error:>19.2e} {t:>12.2f} s{flag}")


if __name__ == "__main__":
    main()
