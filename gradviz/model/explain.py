"""Why is a gradient None? `explain_none` says which of six reasons it is, and how to fix it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from engine import Variable, backward_steps
from gradviz.model import tapeinfo
from gradviz.model.checks import expect_tensor

__all__ = ["explain_none", "variable_reads", "drawn_id"]


def drawn_id(alias: dict[int, int], uid: int) -> int:
    """The id of the node that draws the value with id ``uid``: a Variable's reads are drawn as the
    Variable (``alias``, from `variable_reads`, maps a read's id to its Variable's), anything else as
    itself.

    >>> drawn_id({7: 3}, 7), drawn_id({7: 3}, 5)
    (3, 5)
    """
    return alias.get(uid, uid)


def variable_reads(records: list[Any]) -> dict[int, int]:
    """The id of each value read from a Variable → the Variable's id (reads are drawn as the Variable).

    >>> import engine as eg
    >>> v = eg.Variable(2.0)
    >>> with eg.GradientTape() as tape:
    ...     y = v * 3.0
    >>> variable_reads(tape.records) == {tape.records[0].output.id: v.id}
    True
    """
    return {r.output.id: r.inputs[0].id for r in records if r.is_variable_read}


def _connected(records: list[Any], source: Any, target: Any) -> bool:
    """Whether the engine's backward walk over ``records`` brings ``target``'s gradient to ``source``."""
    with tapeinfo.quiet():
        for step in backward_steps(list(records), target, source):
            arrived = zip(step.record.inputs, step.contributions)
            if any(c is not None and x.id == source.id for x, c in arrived):
                return True
    return False


def explain_none(tape: Any, target: Any, source: Any, others: Iterable[Any] | None = None) -> str | None:
    """Why ``tape.gradient(target, source)`` is (or would be) None; None when it has a gradient.

    The reason starts with one of: "integer dtype", "tape already used", "not watched",
    "recorded by another tape", "recording stopped", "not connected"; a sentence on how to fix it
    follows. Uses only the tape's public state (records, watched tensors, recording flag); ``others``
    are further tapes to look at for "recorded by another tape" (default: every tape gradviz knows).
    The tape is not consumed: whether the target reaches the source is asked of the engine's
    backward walk (``eg.backward_steps``), which a non-persistent tape answers without being used up.

    >>> import engine as eg
    >>> x, c = eg.constant(3.0), eg.constant(1.0)
    >>> with eg.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = x * x + c
    >>> explain_none(tape, y, c).split(":")[0]
    'not watched'
    >>> explain_none(tape, y, x) is None       # this one has a gradient
    True
    """
    tapes = tapeinfo.as_tapes(tape, "gv.explain_none")
    if len(tapes) != 1:
        raise TypeError("explain_none: pass one tape (the one whose gradient() gave None).")
    tp = tapes[0]
    expect_tensor("gv.explain_none", "the target", target)
    expect_tensor("gv.explain_none", "the source", source,
                  "Pass the Variable or tensor whose gradient was None.")
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
    alias = variable_reads(records)
    if drawn_id(alias, target.id) == drawn_id(alias, source.id):
        return None
    src = drawn_id(alias, source.id)
    watched_here = tp.is_watching(source) or src in alias.values()
    if watched_here and _connected(records, source, target):
        return None
    pool = list(others) if others is not None else tapeinfo.known_tapes()
    for other in pool:
        if other is tp:
            continue
        other_records = other.records
        other_reads = set(variable_reads(other_records).values())
        if (other.is_watching(source) or source.id in other_reads) and _connected(
            other_records, source, target
        ):
            return (
                "recorded by another tape: the ops from the source to the target were recorded by a "
                "different tape, not this one (this tape was not recording while they ran, e.g. an "
                "inner tape whose block had ended). Ask the tape that recorded them."
            )
    left = tp.host_read(source)  # its value left the engine inside the block (.numpy(), np.asarray)
    if left is not None:
        return (
            f"{'not watched' if not watched_here else 'not connected'}: the source was read inside the "
            f"tape's `with` block, but through {left}, which gives a copy outside the engine (a NumPy "
            "array or a Python number): what is computed from that copy is not recorded, so no gradient "
            "can flow back to the source. Compute with engine ops on the tensor itself (eg.sin(v), "
            f"v * 2), and use {left} only to look at a value."
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
    produced = {drawn_id(alias, r.output.id) for r in records}
    last = max((r.output.id for r in records), default=0)
    if drawn_id(alias, target.id) not in produced and not tp.is_recording and target.id > last:
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
