"""`Graph`: what `eg.function` traced. Nodes in run order, each with a unique TensorFlow-style name.

Forward ops are named by scope and op (``dense_1/MatMul``), the ops a ``tape.gradient`` call performed
under ``gradients/...``, a Variable's read after the Variable (``dense_1/kernel``). ``graph.run``
computes any nodes by object, by name or in nested structures, each needed node once per run; this is
TensorFlow 1.x's ``sess.run``, pitfalls included: a Variable's name fetches its value, not its gradient.

>>> import engine as eg
>>> w = eg.Variable(3.0, name="w")
>>> @eg.function
... def f(x):
...     with eg.GradientTape() as tape:
...         y = w * x
...     return y, tape.gradient(y, w)
>>> g = f.get_graph(eg.constant(2.0))
>>> y, dw = g.outputs
>>> dw.name, [float(t) for t in g.run([y, dw], feeds={"x": 5.0})]
('gradients/Mul_grad/Mul:0', [15.0, 5.0])
>>> float(g.run("w"))       # the Variable's name: its value (TF 1.x's pitfall), not its gradient
3.0
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import backend, nest
from .dtypes import to_array
from .replay import Plan
from .tensor import Tensor

__all__ = ["Graph", "Node", "GraphTensor"]

# Node kinds: "input" (a function argument), "const" (a value captured while tracing), "op" (a
# primitive), "read" / "write" (a Variable read, an assignment or optimizer update), "random" (a draw).
STATEFUL = ("write",)


class Node:
    """One operation of a graph: ``name``, ``op`` (its type, e.g. ``MatMul``), ``inputs`` (nodes),
    and its one output, `output` (a `GraphTensor`). ``backward`` is True for nodes made by a
    ``tape.gradient`` call; ``control_inputs`` are nodes that must run first (a read after a write)."""

    __slots__ = ("name", "op", "kind", "inputs", "control_inputs", "fn", "value", "backward",
                 "primitive", "params", "variable", "shape", "dtype", "device", "_output")

    def __init__(self, name: str, op: str, kind: str, inputs: Sequence[Node] = (), fn: Callable | None = None,
                 value: Any = None, control_inputs: Sequence[Node] = (), backward: bool = False,
                 primitive: Any = None, params: dict | None = None, variable: Any = None,
                 shape: tuple[int, ...] = (), dtype: Any = None, device: str = "cpu:0"):
        self.name, self.op, self.kind = name, op, kind
        self.inputs = tuple(inputs)
        self.control_inputs = tuple(control_inputs)
        self.fn, self.value, self.backward = fn, value, backward
        self.primitive, self.params, self.variable = primitive, params or {}, variable
        self.shape, self.dtype, self.device = shape, dtype, device
        self._output: GraphTensor | None = None

    @property
    def output(self) -> GraphTensor:
        """The tensor this node computes (``<name>:0``)."""
        if self._output is None:
            self._output = GraphTensor(self)
        return self._output

    @property
    def outputs(self) -> tuple[GraphTensor, ...]:
        return (self.output,)

    @property
    def stateful(self) -> bool:
        """True for assignments and optimizer updates: a function call runs them even unfetched."""
        return self.kind in STATEFUL

    def __repr__(self) -> str:
        ins = ", ".join(n.name for n in self.inputs)
        return f"<Node {self.name!r} op={self.op} ({ins})>"


class GraphTensor:
    """A node's output inside a graph: a name, shape, dtype and device, but no value. Fetch it with
    ``graph.run(t)``.

    >>> import engine as eg
    >>> g = eg.function(lambda x: x * 3.0).get_graph(eg.constant(1.0))
    >>> g.outputs.name, g.outputs.shape
    ('Mul:0', ())
    """

    __slots__ = ("node",)

    def __init__(self, node: Node):
        self.node = node

    name = property(lambda self: f"{self.node.name}:0", doc="``<node name>:0``, as in TensorFlow.")
    op = property(lambda self: self.node.op)
    shape = property(lambda self: self.node.shape)
    dtype = property(lambda self: self.node.dtype)
    device = property(lambda self: self.node.device)

    def numpy(self) -> np.ndarray:
        raise TypeError(
            f"The graph tensor {self.name!r} has no value of its own: it is a node of a traced graph. "
            "Compute it with graph.run(tensor) (or call the eg.function)."
        )

    def __repr__(self) -> str:
        return f"<GraphTensor {self.name!r} shape={self.shape} dtype={self.dtype} device={self.device}>"


class Graph:
    """A traced function: `nodes` in run order, `inputs` (its tensor arguments), `outputs` (what it
    returned, same structure), `run` and `op_count`.

    >>> import engine as eg
    >>> g = eg.function(lambda x: eg.exp(x) + 1.0).get_graph(eg.constant(0.0))
    >>> float(g.run(g.outputs, feeds={g.inputs[0]: eg.constant(1.0)}))
    3.7182819843292236
    """

    def __init__(self, name: str, nodes: list[Node], inputs: list[Node], outputs: Any,
                 variables: dict[int, Node]):
        self.name = name
        self.nodes = nodes
        self._inputs = inputs
        self._outputs = outputs  # the returned structure, graph tensors at the leaves
        self._variables = variables  # Variable uid → the node named after it (its first read)
        self._by_name = {n.name: n for n in nodes}
        self._plans: dict[tuple, Plan] = {}

    @property
    def inputs(self) -> list[GraphTensor]:
        """The placeholders for the function's tensor arguments, in argument order."""
        return [n.output for n in self._inputs]

    @property
    def outputs(self) -> Any:
        """What the function returned, with graph tensors in place of tensors."""
        return self._outputs

    def get_tensor_by_name(self, name: str) -> GraphTensor:
        """The tensor ``name`` (``"dense_1/MatMul:0"``; the ``:0`` may be left out)."""
        return self._node(name).output

    def get_node(self, name: str) -> Node:
        """The node ``name`` (``"dense_1/MatMul"``)."""
        return self._node(name)

    def run(self, fetches: Any, feeds: dict | None = None) -> Any:
        """Compute ``fetches`` (graph tensors, nodes, names, Variables, or a nested list/tuple/dict of
        them); ``feeds`` maps inputs (or any node) to values. Each needed node runs once; stateful
        nodes (assignments, optimizer updates) run only when a fetch needs them. Returns Tensors in
        the structure of ``fetches``."""
        flat = nest.flatten(fetches)
        targets = [self._resolve(f) for f in flat]
        fed, arrays = self._feeds(feeds)
        plan = self._plan(targets, fed)
        values = plan.run(arrays)
        out = [Tensor._make(v, backend.get_device(n.device)) for v, n in zip(values, targets)]
        return nest.pack_like(fetches, out)

    def op_count(self, fetches: Any, feeds: dict | None = None) -> int:
        """How many nodes ``run(fetches, feeds)`` executes (inputs and constants are not counted; the
        inputs count as fed)."""
        targets = [self._resolve(f) for f in nest.flatten(fetches)]
        fed = [self._resolve(k) for k in (feeds or {})]
        fed += [n for n in self._inputs if n not in fed]
        return self._plan(targets, fed).op_count

    # ---- internals ----------------------------------------------------------------------------------
    def _plan(self, targets: list[Node], fed: list[Node]) -> Plan:
        key = (tuple(map(id, targets)), tuple(map(id, fed)))
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = Plan(self.nodes, targets, fed)
        return plan

    def _node(self, name: str) -> Node:
        if not isinstance(name, str):
            raise TypeError(f"Graph: a name must be a string, got {type(name).__name__}.")
        key = name[:-2] if name.endswith(":0") else name
        node = self._by_name.get(key)
        if node is None:
            close = difflib.get_close_matches(key, self._by_name, n=3)
            hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
            raise KeyError(f"Graph {self.name!r} has no tensor named {name!r}.{hint} The names are in "
                           "[n.name for n in graph.nodes].")
        return node

    def _resolve(self, fetch: Any) -> Node:
        if isinstance(fetch, GraphTensor | Node):
            node = fetch.node if isinstance(fetch, GraphTensor) else fetch
            if self._by_name.get(node.name) is not node:
                raise ValueError(f"Graph.run: {fetch!r} belongs to another graph.")
            return node
        if isinstance(fetch, str):
            return self._node(fetch)
        if isinstance(fetch, Tensor) and fetch._is_variable:
            node = self._variables.get(fetch._uid)
            if node is None:
                raise ValueError(f"Graph.run: the Variable {fetch.name!r} is not read in graph "
                                 f"{self.name!r}.")
            return node
        if isinstance(fetch, Tensor):
            raise TypeError(
                "Graph.run: got an eager Tensor. Fetch the graph's own tensors: graph.outputs, "
                "graph.get_tensor_by_name(name), or a name."
            )
        if fetch is None:  # TensorFlow 1.x's sess.run said the first sentence, and no more
            raise TypeError(
                "Graph.run: Fetch argument None has invalid type <class 'NoneType'>. A None among the "
                "fetches is usually the gradient of a Variable the loss does not depend on "
                "(tape.gradient and compute_gradients return None for it): fetch only the gradients "
                "that exist ([g for g in grads if g is not None]), or ask the tape for zeros "
                "(unconnected_gradients=\"zero\")."
            )
        raise TypeError(f"Graph.run: cannot fetch {type(fetch).__name__} {fetch!r:.60}; fetch graph "
                        "tensors, node names or Variables.")

    def _feeds(self, feeds: dict | None) -> tuple[list[Node], list[Any]]:
        nodes, arrays = [], []
        for key, value in (feeds or {}).items():
            node = self._resolve(key)
            nodes.append(node)
            arrays.append(_as_array(value, node))
        return nodes, arrays

    def __repr__(self) -> str:
        n_back = sum(n.backward for n in self.nodes)
        return (f"<Graph {self.name!r}: {len(self.nodes)} nodes ({n_back} backward), "
                f"{len(self._inputs)} inputs>")


def _as_array(value: Any, node: Node) -> Any:
    """A fed value as an array with the node's shape, dtype and device."""
    dev = backend.get_device(node.device)
    if isinstance(value, Tensor):
        if value._is_variable:
            value = value.value()
        data = value._data if value._device is dev else backend.transfer(value._data, dev)
    else:
        data = to_array(value, f"Graph.run: feed for {node.name!r}", node.dtype)  # checked copy
        if dev.kind == "gpu":
            data = backend.transfer(data, dev)
    if tuple(data.shape) != tuple(node.shape) or data.dtype != node.dtype:
        raise ValueError(
            f"Graph.run: the value fed for {node.name!r} has shape {tuple(data.shape)} and dtype "
            f"{data.dtype}; the graph was traced for shape {node.shape} and dtype {node.dtype}. Trace "
            "again for the new shape (call the eg.function with it) or feed a matching value."
        )
    return data
