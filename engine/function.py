"""`eg.function`: trace a Python function once per signature into a `Graph`, then replay the graph.

The first call with a given signature (shapes, dtypes and devices of the tensor arguments; the values
of every other argument) runs ``f``'s Python code once while the engine records every op into a
graph: the forward ops, the backward ops that ``tape.gradient`` performs, optimizer updates, Variable
reads and assignments. Later calls with that signature replay the graph on raw arrays (`engine.replay`)
without running ``f``'s Python code.

So Python side effects (``print``, appending to a list, ``eg.random.set_seed``) happen only while
tracing. Variables are captured by reference: their current values are read, and assignments made
(an optimizer step) on every call. Random ops draw new values on every call. Inside ``f`` a tensor has
no fixed value: ``bool(t)``, ``t.numpy()`` and ``t.item()`` raise `eg.TracingError`; use
``eg.where`` for choices, or pass Python values as arguments (each new value traces again).
Arguments are bound to ``f``'s parameters first (defaults filled in), so ``f(a, b)`` and ``f(x=a, y=b)``
are one trace; NumPy arrays are copied on the way in, as eager ops copy them. Values ``f`` reads that are
not arguments are read live, fed as inputs or checked before each replay (see `function` and
`engine.captures`). Results may be any nest
(list, tuple, dict, namedtuple) of tensors, Variables (returned themselves, by reference), ``None`` and
Python values. Called while a `GradientTape` outside it records, the function runs eagerly so the tape
sees its ops.
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

import contextlib
import functools
import inspect
import warnings
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from . import backend, nest
from . import listeners as _listeners
from . import random as _random
from .captures import Captures, capture_captures, is_plain_object, number_key, object_leaves
from .dtypes import to_array
from .graph import Graph, Node
from .replay import Plan
from .tensor import Tensor
from .trace import ShapeChanged, Tracer, TracingError, current_tracer, user_line

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

    What ``f`` reads that is not an argument is never frozen (`engine.captures`):

    - a Variable (also through ``eg.constant(v)``) is read when the graph runs;
    - a tensor held by an argument object (``b.x``, or ``self.w`` in a traced method) is an input of
      the call, like a tensor argument (its shape, dtype and device are part of the signature);
    - a closure variable or a global that ``f``'s code (or a plain function it calls) reads and that
      holds data (a tensor, a Variable, a NumPy array, a number, a list/tuple/dict of tensors) is
      compared before each replay: rebound or changed in place, ``f`` traces again (``trace_count``
      counts it; a function that keeps tracing warns); so is a tensor the trace took from an attribute
      of an object held there (``cfg.k``). To change a value on every call without
      tracing again, pass it as an argument (a tensor) or keep it in a Variable.

    Variables ``f`` creates are created once, on the first run of its code, whether that run is a
    call or is inlined into another traced function; creating more on a later run is a
    ``ValueError``. An op whose result shape depends on values (``x[x > 0]``) traces again when a
    call gives another shape; ``f(x, 0.0)`` and ``f(x, -0.0)`` are two traces.

    >>> import engine as eg
    >>> f = eg.function(lambda x: eg.exp(x))
    >>> [float(f(eg.constant(v))) for v in (0.0, 1.0)], f.trace_count
    ([1.0, 2.7182819843292236], 1)
    >>> k = eg.constant(2.0)
    >>> g = eg.function(lambda x: x * k)
    >>> float(g(eg.constant(1.0)))
    2.0
    >>> k = eg.constant(10.0)        # the captured name is rebound: g traces again
    >>> float(g(eg.constant(1.0))), g.trace_count
    (10.0, 2)
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
        self._instances: dict[int, tuple[Any, Function]] = {}  # id(obj) → (weakref, bound Function)
        self._python_runs = 0  # runs of the Python code: traces, and runs inlined into an outer trace
        # a traced method: its instance's tensor attributes are inputs of every call, like arguments
        self._owner: Callable[[], Any] | None = None
        if isinstance(python_function, _WeakMethod):
            self._owner = python_function.ref
        elif inspect.ismethod(python_function):  # eg.function(obj.method): the bound method holds obj
            self._owner = functools.partial(getattr, python_function, "__self__")
        try:
            self._sig: inspect.Signature | None = inspect.signature(python_function)
        except (TypeError, ValueError):
            self._sig = None
        self._var_keyword = next((p.name for p in self._sig.parameters.values() if p.kind == p.VAR_KEYWORD),
                                 None) if self._sig is not None else "**kwargs"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if (outer := current_tracer()) is not None:  # inlined into an outer trace
            return self._run_inlined(outer, args, kwargs)
        if _outer_tape_records():
            return self.python_function(*args, **kwargs)  # run eagerly, so that the tape sees the ops
        arguments = self._bind(args, kwargs)
        key, leaves, names, held = _signature(arguments, self._var_keyword, self._owner)
        concrete = self._traces.get(key)
        if concrete is None:
            if self.trace_count == RETRACE_WARNING:
                warnings.warn(self._retracing_message(key), RetracingWarning, stacklevel=2)
        else:
            changed = concrete.captures.changed() if concrete.captures.guards else None
            if changed is None:
                try:
                    return concrete.call(leaves)
                except ShapeChanged as exc:  # nothing was changed by the call: trace it instead
                    changed = exc.what
            else:
                changed = f"{changed} (a value the code reads by name, not an argument)"
            if self.trace_count == RETRACE_WARNING:
                warnings.warn(self._retracing_message(key, changed), RetracingWarning, stacklevel=2)
        return self._trace(key, arguments, leaves, names, held, keep_effects=True)[1]

    def _run_inlined(self, outer: Tracer, args: tuple, kwargs: dict) -> Any:
        """Run the Python code inside an outer function's trace: its ops become the outer graph's.
        A Variable it creates is allowed on the first run of this function's code only (whatever
        calls it), so that a traced function object has one set of Variables."""
        outer.callers.append((self.name, self._python_runs == 0))
        self._python_runs += 1
        try:
            return self.python_function(*args, **kwargs)
        finally:
            outer.callers.pop()

    def _bind(self, args: tuple, kwargs: dict) -> dict[str, Any]:
        """The arguments by parameter name, defaults filled in: ``f(a, y=b)`` is ``{"x": a, "y": b}``."""
        if self._sig is None:  # a callable without a signature: its arguments as given
            return {"*args": args, "**kwargs": kwargs}
        try:
            bound = self._sig.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"eg.function {self.name!r}: {exc}") from None
        bound.apply_defaults()
        return dict(bound.arguments)

    def _run_python(self, arguments: dict[str, Any]) -> Any:
        """Call ``f`` with the (bound) ``arguments``."""
        if self._sig is None:
            return self.python_function(*arguments["*args"], **arguments["**kwargs"])
        bound = inspect.BoundArguments(self._sig, arguments)  # type: ignore[arg-type]
        return self.python_function(*bound.args, **bound.kwargs)

    def _retracing_message(self, key: Any, changed_capture: str | None = None) -> str:
        """Which argument's part of the signature (or which captured value, or which data-dependent
        shape) differs from the last trace's, and what to do."""
        (old_args, old_device), (new_args, new_device) = next(reversed(self._traces)), key
        old, new = dict(old_args), dict(new_args)
        changed = [_describe_change(name, old.get(name), new.get(name))
                   for name in list(dict.fromkeys([*old, *new])) if old.get(name) != new.get(name)]
        if old_device != new_device:
            changed.append(f"the current device ({old_device} → {new_device})")
        if changed_capture is not None:
            changed.append(changed_capture)
        what = "; ".join(changed) or "the signature"
        return (
            f"eg.function {self.name!r} is tracing for the {RETRACE_WARNING + 1}th time: each new "
            f"signature runs the Python code again and builds a new graph, which is slow. What changed "
            f"since the last trace: {what}. Pass values that change from call to call as tensors "
            "(eg.constant(x)) rather than Python numbers, keep shapes fixed (pad batches), and create the "
            "function once, outside loops."
        )

    def get_graph(self, *args: Any, **kwargs: Any) -> Graph:
        """The graph for this signature, tracing it if needed. Asking has no effect on the program:
        the trace's Variable updates are undone and its random ops draw from copies of their
        generators (initial weights of layers built by the trace are drawn as on a real call)."""
        arguments = self._bind(args, kwargs)
        key, leaves, names, held = _signature(arguments, self._var_keyword, self._owner)
        concrete = self._traces.get(key)
        if concrete is None or (concrete.captures.guards and concrete.captures.changed() is not None):
            concrete = self._trace(key, arguments, leaves, names, held, keep_effects=False)[0]
        return concrete.graph

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        """As a method (``@eg.function`` in a class body): one traced function per instance, which
        holds the instance weakly (the method does not keep it alive)."""
        if obj is None:
            return self
        entry = self._instances.get(id(obj))
        if entry is not None and entry[0]() is obj:
            return entry[1]
        try:
            ref = weakref.ref(obj, functools.partial(_forget, self._instances, id(obj)))
        except TypeError:  # no weak references (__slots__ without __weakref__): kept, and so kept alive
            method = Function(self.python_function.__get__(obj, objtype), name=self.name)
            self._instances[id(obj)] = ((lambda: obj), method)
            return method
        method = Function(_WeakMethod(self.python_function, ref, objtype), name=self.name)
        self._instances[id(obj)] = (ref, method)
        return method

    @property
    def graphs(self) -> list[Graph]:
        """Every graph traced so far, oldest first."""
        return [c.graph for c in self._traces.values()]

    def _trace(self, key: Any, arguments: dict[str, Any], leaves: list[Any], names: list[str],
               held: set[int], keep_effects: bool):
        if current_tracer() is not None:
            raise RuntimeError(f"eg.function {self.name!r}: this thread already traces (an eg.function "
                               "called while another traces runs inlined into that trace).")
        tracer = Tracer(allow_new_variables=self._python_runs == 0, function_name=self.name,
                        dry=not keep_effects)
        self._python_runs += 1
        made = [_placeholder(tracer, n, leaf, self.name, k in held)
                for k, (n, leaf) in enumerate(zip(names, leaves))]
        placeholders = iter([p for k, p in enumerate(made) if k not in held])  # held ones stay in place
        arguments2 = {k: _replace_leaves(v, placeholders) for k, v in arguments.items()}
        inputs = list(tracer.nodes)
        try:
            kept = contextlib.nullcontext() if keep_effects else _random._seed_kept()
            with _listeners.listen(tracer), kept:
                result = self._run_python(arguments2)
                flat = nest.flatten(result)
                out_nodes = [_output_node(tracer, leaf, self.name) for leaf in flat]
        finally:
            if not keep_effects:  # get_graph: undo the trace's assignments and optimizer steps
                for obj, attr, value in reversed(tracer.saved):
                    setattr(obj, attr, value)
        template = nest.pack_like(result, [n.output if n is not None else leaf
                                           for n, leaf in zip(out_nodes, flat)])
        graph = Graph(f"{self.name}_{self.trace_count}" if self.trace_count else self.name,
                      tracer.nodes, inputs, template, tracer.variables)
        concrete = _Concrete(graph, inputs, result, flat, out_nodes,
                             capture_captures(self.python_function, tracer.outside))  # as the trace left them
        self._traces[key] = concrete
        self.trace_count += 1
        return concrete, result

    def __repr__(self) -> str:
        return f"<eg.function {self.name!r} traces={self.trace_count}>"


