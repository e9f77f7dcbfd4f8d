"""Train the seed-002-style CNN on scikit-learn's 8x8 digits; print the time per epoch and the accuracy.

    uv run python bench/cnn_digits.py                       # 5 epochs, batch 64, on cpu:0
    uv run python bench/cnn_digits.py --epochs 8 --device gpu:0
    uv run python bench/cnn_digits.py --blas-threads 1      # limit BLAS threads (needs threadpoolctl)

The network: conv 3x3 (32 filters, SAME) → relu → max pool 2x2 → flatten → dense 10, trained with
Adam on softmax cross-entropy; 1,437 training and 360 test images. Targets (issue 3): an epoch in
under 2 s on 2 CPU cores, test accuracy above 95 %.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `engine` importable from the repository root
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

import engine as eg  # noqa: E402
from engine import layers as L  # noqa: E402
from engine.training import evaluate, train_step  # noqa: E402


def build_model(filters: int, seed: int) -> L.Sequential:
    return L.Sequential([
        L.Conv2D(filters, 3, padding="SAME", activation="relu", seed=seed),
        L.MaxPool2D(2),
        L.Flatten(),
        L.Dense(10, seed=seed + 1),
    ])


def blas_threads(limit: int | None):
    """A context limiting BLAS threads (threadpoolctl), or a no-op; and a description of the BLAS."""
    try:
        from threadpoolctl import threadpool_info, threadpool_limits  # noqa: PLC0415
    except ImportError:
        import contextlib  # noqa: PLC0415

        return contextlib.nullcontext(), "threadpoolctl not installed (BLAS threads: library default)"
    info = [f"{p.get('internal_api')} {p.get('version')} ({p.get('num_threads')} threads)"
            for p in threadpool_info() if p.get("user_api") == "blas"]
    context = threadpool_limits(limits=limit, user_api="blas") if limit else threadpool_limits(limits=None)
    return context, ", ".join(info) or "unknown"


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--filters", type=int, default=32)
    parser.add_argument("--learning-rate", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cpu:0")
    parser.add_argument("--blas-threads", type=int, default=None,
                        help="limit the BLAS thread pool (default: leave it as the library set it)")
    args = parser.parse_args(argv)

    context, blas = blas_threads(args.blas_threads)
    print(f"python {platform.python_version()}, numpy {np.__version__}, {os.cpu_count()} CPUs, BLAS: {blas}"
          + (f", limited to {args.blas_threads}" if args.blas_threads else ""))
    x_train, y_train, x_test, y_test = eg.data.load_digits(seed=args.seed)
    print(f"digits: {len(x_train)} train / {len(x_test)} test images {x_train.shape[1:]}, "
          f"batch {args.batch_size}, device {args.device}")
    times = []
    with context, eg.device(args.device):
        x_test_t, y_test_t = eg.constant(x_test), eg.constant(y_test)
        model = build_model(args.filters, args.seed)
        optimizer = eg.optimizers.Adam(args.learning_rate)
        for epoch in range(args.epochs):
            start = time.perf_counter()
            losses = []
            for xb, yb in eg.data.batches(x_train, y_train, args.batch_size, seed=args.seed + epoch):
                loss, _, _ = train_step(model, optimizer, eg.constant(xb), eg.constant(yb))
                losses.append(float(loss))
            seconds = time.perf_counter() - start
            times.append(seconds)
            scores = evaluate(model, x_test_t, y_test_t)
            print(f"epoch {epoch + 1:2d}: {seconds:6.3f} s   train loss {np.mean(losses):.4f}   "
                  f"test accuracy {scores['accuracy']:.4f}")
    print(model.summary())
    later = times[1:] or times
    result = {"median_epoch_s": statistics.median(later), "first_epoch_s": times[0],
              "test_accuracy": scores["accuracy"]}
    print(f"median epoch time (after the first): {result['median_epoch_s']:.3f} s (target < 2 s); "
          f"first epoch {times[0]:.3f} s; final test accuracy {scores['accuracy']:.4f} (target > 0.95)")
    return result


if __name__ == "__main__":
    main()
