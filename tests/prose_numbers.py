"""Results written in a lesson's prose that no cell shows: the parser behind
tests/test_lessons_prose_numbers.py.

CURRICULUM.md: every number the prose states is printed or asserted by a cell above it. The worst
class of a broken promise is a *result* (a loss, a gradient, a percentage) that the text states and no
cell ever showed, so the learner who checks finds another number. This module finds the numbers of
that class in an executed notebook:

- **prose numbers**: in markdown cells, outside code spans, code blocks and link targets, every number
  written with a decimal point (``0.322``), an exponent (``1.19e-7``, ``1.19 \\cdot 10^{-7}``,
  ``10^{-11}``) or a percent sign (``97.5 %``); whole numbers ("three", "50 steps") are left out;
- **shown numbers**: every number in the text outputs (streams, ``text/plain``, ``text/html``, errors)
  of the code cells *above* the markdown cell, and every number literal in the code (comments left
  out) of the cells above it and of the next code cell below it (the cell that defines what the text
  just introduced: a learning rate, a formula's coefficients, an assertion).

**Measured ratios and counts** are the second class: a whole number (in digits or a word) in a phrase
that states a result, "about 5 steps", "within a factor of ten", "25×", "four times", "fourteen
orders of magnitude", "roughly 20". They are shown only by the *printed output* of the code cells
directly above the markdown cell (the run of code cells since the previous markdown cell; the nearest
one above when a markdown cell follows another): a code literal defines, it does not measure, and a
step counter printed three sections earlier does not measure a ratio. Text inside ``<details>``
sections is read like the rest.

A prose number is shown when a shown number rounds to it at the precision it is written with
(``0.2222`` is shown by ``-0.22222222``; signs are ignored, since prose writes minus signs in LaTeX),
a percentage also by its fraction (``90%`` by ``0.9``), and ``10^{k}`` by any number of that order of
magnitude. What is left is reported; a lesson may allow a few numbers that are definitions, not results
(a version number, a constant of nature), in its allow-list.

>>> text = "SGD removes 2% per step; $2^{-23} \\\\approx 1.19 \\\\cdot 10^{-7}$, `lr=0.5`."
>>> [n.text for n in prose_numbers(text)]
['2%', '1.19 \\\\cdot 10^{-7}']
>>> shows(parse("0.2222"), [-0.22222222]), shows(parse("0.322"), [0.3216]), shows(parse("0.322"), [0.33])
(True, True, False)
>>> shows(parse("10^{-11}"), [1.78e-11]), shows(parse("97.5 %"), [0.975])
(True, True)
>>> [n.text for n in measured_ratios("tuned Momentum needs about 5; within a factor of ten; 28×28 images")]
['about 5', 'within a factor of ten']
"""

from __future__ import annotations

import io
import math
import re
import tokenize
from dataclasses import dataclass
from typing import Any

__all__ = ["ProseNumber", "parse", "prose_numbers", "measured_ratios", "shown_numbers", "code_numbers",
           "shows", "unshown"]

# A mantissa with a decimal point or an exponent; or a whole number followed by % or an exponent.
_MANTISSA = r"\d+(?:\.\d+)?"
_TIMES_TEN = r"\s*(?:\\cdot|\\times|·|×)\s*10\^\{?(?P<tenexp>[-−]?\d+)\}?"
PROSE = re.compile(
    r"(?<![\w.^{\-−])"  # not inside a word, an exponent or another number
    rf"(?:(?P<m>{_MANTISSA})(?:{_TIMES_TEN}|(?P<e>[eE][-+−]?\d+)|(?P<pct>\s?(?:\\?%|\s?percent\b)))?"
    r"|10\^\{?(?P<pow>[-−]?\d+)\}?)"
    r"(?![\w.]\d|\^)"
)
NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?![\w])")
CODE_SPAN = re.compile(r"```.*?```|``.*?``|`[^`\n]*`", re.S)
LINK_TARGET = re.compile(r"\]\([^)]*\)|https?://\S+")
HTML_TAG = re.compile(r"<[^>]+>")

# Whole numbers in phrases that state a measured ratio or count (see the module docstring).
WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
WORDS.update(thirty=30, forty=40, fifty=50, sixty=60, seventy=70, eighty=80, ninety=90, hundred=100,
             thousand=1000, million=10**6)
_WHOLE = r"(?:\d{1,3}(?:,\d{3})+|\d+|" + "|".join(sorted(WORDS, key=len, reverse=True)) + r")(?![\w.,]\d)"
RATIO = re.compile(
    r"(?<![\w.^{\-−])(?:"
    rf"(?:about|roughly|nearly|approximately|around|almost|within(?:\s+about)?|factors?\s+of)\s+(?:an?\s+)?"
    rf"(?:factor\s+of\s+)?(?:(?:a|an)\s+)?(?P<a>{_WHOLE})(?:\s*(?:×|\\times))?"
    rf"|(?P<b>{_WHOLE})(?:\s*(?:×|\\times)(?!\s*[\d({{\\])|\s+times\b|\s+orders?\s+of\s+magnitude)"
    r")(?![\w.]\d|[\w^])",
    re.I,
)


@dataclass(frozen=True)
class ProseNumber:
    """A number written in prose: its text, its value and the half-width of the interval it rounds."""

    text: str
    value: float
    half_ulp: float  # a shown number q shows it when ||q| - value| <= half_ulp (relative slack added)
    percent: bool = False
    magnitude_only: bool = False  # 10^{k}: any number of that order of magnitude


def parse(text: str) -> ProseNumber | None:
    """The `ProseNumber` of ``text`` if it is one of the numbers this module checks, else None."""
    m = PROSE.fullmatch(text.strip())
    return None if m is None else _from_match(m)


