"""Arrays in the side panels and tooltips: small ones whole, big ones as a summary (shape, dtype,
min / mean / max, the first values) with an "expand" (an HTML ``<details>``: it opens in the browser
alone, in the lab and in an exported page) holding the array's text, capped
(`gradviz.model.array_summary`).

>>> import numpy as np
>>> array_html(np.array([1.0, 2.0]))
'<pre data-gv-array="whole">[1., 2.]</pre>'
>>> panel = array_html(np.zeros((8, 28, 28, 1), np.float32))
>>> "(8, 28, 28, 1)" in panel and "data-gv-expand" in panel and len(panel) < 12_000
True
>>> array_text(np.arange(100.0))
'shape (100,) float64: min 0.0, mean 49.5, max 99.0; first 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, …'
"""

from __future__ import annotations

from typing import Any

from gradviz.model.array_summary import ArraySummary, summarise_array
from gradviz.render.fmt import number
from gradviz.render.text import esc as escape

__all__ = ["array_html", "array_text"]


def _stats(s: ArraySummary) -> str:
    if s.min is None:
        return "no finite values" if s.size else "empty"
    prefix = "|z| " if s.dtype.startswith("complex") else ""
    return f"{prefix}min {number(s.min)}, mean {number(s.mean)}, max {number(s.max)}"


def _flags(s: ArraySummary) -> str:
    return "".join(f", {count:,} {what}" for count, what in ((s.nan, "NaN"), (s.inf, "inf")) if count)


def _head(s: ArraySummary) -> str:
    more = ", …" if s.size > len(s.head) else ""
    return ", ".join(number(v) for v in s.head) + more


def array_text(a: Any) -> str:
    """One line for a tooltip: the whole array when small, else its summary and first values."""
    s = summarise_array(a)
    if s.small:
        return s.text
    return f"shape {s.shape} {s.dtype}: {_stats(s)}{_flags(s)}; first {_head(s)}"


def array_html(a: Any) -> str:
    """The panel's HTML of an array: whole when small, else a summary table, the first values and an
    "expand" with the array's text (at most `gradviz.model.array_summary.EXPAND_LIMIT` values, and a
    note saying so)."""
    s = summarise_array(a)
    if s.small:
        return f'<pre data-gv-array="whole">{escape(s.text)}</pre>'
    rows = [("shape", str(s.shape)), ("dtype", s.dtype), ("values", f"{s.size:,}"),
            ("min / mean / max", _stats(s) + _flags(s)), ("first", _head(s))]
    table = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in rows)
    label = f"expand: {s.note}" if s.capped else f"expand: all {s.size:,} values"
    return (f'<table data-gv-array="summary">{table}</table>'
            f'<details data-gv-expand><summary style="cursor:pointer">{escape(label)}</summary>'
            f"<pre>{escape(s.text)}</pre></details>")
