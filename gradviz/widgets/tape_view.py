"""``gv.tape``: the tape inspector (why a gradient is None: `gradviz.model.explain`).

The inspector lists the recorded ops in order, which tape(s) recorded each one (pass several
tapes, ``gv.tape([outer, inner])``: ops are matched by their shared ``op_id``), the watched
Variables and tensors, and, for a target and sources, each gradient or the reason it is None.

>>> import engine as eg, gradviz as gv
>>> x, c = eg.constant(3.0), eg.constant(1.0)
>>> with eg.GradientTape() as tape:
...     tape.watch(x)
...     y = x * x + c
>>> "not watched" in gv.tape(tape, target=y, sources=[x, c]).to_html()
True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine import nest
from gradviz.model import protocol, tapeinfo
from gradviz.model.checks import NAMES, expect_mapping
from gradviz.model.explain import drawn_id, explain_none, variable_reads
from gradviz.model.protocol import shown_id
from gradviz.render import fmt
from gradviz.render.array_panel import array_html
from gradviz.render.html import gradviz_block, layer_frame
from gradviz.render.tape_panels import (
    gradient_report_html,
    record_details,
    tape_table,
    tapes_list,
    why_none_html,
)
from gradviz.widgets.frames import Frames
from gradviz.widgets.view import Control, View

__all__ = ["tape", "TapeView"]



# ---- the inspector --------------------------------------------------------------------------------


def tape(
    tape: Any, names: Mapping[str, Any] | None = None, target: Any = None, sources: Any = None
) -> TapeView:
    """The tape inspector for ``tape`` (or a list of tapes, e.g. ``[outer, inner]``), or for any engine's
    tape that follows the tape protocol (``tape.records``: see `gradviz.model.protocol`).

    ``names``: a name → tensor (and tape) mapping such as ``locals()``, for labels.
    ``target``, ``sources``: optionally, show d target / d source for each source, or why it is None.

    >>> import engine as eg
    >>> import gradviz as gv
    >>> x = eg.constant(2.0)
    >>> with eg.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = eg.exp(x)
    ...
    >>> "exp" in gv.tape(tape).to_html()
    True
    """
    expect_mapping("gv.tape", "names", names, NAMES)
    return TapeView(protocol.read_tape(tape, "gv.tape"), names=names, target=target, sources=sources)


class TapeView(View):
    """What `tape` returns: the recorded ops as a table, live in JupyterLab, static elsewhere."""

    def __init__(
        self,
        tapes: Any,
        names: Mapping[str, Any] | None = None,
        target: Any = None,
        sources: Any = None,
    ):
        reading = tapes if isinstance(tapes, protocol.Reading) else protocol.read_tape(tapes, "gv.tape")
        self.reading = reading
        self.tapes = tapes = reading.tapes
        self.labels = tapeinfo.tape_labels(tapes, names) if tapes else ["your tape"]
        self.names = tapeinfo.names_by_id(names, "gv.tape") if tapes else {
            k: n for n, v in (names or {}).items()
            if isinstance(n, str) and not n.startswith("_") and (k := reading.reader.key(v)) is not None}
        self.rows = reading.rows
        self.alias = variable_reads([r for r, _ in self.rows])
        self.target = target
        self.sources = nest.flatten(sources) if sources is not None else []
        if not tapes:  # another engine's values: read like its records' (matched by identity)
            self.target = None if target is None else reading.reader.value(target, "the target")
            self.sources = [reading.reader.value(v, "a source") for v in self.sources]
        self.row: int | None = None  # the selected row (index into `rows`)
        self._choices = self._tensor_choices()

    # ---- text ---------------------------------------------------------------------------------
    def label(self, t: Any) -> str:
        """A tensor's name, or #id, with its shape."""
        uid = drawn_id(self.alias, t.id)
        name = self.names.get(uid) or self.names.get(t.id) or t.name
        base = name if name else shown_id(uid)
        return f"{base} {fmt.shape_text(t.shape)}"

    def status(self, k: int) -> str:
        if not self.tapes:
            return "your engine's tape"
        t = self.tapes[k]
        state = ["persistent" if t.persistent else "non-persistent"]
        state.append("recording" if t.is_recording else "not recording")
        if tapeinfo.is_used(t):
            state.append("used: its records were freed by gradient()")
        return ", ".join(state)

    @property
    def row_details(self) -> str:
        """HTML details of the selected row ('' when none)."""
        return self._details(self.row)

    def _details(self, row: int | None) -> str:
        """HTML details of row ``row`` ('' when None)."""
        if row is None or not self.rows:
            return ""
        r, which = self.rows[row]

        def value(t: Any) -> str | None:
            return array_html(t.numpy()) if t.kept else None

        ins = [(self.label(x), str(x.dtype), str(x.device), value(x)) for x in r.inputs]
        params = ", ".join(f"{k}={v!r}" for k, v in r.params.items()) or "none"
        by = ", ".join(self.labels[k] for k in which)
        return record_details(r.op_id, r.op, by, ins, self.label(r.output), str(r.output.dtype),
                              value(r.output), params)

    def gradient_report(
        self, target: Any = None, sources: Any = None, tape_index: int = 0
    ) -> list[tuple[str, str, str | None]]:
        """For each source: (label, gradient text or '', reason when None), as tape ``tape_index``
        would answer, without consuming any tape."""
        target = self.target if target is None else target
        sources = self.sources if sources is None else nest.flatten(sources)
        if target is None or not sources or not self.tapes:
            return []
        target = getattr(target, "obj", target)  # a value of this view: the engine's tensor
        sources = [getattr(s, "obj", s) for s in sources]
        out = []
        tp = self.tapes[tape_index]
        for s in sources:
            reason = explain_none(tp, target, s, others=self.tapes)
            text = ""
            if reason is None and not tapeinfo.is_used(tp):
                _, grads = tapeinfo.walk(tp.records, [target], [s])  # the engine's own walk
                g = grads.get(s.id)
                text = fmt.full(g.numpy(), threshold=60) if g is not None else ""
            out.append((self.label(s), text, reason))
        return out

    def _table(self, row: int | None = None) -> str:
        """The table of records, row ``row`` highlighted."""
        rows = [(r.op_id, r.op, [self.label(x) for x in r.inputs], self.label(r.output),
                 [k in which for k in range(len(self.tapes))], r.repeats) for r, which in self.rows]
        why = str(tapeinfo.no_records_error("gv.tape", self.tapes[0])) if self.tapes and not rows else ""
        return tape_table(self.labels, rows, row, why)

    def _tapes_html(self) -> str:
        if not self.tapes:
            return tapes_list([], len(self.rows))
        return tapes_list([
            (self.labels[k], self.status(k), len(t.records),
             ", ".join(self.label(v) for v in t.watched_variables()) or "none",
             ", ".join(self.label(v) for v in t.watched_tensors()) or "none")
            for k, t in enumerate(self.tapes)], len(self.rows))

    def _report_html(self, target: Any = None, sources: Any = None) -> str:
        report = self.gradient_report(target, sources)
        if not report:
            return ""
        target = self.label(target if target is not None else self.target)
        return gradient_report_html(target, self.labels[0], report)

    def to_html(self) -> str:
        return gradviz_block(self._tapes_html() + self._table(self.row) + self._report_html()
                             + self.row_details, "gradviz-tape")

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
        self._sync()  # the one path to the live widget (`View._sync`)

    def explain(self, target: Any, source: Any, tape_index: int = 0) -> str:
        """The answer the "why None?" controls show: the gradient, or why it is None."""
        report = self.gradient_report(target, [source], tape_index=tape_index)
        label, text, reason = report[0]
        return f"gradient of {self.label(target)} w.r.t. {label}:\n{text}" if reason is None else reason

    def _tensor_choices(self) -> list[tuple[str, Any]]:
        seen: dict[int, Any] = {}
        for r, _ in self.rows:
            for t in (*r.inputs, r.output):
                if r.is_variable_read and t is r.output:
                    continue
                seen.setdefault(t.id, t)
        for t in [self.target, *self.sources]:
            if t is not None:
                seen.setdefault(t.id, t)
        return [(self.label(t), t) for t in seen.values()]

    # ---- the live widget: `View`'s lifecycle over the row slider and the "why None?" dropdowns ----
    def _build_widget(self) -> Any:
        """The kernel-free inspector: every row's highlight and details, and every "why None?" answer,
        computed here; the slider and dropdowns switch between them in the browser (gradviz.frames)."""
        if self.rows and self.row is None:
            self.row = 0
        return super()._build_widget()

    def _frame_controls(self) -> list[Control]:
        labels = [f"{r.op_id}: {r.op}" for r, _ in self.rows] or ["(no ops)"]
        controls = [Control("op", "slider", range(len(self.rows) or 1), labels,
                            note=f"all {len(self.rows)} recorded ops",
                            get=lambda view: view.row or 0,
                            set=lambda view, k: view.select(k if view.rows else None))]
        choices = self._choices
        if choices and self.tapes:
            names = [label for label, _ in choices]
            target = next((k for k, (_, t) in enumerate(choices)
                           if self.target is not None and t.id == self.target.id), len(choices) - 1)
            controls += [Control("target", "dropdown", names, browser_only=True, start=target),
                         Control("source", "dropdown", names, browser_only=True)]
            if len(self.tapes) > 1:
                controls.append(Control("tape", "dropdown", self.labels, browser_only=True))
        return controls

    def frames(self) -> Any:
        """The table and details of every row, and the answer for every target, source and tape."""
        return self._make_frames(self._frame_controls())

    def _make_frames(self, controls: list[Control]) -> Any:
        """Every layer a pure function of the positions: the table and details of a row, the answer
        for a target, source and tape."""
        f = Frames("tape", title="", note="")
        f.add_controls(controls, self)
        whys = controls[1:]
        rowed = bool(self.rows)
        f.layer("table", "html", ["op"], lambda k: self._tapes_html() + self._table(k if rowed else None))
        f.layer("details", "html", ["op"], lambda k: self._details(k if rowed else None))
        if whys:
            choices = self._choices

            def why(t: int, s: int, tape: int = 0) -> str:
                text = self.explain(choices[t][1], choices[s][1], tape_index=tape)
                return why_none_html(text, self.labels[tape] if len(self.tapes) > 1 else "")

            f.layer("why", "html", [c.name for c in whys], why)
        return f

    @property
    def why(self) -> str:
        """The text the "why None?" panel shows now (live widget only)."""
        w = self._widget
        if w is None:
            return ""
        for spec in w.layers:
            if spec["name"] == "why":
                return layer_frame(spec, w.index) or ""
        return ""

    def __repr__(self) -> str:
        return f"<gv.tape: {len(self.rows)} ops on {', '.join(self.labels)}>"
