"""The replay executor: a traced graph as a flat list of steps over raw arrays.

A `Plan` is what one kind of run executes: ``steps`` is a list of ``(array function, input slots,
output slot, slots to free)``. Running it fills a list of slots (the fed arrays and the graph's
constants first), calls each function on the arrays in its input slots and drops every intermediate
right after its last use. There are no Tensors, tapes, dtype or device checks here: tracing did those
once. `Plan.run` runs the steps compiled into one Python function (one local variable per slot, ``del``
after the last use) rather than a loop over the step list indexing a list of slots: that saves the loop's
own bookkeeping, about a third of a small op's cost. The function is compiled on the first run.

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

import functools
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

    __slots__ = ("steps", "n_slots", "template", "fed_slots", "fetch_slots", "op_count", "ops", "run",
                 "source")

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
        self.run = self._first_run  # `run(arrays)`: the fetched arrays, in order
        self.source = ""  # the compiled function's source, once it has run

    def _first_run(self, arrays: Sequence[Any]) -> list[Any]:
        """Compile the steps (on the first run, so that tracing a graph that is never run, e.g.
        ``get_graph``, does not pay for it), then run them."""
        self.run, self.source = _compile(self.steps, self.template, len(self.fed_slots), self.fetch_slots)
        return self.run(arrays)


def _compile(steps: list[tuple], template: list[Any], n_fed: int,
             fetch_slots: tuple[int, ...]) -> tuple[Any, str]:
    """The steps as the source and function ``run(arrays)``: ``s5 = f0(xp, s3, s4, axis=k0_axis)``
    per step (a ``functools.partial`` unwrapped into its function, arguments and keywords), then
    ``del`` of the slots used for the last time."""
    ns: dict[str, Any] = {}

    def name(slot: int) -> str:
        if slot >= n_fed and template[slot] is not None:
            ns[f"c{slot}"] = template[slot]
            return f"c{slot}"
        return f"s{slot}"

    lines = ["def run(arrays):"]
    if n_fed:
        lines.append(f"    {', '.join(f's{i}' for i in range(n_fed))}, = arrays")
    for k, (fn, ins, out, free) in enumerate(steps):
        args: list[str] = []
        if isinstance(fn, functools.partial):
            ns[f"f{k}"] = fn.func
            for j, a in enumerate(fn.args):
                ns[f"a{k}_{j}"] = a
                args.append(f"a{k}_{j}")
            args += [name(i) for i in ins]
            for key, value in fn.keywords.items():
                ns[f"k{k}_{key}"] = value
                args.append(f"{key}=k{k}_{key}")
        else:
            ns[f"f{k}"] = fn
            args += [name(i) for i in ins]
        lines.append(f"    s{out} = f{k}({', '.join(args)})")
        if free:
            lines.append(f"    del {', '.join(f's{s}' for s in free)}")
    lines.append(f"    return [{', '.join(name(s) for s in fetch_slots)}]")
    source = "\n".join(lines) + "\n"
    exec(compile(source, "<engine.replay plan>", "exec"), ns)  # noqa: S102  (our own generated code)
    return ns["run"], source
