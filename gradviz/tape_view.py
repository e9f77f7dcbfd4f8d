"""``gv.tape``: the tape inspector, and ``gv.explain_none``: why a gradient is None.

The inspector lists the recorded ops in order, which tape(s) recorded each one (pass several
tapes, ``gv.tape([outer, inner])``: ops are matched by their shared ``op_id``), the watched
Variables and tensors, and, for a target and sources, each gradient or the reason it is None.

>>> import engine as eg, gradviz as gv
>>> x, c = eg.constant(3.0), eg.constant(1.0)
>>> with eg.GradientTape() as tape:
...     tape.watch(x)
...     y = x * x + c
>>> gv.explain_none(tape, y, c).split(":")[0]
'not watched'
>>> gv.explain_none(tape, y, x) is None       # this one has a gradient
True
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from . import fmt, tapeinfo
from .widget_base import View, esc

__all__ = ["tape", "TapeView", "explain_none"]


# ---- why is the gradient None? ----------------------------------------------------------------------


def _alias(records: list[Any]) -> dict[int, int]:
    return {r.output.id: r.inputs[0].id for r in records if r.op == "read_variable"}


def _connected(records: list[Any], source: Any, target: Any) -> bool:
    """Whether the records hold a path of ops from ``source`` to ``target``."""
    alias = _alias(records)
    key = lambda t: alias.get(t.id, t.id)  # noqa: E731
    reached = {key(source)}
    goal = key(target)
    if goal in reached:
        return True
    for r in records:
        if r.op == "read_variable":
            continue
        if any(key(x) in reached for x in r.inputs):
            reached.add(key(r.output))
    return goal in reached


def explain_none(tape: Any, target: Any, source: Any, others: Iterable[Any] | None = None) -> str | None:
    """Why ``tape.gradient(target, source)`` is (or would be) None; None when it has a gradient.

    The reason starts with one of: "integer dtype", "tape already used", "not watched",
    "recorded by another tape", "recording stopped", "not connected"; a sentence on how to fix it
    follows. Uses only the tape's public state (records, watched tensors, recording flag); ``others``
    are further tapes to look at for "recorded by another tape" (default: every tape gradviz knows).
    Nothing is computed and the tape is not consumed.
    """
    from engine import Variable  # noqa: PLC0415

    tapes = tapeinfo.as_tapes(tape)
    if len(tapes) != 1:
        raise TypeError("explain_none: pass one tape (the one whose gradient() gave None).")
    tp = tapes[0]
    if source.dtype.kind not in "fc":
        return (
            f"integer dtype: the source has dtype {source.dtype}; only floating-point tensors have "
            "gradients (TensorFlow returns None too). Make it float: eg.cast(x, 'float32') or "
            "eg.constant(3.0) instead of eg.constant(3)."
        )
    if target.dtype.kind not in "fc":
        return (
            f"integer dtype: the target has dtype {target.dtype}; ops with integer or bool results "
            "are not recorded, so no gradient flows through them. Keep the computation in floats."
        )
    if tapeinfo.is_used(tp):
        return (
            "tape already used: this non-persistent tape has answered its one gradient() call and "
            "freed its records (asking again raises RuntimeError). Use "
            "eg.GradientTape(persistent=True) to ask several times, or one tape per gradient."
        )
    records = tp.records
    alias = _alias(records)
    if alias.get(target.id, target.id) == alias.get(source.id, source.id):
        return None
    src = alias.get(source.id, source.id)
    watched_here = tp.is_watching(source) or src in alias.values()
    if watched_here and _connected(records, source, target):
        return None
    pool = list(others) if others is not None else tapeinfo.known_tapes()
    for other in pool:
        if other is tp:
            continue
        other_records = other.records
        other_reads = {r.inputs[0].id for r in other_records if r.op == "read_variable"}
        if (other.is_watching(source) or source.id in other_reads) and _connected(
            other_records, source, target
        ):
            return (
                "recorded by another tape: the ops from the source to the target were recorded by a "
                "different tape, not this one (this tape was not recording while they ran, e.g. an "
                "inner tape whose block had ended). Ask the tape that recorded them."
            )
    if not watched_here:
        if isinstance(source, Variable):
            why = (
                "it is not trainable (trainable=False)"
                if not source.trainable
                else "it was not read inside the tape's `with` block"
            )
            return (
                f"not watched: the tape never watched this Variable: {why}. Read it inside the block, "
                "or call tape.watch(v)."
            )
        return (
            "not watched: the source is a plain tensor the tape does not watch, so the ops on it "
            "were not recorded. Call tape.watch(x) inside the `with` block (only trainable "
            "Variables are watched automatically)."
        )
    produced = {alias.get(r.output.id, r.output.id) for r in records}
    last = max((r.output.id for r in records), default=0)
    if alias.get(target.id, target.id) not in produced and not tp.is_recording and target.id > last:
        return (
            "recording stopped: the target was computed when this tape was no longer recording "
            "(after its `with` block ended, inside tape.stop_recording(), or after gradient() was "
            "called on it), so the tape has no record of how it was made. Compute it inside the "
            "block, or ask a tape that was still recording (for a second derivative: the outer one). "
            "(Told from the order of creation: if the target never used the source at all, they are "
            "simply not connected.)"
        )
    return (
        "not connected: the target does not depend on the source through any op this tape recorded. "
        "Check that the target is computed from the source with engine ops (not via .numpy(), "
        "an integer cast, stop_gradient or Variable.assign)."
    )


# ---- the inspector --------------------------------------------------------------------------------


def tape(
    tape: Any, names: Mapping[str, Any] | None = None, target: Any = None, sources: Any = None
) -> TapeView:
    """The tape inspector for ``tape`` (or a list of tapes, e.g. ``[outer, inner]``).

    ``names``: a name → tensor (and tape) mapping such as ``locals()``, for labels.
    ``target``, ``sources``: optionally, show d target / d source for each source, or why it is None.
    """
    return TapeView(tapeinfo.as_tapes(tape), names=names, target=target, sources=sources)


class TapeView(View):
    """What `tape` returns: the recorded ops as a table, live in JupyterLab, static elsewhere."""

    def __init__(
        self,
        tapes: list[Any],
        names: Mapping[str, Any] | None = None,
        target: Any = None,
        sources: Any = None,
    ):
        from engine import nest  # noqa: PLC0415

        self.tapes = tapes
        self.labels = tapeinfo.tape_labels(tapes, names)
        self.names = tapeinfo.names_by_id(names)
        self.rows = tapeinfo.merged_records(tapes)
        self.alias = {r.output.id: r.inputs[0].id for r, _ in self.rows if r.op == "read_variable"}
        self.target = target
        self.sources = nest.flatten(sources) if sources is not None else []
        self.row: int | None = None  # the selected row (index into `rows`)
        self._choices = self._tensor_choices()

    # ---- text ---------------------------------------------------------------------------------
    def label(self, t: Any) -> str:
        """A tensor's name, or #id, with its shape."""
        uid = self.alias.get(t.id, t.id)
        name = self.names.get(uid) or self.names.get(t.id) or t.name
        base = name if name else f"#{uid}"
        return f"{base} {fmt.shape_text(t.shape)}"

    def status(self, k: int) -> str:
        t = self.tapes[k]
        state = ["persistent" if t.persistent else "non-persistent"]
        state.append("recording" if t.is_recording else "not recording")
        if tapeinfo.is_used(t):
            state.append("used: its records were freed by gradient()")
        return ", ".join(state)

    @property
    def row_details(self) -> str:
        """HTML details of the selected row ('' when none)."""
        if self.row is None or not self.rows:
            return ""
        r, which = self.rows[self.row]
        d = r.to_dict()
        ins = "".join(
            f"<li>{esc(self.label(x))} {esc(str(x.dtype))} on {esc(x.device)}"
            f"<pre>{esc(fmt.full(x.numpy(), threshold=60))}</pre></li>"
            for x in r.inputs
        )
        params = esc(", ".join(f"{k}={v!r}" for k, v in d["params"].items())) or "none"
        by = esc(", ".join(self.labels[k] for k in which))
        return (
            f"<div><b>op #{r.op_id}: {esc(r.op)}</b> recorded by {by}<div>inputs:</div><ul>{ins}</ul>"
            f"<div>output: {esc(self.label(r.output))} {esc(str(r.output.dtype))}</div>"
            f"<pre>{esc(fmt.full(r.output.numpy(), threshold=60))}</pre><div>params: {params}</div></div>"
        )

    def gradient_report(
        self, target: Any = None, sources: Any = None, tape_index: int = 0
    ) -> list[tuple[str, str, str | None]]:
        """For each source: (label, gradient text or '', reason when None), as tape ``tape_index``
        would answer, without consuming any tape."""
        from engine import nest  # noqa: PLC0415

        target = self.target if target is None else target
        sources = self.sources if sources is None else nest.flatten(sources)
        if target is None or not sources:
            return []
        out = []
        tp = self.tapes[tape_index]
        for s in sources:
            reason = explain_none(tp, target, s, others=self.tapes)
            text = ""
            if reason is None and not tapeinfo.is_used(tp):
                grads = tapeinfo.gradients(tp.records, [target], [s])
                g = grads.get(s.id)
                text = fmt.full(g.numpy(), threshold=60) if g is not None else ""
            out.append((self.label(s), text, reason))
        return out

    def _table(self) -> str:
        head = "".join(f"<th>{esc(lab)}</th>" for lab in self.labels)
        body = []
        for i, (r, which) in enumerate(self.rows):
            marks = "".join(
                f"<td style='text-align:center'>{'●' if k in which else ''}</td>"
                for k in range(len(self.tapes))
            )
            ins = ", ".join(esc(self.label(x)) for x in r.inputs)
            style = " style='background:rgba(251,143,68,.25)'" if i == self.row else ""
            partial = (
                " style='opacity:.85;font-style:italic'" if len(which) < len(self.tapes) and not style else ""
            )
            body.append(
                f"<tr{style or partial}><td>{r.op_id}</td><td><b>{esc(r.op)}</b></td><td>{ins}</td>"
                f"<td>{esc(self.label(r.output))}</td>{marks}</tr>"
            )
        if not body:
            why = [tapeinfo.no_records_error("gv.tape", t) for t in self.tapes]
            body.append(f"<tr><td colspan='{4 + len(self.tapes)}'>{esc(str(why[0]))}</td></tr>")
        return (
            f"<table class='gv-tape'><thead><tr><th>op id</th><th>op</th><th>inputs</th><th>output</th>"
            f"{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
        )

    def _tapes_html(self) -> str:
        parts = []
        for k, t in enumerate(self.tapes):
            var = ", ".join(esc(self.label(v)) for v in t.watched_variables()) or "none"
            ten = ", ".join(esc(self.label(v)) for v in t.watched_tensors()) or "none"
            parts.append(
                f"<li><b>{esc(self.labels[k])}</b> ({esc(self.status(k))}): {len(t.records)} ops; "
                f"watched Variables: {var}; watched tensors: {ten}</li>"
            )
        return f"<ul>{''.join(parts)}</ul>"

    def _report_html(self, target: Any = None, sources: Any = None) -> str:
        report = self.gradient_report(target, sources)
        if not report:
            return ""
        items = []
        for label, text, reason in report:
            if reason is None:
                items.append(f"<li><b>{esc(label)}</b>: gradient <pre>{esc(text)}</pre></li>")
            else:
                head, _, rest = reason.partition(":")
                items.append(f"<li><b>{esc(label)}</b>: <b>None</b>, {esc(head)}:{esc(rest)}</li>")
        tgt = esc(self.label(target if target is not None else self.target))
        return f"<div>d {tgt} / d source, as {esc(self.labels[0])} answers:</div><ul>{''.join(items)}</ul>"

    def to_html(self) -> str:
        return (
            f"<div class='gradviz gradviz-tape'>{self._tapes_html()}{self._table()}"
            f"{self._report_html()}{self.row_details}</div>"
        )

    def to_png(self, scale: float = 2.0) -> bytes:
        raise NotImplementedError("gv.tape is a table: save it as .html.")

    def _repr_svg_(self) -> None:
        return None

    # ---- interaction ------------------------------------------------------------------------------
    def select(self, row: int | None) -> None:
        """Select a row (an index into the recorded ops), as the slider does."""
        if row is not None and not 0 <= row < len(self.rows):
            raise IndexError(f"row {row} is out of range: the tape view has {len(self.rows)} ops.")
        self.row = row
        self._sync()

    def explain(self, target: Any, source: Any, tape_index: int = 0) -> str:
        """The answer the "why None?" controls show: the gradient, or why it is None."""
        report = self.gradient_report(target, [source], tape_index=tape_index)
        label, text, reason = report[0]
        return f"gradient of {self.label(target)} w.r.t. {label}:\n{text}" if reason is None else reason

    def _tensor_choices(self) -> list[tuple[str, Any]]:
        seen: dict[int, Any] = {}
        for r, _ in self.rows:
            for t in (*r.inputs, r.output):
                if r.op == "read_variable" and t is r.output:
                    continue
                seen.setdefault(t.id, t)
        for t in [self.target, *self.sources]:
            if t is not None:
                seen.setdefault(t.id, t)
        return [(self.label(t), t) for t in seen.values()]

    def _build_widget(self) -> Any:
        import ipywidgets as w  # noqa: PLC0415

        if self.rows and self.row is None:
            self.row = 0
        self._table_w = w.HTML(self._table())
        self._detail_w = w.HTML(self.row_details)
        self._slider = w.IntSlider(
            value=0,
            min=0,
            max=max(len(self.rows) - 1, 0),
            description="op",
            continuous_update=True,
            disabled=not self.rows,
        )
        self._slider.observe(lambda ch: self.select(ch["new"]), names="value")
        options = [(label, k) for k, (label, _) in enumerate(self._choices)]
        default_t = next(
            (
                k
                for k, (_, t) in enumerate(self._choices)
                if self.target is not None and t.id == self.target.id
            ),
            len(options) - 1 if options else None,
        )
        self._target_w = w.Dropdown(options=options, value=default_t, description="target")
        self._source_w = w.Dropdown(options=options, value=0 if options else None, description="source")
        self._why_w = w.HTML()
        for c in (self._target_w, self._source_w):
            c.observe(lambda ch: self._update_why(), names="value")
        self._tape_w = w.Dropdown(
            options=[(lab, k) for k, lab in enumerate(self.labels)],
            value=0,
            description="tape",
            layout=w.Layout(display="" if len(self.tapes) > 1 else "none"),
        )
        self._tape_w.observe(lambda ch: self._update_why(), names="value")
        self._update_why()
        return w.VBox(
            [
                w.HTML(self._tapes_html()),
                self._table_w,
                self._slider,
                self._detail_w,
                w.HTML("<b>Why is a gradient None?</b>"),
                w.HBox([self._target_w, self._source_w, self._tape_w]),
                self._why_w,
            ]
        )

    def _update_why(self) -> None:
        if not self._choices or self._target_w.value is None:
            return
        target = self._choices[self._target_w.value][1]
        source = self._choices[self._source_w.value][1]
        k = getattr(getattr(self, "_tape_w", None), "value", 0) or 0
        self._why_w.value = f"<pre>{esc(self.explain(target, source, tape_index=k))}</pre>"

    @property
    def why(self) -> str:
        """The text the "why None?" panel shows now (live widget only)."""
        return getattr(getattr(self, "_why_w", None), "value", "")

    def _sync(self) -> None:
        if self._widget is None:
            return
        self._table_w.value = self._table()
        self._detail_w.value = self.row_details
        if self.row is not None and self._slider.value != self.row:
            self._slider.value = self.row

    def __repr__(self) -> str:
        return f"<gv.tape: {len(self.rows)} ops on {', '.join(self.labels)}>"
