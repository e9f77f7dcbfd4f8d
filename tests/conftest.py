"""Fixtures shared by the whole test suite.

``lesson(name)`` runs ``lessons/<name>`` top to bottom in a fresh kernel, once per test session, and
keeps that kernel alive until the session ends, so a test can call what the lesson defined, e.g. an
exercise's self-check, with a right and a wrong answer::

    def test_exercise_1_check(lesson):
        run = lesson("02_gradients_of_functions.ipynb")
        assert "not yet" in run.run("check_exercise_1(lambda x, y: 0)")

The GPU path runs on every machine: when CuPy with a working GPU is not present, the session loads the
fake CuPy of ``tests/fakecupy`` (two fake GPUs), so the device-parametrised tests run on ``cpu:0``,
``gpu:0`` and ``gpu:1``. With real CuPy and a GPU they run on the real devices instead, and
``GRADLAB_REQUIRE_GPU=1`` makes the session fail rather than fall back to the fake. ``transfers()``
counts the fake's device→host copies, so a test can assert a budget::

    def test_a_step_stays_on_the_device(transfers):
        with transfers() as count:
            opt.apply_gradients(pairs)
        assert count.to_host == 0
"""

from __future__ import annotations

import contextlib
import copy
import os
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests import fakecupy

#: "real" when the session runs on real CuPy GPUs, "fake" on the fake CuPy (set by pytest_configure).
GPU_BACKEND = ""


def _real_gpu_problem() -> str | None:
    """None when real CuPy is installed and a CUDA device works; else why not."""
    if os.environ.get("ENGINE_DISABLE_GPU"):
        return "ENGINE_DISABLE_GPU is set"
    try:
        import cupy
    except ImportError:
        return "CuPy is not installed (install the `gpu` extra)"
    if getattr(cupy, "FAKE", False):
        return "only the fake CuPy is importable"
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return "CuPy found no CUDA device"
        cupy.zeros(1).sum()
    except Exception as exc:  # no driver, no device, no toolkit
        return f"CuPy cannot use a GPU ({type(exc).__name__}: {exc})"
    return None


def pytest_configure(config: pytest.Config) -> None:
    """Pick the GPU backend once, before any test module asks the engine for its devices."""
    global GPU_BACKEND
    problem = _real_gpu_problem()
    if problem is None:
        GPU_BACKEND = "real"
        return
    if os.environ.get("GRADLAB_REQUIRE_GPU") == "1":
        raise pytest.UsageError(f"GRADLAB_REQUIRE_GPU=1 but no real GPU works here: {problem}.")
    fakecupy.install()
    os.environ.pop("ENGINE_DISABLE_GPU", None)
    GPU_BACKEND = "fake"


def pytest_report_header(config: pytest.Config) -> str:
    import engine as eg

    where = "real CuPy" if GPU_BACKEND == "real" else "the fake CuPy of tests/fakecupy (no real GPU)"
    return f"gradlab devices: {', '.join(eg.list_devices())} on {where}"


class TransferCount:
    """Device→host (``to_host``) and host→device (``to_device``) copies seen by the fake CuPy."""

    def __init__(self) -> None:
        self._start = dict(self._now())
        self._end: dict[str, int] | None = None

    @staticmethod
    def _now() -> dict[str, int]:
        import cupy

        return cupy._array.counts

    def _get(self, kind: str) -> int:
        end = self._end if self._end is not None else self._now()
        return end[kind] - self._start[kind]

    to_host = property(lambda self: self._get("to_host"))
    to_device = property(lambda self: self._get("to_device"))

    def __repr__(self) -> str:
        return f"<TransferCount to_host={self.to_host} to_device={self.to_device}>"


@pytest.fixture
def threads_switch_often() -> Iterator[None]:
    """Let the interpreter switch threads every microsecond, so that threads in a test really
    interleave (tapes and traces entered and left concurrently)."""
    import sys

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


@pytest.fixture(autouse=True)
def _isolated_random_state() -> Iterator[None]:
    """Every test starts from the random state the one before it found: a test that calls
    ``eg.random.set_seed`` cannot change the numbers (shuffles, dropout masks) of a later test."""
    from engine import random as eg_random

    state = eg_random._get_state()
    yield
    eg_random._set_state(state)