class _WeakMethod:
    """``f`` bound to an instance held by a weak reference: a method traced per instance."""

    def __init__(self, f: Callable, ref: weakref.ref, objtype: Any):
        self.f, self.ref = f, ref
        self.__name__ = getattr(f, "__name__", "method")
        self.__signature__ = inspect.signature(f.__get__(ref(), objtype))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        obj = self.ref()
        if obj is None:
            raise ReferenceError(f"eg.function {self.__name__!r}: its instance no longer exists.")
        return self.f(obj, *args, **kwargs)


def _forget(instances: dict, key: int, ref: weakref.ref) -> None:
    """An instance died: drop its traced method (unless the id already belongs to a newer one)."""
    entry = instances.get(key)
    if entry is not None and entry[0] is ref:
        del instances[key]


class _Concrete:
    """One signature's graph and the plan a call runs: every output, every assignment."""

    def __init__(self, graph: Graph, inputs: list[Node], result: Any, flat: list[Any],
                 out_nodes: list[Node | None], captures: Captures):
        self.graph = graph
        self.captures = captures
        fetch = [n for n in out_nodes if n is not None]
        effects = [n for n in graph.nodes if n.stateful]
        self.plan = Plan(graph.nodes, fetch, inputs, effects)
        self.devices = [backend.get_device(n.device) for n in fetch]
        self.fetched = [n is not None for n in out_nodes]
        self.kept = [None if n is not None else _fresh(leaf) for n, leaf in zip(out_nodes, flat)]
        self.structure = nest.pack_like(result, [None] * len(flat))
        devs = {n.device for n in inputs} or {n.device for n in fetch}
        dev = backend.get_device(devs.pop()) if len(devs) == 1 else backend.CPU
        self.activate = dev.activate if dev.kind == "gpu" else None  # CuPy runs on its current device
        # A graph with shape checks (x[mask]) can stop part-way: what its writes change is put back then.
        guarded = any(n.kind == "op" and n.primitive.shape_depends_on_values(n.params) for n in self.plan.ops)
        self.state = _written_state(effects) if guarded else None

    def call(self, leaves: list[Any]) -> Any:
        arrays = [t._data if isinstance(t, Tensor) else to_array(t, "eg.function") for t in leaves]
        before = [(obj, attr, getattr(obj, attr)) for obj, attr in self.state] if self.state else None
        randomness = _random._get_state() if self.state is not None else None
        try:
            if self.activate is None:
                values = self.plan.run(arrays)
            else:
                with self.activate():
                    values = self.plan.run(arrays)
        except TracingError:
            for obj, attr, value in before or ():
                setattr(obj, attr, value)
            if randomness is not None:
                _random._set_state(randomness)
            raise
        it, devs = iter(values), iter(self.devices)
        flat = [Tensor._make(next(it), next(devs)) if fetched else _fresh(kept)
                for fetched, kept in zip(self.fetched, self.kept)]
        return nest.pack_like(self.structure, flat)


