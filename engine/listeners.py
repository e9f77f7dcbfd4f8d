"""Who listens to what the engine does, per thread: gradient tapes, and `Listener`s.

This is the one hook between the engine's core and whoever listens. `primitive.apply` tells `record`
about every op, `Variable` tells `record_read` and `record_assign` about reads and assignments, a
tensor tells `note_host_read` when its value leaves the engine (``.numpy()``, ``.item()``,
``np.asarray``). The tapes of this thread record what involves a tensor they watch. Each `Listener`
that `listen` subscribed in this thread hears every event through its ``on_*`` methods:
`eg.function`'s tracer (`engine.trace.Tracer`) turns them into graph nodes, `eg.memory_profile`
measures. The hot paths check one number first, `listening` (tapes active in any thread plus listeners
subscribed in any thread), so code that uses neither pays nothing more.

User code (layers, optimizers) speaks to listeners only through the public scopes, `name_scope` and
`init_scope`, and through the ops and assignments it makes; it never asks who listens.

A tape records only the ops of the thread that entered it, as in TensorFlow; a listener likewise.

>>> import engine as eg
>>> active_tapes()
()
>>> with eg.GradientTape() as tape:
...     active_tapes() == (tape,)
True
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from .record import Record, op_ids

__all__ = ["Listener", "TracingError", "active_tapes", "listen", "name_scope", "init_scope"]

anywhere = 0  # tapes active in any thread; changed under _lock
listening = 0  # tapes active in any thread + listeners subscribed in any thread: the hot paths' only check
subscribed = 0  # listeners subscribed in any thread (the switch for the listener loops); changed under _lock
_lock = threading.Lock()


class TracingError(RuntimeError):
    """A traced tensor was asked for a Python value (``bool(t)``, ``t.numpy()``, ``t.item()``), or
    ``eg.function`` was asked to trace code that keeps its state in Python.

    >>> import engine as eg
    >>> f = eg.function(lambda x: float(x) * 2)
    >>> try:
    ...     f(eg.constant(1.0))
    ... except eg.TracingError:
    ...     print("a traced tensor has no value yet")
    ...
    a traced tensor has no value yet
    """


class Listener:
    """What hears one thread's engine besides its tapes (`listen` subscribes one). Each method is an
    event and does nothing here; graph mode's `engine.trace.Tracer` and the memory profiler
    (`engine.memory`) say what they do with it.

    >>> class Counter(Listener):
    ...     ops = 0
    ...     def on_op(self, prim, inputs, output, params):
    ...         self.ops += 1
    >>> import engine as eg
    >>> with listen(Counter()) as counter:
    ...     _ = eg.exp(eg.ones(2)) + 1.0
    >>> counter.ops
    2
    """

    #: Whether `init_scope` sets this listener aside for its block (a graph being traced: a layer's
    #: initial weights are not ops of the graph); False: it hears the block too (a memory profile).
    paused_by_init_scope = False
    #: Whether this listener records the ops of a backward walk (then the walk's sums are ops too).
    records_walk = False

    def on_op(self, prim: Any, inputs: tuple[Any, ...], output: Any, params: dict) -> None:
        """An op ran (`primitive.apply`; a random draw and a device copy too)."""

    def on_kept_call(self, prim: Any, output: Any) -> None:
        """Tapes kept a record of a call that is not an op (``eg.recompute_grad``'s): no graph node."""

    def on_read(self, var: Any, snapshot: Any) -> None:
        """``var`` was read (also as a constant, ``eg.constant(v)``): ``snapshot`` holds the value read."""

    def on_assign(self, var: Any, op: str, value: Any) -> None:
        """``var.assign(value)`` (``op``: "assign", "assign_add", "assign_sub") is about to run."""

    def on_new_variable(self, name: str | None) -> None:
        """A Variable is being made (heard inside `init_scope` too)."""

    def on_host_read(self, t: Any, how: str) -> None:
        """``t``'s value leaves the engine (``how``: ".numpy()", "bool()", ...); raise to refuse."""

    def on_python_state(self, what: str, instead: str) -> None:
        """``what`` is about to keep state in Python (counts, sums of arrays) that no op or assignment
        records; raise to refuse (``instead`` says what to do)."""

    def on_draw(self, rng: Any) -> Any:
        """A random op is about to draw from the NumPy generator ``rng``: the generator it draws from."""
        return rng

    def scope(self, name: str, backward: bool = False) -> contextlib.AbstractContextManager[str | None]:
        """The block runs inside name scope ``name`` (``backward``: a ``tape.gradient`` call's)."""
        return contextlib.nullcontext()

    def step_begin(self, record: Record) -> None:
        """The backward walk is about to visit ``record``."""

    def step_end(self, op: str, op_id: int) -> None:
        """The backward walk has visited the record of op ``op_id`` (and let go of it)."""

    def symbolic_repr(self, t: Any) -> str | None:
        """``repr(t)``, when this listener knows better than the value (a traced tensor has none)."""
        return None


class _ThreadState(threading.local):
    """This thread's listeners. (Every attribute is set here, so that reading one never goes
    through a missing attribute's AttributeError: these are read for every op.)"""

    def __init__(self) -> None:
        self.tapes: list[Any] = []  # its active tapes, outermost first
        self.listeners: list[Listener] = []  # subscribed by `listen`, outermost first
        self.paused: list[list[Listener]] = []  # those set aside by each `init_scope` open now
        self.reads: list[list[Any]] = []  # Variables read while tapes are paused (eg.recompute_grad)


_local = _ThreadState()


def active_tapes() -> tuple[Any, ...]:
    """The tapes inside their ``with`` block in this thread, outermost first (also `eg.active_tapes`).

    >>> active_tapes()
    ()
    """
    return tuple(_local.tapes)


def active() -> tuple[Listener, ...]:
    """This thread's listeners now (not those an `init_scope` set aside), outermost first.

    >>> active()
    ()
    """
    return tuple(_local.listeners) if subscribed else ()


def _count(change: int, tapes: bool) -> None:
    global anywhere, listening, subscribed
    with _lock:
        listening += change
        if tapes:
            anywhere += change
        else:
            subscribed += change


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


@contextlib.contextmanager
def listen(listener: Listener) -> Iterator[Listener]:
    """Subscribe ``listener`` to this thread's events for the block (what `eg.function` does to trace,
    and `eg.memory_profile` to measure)."""
    _local.listeners.append(listener)
    _count(+1, tapes=False)
    try:
        yield listener
    finally:
        _local.listeners.remove(listener)
        _count(-1, tapes=False)


# ---- the public scopes: what user code says to the listeners -----------------------------------------

def name_scope(name: str) -> contextlib.AbstractContextManager[str | None]:
    """Name what the block does ``<name>/...``: graph nodes while `eg.function` traces, the scope of
    each op in `eg.memory_profile`; nothing otherwise.

    Yields the full scope name (made unique like TensorFlow's: ``dense_1``, then ``dense_1_1``) while
    a graph is traced, else None.

    >>> import engine as eg
    >>> with eg.name_scope("layer") as scope:
    ...     print(scope)
    ...
    None
    """
    if not subscribed or not _local.listeners:
        return _NOTHING  # (nobody listens: no generator to make, for every layer call)
    return _scoped(name, backward=False)


_NOTHING = contextlib.nullcontext()  # what a scope is while nobody listens (reusable)


@contextlib.contextmanager
def _scoped(name: str, backward: bool) -> Iterator[str | None]:
    with contextlib.ExitStack() as stack:
        names = [stack.enter_context(listener.scope(name, backward)) for listener in list(_local.listeners)]
        yield next((n for n in names if n is not None), None)


def gradients_scope() -> contextlib.AbstractContextManager[str | None]:
    """The ops of a ``tape.gradient`` call: in the scope ``gradients``, marked backward."""
    if not subscribed or not _local.listeners:
        return _NOTHING
    return _scoped("gradients", backward=True)


def init_scope() -> contextlib.AbstractContextManager[None]:
    """Run the block outside any graph being traced (TensorFlow's ``tf.init_scope``): a layer computes
    its initial weights here once, and an optimizer reads its learning rate; they are not ops of the
    step's graph.

    >>> with init_scope():
    ...     active()
    ()
    """
    here = _local.listeners if subscribed else None
    if not here or not any(listener.paused_by_init_scope for listener in here):
        return _NOTHING
    return _set_aside(here)


@contextlib.contextmanager
def _set_aside(here: list[Listener]) -> Iterator[None]:
    aside = [listener for listener in here if listener.paused_by_init_scope]
    _local.listeners = [listener for listener in here if not listener.paused_by_init_scope]
    _local.paused.append(aside)
    try:
        yield
    finally:
        _local.paused.pop()
        _local.listeners = here


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
    """Whether the ops of a backward walk are recorded now (a tape of this thread records, or a
    listener records the walk): then the walk's sums of gradients must be ops too."""
    return (subscribed and any(listener.records_walk for listener in _local.listeners)) or is_recording()


# ---- the events ---------------------------------------------------------------------------------------

def record(prim: Any, inputs: tuple[Any, ...], output: Any, params: dict) -> None:
    """An op ran: this thread's recording tapes record it if they watch one of its inputs (and it is
    differentiable, with a floating output); each listener hears it."""
    if prim.vjps is not None and output._data.dtype.kind in "fc":
        rec = None
        for tape in _local.tapes:
            if tape._recording:
                watched = tape._watched
                for t in inputs:
                    if t._uid in watched:
                        watched.add(output._uid)
                        if rec is None:  # one Record, shared by every tape that saw the op
                            rec = Record(next(op_ids), prim, inputs, output, params, tape._persistent)
                        elif tape._persistent:
                            rec.keep_all(inputs, output)
                        tape._records.append(rec)
                        break
    if subscribed:
        for listener in _local.listeners:
            listener.on_op(prim, inputs, output, params)


def record_read(prim: Any, var: Any, snapshot: Any) -> None:
    """A Variable was read: tapes auto-watch it (when trainable) and record the read as an op;
    each listener hears it."""
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
                rec = Record(next(op_ids), prim, (var,), snapshot, {}, tape._persistent)
            tape._watched.add(snapshot._uid)
            tape._records.append(rec)
    if subscribed:
        for listener in _local.listeners:
            listener.on_read(var, snapshot)


def read_constant(var: Any) -> Any:
    """``var``'s value taken as a constant (``eg.constant(v)``, an optimizer's update): a tensor of it;
    listeners hear a read (a traced graph reads the value when it runs); tapes record nothing."""
    snapshot = type(var).__mro__[1]._make(var._data, var._device)
    if subscribed:
        for listener in _local.listeners:
            listener.on_read(var, snapshot)
    return snapshot


def record_assign(var: Any, op: str, value: Any) -> None:
    """``var.assign(value)`` (or ``assign_add``, ``assign_sub``) is about to run: listeners hear it
    (tapes do not record assignments)."""
    if subscribed:
        for listener in _local.listeners:
            listener.on_assign(var, op, value)


def note_new_variable(name: str | None) -> None:
    """A Variable is being made: every listener of this thread hears it, those inside `init_scope` too."""
    if subscribed:
        for listener in [*_local.listeners, *(x for aside in _local.paused for x in aside)]:
            listener.on_new_variable(name)


def note_host_read(t: Any, how: str, tapes: bool = True) -> None:
    """``t``'s value leaves the engine (``how``: ".numpy()", "np.asarray()", ".item()", "bool()"): a
    listener may refuse (a traced tensor has no value yet: `TracingError`); each tape that watches ``t``
    keeps how, for `GradientTape.host_read` (why a gradient is None), unless ``tapes`` is False."""
    if subscribed:
        for listener in _local.listeners:
            listener.on_host_read(t, how)
    if tapes and anywhere:
        for tape in watchers(t):
            tape._host_reads.setdefault(t._uid, how)


def note_python_state(what: str, instead: str) -> None:
    """``what`` keeps state in Python that no op records (an accumulator's sums): a listener may refuse.

    >>> note_python_state("a counter", "Count outside.")      # nobody listens: nothing to refuse
    """
    if subscribed:
        for listener in _local.listeners:
            listener.on_python_state(what, instead)


def generator_for(rng: Any) -> Any:
    """The generator a random op draws from, given ``rng``: ``rng`` itself, unless a listener hands it
    another (a graph traced only to be looked at draws from copies).

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> generator_for(rng) is rng
    True
    """
    if subscribed:
        for listener in _local.listeners:
            rng = listener.on_draw(rng)
    return rng


def symbolic_repr(t: Any) -> str | None:
    """``repr(t)`` as a listener gives it (a traced tensor: its graph name, no value), else None."""
    for listener in _local.listeners if subscribed else ():
        if (text := listener.symbolic_repr(t)) is not None:
            return text
    return None


def watchers(t: Any) -> list[Any]:
    """This thread's recording tapes that watch ``t``, or would watch it when it is read (a trainable
    Variable under a tape that watches accessed variables)."""
    return [tape for tape in _local.tapes if tape._recording and (
        t._uid in tape._watched or (t._is_variable and t._trainable and tape._watch_accessed))]
