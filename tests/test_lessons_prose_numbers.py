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

from tests.prose_numbers import measured_ratios, parse, prose_numbers, shows, unshown
from tests.test_notebooks import LESSONS, _lesson_params

#: lesson prefix -> {number as written: why it needs no cell}
ALLOWED: dict[str, dict[str, str]] = {
    "04": {"0.999": "Adam's default β₂, named by the exercise"},
    "05": {"6.5": "the clip_norm the exercise chooses"},
    "07": {"0.9": "a keep_prob of old TensorFlow code, the example of the dropout pitfall",
           "90 %": "the same keep_prob as a percentage"},
    "09": {"six times": "the number of calls exercise 2 lists, not a result"},
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
    cells = [cell for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "markdown"]
    written = {n.text.strip() for cell in cells
               for n in prose_numbers(cell.source) + measured_ratios(cell.source)}
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


# ---- measured ratios and counts: "about N", "within a factor of N", "N×", "N times" -----------------------


def test_issue_31s_claims_are_reported():
    """The claims issue 31 found untrue, each against the output that stood above it: 07's spread of
    the layers' gradient norms (the printed per-step spread was 18.6, the table's 25), 04's tuned
    Momentum (measured 6.1 steps per tenfold) and 05's norms over fourteen orders of magnitude (14.4:
    true)."""
    nb = _nb(("code", "print(spread)", "median spread 18.6x, max 41.7x\n"),
             ("markdown", "The gradients of all layers stay within about a factor of ten of each other.", ""),
             ("code", "print(tenfold)", "steps per tenfold: measured 6.1\n"),
             ("markdown", "Tuned Momentum needs about 5.", ""),
             ("code", "print(orders)", "the gradient norms span 14.4 orders of magnitude\n"),
             ("markdown", "The norm ranges over fourteen orders of magnitude.", ""))
    assert unshown(nb) == [(1, "within about a factor of ten"), (3, "about 5")]


def test_a_ratio_is_shown_only_by_the_output_directly_above():
    """A code literal defines, it does not measure; a step counter printed two sections earlier does
    not measure a ratio stated now."""
    nb = _nb(("code", "for step in range(14): print(step)", "\n".join(map(str, range(14))) + "\n"),
             ("markdown", "## Next section", ""),
             ("code", "factor = 5  # chosen", ""),
             ("markdown", "Momentum needs about 5 steps.", ""))
    assert unshown(nb) == [(3, "about 5")]
    nb["cells"][2]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "steps: 5.2\n"}]
    assert unshown(nb) == []


def test_details_sections_are_read():
    text = "<details><summary>Deeper: spacing</summary>\n\nIt is 3.5 times larger, 1.19e-7.\n\n</details>"
    nb = _nb(("code", "print(x)", "1.19e-07\n"), ("markdown", text, ""))
    assert unshown(nb) == [(1, "3.5")]
    assert [n.text for n in measured_ratios("<details>\n\nabout 40×\n\n</details>")] == ["about 40×"]


@pytest.mark.parametrize(("text", "found"), [
    ("within about a factor of ten", [("within about a factor of ten", 10.0)]),
    ("tuned Momentum needs about 5", [("about 5", 5.0)]),
    ("the table shows 25× between layers", [("25×", 25.0)]),
    ("it is $25 \\times$ larger", [("25 \\times", 25.0)]),
    ("fourteen orders of magnitude", [("fourteen orders of magnitude", 14.0)]),
    ("four times the other", [("four times", 4.0)]),
    ("roughly 1,000 steps", [("roughly 1,000", 1000.0)]),
    ("28×28 images, a $10 \\times 10$ array, 5×5 filters", []),
    ("`about 5` in code, a 3×", [("3×", 3.0)]),
])
def test_ratio_phrasings(text: str, found: list):
    assert [(n.text, n.value) for n in measured_ratios(text)] == found


@pytest.mark.parametrize(("written", "printed", "ok"), [
    ("about 5", 5.1, True), ("about 5", 6.1, False), ("roughly 1,000", 1400.0, True),
    ("roughly 1,000", 1600.0, False), ("factor of ten", 10.4, True), ("factor of ten", 25.0, False),
])
def test_ratio_rounding(written: str, printed: float, ok: bool):
    (number,) = measured_ratios(written)
    assert shows(number, [printed]) is ok
