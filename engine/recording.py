"""Who listens to what the engine does, per thread: gradient tapes, and graph mode's tracer.

This is the one hook between the engine's core and its listeners. `primitive.apply` tells `record`
about every op, `Variable` tells `record_read` and `record_assign` about reads and assignments, a
tensor tells `note_host_read` when its value leaves the engine (``.numpy()``, ``.item()``,
``np.asarray``). The tapes of this thread record what involves a tensor they watch; while
`eg.function` traces in this thread, its tracer (`engine.trace.Tracer`) turns the same events into
graph nodes. The hot paths check one number first, `listening` (tapes active in any thread plus
threads tracing), so code that uses neither pays nothing more.

A tape records only the ops of the thread that entered it, as in TensorFlow; a trace likewise.

>>> import engine as eg
>>> active_tapes()
()
>>> with eg.GradientTape() as tape:
...     active_tapes() == (tape,)
True
"""

from __future__ import annotations

import contextlib
import itertools
import threading
from collections.abc import Iterator
from typing import Any

from .record import Record

__all__ = ["active_tapes", "next_op_id", "tracer", "tracing"]

anywhere = 0  # tapes active in any thread; changed under _lock
listening = 0  # tapes active in any thread + threads tracing or profiling: the hot paths' only check
_lock = threading.Lock()
tracing_threads = 0  # threads tracing now (the switch for the tracer checks); changed under _lock
profiling_threads = 0  # threads inside eg.memory_profile now; changed under _lock


class _ThreadState(threading.local):
    """This thread's listeners. (Every attribute is set here, so that reading one never goes
    through a missing attribute's AttributeError: these are read for every op.)"""

    def __init__(self) -> None:
        self.tapes: list[Any] = []  # its active tapes, outermost first
        self.tracer: Any = None  # its tracer while eg.function traces
        self.paused: list[Any] = []  # tracers set aside by `paused_tracing` (a layer building weights)
        self.profiler: Any = None  # its memory profiler inside eg.memory_profile (engine/memory.py)
        self.reads: list[list[Any]] = []  # Variables read while tapes are paused (eg.recompute_grad)


_local = _ThreadState()
_op_ids = itertools.count(1)


def active_tapes() -> tuple[Any, ...]:
    """The tapes inside their ``with`` block in this thread, outermost first (also `eg.active_tapes`).

    >>> active_tapes()
    ()
    """
    return tuple(_local.tapes)


def next_op_id() -> int:
    """A new op id: one per executed op, shared by every tape that records that execution.

    >>> next_op_id() < next_op_id()
    True
    """
    return next(_op_ids)


def _count(change: int, tapes: bool, profiling: bool = False) -> None:
    global anywhere, listening, tracing_threads, profiling_threads
    with _lock:
        listening += change
        if tapes:
            anywhere += change
        elif profiling:
            profiling_threads += change
        else:
            tracing_threads += change


def push(tape: Any) -> list[Any]:
    """Make ``tape`` active in this thread; returns the stack it joined (give it back to `pop`)."""
    tapes = _local.tapes
    if tape in tapes:
        raise RuntimeError("This GradientTape is already active; tapes cannot be entered twice.")
    tapes.append(tape)
    _count(+1, tapes=True)
    return tapes


def pop(tape: Any, tapes: list[Any]) -> None:
    """Remove ``tape`` from the stack `push` returned (even when another thread exits it)."""
    if tape in tapes:
        tapes.remove(tape)
        _count(-1, tapes=True)


def is_recording() -> bool:
    """Whether any tape of this thread records right now (the backward walk's sums must then be ops)."""
    return any(t._recording for t in _local.tapes)


# ---- graph mode's tracer ---------------------------------------------------------------------------

def tracer() -> Any:
    """This thread's tracer while `eg.function` traces (an `engine.trace.Tracer`), else None.

    >>> tracer() is None
    True
    """
    return _local.tracer if tracing_threads else None


@contextlib.contextmanager
def tracing(new: Any) -> Iterator[Any]:
    """Make ``new`` this thread's tracer for the block (what `eg.function` does to trace)."""
    if _local.tracer is not None:
        raise RuntimeError("engine.recording.tracing: this thread already traces (nested traces inline).")
    _local.tracer = new
    _count(+1, tapes=False)
    try:
        yield new
    finally:
        _local.tracer = None
        _count(-1, tapes=False)


@contextlib.contextmanager
def paused_tracing() -> Iterator[None]:
    """Run the block outside the graph being traced (`engine.trace.init_scope`)."""
    current = tracer()
    if current is None:
        yield
        return
    paused = _local.paused
    paused.append(current)
    _local.tracer = None
    try:
        yield
    finally:
        _local.tracer = paused.pop()


@contextlib.contextmanager
def tapes_paused(tapes: list[Any]) -> Iterator[list[Any]]:
    """Run the block with ``tapes`` not recording; yields the Variables read meanwhile (in order)."""
    reads: list[Any] = []
    _local.reads.append(reads)
    for tape in tapes:
        tape._recording = False
    try:
        yield reads
    finally:
        for tape in tapes:
            tape._recording = True
        _local.reads.pop()  # (blocks nest: the last one in is the first out)


def walk_is_recorded() -> bool:
    """Whether the ops of a backward walk are recorded now (a tape of this thread records, or
    eg.function traces): then the walk's sums of gradients must be ops too."""
    return tracer() is not None or is_recording()


def backward_step_scope() -> Any:
    """Graph mode's name scope for one backward step (``gradients/<forward op>_grad``), a function of
    the step's forward output; None when this thread does not trace."""
    current = tracer()
    return None if current is None else current.grad_scope


