"""The panels under the matplotlib widgets (`gv.clipping`, `gv.check_gradients`, `gv.flow`), as functions of
the numbers they show.

>>> angle_text(float("nan")), angle_text(12.345)
('undefined (zero vector)', '12.35°')
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from gradviz.render import fmt
from gradviz.render.text import esc
from gradviz.render.theme import css_color

__all__ = ["angle_text", "clipping_panel", "gradient_check_panel", "flow_panel"]


def angle_text(angle: float) -> str:
    """An angle in degrees, or why there is none."""
    return "undefined (zero vector)" if not math.isfinite(angle) else f"{angle:.2f}°"


def clipping_panel(call: str, result: Any, names: Sequence[str], shapes: Sequence[tuple | None],
                   bad: Sequence[str]) -> str:
    """The clipping lab's panel: the call, the verdict, a row per gradient (``shapes[k]`` None: no
    gradient) of ``result`` (a `gradviz.model.clip_results.ClipResult`); ``bad``: the gradients with
    inf/NaN entries."""
    r = result
    rows = []
    for k, (name, shape) in enumerate(zip(names, shapes)):
        if shape is None:
            rows.append(f"<tr><td>{esc(name)}</td><td colspan='5'>None (no gradient)</td></tr>")
            continue
        scale = r.norms_after[k] / r.norms_before[k] if r.norms_before[k] else math.nan
        rows.append(
            f"<tr><td>{esc(name)}</td><td>{esc(str(shape))}</td>"
            f"<td>{fmt.cell(r.norms_before[k])}</td><td>{fmt.cell(r.norms_after[k])}</td>"
            f"<td>{fmt.cell(scale)}</td><td>{angle_text(r.angles_deg[k])}</td></tr>"
        )
    head = ("<tr><th>gradient</th><th>shape</th><th>norm before</th><th>norm after</th>"
            "<th>after / before</th><th>angle</th></tr>")
    verdict = (
        f"global norm <b>{fmt.cell(r.global_norm_before)}</b> "
        f"{'&gt;' if r.global_norm_before > r.threshold else '&le;'} "
        f"threshold <b>{fmt.cell(r.threshold)}</b>"
        f" → after: <b>{fmt.cell(r.global_norm_after)}</b>; angle between before and after "
        f"<b>{angle_text(r.angle_deg)}</b>"
    )
    warning = (
        f"<br/><b>inf/NaN entries in {esc(', '.join(bad))}</b>: not drawn; their norms "
        "are inf/NaN, and clipping by norm turns them into NaN (TensorFlow's rule)." if bad else ""
    )
    return (
        "<div style='font-size:12px'>"
        f"<code>{esc(call)}</code><br/>"
        f"{verdict}{warning}<table class='gv-clip-table' style='border-collapse:collapse;margin-top:4px'>"
        f"<style>.gv-clip-table th, .gv-clip-table td {{padding: 1px 8px; text-align: right}}</style>"
        f"{head}{''.join(rows)}</table>"
        "</div>"
    )


def gradient_check_panel(rows: Sequence[dict[str, Any]], summary: str, ok: bool, rule: str,
                         nones: Sequence[str], name: str, shape: tuple, note: str) -> str:
    """The gradient check's panel: the verdict, the rule (``rule``: f, h and the tolerance in words),
    the inputs whose gradient is None, and a row per element of input ``name`` (`GradientCheck.rows`)."""
    good, bad = "rgba(26,127,55,.13)", "rgba(209,36,47,.16)"
    body = []
    for r in rows:
        index = ", ".join(map(str, r["index"])) or "—"
        body.append(
            f"<tr style='background:{good if r['ok'] else bad}'><td>[{index}]</td>"
            f"<td>{fmt.cell(r['x'], 6)}</td>"
            f"<td>{fmt.cell(r['analytic'], 8)}</td><td>{fmt.cell(r['numeric'], 8)}</td>"
            f"<td>{fmt.cell(r['abs_error'], 2)}</td><td>{fmt.cell(r['bound'], 2)}</td>"
            f"<td>{fmt.cell(r['rel_error'], 2)}</td>"
            f"<td>{'✓' if r['ok'] else '✗'}</td></tr>")
    if not body:
        body.append("<tr><td colspan='8'>no failures</td></tr>")
    head = ("<tr><th>index</th><th>x</th><th>analytic</th><th>numerical</th><th>|difference|</th>"
            "<th title='the largest |difference| allowed: atol + rtol·max(|a|, |n|) + the rounding of f'>"
            "bound</th><th>relative error</th><th></th></tr>")
    none_note = (f"<br/><i>The engine's gradient for {esc(', '.join(nones))} is None (f does not "
                 "depend on it); compared as 0.</i>" if nones else "")
    color = css_color("good" if ok else "bad")
    return (
        "<style>.gv-gc td,.gv-gc th{padding:1px 8px;text-align:right;font-family:monospace}</style>"
        f"<div style='font-size:12px'><b style='color:{color}'>{esc(summary)}</b><br/>"
        f"{esc(rule)}"
        f"{none_note}<br/><b>input {esc(name)}</b> shape {shape} "
        f"{esc(note)}<table class='gv-gc'>{head}{''.join(body)}</table></div>"
    )


def flow_panel(step: int, by: str, names: Sequence[str], norms: np.ndarray, maxes: np.ndarray,
               weights: np.ndarray, ratios: np.ndarray, guide: float, note: str = "") -> str:
    """The flow view's panel at ``step``: a row per layer (``by`` "layer") or variable of its gradient
    norm, largest |g|, weight norm and update ratio, flagged far from ``guide`` either way."""
    rows = []
    for j, name in enumerate(names):
        ratio = ratios[j]
        flag = ""
        if np.isfinite(ratio) and ratio > 0:
            if ratio > 30 * guide:
                flag = f" <span style='color:{css_color('bad')}'>(large steps)</span>"
            elif ratio < guide / 30:
                flag = f" <span style='color:{css_color('warn')}'>(barely moving)</span>"
        if not np.isfinite(norms[j]):
            flag += f" <span style='color:{css_color('bad')}'>(no / non-finite gradient)</span>"
        rows.append(f"<tr><td style='text-align:left'>{esc(name)}</td><td>{fmt.cell(norms[j])}</td>"
                    f"<td>{fmt.cell(maxes[j])}</td><td>{fmt.cell(weights[j])}</td>"
                    f"<td>{fmt.cell(ratio)}{flag}</td></tr>")
    head = ("<tr><th>" + ("layer" if by == "layer" else "variable") +
            "</th><th>‖g‖</th><th>max |g|</th><th>‖w‖</th><th>‖Δw‖/‖w‖</th></tr>")
    top = f"<div>{esc(note)}</div>" if note else ""
    return (f"<div style='font-size:12px'>{top}<b>step {step}</b>"
            "<style>.gv-fl td,.gv-fl th{padding:1px 8px;text-align:right}</style>"
            f"<table class='gv-fl'>{head}{''.join(rows)}</table></div>")
