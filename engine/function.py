"""`eg.function`: trace a Python function once per signature into a `Graph`, then replay the graph.

The first call with a given signature (shapes, dtypes and devices of the tensor arguments; the values
of every other argument) runs ``f``'s Python code once while the engine records every op into a
graph: the forward ops, the backward ops that ``tape.gradient`` performs, optimizer updates, Variable
reads and assignments. Later calls with that signature replay the graph on raw arrays (`engine.replay`)
without running ``f``'s Python code.

So Python side effects (``print``, appending to a list, ``eg.random.set_seed``) happen only while
tracing. Variables are captured by reference: their current values are read, and assignments made
(an optimizer step) on every call. Random ops draw new values on every call. Inside ``f`` a tensor has
no fixed value: ``bool(t)``, ``t.numpy()`` and ``t.item()`` raise `engine.tracing.TracingError`; use
``eg.where`` for choices, or pass Python values as arguments (each new value traces again).
Called while a `GradientTape` outside it records, the function runs eagerly so the tape sees its ops.
A function that keeps tracing (its 6th trace, `RETRACE_WARNING`) warns with a `RetracingWarning` that
names the argument whose signature changed, because replaying is the point and each trace is slow.

>>> import engine as eg
>>> @eg.function
... def f(x):
...     print("tracing")
...     return x * x + 1
>>> f(eg.constant([1.0, 2.0])).numpy()
tracing
array([2., 5.], dtype=float32)
>>> f(eg.constant([3.0, 4.0])).numpy()          # same signature: replayed, nothing printed
array([10., 17.], dtype=float32)
>>> f(eg.constant([1.0, 2.0, 3.0])).shape, f.trace_count   # a new shape traces again
tracing
((3,), 2)
"""

from __future__ import annotations

import functools
import inspect
import warnings
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from . import backend, nest, tracing
from . import random as _random
from . import recording as _rec
from .graph import Graph, Node
from .replay import Plan
from .tensor import Tensor
from .trace import Tracer

__all__ = ["function", "Function", "RetracingWarning", "RETRACE_WARNING"]

RETRACE_WARNING = 5  # a function's trace after this many warns: it probably retraces on every call


class RetracingWarning(UserWarning):
    """An `eg.function` traced again and again: a Python value or a shape changes on every call.

    >>> import warnings
    >>> import engine as eg
    >>> f = eg.function(lambda x, scale: x * scale)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     for k in range(eg.RETRACE_WARNING + 1):
    ...         _ = f(eg.constant(1.0), float(k))
    >>> "'scale'" in str(caught[0].message), f.trace_count
    (True, 6)
    """


def function(f: Callable | None = None, *, name: str | None = None) -> Any:
    """Trace ``f`` into a graph on its first call per signature and replay it afterwards (also a
    decorator: ``@eg.function`` or ``@eg.function(name="train_step")``).

    >>> import engine as eg
    >>> f = eg.function(lambda x: eg.exp(x))
    >>> [float(f(eg.constant(v))) for v in (0.0, 1.0)], f.trace_count
    ([1.0, 2.7182819843292236], 1)
    """
    if f is None:
        return lambda g: Function(g, name=name)
    return Function(f, name=name)


