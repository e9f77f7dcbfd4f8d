"""`Tracer`: turns what the engine does while `eg.function` runs ``f`` once into graph nodes.

Tracing runs ``f`` for real (so the first call's values and side effects are the real ones) while the
tracer listens to this thread (a `engine.listeners.Listener`: the engine's one hook passes it every op,
read, assignment and host read). Every primitive call becomes a node holding the primitive's array
function and parameters (a random draw is one: its node draws again on every run); Variable reads and
assignments (an optimizer's updates are assignments) become nodes that do the same thing to the live
Variables when the graph is replayed. A tensor the tracer has not seen (a Python number, a tensor made
outside ``f``, ``ones_like``) becomes a ``Const`` node.

Names: the op's TensorFlow name (the primitive's ``op_type``: ``MatMul``) under the open
`name_scope`s, made unique with ``_1``, ``_2``; a Variable's first read is named after the Variable.
While a ``tape.gradient`` call walks backwards, the ops each step performs are named under
``gradients/<forward op>_grad/``.

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
import copy
import functools
import linecache
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any

from . import listeners as _listeners
from .graph import Node
from .listeners import Listener, TracingError
from .tensor import Tensor

__all__ = ["Tracer", "TracingError", "ShapeChanged", "current_tracer", "user_line"]


class ShapeChanged(TracingError):
    """A replay stopped: an op whose output shape depends on values (``x[x > 0]``) made a shape other
    than the traced one. `eg.function` catches it and traces the call again (``what`` says which op).
    """

    def __init__(self, message: str, what: str):
        super().__init__(message)
        self.what = what


def current_tracer() -> Tracer | None:
    """This thread's tracer while `eg.function` traces (not inside `init_scope`), else None.

    >>> current_tracer() is None
    True
    """
    for listener in _listeners.active():
        if isinstance(listener, Tracer):
            return listener
    return None


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

class Tracer(Listener):
    """Records one trace. Used by `engine.function`, which subscribes it (`engine.listeners.listen`);
    the engine's events call its ``on_*`` methods."""

    paused_by_init_scope = True  # a layer's initial weights, an optimizer's learning rate: not graph ops
    records_walk = True  # the ops of tape.gradient are graph nodes

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
        # eg.functions whose Python code runs inlined in this trace, innermost last: (name, first run?)
        self.callers: list[tuple[str, bool]] = []
        self.function_name = function_name
        self.dry = dry  # `Function.get_graph`: random ops draw from copies of their generators
        self.steps: list[bool] = []  # per backward step being visited: whether it opened a scope
        self.saved: list[tuple[Any, str, Any]] = []  # (object, attribute, value before the trace changed it)
        self._saved_keys: set[tuple[int, str]] = set()
        # id(array) → array, for the tensors made outside the function that became constants: where
        # they came from (an attribute of an object in a closure) is checked before each replay
        self.outside: dict[int, Any] = {}

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
        depth, backward_depth = len(self.scopes), self.backward_depth
        self.scopes.append(full)
        self.backward_depth += backward
        try:
            yield full
        finally:  # (also closes a backward step's scope that an error left open)
            del self.scopes[depth:]
            self.backward_depth = backward_depth

    def step_begin(self, record: Any) -> None:
        """A backward step: its ops go in the scope ``<forward op name>_grad`` (no scope for a step
        whose forward op is not in the graph, e.g. a Variable read)."""
        node = self.node_of.get(record.saved_output._uid)
        opens = node is not None and node.kind == "op"
        if opens:
            self.scopes.append(self.unique(node.name + "_grad"))
        self.steps.append(opens)

    def step_end(self, op: str, op_id: int) -> None:
        if self.steps.pop():
            self.scopes.pop()

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
                self.outside[id(t._data)] = t._data
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
        if prim.shape_depends_on_values(params):
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

    def on_new_variable(self, var_name: str | None) -> None:
        later = [name for name, first in self.callers if not first]
        if later:
            raise ValueError(
                f"eg.function {later[-1]!r} created a Variable ({var_name or 'unnamed'}) on a later run "
                f"of its Python code (here inlined into the trace of eg.function {self.function_name!r}). "
                "A traced function's Variables are made once, on the first run of its code, whatever "
                "calls it (TensorFlow's rule), so that every caller uses the same ones: create them "
                "outside the function, or only when missing (if self.v is None: self.v = "
                f"eg.Variable(...)).{user_line()}"
            )
        if not self.allow_new_variables:
            raise ValueError(
                f"eg.function {self.function_name!r} created a Variable ({var_name or 'unnamed'}) on a "
                "later trace. Variables may be created only on the first call of a traced function "
                "(a layer builds its weights there, an optimizer its slots), whatever calls it: create "
                "them outside the function, or only when missing (if self.v is None: self.v = "
                f"eg.Variable(...)), so that the first run creates all of them.{user_line()}"
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

    def on_draw(self, rng: Any) -> Any:
        """A random op draws from ``rng``: from a copy while `Function.get_graph` traces (asking for a
        graph draws nothing from any generator)."""
        return copy.deepcopy(rng) if self.dry else rng

    def on_python_state(self, what: str, instead: str) -> None:
        raise TracingError(
            f"{what} cannot run inside eg.function: it keeps its state in Python (counts, sums of "
            f"arrays), which a traced graph would freeze at the first call's values. {instead}"
            f"{user_line()}"
        )

    def on_host_read(self, t: Any, what: str) -> None:
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
    as it has True values, and the graph's later ops were traced for the first call's count. Another
    shape stops the replay (`ShapeChanged`; the call's writes are undone) and `eg.function` traces the
    call again, counted in ``trace_count`` like any retrace."""
    def guarded(*arrays: Any) -> Any:
        out = fn(*arrays)
        if tuple(out.shape) != node.shape:
            what = (f"the shape that the boolean mask of {node.name!r} selects ({node.shape} → "
                    f"{tuple(out.shape)}): a data-dependent shape; eg.where(mask, x, 0.0) keeps x's shape "
                    "(sum it, or divide by eg.sum(eg.cast(mask, x.dtype)) for a mean)")
            raise ShapeChanged(f"eg.function {function_name!r}: {what}.", what)
        return out

    return guarded
