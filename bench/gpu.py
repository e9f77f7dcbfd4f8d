"""W2-W4 at GPU-filling sizes: the engine on CuPy (gpu:0) against PyTorch CUDA (eager).

    uv run python bench/gpu.py               # needs CuPy + a CUDA GPU; PyTorch CUDA optional
    uv run python bench/gpu.py W3 --repeats 11

Before timing, each workload runs one step on the GPU and the same step with the engine on the CPU
(same data): the results must match the CPU's (and PyTorch CUDA's) within float32 rounding. TF32
is switched off in PyTorch so that both sides multiply in full float32. On a machine without a GPU
it says why and exits 0 (1 with ``GRADLAB_REQUIRE_GPU=1``). ``--cpu-dry-run`` runs the same code on
cpu:0 at small sizes (to test the script itself where there is no GPU); ``--small`` runs the GPU path
at those sizes (the test suite does, on the fake CuPy of ``tests/fakecupy``).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from bench import common  # noqa: E402
from bench.common import Run, Skip, Workload  # noqa: E402

# GPU-filling sizes (and small ones for --cpu-dry-run)
SIZES = {
    "W2": ({"sizes": (1024, 4096, 4096, 10), "batch": 4096}, {"sizes": (32, 64, 64, 10), "batch": 32}),
    "W3": ({"n": 4096}, {"n": 128}),
    "W4": (
        {"batch": 512, "size": 32, "filters": (64, 128), "hidden": 2048},
        {"batch": 8, "size": 8, "filters": (4, 8), "hidden": 32},
    ),
}
TARGET = 1.2  # engine on CuPy ≤ 1.2× PyTorch CUDA eager


def workloads() -> dict[str, Workload]:
    from bench import w2_mlp, w3_matmul, w4_cnn  # noqa: PLC0415

    return {m.WORKLOAD.name: m.WORKLOAD for m in (w2_mlp, w3_matmul, w4_cnn)}


def why_no_gpu() -> str | None:
    """None when the engine has a usable GPU, else the reason (from the engine's own probe)."""
    import engine as eg  # noqa: PLC0415
    from engine import backend  # noqa: PLC0415

    if eg.gpu_available():
        return None
    return getattr(backend, "_gpu_problem", None) or "no usable CUDA GPU"


def close(a: list[np.ndarray], b: list[np.ndarray], tol: float) -> str | None:
    """None when every pair agrees to ``tol`` relative to the larger magnitude, else what differs."""
    if len(a) != len(b):
        return f"{len(a)} results vs {len(b)}"
    for i, (x, y) in enumerate(zip(a, b)):
        x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
        if x.shape != y.shape:
            return f"result {i}: shape {x.shape} vs {y.shape}"
        scale = max(np.max(np.abs(y), initial=0.0), 1e-6)
        err = np.max(np.abs(x - y), initial=0.0) / scale
        if not err <= tol:  # also catches NaN
            return f"result {i}: relative difference {err:.2e} (tolerance {tol:g})"
    return None


def on_engine_device(run: Run, device: str, sync: Callable[[], None]) -> Run:
    """``run`` with each step inside ``eg.device(device)`` and finished on the GPU before it returns."""
    import engine as eg  # noqa: PLC0415

    def step():
        with eg.device(device):
            run.step()
        sync()

    return Run(step, run.fetch)


def gpu_runs(w: Workload, size: dict, device: str, torch_device: str | None) -> tuple[dict, list[str]]:
    """The engine on ``device`` (and PyTorch on ``torch_device``), each checked against the engine on
    the CPU; returns ({name: Run}, notes)."""
    import engine as eg  # noqa: PLC0415

    notes: list[str] = []
    data = w.make_data(**size)
    with eg.device("cpu:0"):
        reference = w.builders["engine"](data)
        reference.step()
        expected = reference.fetch()
    del reference

    sync = _engine_sync(device)
    with eg.device(device):
        runs = {"engine": on_engine_device(w.builders["engine"](w.make_data(**size)), device, sync)}
    if torch_device is not None:
        try:
            torch = common.need("torch")
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.backends.cudnn.allow_tf32 = False
            torch_run = w.builders["torch"]({**w.make_data(**size), "torch_device": torch_device})
            runs["torch"] = Run(_synced(torch_run.step, torch, torch_device), torch_run.fetch)
        except Skip as why:
            notes.append(f"torch skipped: {why}")
    for name, run in runs.items():
        run.step()
        problem = close(run.fetch(), expected, tol=2e-3)
        if problem:
            notes.append(
                f"{name} on {device if name == 'engine' else torch_device} does NOT match the "
                f"engine on the CPU: {problem}"
            )
        else:
            notes.append(f"{name}: one step matches the engine on the CPU")
    return runs, notes


def _engine_sync(device: str) -> Callable[[], None]:
    if not device.startswith("gpu"):
        return lambda: None
    import cupy  # noqa: PLC0415

    return lambda: cupy.cuda.Device().synchronize()


def _synced(step: Callable[[], None], torch, device: str) -> Callable[[], None]:
    if not str(device).startswith("cuda"):
        return step

    def run():
        step()
        torch.cuda.synchronize()

    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("workloads", nargs="*", help="W2, W3, W4 (default: all)")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--min-time", type=float, default=0.5)
    parser.add_argument(
        "--cpu-dry-run",
        action="store_true",
        help="run the script's code on cpu:0 at small sizes (no GPU needed)",
    )
    parser.add_argument("--small", action="store_true", help="small sizes on the GPU (checks the GPU path)")
    args = parser.parse_args(argv)

    print(f"gradlab GPU benchmark: {common.machine_summary()}")
    if args.cpu_dry_run:
        device, torch_device, pick = "cpu:0", "cpu", 1
        print("dry run on the CPU at small sizes: checks the script, not the GPU.\n")
    else:
        reason = why_no_gpu()
        if reason:
            required = os.environ.get("GRADLAB_REQUIRE_GPU") == "1"
            print(
                f"{'FAILED' if required else 'skipped'}: the engine has no GPU here ({reason}). Run this "
                "on a machine with an NVIDIA GPU and CuPy (`make lab GPU=1`); `--cpu-dry-run` tests the "
                "script itself."
            )
            return 1 if required else 0
        device, pick = "gpu:0", 1 if args.small else 0
        torch = common.optional_import("torch")
        torch_device = "cuda" if torch is not None and torch.cuda.is_available() else None
        if torch_device is None:
            print("note: PyTorch with CUDA is not available: the table shows the engine only.")
        print(
            f"engine on {device} (CuPy); PyTorch eager on {torch_device}; target: engine <= "
            f"{TARGET}x PyTorch CUDA.\n"
        )

    chosen = workloads()
    names = [n.upper() for n in args.workloads] or list(chosen)
    for name in names:
        w = chosen[name]
        size = SIZES[name][pick]
        runs, notes = gpu_runs(w, size, device, torch_device)
        times = common.measure(
            {k: r.step for k, r in runs.items()}, repeats=args.repeats, min_time=args.min_time
        )
        shown = Workload(
            w.name, f"{w.title}; sizes {size}", w.builders, w.make_data, targets={"torch": TARGET}
        )
        print(common.table(shown, times, notes))
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
