"""`eg.memory_profile`: what backprop keeps, measured at every op and every backward step.

Reverse mode's price is memory: each recorded op keeps what its VJP needs (``Primitive.needs``) until
the backward walk reaches it. `memory_profile(fn, *args)` runs ``fn`` once and reports, after every
op and every backward step, the bytes the tapes hold for their
backward passes (``saved_bytes``: distinct arrays their records keep, not counting Variables' own
values, which live anyway) and the bytes alive as the allocator counts them (``alive_bytes``:
tracemalloc on the CPU, where NumPy reports its arrays; CuPy's pool on a GPU). It listens at the
engine's one hook, as a `engine.listeners.Listener` (ops, reads, backward steps); nothing is patched.

>>> import engine as eg
>>> w = eg.Variable(eg.ones((64, 32)), name="w")
>>> x = eg.ones((16, 64))
>>> def step():
...     with eg.GradientTape() as tape:
...         with eg.name_scope("layer"):
...             h = eg.tanh(x @ w)
...         loss = eg.sum(h)
...     return tape.gradient(loss, w)
>>> p = eg.memory_profile(step)
>>> p.saved_peak_bytes == 16 * 64 * 4 + 16 * 32 * 4    # matmul keeps x; tanh keeps its output
True
>>> [e.op for e in p.timeline if e.kind == "step"], p.by_scope["layer"] == p.saved_peak_bytes
(['sum', 'tanh', 'matmul', 'read_variable'], True)
"""

from __future__ import annotations

import contextlib
import gc
import tracemalloc
import weakref
from collections.abc import Callable, Iterator
from typing import Any

from . import backend, nest
from . import listeners as _listeners
from .record import NotKept
from .tensor import Tensor

__all__ = ["MemoryEvent", "MemoryProfile", "memory_profile"]


class MemoryEvent:
    """One op or one backward step of a profile: ``kind`` ("op" or "step"), ``phase`` ("forward", or
    "backward" for a step and for the ops a step runs: its VJPs, a recomputation), ``op`` (the op's
    name; for a step, the op whose VJP ran), ``scope`` (its name scope or layer, "" outside any),
    ``alive_bytes`` (allocated during the call and alive now), ``saved_bytes`` (what tapes hold for
    backward now) and ``saved_by_scope`` (the same, split by the scope of the op that keeps each array).

    >>> import engine as eg
    >>> x = eg.constant([1.0, 2.0])
    >>> def f():
    ...     with eg.GradientTape() as tape:
    ...         tape.watch(x)
    ...         y = eg.exp(x)
    ...     return tape.gradient(y, x)
    >>> [(e.kind, e.phase, e.op, e.saved_bytes) for e in eg.memory_profile(f).timeline]
    [('op', 'forward', 'exp', 8), ('op', 'backward', 'multiply', 8), ('step', 'backward', 'exp', 0)]
    """

    __slots__ = ("kind", "phase", "op", "scope", "alive_bytes", "saved_bytes", "saved_by_scope")

    def __init__(self, kind: str, phase: str, op: str, scope: str, alive_bytes: int, saved_bytes: int,
                 saved_by_scope: dict[str, int]):
        self.kind, self.phase, self.op, self.scope = kind, phase, op, scope
        self.alive_bytes, self.saved_bytes, self.saved_by_scope = alive_bytes, saved_bytes, saved_by_scope

    def __repr__(self) -> str:
        where = f" in {self.scope}" if self.scope else ""
        return (f"<MemoryEvent {self.phase} {self.kind} {self.op}{where}: saved {self.saved_bytes} B, "
                f"alive {self.alive_bytes} B>")


