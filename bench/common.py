"""Shared benchmark machinery: optional peers, timing (warm-up, median of repeats), a ratio table.

Every implementation of a workload is a *builder*: ``build(data) -> Run``. ``Run.step()`` does one
iteration (what is timed); ``Run.fetch()`` returns the numbers it produced as NumPy arrays (what the
smoke tests compare). All implementations start from the same NumPy data, so they must agree.

>>> t = measure({"a": lambda: None, "b": lambda: None}, repeats=3, min_time=0.001)
>>> sorted(t)
['a', 'b']
"""

from __future__ import annotations

import gc
import importlib
import os
import platform
import statistics
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # `python bench/cpu.py` puts bench/ first, not the repository root
    sys.path.insert(0, str(ROOT))


@dataclass
class Run:
    """One implementation of one workload, ready to time: ``step()`` runs it, ``fetch()`` reads it."""

    step: Callable[[], Any]
    fetch: Callable[[], list[np.ndarray]]


@dataclass
class Workload:
    """A named workload: its builders per implementation and the targets (engine time / peer time)."""

    name: str
    title: str
    builders: dict[str, Callable[[dict], Run]]
    make_data: Callable[..., dict]
    targets: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    #: Targets for the ``traced`` implementation (the engine's step inside ``eg.function``).
    traced_targets: dict[str, float] = field(default_factory=dict)


# ---- peers: each an optional import ---------------------------------------------------------------

_SKIPPED: dict[str, str] = {}


def optional_import(name: str, install: str | None = None) -> Any:
    """The module, or None with the reason remembered (`skipped()` lists them)."""
    try:
        if name == "dezero":
            _patch_numpy_for_dezero()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # old peers warn on import (SyntaxWarning, deprecations)
            return importlib.import_module(name)
    except Exception as exc:  # noqa: BLE001  (any failure means: skip this peer)
        hint = f"; install with `{install}`" if install else ""
        _SKIPPED[name.split(".")[0]] = f"{type(exc).__name__}: {exc}{hint}"
        return None


def skipped() -> dict[str, str]:
    """Peers that could not be imported, with why."""
    return dict(_SKIPPED)


class Skip(Exception):  # noqa: N818
    """Raised by a builder whose peer is missing or cannot run the workload; the message says why."""


def need(name: str, install: str | None = None) -> Any:
    """The peer module, or `Skip` (the workload table then notes why it is missing)."""
    module = optional_import(name, install)
    if module is None:
        raise Skip(f"{name} not available ({_SKIPPED[name.split('.')[0]]})")
    return module


def _patch_numpy_for_dezero() -> None:
    """DeZero 0.0.13 still names the aliases NumPy 1.24 removed (np.int in its datasets module)."""
    for alias, real in (("int", int), ("float", float), ("bool", bool), ("object", object)):
        if alias not in np.__dict__:
            setattr(np, alias, real)


# ---- timing -----------------------------------------------------------------------------------------

CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def _calls_per_sample(fn: Callable[[], Any], min_time: float, clock: Callable[[], float]) -> int:
    """How many calls make one sample last at least ``min_time`` (so fast steps are not timer noise)."""
    n = 1
    while True:
        start = clock()
        for _ in range(n):
            fn()
        elapsed = clock() - start
        if elapsed >= min_time or n >= 1 << 20:
            return n
        n = max(n * 2, int(n * min_time / max(elapsed, 1e-9)) + 1)


def measure(
    fns: dict[str, Callable[[], Any]],
    repeats: int = 7,
    min_time: float = 0.2,
    warmup: int = 2,
    clock: str = "wall",
) -> dict[str, float]:
    """Median seconds per call of each function.

    Each function is warmed up, then sampled ``repeats`` times; the samples of all functions are
    interleaved (round-robin) so that a slow moment of the machine hits every contender alike.
    Garbage collection stays on: it is part of what a user's program pays. ``clock="cpu"`` counts
    this process's CPU time instead of wall time: steadier on a busy machine, but only fair when
    every library runs on one thread (CPU time adds up the threads).
    """
    timer = CLOCKS[clock]
    for fn in fns.values():
        for _ in range(warmup):
            fn()
    counts = {name: _calls_per_sample(fn, min_time, timer) for name, fn in fns.items()}
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            n = counts[name]
            gc.collect()
            start = timer()
            for _ in range(n):
                fn()
            samples[name].append((timer() - start) / n)
    return {name: statistics.median(s) for name, s in samples.items()}


# ---- reporting ---------------------------------------------------------------------------------------


def format_seconds(s: float) -> str:
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.2f} ms"
    return f"{s * 1e6:.1f} µs"


def table(
    workload: Workload, times: dict[str, float], notes: Sequence[str] = (), reference: str = "engine"
) -> str:
    """Rows: each implementation's time and reference-time / its-time, with the target where there is
    one (``reference="traced"``: the traced step against the others, with its own targets)."""
    targets = workload.traced_targets if reference == "traced" else workload.targets
    lines = [
        f"{workload.name}  {workload.title}" + ("  (traced step as the reference)" if reference != "engine"
                                                else ""),
        f"  {'implementation':<16}{'time':>12}{reference + ' / it':>14}   target",
    ]
    ref = times.get(reference)
    for name, t in times.items():
        ratio = f"{ref / t:.2f}x" if ref is not None and name != reference else ""
        target = targets.get(name)
        mark = ""
        if target is not None and ref is not None:
            mark = f"<= {target:g}x  {'ok' if ref / t <= target else 'MISSED'}"
        lines.append(f"  {name:<16}{format_seconds(t):>12}{ratio:>14}   {mark}")
    for note in [*workload.notes, *notes] if reference == "engine" else []:
        lines.append(f"  note: {note}")
    return "\n".join(lines)


def machine_summary() -> str:
    import numpy  # noqa: PLC0415

    return (
        f"Python {platform.python_version()}, NumPy {numpy.__version__}, {os.cpu_count()} CPUs, "
        f"{platform.machine()} {platform.system()}"
    )
