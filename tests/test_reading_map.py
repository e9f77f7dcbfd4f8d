"""docs/ARCHITECTURE.md's reading map stays true: each ``file:first-last`` range starts on the line that
defines the name it gives and ends on that definition's last line, the ranges add up to the total the
document states, and that total keeps the promise (the core reads in at most 400 lines). The core
names graph mode in one place: `engine/listeners.py`, the hook every op, read and assignment passes."""

from __future__ import annotations

import re

import pytest

from tools.reading_map import DOC, PROMISE, ROOT, TOTAL, map_rows, span

TEXT = DOC.read_text(encoding="utf-8")
ROWS = map_rows(TEXT)


def test_the_map_has_the_core():
    names = [r.symbol for r in ROWS]
    assert {"apply", "walk", "GradientTape.gradient", "record", "unbroadcast"} <= set(names)


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.symbol)
def test_each_range_is_where_the_definition_is(row):
    first, last = span(row.path, row.symbol)
    assert (row.first, row.last) == (first, last), (
        f"{row.symbol} is at {row.path}:{first}-{last}, the map says {row.first}-{row.last}: "
        "run python tools/reading_map.py --fix")


def test_the_ranges_add_up_to_the_stated_total_within_the_promise():
    total = sum(r.last - r.first + 1 for r in ROWS)
    stated = int(TOTAL.search(TEXT)["total"])
    assert stated == total, f"the map says {stated} lines in all, its rows add up to {total}"
    assert total <= PROMISE


CORE = ["engine/tensor.py", "engine/primitive.py", "engine/variable.py", "engine/tape.py",
        "engine/backward.py", "engine/record.py"]


@pytest.mark.parametrize("path", CORE)
def test_the_core_names_no_tracer(path):
    source = (ROOT / path).read_text(encoding="utf-8")
    assert not re.search(r"\btrac(er|ing)\b|\bfrom \.?\.?trace\b|import trace\b", source), (
        f"{path} names graph mode; the core reaches it only through engine/listeners.py")
