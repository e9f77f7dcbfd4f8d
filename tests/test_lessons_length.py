"""No lesson's prose is too long to work through in one sitting (issue 31, "Length").

The words of a lesson's markdown cells are counted (whitespace-separated, as ``wc -w`` counts them),
the text inside ``<details>`` sections apart: a collapsible "Deeper: ..." section is optional reading,
allowed on top of the main text. The main text of every lesson stays within ``MAX_WORDS``.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from tests.test_notebooks import LESSONS

MAX_WORDS = 2600
DETAILS = re.compile(r"<details\b.*?</details>", re.S | re.I)


def word_counts(markdown: str) -> tuple[int, int]:
    """``(main, deeper)``: the words of ``markdown`` outside and inside its ``<details>`` sections.

    >>> word_counts("One two.\\n<details><summary>Deeper: x</summary>\\n\\nthree four\\n\\n</details>\\nfive")
    (3, 5)
    """
    deeper = DETAILS.findall(markdown)
    return len(DETAILS.sub(" ", markdown).split()), sum(len(d.split()) for d in deeper)


def lesson_word_counts(path: Path) -> tuple[int, int]:
    cells = [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown"]
    main, deeper = word_counts("\n".join(cells))
    return main, deeper


@pytest.mark.parametrize("path", LESSONS, ids=[p.name for p in LESSONS])
def test_lesson_prose_within_length(path: Path):
    main, deeper = lesson_word_counts(path)
    assert main <= MAX_WORDS, (
        f"{path.name}: {main} words of prose outside <details> (and {deeper} inside), more than "
        f"{MAX_WORDS}. Tighten the wording, or move a digression into a collapsible "
        "<details><summary>Deeper: ...</summary> ... </details> section of a markdown cell."
    )


def test_unclosed_details_are_not_uncounted():
    """An unclosed <details> hides nothing from the count: only complete sections are set apart."""
    assert word_counts("one <details> two three") == (4, 0)


@pytest.mark.parametrize("path", LESSONS, ids=[p.name for p in LESSONS])
def test_details_sections_are_balanced(path: Path):
    """Each markdown cell closes the <details> sections it opens (Jupyter renders a cell on its own),
    and each has a summary saying what it holds."""
    for i, cell in enumerate(nbformat.read(path, as_version=4).cells):
        if cell.cell_type != "markdown":
            continue
        opened = len(re.findall(r"<details\b", cell.source, re.I))
        assert opened == len(re.findall(r"</details>", cell.source, re.I)), f"{path.name} cell {i}"
        assert opened == len(re.findall(r"<details\b[^>]*>\s*<summary>", cell.source, re.I)), (
            f"{path.name} cell {i}: a <details> section without a <summary>")
