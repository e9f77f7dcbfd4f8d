"""Which tapes are recording: a stack per thread, as in TensorFlow.

A tape records only the ops run by the thread that entered it, so tapes in other threads never see
each other's ops. `primitive.apply` calls `record` for every differentiable op; its one check on the
hot path is `anywhere` (how many tapes are active in any thread), so code that uses no tape pays
nothing for the per-thread lookup.

>>> import engine as eg
>>> active_tapes()
()
>>> with eg.GradientTape() as tape:
...     active_tapes() == (tape,)
True
"""

from __future__ import annotations

import itertools
import sys
import threading
from typing import Any

from . import tensor as _tensor
from . import tracing
from .record import Record

__all__ = ["active_tapes", "next_op_id"]

anywhere = 0  # tapes active in any thread (the hot path's only check); changed under _lock
_lock = threading.Lock()
_local = threading.local()  # _local.tapes: this thread's active tapes, outermost first
_op_ids = itertools.count(1)


def active_tapes() -> tuple[Any, ...]:
    """The tapes inside their ``with`` block in this thread, outermost first (also `eg.active_tapes`).

    >>> active_tapes()
    ()
    """
    return tuple(getattr(_local, "tapes", ()))


def next_op_id() -> int:
    """A new op id: one per executed op, shared by every tape that records that execution.

    >>> next_op_id() < next_op_id()
    True
    """
    return next(_op_ids)


def push(tape: Any) -> list[Any]:
    """Make ``tape`` active in this thread; returns the stack it joined (give it back to `pop`)."""
    global anywhere
    tapes = getattr(_local, "tapes", None)
    if tapes is None:
        tapes = _local.tapes = []
    if tape in tapes:
        raise RuntimeError("This GradientTape is already active; tapes cannot be entered twice.")
    tapes.append(tape)
    with _lock:
        anywhere += 1
    return tapes


def pop(tape: Any, tapes: list[Any]) -> None:
    """Remove ``tape`` from the stack `push` returned (even when another thread exits it)."""
    global anywhere
    if tape in tapes:
        tapes.remove(tape)
        with _lock:
            anywhere -= 1


def is_recording() -> bool:
    """Whether any tape of this thread records right now (the backward walk's sums must then be ops)."""
    return any(t._recording for t in getattr(_local, "tapes", ()))


def walk_is_recorded() -> bool:
    """Whether the ops of a backward walk are recorded now (a tape of this thread records, or
    eg.function traces): then the walk's sums of gradients must be ops too."""
    return tracing.current() is not None or is_recording()


def backward_step_scope() -> Any:
    """Graph mode's name scope for one backward step (``gradients/<forward op>_grad``), a function of
    the step's forward output; None when this thread does not trace."""
    tracer = tracing.current()
    return None if tracer is None else tracer.grad_scope


def record(prim: Any, inputs: tuple[Any, ...], output: Any, params: dict) -> None:
    """Let this thread's recording tapes record one op, if they watch one of its inputs."""
    rec = None
    for tape in getattr(_local, "tapes", ()):
        if tape._recording:
            watched = tape._watched
            for t in inputs:
                if t._uid in watched:
                    watched.add(output._uid)
                    if rec is None:  # one Record, shared by every tape that saw the op
                        rec = Record(next(_op_ids), prim, inputs, output, params)
                    tape._records.append(rec)
                    break


def watchers(t: Any) -> list[Any]:
    """This thread's recording tapes that watch ``t``, or would watch it when it is read (a trainable
    Variable under a tape that watches accessed variables)."""
    return [tape for tape in getattr(_local, "tapes", ()) if tape._recording and (
        t._uid in tape._watched or (t._is_variable and t._trainable and tape._watch_accessed))]


def note_host_read(t: Any, how: str) -> None:
    """``t``'s value left the engine (``how``: ".numpy()", "np.asarray()", ".item()"): each of its
    `watchers` keeps how, for `GradientTape.host_read` (why a gradient is None). Called only when
    `anywhere` is non-zero."""
    for tape in watchers(t):
        tape._host_reads.setdefault(t._uid, how)


def record_read(prim: Any, var: Any, snapshot: Any) -> None:
    """A Variable was read: tapes auto-watch it (when trainable) and record the read as an op."""
    rec = None
    for tape in getattr(_local, "tapes", ()):
        if not tape._recording:
            continue
        if var._trainable and tape._watch_accessed and var._uid not in tape._watched:
            tape._watch_one(var)
        if var._uid in tape._watched:
            if rec is None:
                rec = Record(next(_op_ids), prim, (var,), snapshot, {})
            tape._watched.add(snapshot._uid)
            tape._records.append(rec)


_tensor._recording = sys.modules[__name__]  # Tensor.numpy / item / __array__ tell tapes (note_host_read)
