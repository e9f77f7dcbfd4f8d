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

__all__ = ["TRACER", "name_scope", "TracingError"]

TRACER: Any = None  # the active `engine.trace.Tracer`, or None (the usual case)


class TracingError(RuntimeError):
    """A traced tensor was asked for a Python value (``bool(t)``, ``t.numpy()``, ``t.item()``)."""


@contextlib.contextmanager
def name_scope(name: str) -> Iterator[str | None]:
    """Name the graph nodes made inside ``<name>/...`` while tracing; a no-op otherwise.

    Yields the full scope name (made unique like TensorFlow's: ``dense_1``, then ``dense_1_1``), or
    None when nothing is being traced.
    """
    tracer = TRACER
    if tracer is None:
        yield None
        return
    with tracer.scope(name) as full:
        yield full
