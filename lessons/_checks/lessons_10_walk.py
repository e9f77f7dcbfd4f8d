"""Lesson 10's checks of the backward walks (the tape's and micrograd's) and of second derivatives.

The walk check runs the learner's walk on fixed programs that hold the classic traps (``3x + (x + y)``,
where add's VJP hands one g to both inputs and an in-place ``+=`` corrupts it; ``x + x``; a diamond;
broadcast biases) and on random programs over every op, and compares each input's gradient with
``eg``'s and with central differences. When they differ it finds the kind of mistake by watching the
walk (the order in which it asks the records for their VJPs) and by running it again with VJPs that hand
out fresh copies: if the copies make it right, a gradient array was shared and then changed in place.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import engine as eg

from . import lessons_10_solution as solution
from .lessons_10 import array, missing, namespace
from .lessons_10_programs import ENGINE_OPS, NUMPY_OPS, PROGRAMS, learner_ops, random_program
from .registry import register

RANDOM_PROGRAMS = 8

ORDER = ("records visited in the wrong order: a record's output has its whole gradient only once every "
         "record that used it has been visited, so visit the tape last to first (and skip a record whose "
         "output has no gradient).")
ALIASING = ("a gradient array is shared between two values and then changed in place: add's VJP hands the "
            "same g to both inputs, so `+=` on one value's gradient array changes the other's too. Make a "
            "new sum (grads[k] = grads[k] + c) instead of adding into an array you were handed.")
UNBROADCAST = ("a gradient has the shape of a broadcast result, not of its value: the walk must sum each "
               "contribution back to its input's shape with unbroadcast (not summed over a broadcast axis).")
OVERWRITE = ("a value used by several ops keeps only one contribution: its gradient is the sum of all the "
             "contributions it receives.")


def _expected(program, arrays) -> tuple[list, list]:
    """The engine's gradients (None where unconnected) and central differences, per input."""
    ts = [eg.constant(a) for a in arrays]
    with eg.GradientTape() as tape:
        tape.watch(ts)
        target = program.run(ENGINE_OPS, ts)
    engine = [None if w is None else w.numpy() for w in tape.gradient(target, ts)]
    numeric = []
    for i, a in enumerate(arrays):
        grad = np.zeros_like(a)
        for j in np.ndindex(a.shape):
            up, down = [x.copy() for x in arrays], [x.copy() for x in arrays]
            up[i][j] += 1e-6
            down[i][j] -= 1e-6
            grad[j] = (np.sum(program.run(NUMPY_OPS, up)) - np.sum(program.run(NUMPY_OPS, down))) / 2e-6
        numeric.append(grad)
    return engine, numeric


def _run(walk: Callable, ns: dict, program, arrays, graph: bool, copies: bool):
    """Build ``program`` on the learner's engine, run their walk; (inputs, target, steps, vjp call order)."""
    Value, Tape = ns["Value"], ns["Tape"]
    Tape.active.clear()
    values = [Value(a.copy(), f"x{i}") for i, a in enumerate(arrays)]
    with Tape() as tape:
        target = program.run(learner_ops(ns), values)
    calls: list = []
    for record in tape.records:
        vjp = record.vjp

        def watched(*args, _record=record, _vjp=vjp, **params):
            calls.append(_record)
            out = _vjp(*args, **params)
            if copies and type(out) in (tuple, list):
                out = type(out)(Value(np.array(c.value)) if isinstance(c, Value) else c for c in out)
            return out

        record.vjp = watched
    steps = walk(target) if graph else walk(tape, target)
    return values, target, tape, steps, calls


def _order_problem(tape, calls: list) -> str | None:
    """Whether the walk asked each record for its VJP only after every later record that used its output."""
    position = {id(r): k for k, r in enumerate(calls)}
    used_by: dict[int, list] = {}
    for r in tape.records:
        for x in r.inputs:
            used_by.setdefault(id(x), []).append(r)
    for r in tape.records:
        users = [u for u in used_by.get(id(r.outputs[0]), []) if id(u) in position]
        if id(r) not in position and users:
            return ORDER
        if id(r) in position and any(position[id(u)] > position[id(r)] for u in users):
            return ORDER
    return None