@contextlib.contextmanager
def gradients_scope() -> Iterator[None]:
    """The ops of a ``tape.gradient`` call: named ``gradients/...`` and marked backward in a trace."""
    current = tracer()
    if current is None:
        yield
        return
    with current.scope("gradients", backward=True):
        yield


# ---- the memory profiler (engine/memory.py) --------------------------------------------------------

def profiler() -> Any:
    """This thread's memory profiler inside `eg.memory_profile`, else None.

    >>> profiler() is None
    True
    """
    return _local.profiler if profiling_threads else None


@contextlib.contextmanager
def profiling(new: Any) -> Iterator[Any]:
    """Make ``new`` this thread's memory profiler for the block (what `eg.memory_profile` does)."""
    if _local.profiler is not None:
        raise RuntimeError("eg.memory_profile: this thread is already being profiled (profiles do not nest).")
    _local.profiler = new
    _count(+1, tapes=False, profiling=True)
    try:
        yield new
    finally:
        _local.profiler = None
        _count(-1, tapes=False, profiling=True)


@contextlib.contextmanager
def eager_scope(name: str) -> Iterator[None]:
    """A name scope outside graph mode: the profiler (if any) files the ops of the block under it."""
    current = profiler()
    if current is None:
        yield
        return
    current.scopes.append(f"{current.scopes[-1]}/{name}" if current.scopes else name)
    try:
        yield
    finally:
        current.scopes.pop()


# ---- the events ---------------------------------------------------------------------------------------

def record(prim: Any, inputs: tuple[Any, ...], output: Any, params: dict) -> None:
    """An op ran: this thread's recording tapes record it if they watch one of its inputs (and it is
    differentiable, with a floating output); a tracer makes it a graph node."""
    if prim.vjps is not None and output._data.dtype.kind in "fc":
        rec = None
        for tape in _local.tapes:
            if tape._recording:
                watched = tape._watched
                for t in inputs:
                    if t._uid in watched:
                        watched.add(output._uid)
                        if rec is None:  # one Record, shared by every tape that saw the op
                            rec = Record(next(_op_ids), prim, inputs, output, params, tape._persistent)
                        elif tape._persistent:
                            rec.keep_all(inputs, output)
                        tape._records.append(rec)
                        break
    if tracing_threads and (current := _local.tracer) is not None:
        current.on_op(prim, inputs, output, params)
    if profiling_threads and (watcher := _local.profiler) is not None:
        watcher.on_op(prim.name, output)


def record_read(prim: Any, var: Any, snapshot: Any) -> None:
    """A Variable was read: tapes auto-watch it (when trainable) and record the read as an op; a
    tracer makes it a read node."""
    for reads in _local.reads:
        reads.append(var)
    rec = None
    for tape in _local.tapes:
        if not tape._recording:
            continue
        if var._trainable and tape._watch_accessed and var._uid not in tape._watched:
            tape._watch_one(var)
        if var._uid in tape._watched:
            if rec is None:
                rec = Record(next(_op_ids), prim, (var,), snapshot, {}, tape._persistent)
            tape._watched.add(snapshot._uid)
            tape._records.append(rec)
    if tracing_threads and (current := _local.tracer) is not None:
        current.on_read(var, snapshot)
    if profiling_threads and (watcher := _local.profiler) is not None:
        watcher.on_op(prim.name, snapshot)


def trace_read(var: Any) -> Any:
    """``var``'s value taken as a constant (``eg.constant(v)``): a tensor of it; a tracer makes it a
    read node, so that a replay reads the value then (tapes record nothing: it is a constant)."""
    snapshot = type(var).__mro__[1]._make(var._data, var._device)
    if tracing_threads and (current := _local.tracer) is not None:
        current.on_read(var, snapshot)
    return snapshot


def record_assign(var: Any, op: str, value: Any) -> None:
    """``var.assign(value)`` (or ``assign_add``, ``assign_sub``) is about to run: a tracer makes it a
    graph node (tapes do not record assignments)."""
    if tracing_threads and (current := _local.tracer) is not None:
        current.on_assign(var, op, value)


def note_new_variable(name: str | None) -> None:
    """A Variable is being made: a trace allows that on a function's first trace only."""
    current = tracer()
    if current is None:
        current = _local.paused[-1] if _local.paused else None
    if current is not None:
        current.on_new_variable(name)


def note_host_read(t: Any, how: str, tapes: bool = True) -> None:
    """``t``'s value leaves the engine (``how``: ".numpy()", "np.asarray()", ".item()", "bool()"): a
    tracer refuses (a traced tensor has no value yet, `TracingError`); each tape that watches ``t``
    keeps how, for `GradientTape.host_read` (why a gradient is None), unless ``tapes`` is False."""
    if tracing_threads and (current := _local.tracer) is not None:
        current.check_value(t, how)
    if tapes and anywhere:
        for tape in watchers(t):
            tape._host_reads.setdefault(t._uid, how)


def symbolic_repr(t: Any) -> str | None:
    """``repr(t)`` of a traced tensor while tracing (its graph name, no value), else None."""
    current = tracer()
    return None if current is None else current.symbolic_repr(t)


def watchers(t: Any) -> list[Any]:
    """This thread's recording tapes that watch ``t``, or would watch it when it is read (a trainable
    Variable under a tape that watches accessed variables)."""
    return [tape for tape in _local.tapes if tape._recording and (
        t._uid in tape._watched or (t._is_variable and t._trainable and tape._watch_accessed))]