@pytest.fixture
def transfers() -> Callable[[], contextlib.AbstractContextManager[TransferCount]]:
    """``with transfers() as count: ...`` then ``count.to_host``: the fake CuPy's counted copies.

    Skips on real CuPy, whose transfers cannot be counted from Python.
    """
    if GPU_BACKEND != "fake":
        pytest.skip("transfer counts need the fake CuPy (this session runs on real CuPy)")

    @contextlib.contextmanager
    def counting() -> Iterator[TransferCount]:
        count = TransferCount()
        yield count
        count._end = dict(TransferCount._now())

    return counting


@pytest.fixture
def no_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine as on a machine without CuPy: no GPU, soft placement falls back to the CPU."""
    from engine import backend

    monkeypatch.setattr(backend, "_gpu_count", 0)
    monkeypatch.setattr(backend, "_gpu_problem", "CuPy is not installed")
    monkeypatch.setattr(backend, "_devices", {"cpu:0": backend.CPU})
    monkeypatch.setattr(backend, "_warned_fallback", False)


LESSONS_DIR = Path(__file__).resolve().parent.parent / "lessons"
CELL_TIMEOUT_S = 120


class LessonRun:
    """A lesson executed by nbclient in its own ``python3`` kernel (this interpreter's ipykernel)."""

    def __init__(self, path: Path):
        import nbformat
        from jupyter_client.kernelspec import KernelSpecManager
        from jupyter_client.manager import AsyncKernelManager
        from nbclient import NotebookClient
        from nbclient.exceptions import CellExecutionError

        self.path = path
        nb = nbformat.read(path, as_version=4)
        self.error: Exception | None = None
        # No kernel directories: "python3" is always the kernel of the Python running the tests,
        # never a kernelspec in ~/.local/share/jupyter that points at another interpreter.
        km = AsyncKernelManager(kernel_name="python3", kernel_spec_manager=KernelSpecManager(kernel_dirs=[]))
        self._client = NotebookClient(
            nb,
            km=km,  # ours, so nbclient leaves the kernel running after execute()
            timeout=CELL_TIMEOUT_S,
            kernel_name="python3",
            resources={"metadata": {"path": str(path.parent)}},  # the kernel's working directory
        )
        start = time.perf_counter()
        try:
            self._client.execute()
        except (CellExecutionError, TimeoutError, RuntimeError) as exc:
            self.error = exc
        self.seconds = time.perf_counter() - start
        self.nb = copy.deepcopy(nb)  # the executed notebook, before any run() below

    def run(self, code: str) -> str:
        """Execute ``code`` in the lesson's kernel; return its printed text (streams and text/plain).

        Raises ``nbclient.exceptions.CellExecutionError`` if the code raises.
        """
        from nbformat.v4 import new_code_cell

        cells = self._client.nb.cells
        cells.append(new_code_cell(code))
        cell = self._client.execute_cell(cells[-1], len(cells) - 1)
        parts = []
        for out in cell.outputs:
            if out.output_type == "stream":
                parts.append(out.text)
            elif "data" in out and "text/plain" in out.data:
                parts.append(out.data["text/plain"] + "\n")
        return "".join(parts)

    def shutdown(self) -> None:
        if self._client.km is not None:
            self._client._cleanup_kernel()


@pytest.fixture(scope="session")
def lesson() -> Iterator[Callable[[str], LessonRun]]:
    """``lesson(name)`` -> the LessonRun of lessons/<name>, executed once per session."""
    runs: dict[str, LessonRun] = {}

    def get(name: str) -> LessonRun:
        if name not in runs:
            runs[name] = LessonRun(LESSONS_DIR / name)
        run = runs[name]
        if run.error is not None:
            error = re.sub(r"\x1b\[[0-9;]*m", "", str(run.error))  # tracebacks come with ANSI colours
            pytest.fail(f"{name} does not run top to bottom in a fresh kernel:\n{error}", pytrace=False)
        return run

    yield get
    for run in runs.values():
        run.shutdown()