def _written_state(effects: list[Node]) -> list[tuple[Any, str]]:
    """The (object, attribute) pairs a run's writes change: the Variables it assigns (an optimizer's
    step count and slots among them)."""
    return [(n.variable, "_data") for n in effects if n.variable is not None]


def _fresh(value: Any) -> Any:
    """A kept result for this call: a NumPy array copied (the caller may change it), anything else as is."""
    return value.copy() if isinstance(value, np.ndarray) else value


def _output_node(tracer: Tracer, leaf: Any, function_name: str) -> Node | None:
    """The node a returned leaf is fetched from; None for a leaf returned as it is on every call
    (a Variable, by reference; None; a Python value)."""
    if isinstance(leaf, Tensor) and not leaf._is_variable:
        return tracer.node_for(leaf)
    where = _hidden_tensor(tracer, leaf)
    if where is not None:
        raise TracingError(
            f"eg.function {function_name!r} returned a {type(leaf).__name__} object that holds a tensor of "
            f"the graph ({where}), where the trace cannot see it: later calls would return the first "
            "call's value. Return tensors directly, or in a tuple, list, dict or namedtuple."
            f"{user_line()}"
        )
    return None


def _hidden_tensor(tracer: Tracer, value: Any, path: str = "", depth: int = 0) -> str | None:
    """Where inside ``value`` (an object nest.flatten does not open) a traced tensor hides, or None."""
    if isinstance(value, Tensor):
        if value._is_variable:
            return None
        node = tracer.node_of.get(value._uid) or tracer.traced_node_of_array(value._data)
        return (path or "the object") if node is not None and node.kind != "const" else None
    if depth > 3 or isinstance(value, str | bytes | int | float | complex | np.ndarray | np.generic | type):
        return None
    if isinstance(value, dict):
        items: Any = value.items()
    elif isinstance(value, list | tuple | set | frozenset):
        items = enumerate(value)
    elif hasattr(value, "__dict__") and not callable(value):
        items = vars(value).items()
    else:
        return None
    for k, v in items:
        where = _hidden_tensor(tracer, v, f"{path}.{k}" if isinstance(k, str) else f"{path}[{k!r}]",
                               depth + 1)
        if where is not None:
            return where
    return None


