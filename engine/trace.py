"""`Tracer`: turns what the engine does while `eg.function` runs ``f`` once into graph nodes.

Tracing runs ``f`` for real (so the first call's values and side effects are the real ones) while the
tracer is this thread's listener (`engine.recording.tracer()`: the engine's one hook, `engine.recording`,
passes it every op, read, assignment and host read). Every primitive call becomes a node holding the
primitive's array function and parameters; Variable reads and assignments, random draws and optimizer
updates become nodes that do the same thing to the live objects when the graph is replayed. A tensor
the tracer has not seen (a Python number, a tensor made outside ``f``, ``ones_like``) becomes a
``Const`` node.

Names: the op's TensorFlow name (the primitive's ``op_type``: ``MatMul``) under the open
`name_scope`s, made unique with ``_1``, ``_2``; a Variable's first read is named after the Variable.
While a ``tape.gradient`` call walks backwards, the ops each step performs are named under
``gradients/<forward op>_grad/``.

Also here: what user code says to graph mode, `name_scope` and `init_scope`, and what graph mode says
back, `TracingError`.

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
import functools
import linecache
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from . import recording as _rec
from .graph import Node
from .tensor import Tensor

__all__ = ["Tracer", "TracingError", "name_scope", "init_scope", "refuse", "user_line"]


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
    """Name the graph nodes made inside ``<name>/...`` while tracing; outside graph mode, only
    `eg.memory_profile` reads it (the scope of each op it reports).

    Yields the full scope name (made unique like TensorFlow's: ``dense_1``, then ``dense_1_1``), or
    None when nothing is being traced.

    >>> import engine as eg
    >>> with eg.name_scope("layer") as scope:
    ...     print(scope)
    ...
    None
    """
    tracer = _rec.tracer()
    if tracer is None:
        with _rec.eager_scope(name):
            yield None
        return
    with tracer.scope(name) as full:
        yield full


def init_scope() -> contextlib.AbstractContextManager[None]:
    """Run the block outside the graph being traced (TensorFlow's ``tf.init_scope``): a layer computes
    its initial weights here once, and they are not ops of the step's graph.

    >>> with init_scope():
    ...     pass
    """
    return _rec.paused_tracing()


def refuse(what: str, instead: str) -> None:
    """Raise `TracingError` while tracing: ``what`` keeps Python state a graph cannot replay.

    >>> refuse("a counter", "Count outside.")      # not tracing: nothing to refuse
    """
    if _rec.tracer() is not None:
        raise TracingError(
            f"{what} cannot run inside eg.function: it keeps its state in Python (counts, sums of "
            f"arrays), which a traced graph would freeze at the first call's values. {instead}"
            f"{user_line()}"
        )


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

class Tracer:
    """Records one trace. Used by `engine.function`; the engine's hooks call its ``on_*`` methods."""

    def __init__(self, allow_new_variables: bool = True, function_name: str = "f", dry: bool = False):
        self.nodes: list[Node] = []
        self.node_of: dict[int, Node] = {}  # tensor id (never reused) → the node computing it
        self.names: set[str] = set()
        self.next_suffix: dict[str, int] = {}  # base name → the next ``_k`` to try (keeps naming linear)
        self.array_node: dict[int, tuple[Any, Node]] = {}  # id(array) → (array, the node computing it)
        self.scopes: list[str] = []  # full names of the open scopes, innermost last
        self.backward_depth = 0  # > 0 inside tape.gradient
        self.variables: dict[int, Node] = {}  # Variable id → its node (the first read)
        self.last_write: dict[int, Node] = {}  # Variable (or optimizer) id → its last assignment
        self.reads_since: dict[int, list[Node]] = {}  # Variable id → reads since that assignment
        self.allow_new_variables = allow_new_variables
        self.function_name = function_name
        self.dry = dry  # `Function.get_graph`: random ops draw from copies of their generators
        self.optimizers: list[Any] = []  # the optimizers whose steps the graph takes
        self.saved: list[tuple[Any, str, Any]] = []  # (object, attribute, value before the trace changed it)
        self._saved_keys: set[tuple[int, str]] = set()

    def save(self, obj: Any, attr: str) -> None:
        """Remember ``obj.attr`` before its first change, so `Function.get_graph` can undo the trace's
        updates."""
        key = (id(obj), attr)
        if key not in self._saved_keys:
            self._saved_keys.add(key)
            self.saved.append((obj, attr, getattr(obj, attr)))

    # ---- names ------------------------------------------------------------------------------------
    def unique(self, base: str, absolute: bool = False) -> str:
        full = f"{self.scopes[-1]}/{base}" if self.scopes and not absolute else base
        name, i = full, self.next_suffix.get(full, 0)
        if i:
            name = f"{full}_{i}"
        while name in self.names:  # rare: a name like ``Mul_1`` was also given as a base
            i += 1
            name = f"{full}_{i}"
        self.next_suffix[full] = i + 1
        self.names.add(name)
        return name

    @contextlib.contextmanager
    def scope(self, name: str, backward: bool = False) -> Iterator[str]:
        full = self.unique(name)
        self.scopes.append(full)
        self.backward_depth += backward
        try:
            yield full
        finally:
            self.scopes.pop()
            self.backward_depth -= backward

    def grad_scope(self, output: Any) -> Any:
        """The scope for one backward step: ``<forward op name>_grad`` (a null context for a step
        whose forward op is not in the graph, e.g. a Variable read)."""
        node = self.node_of.get(output._uid)
        if node is None or node.kind != "op":
            return contextlib.nullcontext()
        return self.scope(node.name + "_grad")

    # ---- nodes ------------------------------------------------------------------------------------
    def _add(self, base: str, op: str, kind: str, tensor: Any = None, absolute: bool = False,
             **fields: Any) -> Node:
        if tensor is not None:
            fields.update(shape=tuple(tensor._data.shape), dtype=tensor._data.dtype, device=tensor.device)
        node = Node(self.unique(base, absolute), op, kind, backward=self.backward_depth > 0, **fields)
        self.nodes.append(node)
        if tensor is not None:
            self.node_of[tensor._uid] = node
            if kind != "const":  # (the array is kept, so that its id is not reused during the trace)
                self.array_node[id(tensor._data)] = (tensor._data, node)
        return node

    def traced_node_of_array(self, array: Any) -> Node | None:
        """The node whose value is ``array`` (the same object), if a traced op computed it."""
        hit = self.array_node.get(id(array))
        return hit[1] if hit is not None and hit[0] is array else None

    def node_for(self, t: Any) -> Node:
        """The node computing tensor ``t``; a new ``Const`` for a tensor made outside the graph."""
        node = self.node_of.get(t._uid)
        if node is None:
            if t._is_variable:
                return self.node_of[t._read()._uid]  # the read records itself (Variable._read's hook)
            # A new Tensor around a traced op's array (e.g. eg.constant(t) of a traced t) is that
            # op's value: freezing it into a Const would replay the first call's value.
            node = self.traced_node_of_array(t._data)
            if node is None:
                node = self.const(t._data, t.device)
            self.node_of[t._uid] = node
        return node

    def const(self, array: Any, device: str) -> Node:
        """A ``Const`` node: a value the trace captured (a Python number, a tensor made outside)."""
        return self._add("Const", "Const", "const", value=array, shape=tuple(array.shape), dtype=array.dtype,
                         device=device)

    def add_input(self, name: str, t: Any) -> Node:
        return self._add(name, "Placeholder", "input", t)

    # ---- hooks the engine calls -------------------------------------------------------------------
    def on_op(self, prim: Any, inputs: Any, y: Any, params: dict) -> None:
        """A primitive ran (`primitive.apply`).

        A parameter that holds a traced value (``x[i]`` with a tensor ``i`` passes ``i``'s array in its
        ``key``) becomes an input of the node, so that a replay uses this call's value, not the trace's.
        """
        ins = [self.node_for(t) for t in inputs]
        xp = y._device.xp
        lifted: list[Node] = []
        params_fn = _lift(params, self, lifted)
        if lifted:
            ins += lifted
            fn: Callable = _with_lifted(prim.forward, xp, len(inputs), params_fn)
        else:
            fn = functools.partial(prim.forward, xp, **params)
        node = self._add(prim.op_type, prim.op_type, "op", y, inputs=ins, fn=fn, primitive=prim,
                         params=params)
        if lifted and prim.shape_depends_on_values(params):
            node.fn = _shape_guard(node.fn, node, self.function_name)

    def on_read(self, var: Any, snapshot: Any) -> Node:
        """A Variable was read: the node named after it (later reads: ``<name>/read``)."""
        key = var._uid
        first = key not in self.variables
        base = (var.name or "Variable") if first else f"{var.name or 'Variable'}/read"
        after = [self.last_write[key]] if key in self.last_write else []
        node = self._add(base, "ReadVariable", "read", snapshot, absolute=True, fn=_reader(var),
                         variable=var, control_inputs=after)
        if first:
            self.variables[key] = node
        self.reads_since.setdefault(key, []).append(node)
        return node

    def on_assign(self, var: Any, op: str, value: Any) -> None:
        """``var.assign(value)`` (or ``assign_add``, ``assign_sub``) is about to run: ``value`` is a
        Tensor or an array."""
        self.save(var, "_data")
        src = self.node_for(value) if isinstance(value, Tensor) else self.const(value, var.device)
        name = {"assign": "Assign", "assign_add": "AssignAdd", "assign_sub": "AssignSub"}[op]
        self._write(var._uid, name, name, var, inputs=[src], fn=_assigner(var, op, src.dtype))

    def on_random(self, op: str, draw: Callable[[], Any], t: Any) -> None:
        """A random tensor was drawn: the node draws again on every run."""
        self._add(op, op, "random", t, fn=draw)

    def on_optimizer_step(self, opt: Any, pairs: list[tuple[Any, Any]]) -> None:
        """``opt.apply_gradients(pairs)`` is about to update: one node counting the step, one update
        per variable (its slots are part of the update)."""
        self.save(opt, "_iterations")
        if opt not in self.optimizers:
            self.optimizers.append(opt)
        for _, var in pairs:
            self.save(var, "_data")
            for slot in opt._slots_of(var).values():
                self.save(slot, "_data")
        with self.scope(opt.name):
            step = self._write(id(opt), "iterations", "AssignAdd", None, fn=_counter(opt), shape=(2,),
                               dtype=np.dtype(np.float64))
            for g, var in pairs:
                src = self.node_for(g) if isinstance(g, Tensor) else self.const(g, var.device)
                op = f"Apply{type(opt).__name__}"
                node = self._write(var._uid, f"update_{var.name or 'variable'}", op, var,
                                   inputs=[src, step], fn=_updater(opt, var))
                for slot in opt.slots(var).values():
                    self.last_write[slot._uid] = node

    def on_new_variable(self, var_name: str | None) -> None:
        if not self.allow_new_variables:
            raise ValueError(
                f"eg.function {self.function_name!r} created a Variable ({var_name or 'unnamed'}) on a "
                "later trace. Variables may be created only on the first call of a traced function "
                "(a layer builds its weights there, an optimizer its slots): create them outside the "
                f"function, or make sure the first call creates all of them.{user_line()}"
            )

    def _write(self, key: int, base: str, op: str, var: Any, **fields: Any) -> Node:
        deps = list(self.reads_since.pop(key, []))
        if key in self.last_write:
            deps.append(self.last_write[key])
        if var is not None:
            fields.update(shape=var.shape, dtype=var.dtype, device=var.device, variable=var)
        node = self._add(base, op, "write", control_inputs=deps, **fields)
        self.last_write[key] = node
        return node

    def check_value(self, t: Any, what: str) -> None:
        """Raise the clear error for ``bool(t)``, ``t.numpy()``... on a tensor that is part of the graph."""
        if not (t._is_variable or t._uid in self.node_of):
            return
        node = self.node_of.get(t._uid)
        if node is not None and node.kind == "const":
            return
        label = f"the Variable {t.name!r}" if t._is_variable else f"the tensor {node.name + ':0'!r}"
        if what == "bool()":
            todo = ("A Python if/while on a tensor would freeze one branch into the graph: choose "
                    "values inside the graph with eg.where(condition, a, b), or pass the condition as a "
                    "Python value argument (each new value traces again).")
        else:
            todo = ("Return the tensor from the function and call .numpy() on the result, pass Python "
                    "values as arguments, or compute it outside the function.")
        raise TracingError(
            f"{what} on {label} while eg.function traces {self.function_name!r}: inside a traced function "
            "tensors have no fixed value; the Python code runs once to record the graph, and later calls "
            f"replay the graph without running it. {todo}{user_line()}"
        )

    def symbolic_repr(self, t: Any) -> str | None:
        """``print(t)`` inside a traced function: the graph tensor's name, no value."""
        node = self.node_of.get(t._uid)
        if node is None or node.kind == "const":
            return None
        return (f"<Tensor {node.name + ':0'!r} shape={node.shape} dtype={node.dtype} device={node.device} "
                "(traced: it has a value only when the graph runs)>")


def _reader(var: Any) -> Callable[[], Any]:
    return lambda: var._data


def _assigner(var: Any, op: str, src_dtype: Any) -> Callable[[Any], Any]:
    """A replayed assignment: the value cast to the Variable's dtype (as `Variable._checked` does
    eagerly), then `Variable._write`."""
    dtype = var.dtype if src_dtype != var.dtype else None

    def assign(value: Any) -> Any:
        return var._write(op, value if dtype is None else value.astype(dtype))._data

    return assign


def _counter(opt: Any) -> Callable[[], Any]:
    """The optimizer's step count, advanced: its output is ``[learning rate, step number]``."""
    def count() -> Any:
        lr, step = opt._next_step()
        return np.array([lr, step], dtype=np.float64)

    return count


def _updater(opt: Any, var: Any) -> Callable[[Any, Any], Any]:
    def update(g: Any, step: Any) -> Any:
        opt._apply_one(var, g, float(step[0]), int(step[1]))
        return var._data

    return update


class _Slot:
    """Where a lifted parameter's array goes: the ``index``-th extra input of the node."""

    __slots__ = ("index",)

    def __init__(self, index: int):
        self.index = index


def _lift(value: Any, tracer: Tracer, lifted: list[Node]) -> Any:
    """``value`` (a parameter, or a tuple/list/dict of them) with each traced array replaced by a
    `_Slot`, its node appended to ``lifted``; ``value`` itself when it holds none."""
    if isinstance(value, dict):
        new = {k: _lift(v, tracer, lifted) for k, v in value.items()}
        return new if any(new[k] is not value[k] for k in value) else value
    if isinstance(value, tuple | list):
        new_items = [_lift(v, tracer, lifted) for v in value]
        if all(a is b for a, b in zip(new_items, value)):
            return value
        return type(value)(new_items)
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        node = tracer.traced_node_of_array(value)
        if node is not None:
            lifted.append(node)
            return _Slot(len(lifted) - 1)
    return value


def _fill(value: Any, arrays: tuple) -> Any:
    """The inverse of `_lift`: each `_Slot` replaced by this run's array."""
    if isinstance(value, _Slot):
        return arrays[value.index]
    if isinstance(value, dict):
        return {k: _fill(v, arrays) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return type(value)(_fill(v, arrays) for v in value)
    return value


def _with_lifted(forward: Callable, xp: Any, n_inputs: int, params: dict) -> Callable:
    """The node's function: the primitive's forward with the lifted parameters filled in per run."""
    def run(*arrays: Any) -> Any:
        return forward(xp, *arrays[:n_inputs], **_fill(params, arrays[n_inputs:]))

    return run


def _shape_guard(fn: Callable, node: Node, function_name: str) -> Callable:
    """``fn``, checking that its output has the traced shape: a boolean mask selects as many elements
    as it has True values, and the graph's later ops were traced for the first call's count."""
    def guarded(*arrays: Any) -> Any:
        out = fn(*arrays)
        if tuple(out.shape) != node.shape:
            raise TracingError(
                f"eg.function {function_name!r}: the boolean mask of {node.name!r} selected shape "
                f"{tuple(out.shape)} on this call but {node.shape} when the function was traced; the "
                "graph's later ops (their gradients too) were built for the traced shape. Nothing was "
                "changed by this call. Keep shapes fixed inside eg.function: eg.where(mask, x, 0.0) keeps "
                "x's shape (sum it, or divide by eg.sum(eg.cast(mask, x.dtype)) for a mean)."
                f"{user_line()}"
            )
        return out

    return guarded
