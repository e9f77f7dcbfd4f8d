"""Graph-style engines (micrograd's design): no tape, each value knows its inputs and its op.

API.md ("Graph-style engines"): a value ``v`` lists its inputs in ``v.parents`` or ``v._prev`` (any
iterable of values; empty for a leaf) and names its op in ``v.op`` or ``v._op`` (a str; empty for a
leaf). `graph_tape` turns such a graph into what a tape holds, at this one place: the values in
topological order (inputs before the values computed from them) and one record per computed value
(``op``, ``inputs``, ``outputs``). Everything after that is the tape protocol's reader
(`gradviz.model.protocol`): the same model, pictures and folding as for a tape. `graph_steps` lists
the values in the reverse of that order with the ``.grad`` the learner's own engine gave each: what
``gv.backprop(root)`` steps through. Nothing is differentiated here.

>>> class V:                                   # micrograd's shape: data, grad, _prev, _op
...     def __init__(self, data, prev=(), op=""):
...         self.data, self.grad, self._prev, self._op = data, 0.0, tuple(prev), op
>>> x = V(2.0); y = V(4.0, (x, x), "*"); z = V(5.0, (y, x), "+")
>>> [(r.op, len(r.inputs)) for r in graph_tape(z).records]
[('*', 2), ('+', 2)]
>>> graph_tape(z).values == [x, y, z]
True
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from gradviz.model.checks import describe
from gradviz.model.protocol import array_of

__all__ = ["GraphRecord", "GraphTape", "GraphStep", "is_graph_value", "graph_tape", "graph_steps",
           "complete_after"]

_INPUTS = ("parents", "_prev")
_OPS = ("op", "_op")


class GraphRecord:
    """One computed value as a tape record: ``op`` (its op name), ``inputs`` (its parents, in the order
    the value lists them) and ``outputs`` (the value itself)."""

    __slots__ = ("op", "inputs", "outputs")

    def __init__(self, op: str, inputs: tuple, value: Any):
        self.op, self.inputs, self.outputs = op, inputs, (value,)

    def __repr__(self) -> str:
        return f"<GraphRecord {self.op} of {len(self.inputs)} input(s)>"


class GraphTape:
    """A graph-style engine's graph read as a tape: ``records`` (computed values, inputs first),
    ``values`` (every value, leaves included, in the same topological order), ``roots``."""

    def __init__(self, records: list[GraphRecord], values: list[Any], roots: list[Any]):
        self.records, self.values, self.roots = records, values, roots


class GraphStep:
    """One position of ``gv.backprop(root)``: the value visited (its ``record``), the ``.grad`` the
    learner's engine gave it (``upstream``), and no per-input contributions (a graph-style engine adds
    them into its inputs' ``.grad`` without keeping them: the inputs' totals are shown instead)."""

    __slots__ = ("record", "upstream", "contributions")

    def __init__(self, record: GraphRecord, grad: Any):
        self.record, self.upstream = record, (grad,)
        self.contributions = (None,) * len(record.inputs)


def _field(obj: Any, names: tuple[str, ...]) -> tuple[bool, Any]:
    for name in names:
        try:
            return True, getattr(obj, name)
        except AttributeError:
            continue
    return False, None


def is_graph_value(obj: Any) -> bool:
    """Whether ``obj`` looks like a graph-style engine's value: it has inputs (``parents``/``_prev``)
    or an op name (``op``/``_op``), and is no tape and no array.

    >>> is_graph_value(type("V", (), {"_prev": (), "_op": ""})()), is_graph_value(np.ones(2))
    (True, False)
    """
    if hasattr(obj, "records") or isinstance(obj, np.ndarray | str | bytes | int | float | complex):
        return False
    return _field(obj, _INPUTS)[0] or _field(obj, _OPS)[0]


def describe_value(v: Any) -> str:
    """A value named for a message: its type, its name or label, its op and its data when short.

    >>> class V: pass
    >>> v = V(); v.data, v._op, v.label = 3.0, "*", "c"
    >>> describe_value(v)
    "V 'c' (op '*', data 3.0)"
    """
    if not is_graph_value(v):
        return describe(v)
    label = next((n for n in (getattr(v, "name", None), getattr(v, "label", None))
                  if isinstance(n, str) and n), None)
    parts = []
    op = _field(v, _OPS)[1]
    if isinstance(op, str) and op:
        parts.append(f"op {op!r}")

    held = array_of(v)
    if held is not v:
        try:
            text = repr(np.asarray(held).item()) if np.ndim(held) == 0 else f"shape {np.shape(held)}"
        except Exception:  # noqa: BLE001  (a value numpy cannot read: named without its data)
            text = ""
        if not text:
            pass
        elif len(text) <= 30:
            parts.append(f"data {text}" if np.ndim(held) == 0 else text)
    head = type(v).__name__ + (f" {label!r}" if label else "")
    return head + (f" ({', '.join(parts)})" if parts else "")


def _inputs_of(v: Any, where: str, whose: str) -> tuple:
    found, parents = _field(v, _INPUTS)
    if not found:
        raise TypeError(f"{where}: {whose} has no .parents or ._prev: each value of a graph-style engine "
                        "lists the values it was computed from (an empty tuple for a leaf), e.g. "
                        "out._prev = (a, b).")
    if parents is None:
        return ()
    if isinstance(parents, str | bytes) or not isinstance(parents, Iterable) or hasattr(parents, "shape"):
        raise TypeError(f"{where}: {whose} has ._prev/.parents = {type(parents).__name__}, not an iterable "
                        "of values: give a tuple (or set) of the values it was computed from.")
    return tuple(parents)


def _op_of(v: Any, where: str, whose: str, has_inputs: bool) -> str:
    found, op = _field(v, _OPS)
    if not found:
        raise TypeError(f"{where}: {whose} has no .op or ._op: each value of a graph-style engine names the "
                        "op that made it (out._op = '*'; an empty str for a leaf).")
    if op is None:
        op = ""
    if not isinstance(op, str):
        raise TypeError(f"{where}: {whose} has .op/._op = {op!r}, not a str: name the op ('*', 'tanh').")
    if has_inputs and not op:
        raise TypeError(f"{where}: {whose} has inputs but an empty op name: set out._op to the op that "
                        "computed it ('+', 'tanh'...), so it can be drawn.")
    return op


def graph_tape(root: Any, where: str = "gv.graph") -> GraphTape:
    """The graph behind ``root`` (a value, or a list of them) as a tape: values in topological order
    (depth first, inputs in the order each value lists them), one record per value with inputs.

    A cycle, or a value without ``parents``/``_prev`` or ``op``/``_op``, is refused with a
    ``TypeError``/``ValueError`` that names the value.
    """
    roots = list(root) if isinstance(root, list | tuple) else [root]
    if not roots:
        raise ValueError(f"{where}: no value to draw: pass the value your engine computed last.")
    order: list[Any] = []
    records: list[GraphRecord] = []
    state: dict[int, int] = {}  # id(value) → 1 while its inputs are being ordered, 2 once ordered
    keep: list[Any] = []  # every value seen, alive while ids are compared
    for r in roots:
        if state.get(id(r)) == 2:
            continue
        whose = f"the value {describe_value(r)}"
        stack: list[tuple[Any, tuple, int, str]] = [(r, _inputs_of(r, where, whose), 0, whose)]
        state[id(r)] = 1
        keep.append(r)
        while stack:
            v, parents, i, whose = stack[-1]
            if i < len(parents):
                stack[-1] = (v, parents, i + 1, whose)
                p = parents[i]
                seen = state.get(id(p))
                if seen == 2:
                    continue
                pwhose = f"input {i} of {describe_value(v)}, {describe_value(p)},"
                if seen == 1:
                    start = next(k for k, s in enumerate(stack) if s[0] is p)
                    path = " → ".join(describe_value(s[0]) for s in stack[start:])
                    raise ValueError(f"{where}: the graph has a cycle: {describe_value(p)} is an input of "
                                     f"itself ({path} → {describe_value(p)}). A value's inputs must be "
                                     "values computed before it: make a new value for each result.")
                state[id(p)] = 1
                keep.append(p)
                stack.append((p, _inputs_of(p, where, pwhose), 0, pwhose))
                continue
            stack.pop()
            op = _op_of(v, where, whose, bool(parents))
            state[id(v)] = 2
            order.append(v)
            if parents:
                records.append(GraphRecord(op, parents, v))
    if not records:
        raise ValueError(f"{where}: {describe_value(roots[0])} has no inputs (a leaf): pass a value your "
                         "engine computed from others, e.g. the loss.")
    return GraphTape(records, order, roots)


def graph_steps(tape: GraphTape, where: str = "gv.backprop") -> list[GraphStep]:
    """The values with inputs in the reverse of ``tape``'s order, each with the ``.grad`` the learner's
    engine gave it (refused, naming the value, when it has none: call the engine's backward first)."""
    steps = []
    for record in tape.records[::-1]:
        v = record.outputs[0]
        grad = getattr(v, "grad", None)
        if grad is None:
            raise ValueError(f"{where}: {describe_value(v)} has no .grad: run your engine's backward pass "
                             "(root.backward()) first; gv.backprop draws the gradients your engine "
                             "computed.")
        steps.append(GraphStep(record, grad))
    return steps


def complete_after(steps: list[Any], root_key: int, key: Any) -> list[frozenset[int]]:
    """Per step (in visit order), the keys of the values whose ``.grad`` is final after it: the root,
    every value visited, and every value all of whose users were visited (no later op adds to it).

    >>> class R:
    ...     def __init__(self, ins, out): self.inputs, self.outputs = ins, (out,)
    >>> class S:
    ...     def __init__(self, r): self.record = r
    >>> steps = [S(R(("y", "x"), "z")), S(R(("x", "x"), "y"))]      # z = y + x, y = x * x
    >>> [sorted(c) for c in complete_after(steps, "z", lambda v: v)]
    [['y', 'z'], ['x', 'y', 'z']]
    """
    users: dict[int, int] = {}
    for s in steps:
        for k in {key(x) for x in s.record.inputs}:
            users[k] = users.get(k, 0) + 1
    done = {root_key}
    out = []
    for s in steps:
        done.add(key(s.record.outputs[0]))
        for k in {key(x) for x in s.record.inputs}:
            users[k] -= 1
            if users[k] == 0:
                done.add(k)
        out.append(frozenset(done))
    return out
