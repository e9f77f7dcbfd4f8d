"""Lesson 10 run as learners would leave it: finished (every exercise cell holding the course's reference,
the source text beside its registration), and finished but for one classic mistake.

The committed lesson, run unanswered (tests/test_notebooks.py), must claim nothing about an engine the
learner has not written: every cell that needs a part says "Not written yet" and skips. Here the same
notebook with the reference in every exercise cell must run every later cell on the learner's engine
(its asserts: (2, −1), −2/x², the Newton step, the weights and gradients equal to `eg`'s, the drawings),
and with each of four wrong cells (an aliasing walk, a forward-order walk, a walk without unbroadcast, a
VJP without g) the check must refuse it with its own hint and the cells after it must skip.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from tests import test_lessons_exercises  # noqa: F401  (first: it loads the checks the variants read)
from tests.lesson10_variants import (
    ALIASING_WALK,
    FORWARD_WALK,
    MISSING_G_MULTIPLY,
    NO_UNBROADCAST_WALK,
    reference,
)

LESSONS = Path(__file__).resolve().parent.parent / "lessons"
LESSON = LESSONS / "10_build_your_own_engine.ipynb"
SKIPS = "Not written yet"


def exercise_cells(nb) -> dict[str, int]:
    """exercise name → index of its cell (the cells the learner writes, marked in their metadata)."""
    return {c.metadata["gradlab"]["exercise"]: i for i, c in enumerate(nb.cells)
            if c.metadata.get("gradlab", {}).get("exercise")}


def run_with(replace: dict[str, str] | None = None):
    """The lesson executed with every exercise cell holding the reference (or ``replace``'s source)."""
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager
    from nbclient import NotebookClient

    nb = nbformat.read(LESSON, as_version=4)
    for name, i in exercise_cells(nb).items():
        nb.cells[i].source = (replace or {}).get(name, reference(name))
    km = AsyncKernelManager(kernel_name="python3", kernel_spec_manager=KernelSpecManager(kernel_dirs=[]))
    client = NotebookClient(nb, km=km, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(LESSONS)}})
    client.execute()
    return nb


def text(cell) -> str:
    parts = []
    for out in cell.get("outputs", []):
        if out.output_type == "stream":
            parts.append(out.text)
        elif out.output_type == "error":
            parts.append("\n".join(out.traceback))
        elif "text/plain" in out.get("data", {}):
            parts.append(out.data["text/plain"])
    return re.sub(r"\x1b\[[0-9;]*m", "", "".join(parts))


def test_template_cells_are_empty_and_each_is_followed_by_its_check():
    nb = nbformat.read(LESSON, as_version=4)
    cells = exercise_cells(nb)
    assert len(cells) >= 8
    for name, i in cells.items():
        assert "..." in nb.cells[i].source
        assert f'check("{name}"' in nb.cells[i + 1].source
        assert nb.cells[i - 1].cell_type == "markdown" and "check" in nb.cells[i - 1].source.lower()


def test_the_engine_is_80_to_120_lines_of_the_learners_own():
    """The whole engine (parts 1 to 10; part 11, micrograd's walk, is a second route), blank lines aside."""
    nb = nbformat.read(LESSON, as_version=4)
    lines = [ln for name in exercise_cells(nb) if name != "graph_walk"
             for ln in reference(name).splitlines() if ln.strip()]
    assert 80 <= len(lines) <= 120, len(lines)


def test_the_finished_lesson_runs_every_cell_on_the_learners_engine():
    nb = run_with()
    outputs = [text(c) for c in nb.cells if c.cell_type == "code"]
    verdicts = [t for t in outputs if t.startswith(("Right!", "Not yet"))]
    assert len(verdicts) == len(exercise_cells(nb)), verdicts
    assert all(v.startswith("Right!") for v in verdicts), verdicts
    assert not any(SKIPS in t for t in outputs), [t for t in outputs if SKIPS in t]
    everything = "\n".join(outputs)
    assert "df/dx = 2.0  df/dy = -1.0" in everything
    assert "in-place walk: df/dx = 4.0   df/dy = 4.0" in everything
    assert "your walk:     df/dx = 4.0   df/dy = 1.0" in everything


def test_the_unanswered_lesson_claims_nothing(lesson):
    run = lesson(LESSON.name)
    outputs = [text(c) for c in run.nb.cells if c.cell_type == "code"]
    verdicts = [t for t in outputs if t.startswith(("Right!", "Not yet"))]
    assert verdicts and not any(v.startswith("Right!") for v in verdicts)
    guarded = [text(c) for c in run.nb.cells
               if c.cell_type == "code" and re.search(r"^if needs\(", c.source, re.M)]
    assert guarded and all(SKIPS in t for t in guarded)
    claims = [t for t in outputs if not t.startswith("Not yet")]  # a hint may say "your engine"
    assert not any("your engine" in t or "your walk" in t or "your steps" in t for t in claims)


WRONG = [
    ("walk", ALIASING_WALK, "changed in place"),
    ("walk", FORWARD_WALK, "wrong order"),
    ("walk", NO_UNBROADCAST_WALK, "not summed over a broadcast axis"),
    ("arithmetic", MISSING_G_MULTIPLY, "upstream gradient g"),
]


@pytest.mark.slow
@pytest.mark.parametrize("name, source, fragment", WRONG,
                         ids=["aliasing", "forward", "no-unbroadcast", "no-g"])
def test_each_classic_mistake_is_refused_in_the_lesson(name, source, fragment):
    nb = run_with({name: source})
    i = exercise_cells(nb)[name]
    verdict = text(nb.cells[i + 1])
    assert verdict.startswith("Not yet") and fragment in verdict, verdict
    later = [text(c) for c in nb.cells[i + 2:] if c.cell_type == "code" and "needs(\"walk\"" in c.source]
    assert later and all(SKIPS in t for t in later)
