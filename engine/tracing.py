"""The one switch graph mode turns on: `current()` is None, except while `eg.function` traces.

The engine's entry points (`primitive.apply`, Variable reads and assigns, random draws, optimizer
steps, `tape.gradient`, layers) ask `current()` and, while this thread traces, tell the tracer what
they did; the tracer (`engine.trace`) turns that into graph nodes. Tracers are per thread, like tapes
(`engine.recording`): a thread that traces never sees another thread's ops, and two threads can trace
at once. When no thread traces, the check is one global read (``ACTIVE``, the number of threads
tracing now). This module imports nothing from the engine, so every module can import it.

`name_scope` prefixes the names of the graph nodes made inside it (TensorFlow's ``tf.name_scope``);
outside tracing it does nothing.

>>> import engine as eg
>>> @eg.function
... def f(x):
...     with eg.name_scope("layer"):
...         return x * 2
>>> [n.name for n in f.get_graph(eg.ones(2)).nodes]
['x', 'layer/Const', 'layer/Mul']
"""

from __future__ import annotations

import contextlib
import linecache
import os
import sys
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["ACTIVE", "current", "active", "name_scope", "gradients_scope", "init_scope", "creating_tracer",
           "refuse", "TracingError", "user_line"]

ACTIVE = 0  # how many threads trace right now (the hot paths read only this while it is 0)
_lock = threading.Lock()
_local = threading.local()  # _local.tracer: this thread's `engine.trace.Tracer`; _local.paused: a list


def current() -> Any:
    """This thread's active tracer (an `engine.trace.Tracer`), or None: the usual case.

    >>> import engine as eg
    >>> from engine import tracing
    >>> tracing.current() is None
    True
    """
    if not ACTIVE:
        return None
    return getattr(_local, "tracer", None)


@contextlib.contextmanager
def active(tracer: Any) -> Iterator[Any]:
    """Make ``tracer`` this thread's active tracer for the block (what `eg.function` does to trace)."""
    global ACTIVE
    if getattr(_local, "tracer", None) is not None:
        raise RuntimeError("engine.tracing.active: this thread already traces (nested traces inline).")
    with _lock:
        ACTIVE += 1
    _local.tracer = tracer
    try:
        yield tracer
    finally:
        _local.tracer = None
        with _lock:
            ACTIVE -= 1


class TracingError(RuntimeError):
    """A traced tensor was asked for a Python value (``bool(t)``, ``t.numpy()``, ``t.item()``).

    >>> import engine as eg
    >>> f = eg.function(lambda x: float(x) * 2)
    >>> try:
    ...     f(eg.constant(1.0))
    ... except eg.TracingError:
    ...     print("a traced tensor has no value yet")
    ...
    a traced tensor has no value yet
    """


@contextlib.contextmanager
def name_scope(name: str) -> Iterator[str | None]:
    """Name the graph nodes made inside ``<name>/...`` while tracing; a no-op otherwise.

    Yields the full scope name (made unique like TensorFlow's: ``dense_1``, then ``dense_1_1``), or
    None when nothing is being traced.

    >>> import engine as eg
    >>> with eg.name_scope("layer") as scope:
    ...     print(scope)
    ...
    None
    """
    tracer = current()
    if tracer is None:
        yield None
        return
    with tracer.scope(name) as full:
        yield full


@contextlib.contextmanager
def gradients_scope() -> Iterator[None]:
    """The ops of a ``tape.gradient`` call: named ``gradients/...`` and marked backward while tracing;
    a no-op otherwise."""
    tracer = current()
    if tracer is None:
        yield
        return
    with tracer.scope("gradients", backward=True):
        yield


@contextlib.contextmanager
def init_scope() -> Iterator[None]:
    """Run the block outside the graph being traced (TensorFlow's ``tf.init_scope``): a layer computes
    its initial weights here once, and they are not ops of the step's graph."""
    tracer = current()
    if tracer is None:
        yield
        return
    paused = _local.__dict__.setdefault("paused", [])
    paused.append(tracer)
    _local.tracer = None
    try:
        yield
    finally:
        _local.tracer = paused.pop()


def creating_tracer() -> Any:
    """The tracer a new Variable belongs to: this thread's active one, or one paused by `init_scope`."""
    tracer = current()
    if tracer is not None:
        return tracer
    paused = getattr(_local, "paused", None)
    return paused[-1] if paused else None


_ENGINE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def user_line() -> str:
    """Where the user's code is: `` At <file>:<line>: <source>`` for the innermost frame outside the
    engine (and the standard library's context managers), or '' when there is none.

    >>> user_line().startswith(" At ")
    True
    """
    frame = sys._getframe(1)
    while frame is not None:
        path = frame.f_code.co_filename
        if not (path.startswith((_ENGINE, "<engine")) or path.endswith(("contextlib.py", "functools.py"))):
            code = linecache.getline(path, frame.f_lineno).strip()
            return f" At {path}:{frame.f_lineno}" + (f": {code}" if code else "") + "."
        frame = frame.f_back
    return ""


def refuse(what: str, instead: str) -> None:
    """Raise `TracingError` while tracing: ``what`` keeps Python state a graph cannot replay."""
    if current() is not None:
        raise TracingError(
            f"{what} cannot run inside eg.function: it keeps its state in Python (counts, sums of "
            f"arrays), which a traced graph would freeze at the first call's values. {instead}"
            f"{user_line()}"
        )