class MemoryProfile:
    """What `memory_profile` measured: ``result`` (what ``fn`` returned), ``peak_bytes`` (the peak of
    array memory allocated during the call, from the allocator), ``saved_peak_bytes`` (the peak of what
    tapes held for backward), ``timeline`` (`MemoryEvent`s in order), ``by_scope`` (scope → bytes saved
    at that peak), ``device`` (where it was measured).

    >>> import engine as eg
    >>> p = eg.memory_profile(lambda: eg.ones(1000) * 2.0)
    >>> p.saved_peak_bytes, p.peak_bytes >= 4000, len(p.timeline)
    (0, True, 1)
    """

    def __init__(self, result: Any, peak_bytes: int, saved_peak_bytes: int, timeline: list[MemoryEvent],
                 by_scope: dict[str, int], device: str):
        self.result = result
        self.peak_bytes = peak_bytes
        self.saved_peak_bytes = saved_peak_bytes
        self.timeline = timeline
        self.by_scope = by_scope
        self.device = device

    def __repr__(self) -> str:
        steps = sum(e.kind == "step" for e in self.timeline)
        scopes = ", ".join(f"{k or '(no scope)'}: {_size(v)}" for k, v in self.by_scope.items())
        return (f"<MemoryProfile on {self.device}: peak {_size(self.peak_bytes)} alive, "
                f"{_size(self.saved_peak_bytes)} saved for backward at most "
                f"({len(self.timeline) - steps} ops, {steps} backward steps)"
                + (f"; at the peak: {scopes}" if scopes else "") + ">")


def _size(n: int) -> str:
    for unit, size in (("MB", 1e6), ("kB", 1e3)):
        if abs(n) >= size:
            return f"{n / size:.2f} {unit}"
    return f"{n} B"


class _Profiler(_listeners.Listener):
    """Listens to one thread's ops and backward steps (subscribed with `engine.listeners.listen`)."""

    def __init__(self, device: backend.Device, chosen: bool):
        self.chosen = chosen  # False: the device is that of the first op (fn took no tensor)
        self.measure(device)
        self.scopes: list[str] = []  # name scopes entered now (eg.name_scope: `scope`)
        self.scope_of: dict[int, str] = {}  # op id → the scope it ran in
        self.tapes: weakref.WeakSet = weakref.WeakSet(_listeners.active_tapes())
        self.events: list[MemoryEvent] = []
        self.steps: list[Any] = []  # the records of the backward steps open now (a recompute nests)
        self.saved_peak = 0
        self.by_scope: dict[str, int] = {}

    def measure(self, device: backend.Device) -> None:
        self.device = device
        self.pool = None
        if device.kind == "gpu":
            with device.activate():
                self.pool = device.xp.get_default_memory_pool()
            self.base = self.pool_used()
            self.gpu_peak = 0
        else:
            self.base = tracemalloc.get_traced_memory()[0]

    def pool_used(self) -> int:
        with self.device.activate():
            return int(self.pool.used_bytes())

    def alive(self) -> int:
        if self.pool is not None:
            used = self.pool_used() - self.base
            self.gpu_peak = max(self.gpu_peak, used)
            return used
        return tracemalloc.get_traced_memory()[0] - self.base

    def saved(self) -> tuple[int, dict[str, int]]:
        """Bytes the tapes' records keep now (each array once, a view counted as its base), by scope."""
        seen: set[int] = set()
        variables: set[int] = set()
        by_scope: dict[str, int] = {}
        records = [r for tape in list(self.tapes) for r in tape._records] + self.steps
        for r in records:
            for t in r.saved_inputs:
                if t._is_variable:
                    variables.add(id(t._data))
        total = 0
        for r in records:
            for t in (*r.saved_inputs, r.saved_output):
                data = t._data
                if t._is_variable or type(data) is NotKept:
                    continue
                while getattr(data, "base", None) is not None:
                    data = data.base
                key = id(data)
                if key in seen or key in variables:
                    continue
                seen.add(key)
                n = int(getattr(data, "nbytes", 0))
                total += n
                scope = self.scope_of.get(r.op_id, "")
                by_scope[scope] = by_scope.get(scope, 0) + n
        return total, by_scope

    def event(self, kind: str, op: str, scope: str) -> None:
        saved, by_scope = self.saved()
        if saved > self.saved_peak or not self.events:
            self.saved_peak, self.by_scope = saved, by_scope
        phase = "backward" if self.steps or kind == "step" else "forward"
        self.events.append(MemoryEvent(kind, phase, op, scope, self.alive(), saved, by_scope))

    # ---- the events (engine.listeners) ------------------------------------------------------------
    def on_op(self, prim: Any, inputs: Any, output: Tensor, params: dict) -> None:
        self.event_after(prim.name, output)

    def on_kept_call(self, prim: Any, output: Tensor) -> None:
        self.event_after(prim.name, output)

    def on_read(self, var: Any, snapshot: Tensor) -> None:
        self.event_after("read_variable", snapshot)

    @contextlib.contextmanager
    def scope(self, name: str, backward: bool = False) -> Iterator[None]:
        """A name scope: the ops of the block are filed under it (not the ``gradients`` scope of a
        tape.gradient call: a backward step keeps the scope of its forward op)."""
        if backward:
            yield
            return
        self.scopes.append(f"{self.scopes[-1]}/{name}" if self.scopes else name)
        try:
            yield
        finally:
            self.scopes.pop()

    def event_after(self, op: str, output: Tensor) -> None:
        """An op (or a read) made ``output``: one event, filed under the scope open now."""
        if not self.chosen:
            self.chosen = True
            if output._device is not self.device:
                self.measure(output._device)
        for tape in _listeners.active_tapes():
            self.tapes.add(tape)
        scope = self.scopes[-1] if self.scopes else ""
        for tape in _listeners.active_tapes():
            if tape._records and tape._records[-1].op_id not in self.scope_of:
                self.scope_of[tape._records[-1].op_id] = scope
        self.event("op", op, scope)

    def step_begin(self, record: Any) -> None:
        self.steps.append(record)  # (the walk has popped it off a non-persistent tape: still kept)

    def step_end(self, op: str, op_id: int) -> None:
        self.steps.pop()  # (its arrays go now, unless a tape holds it)
        self.event("step", op, self.scope_of.get(op_id, ""))