def _from_match(m: re.Match) -> ProseNumber | None:
    text = m.group(0)
    if m.group("pow") is not None:
        return ProseNumber(text, 10.0 ** int(m.group("pow").replace("−", "-")), 0.0, magnitude_only=True)
    mant = m.group("m")
    decimals = len(mant.partition(".")[2])
    exp = 0
    if m.group("tenexp") is not None:
        exp = int(m.group("tenexp").replace("−", "-"))
    elif m.group("e") is not None:
        exp = int(m.group("e")[1:].replace("−", "-"))
    elif m.group("pct") is None and "." not in mant:
        return None  # a whole number: not this test's class
    value = float(mant) * 10.0**exp
    return ProseNumber(text, value, 0.5 * 10.0 ** (exp - decimals), percent=m.group("pct") is not None)


def _whole(text: str) -> float:
    text = text.lower().replace(",", "")
    return float(WORDS[text]) if text in WORDS else float(text)


def measured_ratios(markdown: str) -> list[ProseNumber]:
    """The whole numbers of a markdown cell written as a measured ratio or count ("about 5", "25×")."""
    out = []
    for m in RATIO.finditer(_prose_text(markdown)):
        number = m.group("a") or m.group("b")
        value = _whole(number)
        digits = number.replace(",", "")
        if digits.isdigit():  # a written 20 or 300 is as precise as its last non-zero digit
            zeros = len(digits) - len(digits.rstrip("0")) if value else 0
            half = 0.5 * 10.0 ** zeros
        else:  # a word ("ten", "fourteen") is the nearest whole number
            half = 0.5
        out.append(ProseNumber(re.sub(r"\s+", " ", m.group(0)), value, half))
    return out


def _prose_text(markdown: str) -> str:
    text = CODE_SPAN.sub(" ", markdown)
    text = LINK_TARGET.sub(" ", text)
    return HTML_TAG.sub(" ", text)


def prose_numbers(markdown: str) -> list[ProseNumber]:
    """The checked numbers of a markdown cell's text."""
    out = []
    for m in PROSE.finditer(_prose_text(markdown)):
        n = _from_match(m)
        if n is not None:
            out.append(n)
    return out


def _numbers(text: str) -> list[float]:
    out = []
    for s in NUMBER.findall(text.replace("−", "-")):
        try:
            out.append(float(s))
        except ValueError:
            continue
    return out


def _joined(text: Any) -> str:
    return text if isinstance(text, str) else "".join(text)


def shown_numbers(cell: Any) -> list[float]:
    """The numbers a code cell's outputs show as text."""
    parts = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            parts.append(_joined(out.get("text", "")))
        elif out.get("output_type") == "error":
            parts.append(f"{out.get('ename', '')}: {out.get('evalue', '')}")
        for mime in ("text/plain", "text/html", "text/markdown", "text/latex"):
            data = out.get("data", {}).get(mime)
            if data:
                parts.append(HTML_TAG.sub(" ", _joined(data)))
    return _numbers("\n".join(parts))


def code_numbers(source: str) -> list[float]:
    """The number literals of a code cell (comments left out: a comment asserts nothing)."""
    try:
        tokens = tokenize.generate_tokens(io.StringIO(source).readline)
        return [float(t.string.replace("_", "").rstrip("jJ")) for t in tokens
                if t.type == tokenize.NUMBER and not t.string.endswith(("j", "J"))]
    except (tokenize.TokenError, IndentationError, SyntaxError, ValueError):
        code = "\n".join(line.partition("#")[0] for line in source.splitlines())
        return _numbers(code)


def shows(n: ProseNumber, numbers: list[float]) -> bool:
    """Whether one of ``numbers`` shows the prose number ``n``."""
    targets = [n.value] + ([n.value / 100.0] if n.percent else [])
    for q in numbers:
        q = abs(q)
        if not math.isfinite(q):
            continue
        if n.magnitude_only:
            if q > 0 and round(math.log10(q)) == round(math.log10(n.value)):
                return True
            continue
        for t, half in zip(targets, (n.half_ulp, n.half_ulp / 100.0)):
            if abs(q - t) <= half * (1 + 1e-9) + 1e-12 * max(abs(t), 1e-300):
                return True
    return False


def _src(cell: Any) -> str:
    return _joined(cell["source"])


def unshown(nb: Any, allowed: set[str] = frozenset()) -> list[tuple[int, str]]:
    """``(cell index, number as written)`` for each prose number of executed notebook ``nb`` that no
    cell above shows (see the module docstring); numbers written as in ``allowed`` are skipped."""
    cells = nb["cells"]
    seen: list[float] = []
    printed_above: list[float] = []  # the printed output of the code cells directly above
    report = []
    for i, cell in enumerate(cells):
        if cell["cell_type"] == "code":
            if i > 0 and cells[i - 1]["cell_type"] != "code":
                printed_above = []
            printed_above = printed_above + shown_numbers(cell)
            seen += shown_numbers(cell) + code_numbers(_src(cell))
            continue
        if cell["cell_type"] != "markdown":
            continue
        nxt = next((c for c in cells[i + 1:] if c["cell_type"] == "code"), None)
        pool = seen + (code_numbers(_src(nxt)) if nxt is not None else [])
        for n in prose_numbers(_src(cell)):
            if n.text.strip() in allowed or shows(n, pool):
                continue
            report.append((i, n.text.strip()))
        for n in measured_ratios(_src(cell)):
            if n.text in allowed or shows(n, printed_above):
                continue
            report.append((i, n.text))
    return report
