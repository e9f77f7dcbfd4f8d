"""Lesson 07's backward passes by hand, in the lesson's own kernel: unanswered, the cells that use the
learner's functions say "Not written yet" and skip; with the course's reference (the source of the
function beside each registration, typed into the cell as a learner would) each check says "Right!" and
the network gives the engine's gradients with the learner's cross-entropy backward and with the learner's
max-pool primitive; a wrong version is refused with its hint and the cell skips again."""

from __future__ import annotations

import inspect
from pathlib import Path

import nbformat
import pytest

from tests.test_lessons_exercises import checks

LESSON = Path(__file__).resolve().parent.parent / "lessons" / "07_training_a_cnn.ipynb"
SKIPS = "Not written yet"
pytestmark = pytest.mark.slow  # it shares lesson 07's run with tests/test_notebooks.py


def source_of(name: str) -> str:
    """The reference's source, with the helpers it calls, under the name the lesson's cell defines."""
    module = inspect.getmodule(checks.EXERCISES[("07", name)].reference)
    ref = checks.EXERCISES[("07", name)].reference
    helpers = [module._windows, module._unwindows] if name == "max_pool_vjp" else []
    return ("import numpy as np\n\n" + "\n\n".join(inspect.getsource(f) for f in [*helpers, ref])
            + f"\n{name} = {ref.__name__}\n")


def cells() -> dict[str, str]:
    nb = nbformat.read(LESSON, as_version=4)
    return {c.id: c.source for c in nb.cells}


def outputs_of(run, cell_id: str) -> str:
    (cell,) = [c for c in run.nb.cells if c.get("id") == cell_id]
    return "".join(o.get("text", "") for o in cell.outputs)


@pytest.mark.parametrize("name, use", [("xent_backward", "by-hand-xent-use"),
                                       ("max_pool_vjp", "by-hand-pool-use")])
def test_backward_by_hand_in_the_lesson(lesson, name, use):
    run = lesson(LESSON.name)
    assert SKIPS in outputs_of(run, use)  # the committed lesson claims nothing
    source = cells()
    wrong = {"xent_backward": ("xent_backward = lambda z, y: np.zeros_like(z)\n", "not the engine's"),
             "max_pool_vjp": ("def max_pool_vjp(g, x, k):\n    return x * 0\n", "not the engine's")}[name]
    out = run.run(wrong[0] + f'check("{name}", {name})')
    assert out.startswith("Not yet") and wrong[1] in out, out
    assert SKIPS in run.run(source[use])
    out = run.run(source_of(name) + f'check("{name}", {name})')
    assert out.startswith("Right!"), out
    used = run.run(source[use])
    assert SKIPS not in used and "largest difference" in used, used
