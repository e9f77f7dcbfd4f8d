"""The replay executor: a traced graph as a flat list of steps over raw arrays.

A `Plan` is what one kind of run executes: ``steps`` is a list of ``(array function, input slots,
output slot, slots to free)``. Running it fills a list of slots (the fed arrays and the graph's
constants first), calls each function on the arrays in its input slots and drops every intermediate
right after its last use. There are no Tensors, tapes, dtype or device checks here: tracing did those
once.

>>> import numpy as np
>>> from engine.graph import Node
>>> x = Node("x", "Placeholder", "input")
>>> two = Node("Const", "Const", "const", value=np.float32(2))
>>> y = Node("Mul", "Mul", "op", inputs=(x, two), fn=np.multiply)
>>> plan = Plan([x, two, y], fetches=[y], fed=[x])
>>> plan.op_count, plan.run([np.arange(3.0)])
(1, [array([0., 2., 4.])])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["Plan", "needed_nodes"]


def needed_nodes(nodes: Sequence[Any], targets: Sequence[Any], fed: Sequence[Any] = ()) -> list[Any]:
    """The nodes a run must execute to compute ``targets``, in graph order.

    Walks inputs and control inputs (a Variable read waits for the assignment before it) back from
    the targets, stopping at fed nodes.
    """
    fed_ids = {id(n) for n in fed}
    seen: set[int] = set()
    stack = list(targets)
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if id(n) in fed_ids:
            continue
        stack.extend(n.inputs)
        stack.extend(n.control_inputs)
    return [n for n in nodes if id(n) in seen]


class Plan:
    """The steps of one run: ``nodes`` (graph order) restricted to what ``fetches`` need.

    ``fed`` nodes take their arrays from `run`'s argument, in that order (a graph's inputs, or any
    node a caller feeds); ``extra`` nodes run although nothing fetched needs them (assignments and
    optimizer updates: a function call runs them all).
    """

    __slots__ = ("steps", "n_slots", "template", "fed_slots", "fetch_slots", "op_count", "ops")

    def __init__(self, nodes: Sequence[Any], fetches: Sequence[Any], fed: Sequence[Any] = (),
                 extra: Sequence[Any] = ()):
        run = needed_nodes(nodes, list(fetches) + list(extra), fed)
        fed_ids = {id(n) for n in fed}
        slot: dict[int, int] = {}
        for n in fed:
            slot[id(n)] = len(slot)
        template: list[Any] = [None] * len(fed)
        keep = set(range(len(fed)))
        todo = []
        for n in run:
            if id(n) in fed_ids:
                continue
            if n.kind == "input":
                raise ValueError(
                    f"Graph.run: the input {n.name!r} is needed but was not fed. Pass it in feeds, e.g. "
                    f"graph.run(fetches, feeds={{{n.name!r}: value}}), or fetch something that does not "
                    "depend on it."
                )
            slot[id(n)] = len(template)
            if n.kind == "const":
                template.append(n.value)
                keep.add(slot[id(n)])
            else:
                template.append(None)
                todo.append(n)
        self.fetch_slots = tuple(slot[id(n)] for n in fetches)
        keep.update(self.fetch_slots)
        raw = [(n.fn, tuple(slot[id(i)] for i in n.inputs), slot[id(n)]) for n in todo]
        last: dict[int, int] = {}
        for k, (_, ins, out) in enumerate(raw):
            for s in ins:
                last[s] = k
            last.setdefault(out, k)
        free: list[list[int]] = [[] for _ in raw]
        for s, k in last.items():
            if s not in keep:
                free[k].append(s)
        self.steps = [(fn, ins, out, tuple(free[k])) for k, (fn, ins, out) in enumerate(raw)]
        self.ops = todo
        self.op_count = len(todo)
        self.n_slots = len(template)
        self.template = template
        self.fed_slots = tuple(range(len(fed)))

    def run(self, arrays: Sequence[Any]) -> list[Any]:
        """Execute the steps with ``arrays`` in the fed slots; the fetched arrays, in order."""
        vals = self.template.copy()
        vals[:len(arrays)] = arrays
        for fn, ins, out, free in self.steps:
            n = len(ins)
            if n == 1:
                vals[out] = fn(vals[ins[0]])
            elif n == 2:
                vals[out] = fn(vals[ins[0]], vals[ins[1]])
            else:
                vals[out] = fn(*[vals[i] for i in ins])
            for s in free:
                vals[s] = None
        return [vals[s] for s in self.fetch_slots]
