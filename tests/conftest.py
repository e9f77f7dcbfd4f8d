"""Fixtures shared by the whole test suite.

``lesson(name)`` runs ``lessons/<name>`` top to bottom in a fresh kernel, once per test session, and
keeps that kernel alive until the session ends, so a test can call what the lesson defined, e.g. an
exercise's self-check, with a right and a wrong answer::

    def test_exercise_1_check(lesson):
        run = lesson("02_gradients_of_functions.ipynb")
        assert "not yet" in run.run("check_exercise_1(lambda x, y: 0)")
"""

from __future__ import annotations

import copy
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

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