class Function:
    """A traced function: call it like ``f``; ``get_graph(*args)`` and ``trace_count`` show the traces.

    >>> import engine as eg
    >>> f = eg.function(lambda x: x * 2.0)
    >>> (float(f(eg.constant(3.0))), f.trace_count)
    (6.0, 1)
    """

    def __init__(self, python_function: Callable, name: str | None = None):
        if not callable(python_function):
            raise TypeError(f"eg.function: expected a function, got {type(python_function).__name__}.")
        functools.update_wrapper(self, python_function)
        self.python_function = python_function
        self.name = name or getattr(python_function, "__name__", "function")
        self._traces: dict[Any, _Concrete] = {}
        self.trace_count = 0
        try:
            params = list(inspect.signature(python_function).parameters.values())
        except (TypeError, ValueError):
            params = []
        self._positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        self._varargs = next((p.name for p in params if p.kind == p.VAR_POSITIONAL), "arg")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if tracing.current() is not None or _outer_tape_records():
            return self.python_function(*args, **kwargs)  # inlined into an outer trace / seen by the tape
        leaves: list[Any] = []
        key = _signature(args, kwargs, leaves)
        concrete = self._traces.get(key)
        if concrete is None:
            if self.trace_count == RETRACE_WARNING:
                warnings.warn(self._retracing_message(key), RetracingWarning, stacklevel=2)
            return self._trace(key, args, kwargs, leaves, keep_effects=True)[1]
        return concrete.call(leaves)

    def _retracing_message(self, key: Any) -> str:
        """Which argument's part of the signature differs from the last trace's, and what to do."""
        last = next(reversed(self._traces))
        (_, old_args), (_, old_kwargs), old_device = last
        (_, new_args), (_, new_kwargs), new_device = key
        changed = []
        for i, (old, new) in enumerate(zip(old_args, new_args)):
            if old != new:
                name = self._positional[i] if i < len(self._positional) else self._varargs
                changed.append(_describe_change(name, old, new))
        old_kw, new_kw = dict(old_kwargs), dict(new_kwargs)
        for name in sorted(set(old_kw) | set(new_kw)):
            if old_kw.get(name) != new_kw.get(name):
                changed.append(_describe_change(name, old_kw.get(name), new_kw.get(name)))
        if len(old_args) != len(new_args):
            changed.append(f"the number of positional arguments ({len(old_args)} → {len(new_args)})")
        if old_device != new_device:
            changed.append(f"the current device ({old_device} → {new_device})")
        what = "; ".join(changed) or "the signature"
        return (
            f"eg.function {self.name!r} is tracing for the {RETRACE_WARNING + 1}th time: each new "
            f"signature runs the Python code again and builds a new graph, which is slow. What changed "
            f"since the last trace: {what}. Pass values that change from call to call as tensors "
            "(eg.constant(x)) rather than Python numbers, keep shapes fixed (pad batches), and create the "
            "function once, outside loops."
        )

    def get_graph(self, *args: Any, **kwargs: Any) -> Graph:
        """The graph for this signature, tracing it if needed (undoing the trace's Variable updates and
        random draws, so that asking for the graph neither takes a training step nor changes the numbers
        later random ops draw)."""
        leaves: list[Any] = []
        key = _signature(args, kwargs, leaves)
        concrete = self._traces.get(key)
        if concrete is None:
            concrete = self._trace(key, args, kwargs, leaves, keep_effects=False)[0]
        return concrete.graph

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        """As a method (``@eg.function`` in a class body): one traced function per instance."""
        if obj is None:
            return self
        cache = self.__dict__.setdefault("_bound", {})
        bound = cache.get(id(obj))
        if bound is None or bound[0]() is not obj:
            method = Function(self.python_function.__get__(obj, objtype), name=self.name)
            cache[id(obj)] = bound = (weakref.ref(obj), method)
        return bound[1]

    @property
    def graphs(self) -> list[Graph]:
        """Every graph traced so far, oldest first."""
        return [c.graph for c in self._traces.values()]

    def _trace(self, key: Any, args: Any, kwargs: Any, leaves: list[Any], keep_effects: bool):
        tracer = Tracer(allow_new_variables=self.trace_count == 0, function_name=self.name)
        names = self._leaf_names(args, kwargs)
        placeholders = iter([_placeholder(tracer, n, leaf) for n, leaf in zip(names, leaves)])
        args2, kwargs2 = _replace_leaves((args, kwargs), placeholders)
        inputs = list(tracer.nodes)
        saved = tracer.saved
        random_state = _random._get_state()
        try:
            with tracing.active(tracer):
                result = self.python_function(*args2, **kwargs2)
                flat = nest.flatten(result)
                out_nodes = [tracer.node_for(t) if isinstance(t, Tensor) else None for t in flat]
        finally:
            if not keep_effects:  # get_graph: undo the trace's assignments and random draws
                for obj, attr, value in reversed(saved):
                    setattr(obj, attr, value)
                _random._set_state(random_state)
        template = nest.pack_like(result, [n.output if n is not None else leaf
                                           for n, leaf in zip(out_nodes, flat)])
        graph = Graph(f"{self.name}_{self.trace_count}" if self.trace_count else self.name,
                      tracer.nodes, inputs, template, tracer.variables)
        concrete = _Concrete(graph, inputs, result, flat, out_nodes)
        self._traces[key] = concrete
        self.trace_count += 1
        return concrete, result

    def _leaf_names(self, args: Any, kwargs: Any) -> list[str]:
        names = []
        for i, a in enumerate(args):
            base = self._positional[i] if i < len(self._positional) else self._varargs
            names += [base] * _count_leaves(a)
        for k, v in kwargs.items():
            names += [k] * _count_leaves(v)
        return names

    def __repr__(self) -> str:
        return f"<eg.function {self.name!r} traces={self.trace_count}>"


