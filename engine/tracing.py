"""The one switch graph mode turns on: ``TRACER`` is None, except while `eg.function` traces.

The engine's entry points (`primitive.apply`, Variable reads and assigns, random draws, optimizer
steps, `tape.gradient`, layers) check ``TRACER`` and, while it is set, tell it what they did; the
tracer (`engine.trace`) turns that into graph nodes. When nothing is traced the check is one global
read. This module imports nothing from the engine, so every module can import it.

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
from collections.abc import Iterator
from typing import Any

__all__ = ["TRACER", "name_scope", "init_scope", "creating_tracer", "refuse", "TracingError"]

TRACER: Any = None  # the active `engine.trace.Tracer`, or None (the usual case)
_PAUSED: list[Any] = []  # tracers paused by `init_scope`, innermost last


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
    tracer = TRACER
    if tracer is None:
        yield None
        return
    with tracer.scope(name) as full:
        yield full


@contextlib.contextmanager
def init_scope() -> Iterator[None]:
    """Run the block outside the graph being traced (TensorFlow's ``tf.init_scope``): a layer computes
    its initial weights here once, and they are not ops of the step's graph."""
    global TRACER
    tracer = TRACER
    if tracer is None:
        yield
        return
    _PAUSED.append(tracer)
    TRACER = None
    try:
        yield
    finally:
        TRACER = _PAUSED.pop()


def creating_tracer() -> Any:
    """The tracer a new Variable belongs to: the active one, or one paused by `init_scope`."""
    return TRACER if TRACER is not None else (_PAUSED[-1] if _PAUSED else None)


def refuse(what: str, instead: str) -> None:
    """Raise `TracingError` while tracing: ``what`` keeps Python state a graph cannot replay."""
    if TRACER is not None:
        raise TracingError(
            f"{what} cannot run inside eg.function: it keeps its state in Python (counts, sums of "
            f"arrays), which a traced graph would freeze at the first call's values. {instead}"
        )
