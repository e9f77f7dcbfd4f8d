"""The HTML of `gv.tape`, as functions of plain data: the tapes, the table of records, a record's details,
the gradients or why they are None.

>>> tape_table(["tape"], [(1, "multiply", ["x ()", "x ()"], "y ()", [True], 1)], selected=None)[:40]
"<table class='gv-tape'><thead><tr><th>op"
"""

from __future__ import annotations

from collections.abc import Sequence

from gradviz.render.text import esc

__all__ = ["tape_table", "tapes_list", "record_details", "gradient_report_html", "why_none_html"]

#: one record: (op id, op, input labels, output label, which tapes recorded it, times listed)
Row = tuple[int, str, Sequence[str], str, Sequence[bool], int]


def tape_table(tape_labels: Sequence[str], rows: Sequence[Row], selected: int | None,
               why_empty: str = "") -> str:
    """The table of records, a column per tape (● where it recorded the op); row ``selected``
    highlighted; ``why_empty``: the line shown when there is no record."""
    head = "".join(f"<th>{esc(lab)}</th>" for lab in tape_labels)
    body = []
    for i, (op_id, op, ins, out, recorded, repeats) in enumerate(rows):
        marks = "".join(f"<td style='text-align:center'>{'●' if on else ''}</td>" for on in recorded)
        style = " style='background:rgba(251,143,68,.25)'" if i == selected else ""
        partial = " style='opacity:.85;font-style:italic'" if not all(recorded) and not style else ""
        listed = f" <i>(listed {repeats} times: shown once)</i>" if repeats > 1 else ""
        body.append(
            f"<tr{style or partial}><td>{op_id}</td><td><b>{esc(op)}</b>{listed}</td>"
            f"<td>{', '.join(esc(x) for x in ins)}</td><td>{esc(out)}</td>{marks}</tr>"
        )
    if not body and why_empty:
        body.append(f"<tr><td colspan='{4 + len(tape_labels)}'>{esc(why_empty)}</td></tr>")
    return (
        f"<table class='gv-tape'><thead><tr><th>op id</th><th>op</th><th>inputs</th><th>output</th>"
        f"{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


def tapes_list(tapes: Sequence[tuple[str, str, int, str, str]], records: int) -> str:
    """The tapes: (label, status, ops recorded, watched Variables, watched tensors) each; none: another
    engine's tape of ``records`` records."""
    if not tapes:
        return f"<ul><li><b>your engine's tape</b>: {records} records</li></ul>"
    parts = [f"<li><b>{esc(label)}</b> ({esc(status)}): {ops} ops; watched Variables: {esc(var)}; "
             f"watched tensors: {esc(ten)}</li>" for label, status, ops, var, ten in tapes]
    return f"<ul>{''.join(parts)}</ul>"


def record_details(op_id: int, op: str, by: str, inputs: Sequence[tuple[str, str, str, str | None]],
                   output: str, output_dtype: str, output_value: str | None, params: str) -> str:
    """A record's details: its inputs (label, dtype, device, value HTML or None: not kept), output, params."""
    kept = "<div>not kept</div>"
    ins = "".join(f"<li>{esc(label)} {esc(dtype)} on {esc(device)}{kept if value is None else value}</li>"
                  for label, dtype, device, value in inputs)
    return (
        f"<div><b>op #{op_id}: {esc(op)}</b> recorded by {esc(by)}<div>inputs:</div><ul>{ins}</ul>"
        f"<div>output: {esc(output)} {esc(output_dtype)}</div>"
        f"{kept if output_value is None else output_value}"
        f"<div>params: {esc(params)}</div></div>"
    )


def gradient_report_html(target: str, tape: str, report: Sequence[tuple[str, str, str | None]]) -> str:
    """d target / d source for each (source label, gradient text, reason it is None) of ``report``."""
    items = []
    for label, text, reason in report:
        if reason is None:
            items.append(f"<li><b>{esc(label)}</b>: gradient <pre>{esc(text)}</pre></li>")
        else:
            head, _, rest = reason.partition(":")
            items.append(f"<li><b>{esc(label)}</b>: <b>None</b>, {esc(head)}:{esc(rest)}</li>")
    return f"<div>d {esc(target)} / d source, as {esc(tape)} answers:</div><ul>{''.join(items)}</ul>"


def why_none_html(text: str, tape: str = "") -> str:
    """The "why is a gradient None?" panel: ``text``, as ``tape`` answers (named when several are)."""
    asked = f" ({esc(tape)} answers)" if tape else ""
    return f"<div><b>Why is a gradient None?</b>{asked}</div><pre>{esc(text)}</pre>"