class _Concrete:
    """One signature's graph and the plan a call runs: every output, every assignment."""

    def __init__(self, graph: Graph, inputs: list[Node], result: Any, flat: list[Any],
                 out_nodes: list[Node | None]):
        self.graph = graph
        fetch = [n for n in out_nodes if n is not None]
        effects = [n for n in graph.nodes if n.stateful]
        self.plan = Plan(graph.nodes, fetch, inputs, effects)
        self.devices = [backend.get_device(n.device) for n in fetch]
        self.constants = [None if n is not None else leaf for n, leaf in zip(out_nodes, flat)]
        self.structure = nest.pack_like(result, [None] * len(flat))
        devs = {n.device for n in inputs} or {n.device for n in fetch}
        dev = backend.get_device(devs.pop()) if len(devs) == 1 else backend.CPU
        self.activate = dev.activate if dev.kind == "gpu" else None  # CuPy runs on its current device

    def call(self, leaves: list[Any]) -> Any:
        arrays = [t._data if isinstance(t, Tensor) else t for t in leaves]
        if self.activate is None:
            values = self.plan.run(arrays)
        else:
            with self.activate():
                values = self.plan.run(arrays)
        it = iter(values)
        devs = iter(self.devices)
        flat = [Tensor._make(next(it), next(devs)) if c is None else c for c in self.constants]
        return nest.pack_like(self.structure, flat)


def _outer_tape_records() -> bool:
    return _rec.is_recording()  # a tape of this thread records: run eagerly so that it sees the ops


def _signature(value: Any, kwargs: Any, leaves: list[Any]) -> Any:
    """A hashable key for (args, kwargs); tensor (and array) leaves are appended to ``leaves``."""
    return (_key(value, leaves), _key(kwargs, leaves), backend.current_device().name)


def _key(v: Any, leaves: list[Any]) -> Any:
    if isinstance(v, Tensor):
        if v._is_variable:
            return ("Variable", v._uid)  # captured by reference, like a Variable used from outside
        leaves.append(v)
        return ("Tensor", v._data.shape, v._data.dtype.str, v._device.name)
    if isinstance(v, np.ndarray) or type(v).__module__.startswith("cupy"):
        leaves.append(v)  # an array is a tensor argument: the same trace as a tensor like it
        return ("Tensor", v.shape, v.dtype.str, backend.device_of_array(v).name)
    if isinstance(v, dict):
        return ("dict", tuple((k, _key(x, leaves)) for k, x in v.items()))
    if isinstance(v, list | tuple):
        return (type(v).__name__, tuple(_key(x, leaves) for x in v))
    try:
        hash(v)
    except TypeError:
        raise TypeError(
            f"eg.function: an argument of type {type(v).__name__} is neither a tensor nor hashable, so "
            "it cannot be part of a trace's signature. Pass tensors, arrays, or hashable Python values."
        ) from None
    return (type(v).__name__, v)


def _describe_change(name: str, old: Any, new: Any) -> str:
    """One argument's signature change, in words: ``'lr' (a Python float: 0.1 → 0.2)``."""
    if old is None or new is None:
        return f"{name!r} ({'added' if old is None else 'left out'})"
    if old[0] == new[0] == "Tensor":
        parts = [f"{w} {a} → {b}" for w, a, b in zip(("shape", "dtype", "device"), old[1:], new[1:])
                 if a != b]
        return f"{name!r} (a tensor: {', '.join(parts)})"
    if old[0] == new[0] and old[0] not in ("tuple", "list", "dict", "Variable"):
        return f"{name!r} (a Python {old[0]}: {old[1]!r} → {new[1]!r})"
    return f"{name!r} ({old[0]} → {new[0]})" if old[0] != new[0] else f"{name!r} (its contents)"


def _count_leaves(v: Any) -> int:
    return len(_signature_leaves(v))


def _signature_leaves(v: Any) -> list[Any]:
    leaves: list[Any] = []
    _key(v, leaves)
    return leaves


def _placeholder(tracer: Tracer, name: str, leaf: Any) -> Tensor:
    if isinstance(leaf, Tensor):
        t = Tensor._make(leaf._data, leaf._device)
    else:
        t = Tensor._make(leaf, backend.device_of_array(leaf))
    tracer.add_input(name, t)
    return t


def _replace_leaves(v: Any, new: Any) -> Any:
    """``v`` with each signature leaf (non-Variable tensor, array) replaced by the next of ``new``."""
    if isinstance(v, Tensor):
        return v if v._is_variable else next(new)
    if isinstance(v, np.ndarray) or type(v).__module__.startswith("cupy"):
        return next(new)
    if isinstance(v, dict):
        return {k: _replace_leaves(x, new) for k, x in v.items()}
    if isinstance(v, tuple) and hasattr(v, "_fields"):
        return type(v)(*(_replace_leaves(x, new) for x in v))
    if isinstance(v, list | tuple):
        return type(v)(_replace_leaves(x, new) for x in v)
    return v

