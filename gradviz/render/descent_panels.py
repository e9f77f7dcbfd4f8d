"""The pieces of `gv.descent`'s panel, as functions of the numbers they show: the browser's frames and
the static page join the same pieces (`gradviz.widgets.descent_frames`).

>>> at_step(3), at_rate(0.1), at_momentum(0.9)
('<b>step 3</b>', ', learning rate 0.1', ', momentum 0.9')
"""

from __future__ import annotations

from typing import Any

from gradviz.render import fmt
from gradviz.render.text import esc
from gradviz.render.theme import css_color

__all__ = ["PANEL_OPEN", "PANEL_CLOSE", "TABLE_HEAD", "swatch", "diverged_note", "slots_cell", "trace_head",
           "at_step", "at_rate", "at_momentum", "table_open", "step_line"]

#: the tables' style, written once: the panel carries it, in the live widget and in a static page alike
STYLE = ("<style>.gvf-panel:has(table.gv-dt){overflow-x:auto}"
         ".gv-dt td,.gv-dt th{padding:1px 8px;text-align:right;white-space:nowrap;vertical-align:top;"
         "font-family:var(--jp-code-font-family,monospace)}"
         ".gv-dt td:first-child{text-align:left}.gv-dt tr.now{background:rgba(191,135,0,.18)}</style>")
PANEL_OPEN = f"{STYLE}<div style='font-size:12px'>"
PANEL_CLOSE = "</table></div>"
TABLE_HEAD = ("<tr><th>optimizer</th><th>step</th><th>θ</th><th>loss f(θ)</th><th>gradient at θ</th>"
              "<th>last Δθ</th><th>optimizer state (slots)</th></tr>")


def swatch(color: str, name: str) -> str:
    """The optimizer's line colour (a bar, not a glyph: no text to read in either theme) and name."""
    bar = f"display:inline-block;width:16px;height:3px;vertical-align:middle;background:{color}"
    return f"<span style='{bar}'></span> {esc(name)}"


def diverged_note(step: int | None) -> str:
    """Where a run diverged ('' when it did not)."""
    return f" <span style='color:{css_color('bad')}'>(diverged at step {step})</span>" if step else ""


def slots_cell(slots: dict[str, Any]) -> str:
    """An optimizer's slots, one a line (the column stays narrow enough for the widget's width)."""
    return "<br/>".join(f"{esc(n)}={fmt.cell(v)}" for n, v in slots.items()) or "—"


def trace_head(name: str, rule: str, sgd: bool) -> str:
    """The head of the 1-D trace table of optimizer ``name`` (``rule``: its update, in words)."""
    head = "<tr><th>step</th><th>before</th><th>gradient</th>"
    head += "<th>expected after<br/>before − lr·gradient</th>" if sgd else "<th>Δθ</th>"
    head += "<th>after</th></tr>"
    return f"<b>{esc(name)} trace</b>{rule}<table class='gv-dt'>{head}"


def at_step(step: int) -> str:
    return f"<b>step {step}</b>"


def at_rate(lr: float) -> str:
    return f", learning rate {fmt.cell(lr)}"


def at_momentum(mu: float) -> str:
    return f", momentum {mu:g}"


def table_open(shown: bool) -> str:
    """The main table's head, or a hint when no optimizer is shown."""
    return f"<table class='gv-dt'>{TABLE_HEAD}" if shown else "<br/><i>Select an optimizer.</i>"


def step_line(x: float, top: float, bottom: float, color: str) -> str:
    """The loss plot's dotted line at the step shown (SVG, in the picture's coordinates)."""
    return (f'<path d="M{x} {top}V{bottom}" fill="none" stroke="{color}" '
            'stroke-width="1" stroke-dasharray="1,1.65"/>')
