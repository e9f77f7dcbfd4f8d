"""Every result a lesson's prose states is shown by a cell above it (CURRICULUM.md, "Every claim true").

Each lesson is executed once per test session (the ``lesson`` fixture of tests/conftest.py, shared with
tests/test_notebooks.py, so no lesson runs twice), and tests/prose_numbers.py lists the numbers its
markdown writes with a decimal point, an exponent or a percent sign that no output above shows and no
code literal above (or in the next code cell) states. Whole numbers are not checked.

``ALLOWED`` holds the few numbers that are definitions the text chooses, not results, with the reason.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.prose_numbers import parse, prose_numbers, shows, unshown
from tests.test_notebooks import LESSONS, _lesson_params

#: lesson prefix -> {number as written: why it needs no cell}
ALLOWED: dict[str, dict[str, str]] = {
    "04": {"0.999": "Adam's default β₂, named by the exercise"},
    "05": {"6.5": "the clip_norm the exercise chooses"},
    "07": {"0.9": "a keep_prob of old TensorFlow code, the example of the dropout pitfall",
           "90 %": "the same keep_prob as a percentage"},
}


@pytest.mark.parametrize("path", _lesson_params(with_slow_mark=True))
def test_prose_numbers_are_shown_above(path: Path, lesson):
    run = lesson(path.name)
    allowed = ALLOWED.get(path.name.split("_")[0], {})  # "06", or "06b" for the lesson after 06
    missing = unshown(run.nb, set(allowed))
    assert not missing, (
        f"{path.name}: results written in the text that no cell above prints or asserts "
        f"(cell index, number as written):\n" + "\n".join(f"  cell {i}: {n}" for i, n in missing)
        + "\nPrint or assert them in a cell above, or, for a definition the text chooses, add it to "
        "ALLOWED in tests/test_lessons_prose_numbers.py."
    )


@pytest.mark.parametrize("prefix", sorted(ALLOWED))
def test_allowed_numbers_are_still_in_their_lesson(prefix: str):
    """An allow-list entry whose number left the lesson's text is stale."""
    import nbformat

    (path,) = [p for p in LESSONS if p.name.split("_")[0] == prefix]
    written = {n.text.strip() for cell in nbformat.read(path, as_version=4).cells
               if cell.cell_type == "markdown" for n in prose_numbers(cell.source)}
    stale = set(ALLOWED[prefix]) - written
    assert not stale, f"{path.name}: {stale} no longer in the text"


# ---- the parser on the mistakes it exists for ---------------------------------------------------------


def _nb(*cells: tuple[str, str, str]) -> dict:
    """A notebook of (kind, source, printed output) cells."""
    out = []
    for kind, source, printed in cells:
        cell = {"cell_type": kind, "source": source}
        if kind == "code":
            stream = {"output_type": "stream", "name": "stdout", "text": printed}
            cell["outputs"] = [stream] if printed else []
        out.append(cell)
    return {"cells": out}


def test_a_result_no_cell_printed_is_reported():
    """Lesson 05's old claim: the clipped loss 'comes down'; a text that says 0.176 where the run
    printed 0.322 is reported, and so is a result printed only *below* the text."""
    nb = _nb(("code", "losses = train(clip_norm=1.0, learning_rate=0.3)", "loss 0.640 -> 0.322\n"),
             ("markdown", "With clipping the loss falls to 0.176.", ""),
             ("markdown", "Its spectral radius ends at 0.84.", ""),
             ("code", "print(radius)", "0.84\n"))
    assert unshown(nb) == [(1, "0.176"), (2, "0.84")]


def test_lesson_04s_float32_claims_are_checked():
    """The kind of number lesson 04's float32 table explains: 1.19e-7 and 8.099999 must be printed."""
    nb = _nb(("code", "show(descent_trace(decay=0.9))", "   9    1.0000001  1.1920929e-07   1.0\n"),
             ("markdown", "Step 9's gradient is $1.19 \\cdot 10^{-7}$; $0.9 \\cdot 9$ is $8.099999$.", ""))
    assert unshown(nb) == [(1, "8.099999")]


def test_definitions_in_code_and_whole_numbers_pass():
    nb = _nb(("markdown", "SGD with learning rate 0.3 for 50 steps; 2 % of the way.", ""),
             ("code", "train(learning_rate=0.3, steps=50, share=0.02)", ""))
    assert unshown(nb) == []
    nb = _nb(("markdown", "learning rate 0.3", ""), ("code", "x = 1  # learning rate 0.3", ""))
    assert unshown(nb) == [(0, "0.3")]  # a comment states nothing


@pytest.mark.parametrize(("written", "printed", "ok"), [
    ("0.2222", -0.22222222, True),
    ("0.322", 0.32168, True),
    ("0.322", 0.3228, False),
    ("97.5 %", 0.975, True),
    ("97.5 %", 97.5, True),
    ("10^{-11}", 1.78e-11, True),
    ("10^{-11}", 1.78e-10, False),
    ("1.19e-7", 1.1920929e-07, True),
    ("1.2 \\cdot 10^{-5}", 1.2e-05, True),
])
def test_rounding(written: str, printed: float, ok: bool):
    number = parse(written)
    assert number is not None and shows(number, [printed]) is ok