def walk_judge(graph: bool) -> Callable[[Any], str | None]:
    """The judge of the tape walk ``backward(tape, target)`` or of micrograd's ``backward_graph(root)``."""

    def judge(walk: Any) -> str | None:
        ns = namespace(walk)
        needed = ("Value", "Tape", "add", "subtract", "multiply", "divide", "tanh", "exp", "log", "matmul",
                  "reduce_sum", "reduce_mean", "unbroadcast")
        if (problem := missing(ns, needed)) is not None:
            return problem
        rng = np.random.default_rng()
        programs = PROGRAMS + [random_program(rng, k + 1) for k in range(RANDOM_PROGRAMS)]
        for program in programs:
            arrays = [rng.uniform(0.5, 2.0, s) if program.positive else rng.normal(size=s)
                      for s in program.shapes]
            problem = _one_program(walk, ns, program, arrays, graph)
            if problem is not None:
                return problem
        return None

    return judge


def _grads(values) -> list:
    return [None if getattr(v, "grad", None) is None else array(v.grad) for v in values]


def _one_program(walk, ns, program, arrays, graph) -> str | None:
    where = f"on {program.name}"
    engine, numeric = _expected(program, arrays)
    try:
        values, target, tape, steps, calls = _run(walk, ns, program, arrays, graph, copies=False)
    except Exception as exc:  # noqa: BLE001  (the learner's error, by type and message)
        kind = type(exc).__name__
        if kind in ("KeyError", "TypeError", "AttributeError") and not graph:
            return f"{where} it raised {kind}: {exc}. Is it {ORDER}"
        return f"{where} it raised {kind}: {exc}"
    finally:
        ns["Tape"].active.clear()
    if (problem := _order_problem(tape, calls)) is not None:
        return f"{where}: {problem}"
    if not graph and (type(steps) is not list or len(steps) != len(calls)
                      or any(s.record is not r for s, r in zip(steps, calls))):
        return (f"{where}: return the list of steps, one Step(record, (g,), contributions) per record "
                "visited, in the order visited.")
    if getattr(target, "grad", None) is None:
        return f"{where}: the target's .grad is None: the walk starts from ones shaped like the target."
    got = _grads(values)
    for i, (g, e) in enumerate(zip(got, engine)):
        if e is None:
            continue
        if g is None:
            return (f"{where}: input {i + 1} has no .grad: set .grad on every value the walk reaches (the "
                    "sum of the contributions it received).")
        if g.shape != e.shape:
            return (f"{where}: input {i + 1}'s gradient has shape {g.shape} for a value of shape {e.shape}: "
                    f"{UNBROADCAST}")
    if all(e is None or (np.allclose(g, e, rtol=1e-6, atol=1e-8) and np.allclose(g, n, rtol=1e-4, atol=1e-5))
           for g, e, n in zip(got, engine, numeric)):
        return None
    again = _grads(_run(walk, ns, program, arrays, graph, copies=True)[0])
    ns["Tape"].active.clear()
    if all(e is None or (g is not None and g.shape == e.shape and np.allclose(g, e, rtol=1e-6, atol=1e-8))
           for g, e in zip(again, engine)):
        return f"{where}: {ALIASING}"
    last: dict[int, Any] = {}
    for r in calls:
        for x in r.inputs:
            last[id(x)] = r
    bad = next(i for i, (g, e) in enumerate(zip(got, engine))
               if e is not None and not np.allclose(g, e, rtol=1e-6, atol=1e-8))
    users = sum(1 for r in tape.records for x in r.inputs if x is values[bad])
    if users > 1:
        return f"{where}: input {bad + 1} (used by {users} ops) has a wrong gradient. Is it {OVERWRITE}"
    return (f"{where}: input {bad + 1}'s gradient is neither the engine's nor the finite differences' (its "
            "ops' VJPs passed their checks, so look at what the walk adds up).")