def _outer_tape_records() -> bool:
    return _listeners.is_recording()  # a tape of this thread records: run eagerly so that it sees the ops


def _signature(arguments: dict[str, Any], var_keyword: str | None,
               owner: Callable[[], Any] | None = None) -> tuple[Any, list[Any], list[str], set[int]]:
    """One walk over the bound arguments: a hashable key for them, their tensor (and array) leaves,
    each leaf's parameter name (a ``**kwargs`` leaf: its keyword), and which leaves stay where they are
    (``held``: a tensor attribute of an argument object, ``b.x``, or of a traced method's instance)."""
    leaves: list[Any] = []
    names: list[str] = []
    held: dict[int, int] = {}  # id(tensor) → its leaf index, for the tensors held by objects
    key = tuple((name, _key(value, leaves, names, name, name == var_keyword, held))
                for name, value in arguments.items())
    if owner is not None and (obj := owner()) is not None:
        key += (("self", _held_key(obj, leaves, names, "self", held)),)
    return (key, backend.current_device().name), leaves, names, set(held.values())


def _held_key(obj: Any, leaves: list[Any], names: list[str], name: str, held: dict[int, int]) -> Any:
    """The key of an object's tensor attributes (shapes, dtypes, devices; which are one tensor), each
    appended to the leaves: a replay reads ``b.x`` on every call, as eager code does."""
    parts = []
    for path, t in object_leaves(obj, name):
        if id(t) in held:  # the same tensor at two places: one input (the key says so)
            parts.append((path, "same as", names[held[id(t)]]))
            continue
        held[id(t)] = len(leaves)
        leaves.append(t)
        names.append(path)
        parts.append((path, t._data.shape, t._data.dtype.str, t._device.name))
    return tuple(parts)