def _device_of(args: Any) -> backend.Device | None:
    for a in nest.flatten(args):
        if isinstance(a, Tensor):
            return a._device
    return None


def memory_profile(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> MemoryProfile:
    """Run ``fn(*args, **kwargs)`` once and measure what backprop keeps: see `MemoryProfile`.

    The device measured is that of the first tensor among the arguments (else of the first op). On
    the CPU ``peak_bytes`` and ``alive_bytes`` come from `tracemalloc` (NumPy reports its arrays to it;
    Python objects made during the call count too, small beside the arrays): bytes allocated during
    the call, above what was alive when it began. On a GPU they are CuPy's pool's used bytes, read at
    every event. If ``fn`` raises, profiling stops (tracemalloc is left as it was) and the error goes on.

    >>> import engine as eg
    >>> x = eg.ones((100, 100))
    >>> p = eg.memory_profile(eg.exp, x)
    >>> p.result.shape, p.timeline[0].op, p.peak_bytes >= 100 * 100 * 4
    ((100, 100), 'exp', True)
    """
    if not callable(fn):
        raise TypeError(f"memory_profile: fn must be callable (a function to run once), got "
                        f"{type(fn).__name__}. Pass the function itself: eg.memory_profile(step, x).")
    device = _device_of((args, kwargs))
    was_tracing = tracemalloc.is_tracing()
    gc.collect()
    if was_tracing:
        tracemalloc.reset_peak()
    else:
        tracemalloc.start()
    try:
        profiler = _Profiler(device or backend.current_device(), chosen=device is not None)
        if any(isinstance(listener, _Profiler) for listener in _listeners.active()):
            raise RuntimeError("eg.memory_profile: this thread is already being profiled (profiles do "
                               "not nest).")
        with _listeners.listen(profiler):
            result = fn(*args, **kwargs)
        if profiler.device.kind == "gpu":
            peak = max(profiler.gpu_peak, profiler.alive())
        else:
            peak = tracemalloc.get_traced_memory()[1] - profiler.base
    finally:
        if not was_tracing:
            tracemalloc.stop()
    return MemoryProfile(result, peak, profiler.saved_peak, profiler.events, dict(profiler.by_scope),
                         profiler.device.name)