register("10", "walk", function="backward", judge=walk_judge(graph=False), reference=solution.WALK, hint=(
    "grads maps id(value) → its gradient so far, starting with ones for the target. For each record from "
    "last to first whose output has a gradient g: ask record.vjp(g, output, *inputs, **params), sum each "
    "contribution back to its input's shape, keep a Step, and add it to that input's entry with your ops "
    "(a new sum, never in place). At the end set v.grad for every value reached."))
register("10", "graph_walk", function="backward_graph", judge=walk_judge(graph=True),
         reference=solution.GRAPH_WALK, hint=(
             "Order the values so that each comes after its _prev (a depth-first visit that appends a value "
             "after its parents: a topological sort), then walk that order backwards as the tape walk does, "
             "with each value's _record."))


# ---- higher order: the walk run twice -------------------------------------------------------------------

FUNCTIONS = [("log(x·x)", lambda o, x: o.log(o.mul(x, x)), lambda x: eg.log(x * x)),
             ("tanh(x)·x", lambda o, x: o.mul(o.tanh(x), x), lambda x: eg.tanh(x) * x),
             ("exp(x) / x", lambda o, x: o.div(o.exp(x), x), lambda x: eg.exp(x) / x),
             ("x·x·x", lambda o, x: o.mul(o.mul(x, x), x), lambda x: x * x * x)]


SECOND_MISSING = ("second derivative is missing: the outer tape must record the first walk (run it inside "
                  "the outer `with`), then walk the outer tape from the first derivative.")


def _judge_second(answer: Any) -> str | None:
    ns = namespace(answer)
    if (problem := missing(ns, ("Value", "Tape", "backward", *learner_needs()))) is not None:
        return problem
    rng = np.random.default_rng()
    ops = learner_ops(ns)
    for name, mine, theirs in FUNCTIONS:
        x0 = rng.uniform(0.5, 2.0, 3)
        x = eg.constant(x0)
        with eg.GradientTape() as outer:
            outer.watch(x)
            with eg.GradientTape() as inner:
                inner.watch(x)
                y = theirs(x)
            first = inner.gradient(y, x)
        second = outer.gradient(first, x).numpy()
        ns["Tape"].active.clear()
        try:
            got = answer(lambda v, mine=mine: mine(ops, v), x0.copy())
        except Exception as exc:  # noqa: BLE001  (the learner's error, by type and message)
            return (f"for f(x) = {name} it raised {type(exc).__name__}: {exc}. (When x.grad is None after "
                    f"the second walk, the {SECOND_MISSING}")
        finally:
            ns["Tape"].active.clear()
        if type(got) not in (tuple, list) or len(got) != 2:
            return "return two arrays: (the first derivative, the second derivative) at x0."
        d1, d2 = (None if v is None else array(v) for v in got)
        if d1 is None or d1.shape != x0.shape or not np.allclose(d1, first.numpy(), rtol=1e-6):
            return f"for f(x) = {name} the first derivative is not the engine's."
        if d2 is None or d2.shape != x0.shape:
            return f"for f(x) = {name} the {SECOND_MISSING}"
        if np.allclose(d2, d1):
            return (f"for f(x) = {name} the second derivative equals the first: x.grad still held the first "
                    "derivative (keep it, reset x.grad to None, then walk again).")
        if not np.allclose(d2, second, rtol=1e-6, atol=1e-9):
            return (f"for f(x) = {name} the second derivative is not the engine's: did the outer tape record "
                    "the forward pass too (both tapes active while f runs)?")
    return None


def learner_needs() -> tuple[str, ...]:
    """The learner's ops the programs use."""
    return ("add", "subtract", "multiply", "divide", "tanh", "exp", "log", "matmul", "reduce_sum",
            "reduce_mean")


register("10", "second", function="second_derivative", judge=_judge_second, reference=solution.SECOND,
         hint=("Run f under two tapes (inner inside outer); walk the inner tape while the outer one is still "
               "recording, so your VJPs' ops are recorded; keep x.grad (the first derivative), set "
               "x.grad = None, and walk the outer tape from it."))