def _key(v: Any, leaves: list[Any], names: list[str], name: str, by_key: bool = False,
         held: dict[int, int] | None = None) -> Any:
    if isinstance(v, Tensor):
        if v._is_variable:
            return ("Variable", v._uid)  # captured by reference, like a Variable used from outside
        leaves.append(v)
        names.append(name)
        return ("Tensor", v._data.shape, v._data.dtype.str, v._device.name)
    if isinstance(v, np.ndarray) or type(v).__module__.startswith("cupy"):
        leaves.append(v)  # an array is a tensor argument: the same trace as a tensor like it
        names.append(name)
        return ("Tensor", v.shape, v.dtype.str, backend.device_of_array(v).name)
    if isinstance(v, dict):
        return ("dict", tuple((k, _key(x, leaves, names, str(k) if by_key else name, False, held))
                              for k, x in v.items()))
    if isinstance(v, list | tuple):
        return (type(v).__name__, tuple(_key(x, leaves, names, name, False, held) for x in v))
    if isinstance(v, float | complex | np.floating | np.complexfloating):
        return number_key(v)  # -0.0 is not 0.0 (1 / -0.0 is -inf), NaN is NaN
    try:
        hash(v)
    except TypeError:
        if held is not None and is_plain_object(v):  # (a dataclass, a SimpleNamespace): by identity
            return (type(v).__name__, _ById(v), _held_key(v, leaves, names, name, held))
        raise TypeError(
            f"eg.function: the argument {name!r} of type {type(v).__name__} is neither a tensor nor "
            "hashable, so it cannot be part of a trace's signature. Pass tensors, arrays, or hashable "
            "Python values."
        ) from None
    if held is not None and is_plain_object(v):
        return (type(v).__name__, v, _held_key(v, leaves, names, name, held))
    return (type(v).__name__, v)


class _ById:
    """An unhashable argument object in a signature key: equal only to itself (kept alive by the key,
    as a hashable argument is)."""

    __slots__ = ("obj",)

    def __init__(self, obj: Any):
        self.obj = obj

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _ById) and other.obj is self.obj

    def __hash__(self) -> int:
        return id(self.obj)

    def __repr__(self) -> str:
        return f"<{type(self.obj).__name__} object at {id(self.obj):#x}>"


def _describe_change(name: str, old: Any, new: Any) -> str:
    """One argument's signature change, in words: ``'lr' (a Python float: 0.1 → 0.2)``."""
    if old is None or new is None:
        return f"{name!r} ({'added' if old is None else 'left out'})"
    if old[0] == new[0] == "Tensor":
        parts = [f"{w} {a} → {b}" for w, a, b in zip(("shape", "dtype", "device"), old[1:], new[1:])
                 if a != b]
        return f"{name!r} (a tensor: {', '.join(parts)})"
    if name == "self" or (len(old) == len(new) == 3 and old[1] == new[1] and isinstance(old[2], tuple)
                          and "complex" not in old[0]):  # an object argument: the tensors it holds
        pair = (old, new) if name == "self" else (old[2], new[2])
        was, now = (dict((p[0], p[1:]) for p in k) for k in pair)
        changed = [f"{path} {was.get(path)} → {now.get(path)}"
                   for path in dict.fromkeys([*was, *now]) if was.get(path) != now.get(path)]
        return f"{name!r} (the tensors it holds: {'; '.join(changed)})"
    if old[0] == new[0] and old[0] not in ("tuple", "list", "dict", "Variable"):
        shown = [float.fromhex(k[1]) if isinstance(k[1], str) and k[0] in ("float", "float64", "float32")
                 else k[1] for k in (old, new)]
        return f"{name!r} (a Python {old[0]}: {shown[0]!r} → {shown[1]!r})"
    return f"{name!r} ({old[0]} → {new[0]})" if old[0] != new[0] else f"{name!r} (its contents)"


def _placeholder(tracer: Tracer, name: str, leaf: Any, function_name: str, held: bool = False) -> Tensor:
    if held:  # a tensor an argument object holds (b.x): the code reaches it there, so it is the input
        tracer.add_input(name, leaf)
        return leaf
    if isinstance(leaf, Tensor):
        t = Tensor._make(leaf._data, leaf._device)
    else:  # an array argument: copied, as an eager op copies it
        t = Tensor._make(to_array(leaf, f"eg.function {function_name!r}"), backend.device_of_array(leaf))
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
