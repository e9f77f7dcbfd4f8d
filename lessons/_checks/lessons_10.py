"""The self-checks of lesson 10 (build your own engine), one per part of the learner's engine.

The learner writes every line of the engine in the lesson's cells; a check receives one part (a class
or a function) and finds the rest of the learner's engine where that part was defined (its module's
namespace: the notebook's), so it can run programs over the learner's own ops. Every check is
differential: it compares with the engine ``eg`` (and the walk also with finite differences) on random
inputs, broadcasting shapes included, and names the kind of mistake when they differ, never the code.
The parts of the op checks live here; the walk's (random programs, the in-place trap) in
``lessons_10_walk.py``. The course's own answer to each part is its ``reference=`` (source text, from
``lessons_10_solution.py``); the lesson never imports it.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import numpy as np

import engine as eg

from . import lessons_10_solution as solution
from .registry import register

# ---- finding the learner's engine --------------------------------------------------------------------


def namespace(answer: Any) -> dict:
    """The namespace where the learner defined ``answer`` (a function, a class, or a tuple of them)."""
    for obj in answer if type(answer) in (tuple, list) else (answer,):
        if isinstance(obj, type):
            obj = next((f for f in vars(obj).values() if isinstance(f, types.FunctionType)), None)
        found = getattr(obj, "__globals__", None)
        if isinstance(found, dict):
            return found
    return {}


def missing(ns: dict, names: tuple[str, ...]) -> str | None:
    """What the check needs from the learner's engine and does not find, as a sentence."""
    absent = [n for n in names if not callable(ns.get(n))]
    if absent:
        return (f"the check needs {', '.join(f'`{n}`' for n in absent)} from your engine and does not find "
                "it: run the cells of the parts before this one (each part builds on the ones above).")
    return None


def array(v: Any) -> np.ndarray | None:
    """The array of a learner's value (``.value``) or a NumPy array; None for anything else."""
    held = getattr(v, "value", v)
    return np.asarray(held, dtype=np.float64) if isinstance(held, np.ndarray | float | int) else None


def sum_to(g: np.ndarray, shape: tuple) -> np.ndarray:
    """``g`` summed back to ``shape`` (the checks' own unbroadcast, on arrays)."""
    while g.ndim > len(shape):
        g = g.sum(axis=0)
    for axis, n in enumerate(shape):
        if n == 1 and g.shape[axis] != 1:
            g = g.sum(axis=axis, keepdims=True)
    return g


class _Probe(Exception):
    """Raised inside a learner's ``with Tape():`` block to see that the tape still leaves."""


# ---- parts 1 to 3: the value, the tape, the primitive -------------------------------------------------

OPERATORS = ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
             "__rtruediv__", "__matmul__", "__neg__", "T")


def _judge_value(Value: Any) -> str | None:
    if not isinstance(Value, type):
        return "pass the class itself: check(\"value\", Value)."
    v = Value(2)
    held = getattr(v, "value", None)
    if type(held) is not np.ndarray:
        return (f"Value(2).value is {type(held).__name__}, not a NumPy array: keep "
                "np.asarray(value, dtype=float).")
    if held.dtype != np.float64 or held.shape != ():
        return (f"Value(2).value has dtype {held.dtype} and shape {held.shape}: convert with dtype=float, "
                "so that a gradient of whole numbers is not rounded.")
    w = Value([[1.0, 2.0, 3.0]], name="w")
    if getattr(w, "name", None) != "w" or getattr(w, "grad", 0) is not None:
        return "a new Value keeps the name it is given (default None) and has .grad = None."
    leaf = (tuple(getattr(w, "_prev", (0,))), getattr(w, "_op", None), getattr(w, "_record", 0))
    if leaf != ((), "", None):
        return ("a new Value is a leaf: it was computed from nothing, so _prev = (), _op = \"\" and "
                "_record = None (part 3's ops set them on the values they make).")
    if getattr(w, "shape", None) != (1, 3) or array(getattr(w, "numpy", lambda: None)()) is None:
        return "Value needs .shape (its array's shape) and .numpy() (its array)."
    absent = [name for name in OPERATORS if not any(name in vars(k) for k in Value.__mro__[:-1])]
    if absent:
        return (f"Value has no {', '.join(absent)}: each operator calls the op of its name (add, subtract, "
                "multiply, divide, matmul; transpose for .T), which later cells define.")
    return None


def _judge_tape(Tape: Any) -> str | None:
    ns = namespace(Tape)
    if (problem := missing(ns, ("Record", "Step"))) is not None:
        return problem
    if not isinstance(Tape, type) or type(getattr(Tape, "active", None)) is not list:
        return "Tape needs a class attribute `active`: the list of the tapes recording now."
    Tape.active.clear()
    with Tape() as a:
        with Tape() as b:
            both = list(Tape.active)
        inner_left = list(Tape.active)
    if not (isinstance(a, Tape) and isinstance(b, Tape)):
        return "`with Tape() as tape:` must give the tape itself: __enter__ returns self."
    if both != [a, b] or inner_left != [a] or Tape.active:
        return ("inside `with Tape()`, the tape is in Tape.active (nested tapes both, outer first); when "
                "its block ends it leaves the list.")
    if type(a.records) is not list or a.records or a.records is b.records:
        return "each tape has its own .records, an empty list made in __init__ (not one shared by all tapes)."
    try:
        with Tape():
            raise _Probe
    except _Probe:
        pass
    else:
        return "__exit__ returns a true value, so it swallows errors raised in the block: return nothing."
    if Tape.active:
        Tape.active.clear()
        return "an error inside `with Tape():` left the tape in Tape.active: __exit__ removes it always."
    r = ns["Record"]("op", ["a"], ["y"], len, {"k": 1})
    s = ns["Step"](r, ("g",), ("c",))
    if (r.op, r.inputs, r.outputs, r.vjp, r.params) != ("op", ["a"], ["y"], len, {"k": 1}):
        return "Record(op, inputs, outputs, vjp, params) keeps each under its own name (.op, .inputs, ...)."
    if (s.record, s.upstream, s.contributions) != (r, ("g",), ("c",)):
        return "Step(record, upstream, contributions) keeps each under its own name."
    return None


def _judge_primitive(primitive: Any) -> str | None:
    ns = namespace(primitive)
    if (problem := missing(ns, ("Value", "Tape", "Record"))) is not None:
        return problem
    Value, Tape = ns["Value"], ns["Tape"]
    Tape.active.clear()

    def vjp(g, y, x, **params):
        return (g,)

    cube = primitive("cube", lambda x: x ** 3, vjp)
    if not callable(cube):
        return "primitive(name, forward, vjp) returns the op: a function of the inputs."
    y = cube(Value(2.0))
    if not isinstance(y, Value) or float(y.value) != 8.0:
        return "the op returns a Value holding forward(*the input arrays)."
    try:
        with Tape() as a:
            with Tape() as b:
                y = cube(3.0)
        cube(4.0)
    except Exception as exc:  # noqa: BLE001  (the learner's error, by type and message)
        return (f"cube(3.0) raised {type(exc).__name__}: {exc}. A plain number given to an op is first "
                "wrapped into a Value.")
    finally:
        Tape.active.clear()
    if len(a.records) != 1 or a.records != b.records:
        return ("an op adds one record to every tape in Tape.active (nested tapes: each records it), and "
                "none when no tape is recording.")
    r = a.records[0]
    if r.op != "cube" or r.vjp is not vjp or r.params != {} or list(r.outputs) != [y]:
        return "the record holds the op's name, its inputs, [its output], the vjp function and the params."
    if len(r.inputs) != 1 or not isinstance(r.inputs[0], Value) or float(r.inputs[0].value) != 3.0:
        return "a plain number given to an op is first wrapped into a Value (the record's inputs are Values)."
    scale = primitive("scale", lambda x, k: x * k, vjp)
    with Tape() as t:
        z = scale(Value(2.0), k=3.0)
    if float(z.value) != 6.0 or t.records[0].params != {"k": 3.0}:
        return "keyword arguments are params: passed to forward and kept in the record's .params."
    if tuple(getattr(z, "_prev", ())) != tuple(t.records[0].inputs) or getattr(z, "_op", None) != "scale" \
            or getattr(z, "_record", None) is not t.records[0]:
        return ("the output also remembers where it came from (micrograd's design, used at the end): "
                "out._prev = the inputs (a tuple), out._op = the name, out._record = the record.")
    return None


register("10", "value", function="Value", judge=_judge_value, reference=solution.VALUE, hint=(
    "A Value wraps np.asarray(value, dtype=float) with a name and .grad = None; each operator method "
    "just calls the op of its name, e.g. __mul__(self, other) returns multiply(self, other)."))
register("10", "tape", function="Tape", judge=_judge_tape, reference=solution.TAPE, hint=(
    "Record and Step only store what they are given. A context manager's __enter__ runs at `with` and "
    "returns what `as` names; __exit__ runs when the block ends, even by an error."))
register("10", "primitive", function="primitive", judge=_judge_primitive, reference=solution.PRIMITIVE,
         hint=("Inside, define op(*inputs, **params): wrap each input that is not a Value, compute "
               "Value(forward(*arrays, **params)), make one Record, append it to every tape in "
               "Tape.active, and return the output."))

# ---- parts 4 to 7: ops and their VJPs, against the engine ---------------------------------------------

MISSING_G = ("it leaves out the upstream gradient g: a VJP returns g times the local derivative "
             "(the chain rule).")


def _made_by_ops(out: Any, args: tuple, tape: Any) -> bool:
    """Whether ``out`` is an argument itself or the output of a record on ``tape`` (so recorded)."""
    return any(out is a for a in args) or any(out is o for r in tape.records for o in r.outputs)


def op_judge(cases: dict[str, tuple[Callable, list[tuple[tuple, dict]], dict[str, Callable], bool]],
             names: tuple[str, ...]) -> Callable[[Any], str | None]:
    """A judge for the learner's ops named in ``cases``: op name → (the engine's op, [(input shapes,
    params)], {hint: wrong VJP on arrays (g, y, *inputs, **params) → tuple}, inputs positive)."""

    def judge(answer: Any) -> str | None:
        ns = namespace(answer)
        if (problem := missing(ns, ("Value", "Tape", *cases))) is not None:
            return problem
        Value, Tape = ns["Value"], ns["Tape"]
        rng = np.random.default_rng()
        for name, (engine_op, shapes_params, variants, positive) in cases.items():
            for shapes, params in shapes_params:
                arrays = [rng.uniform(0.5, 2.0, s) if positive else rng.normal(size=s) for s in shapes]
                where = f"{name} on inputs of shapes {', '.join(map(str, shapes))}" + (
                    f" with {params}" if params else "")
                problem = _one_op(ns[name], engine_op, arrays, params, variants, names, where, Value, Tape,
                                  rng)
                if problem is not None:
                    return problem
        return None

    return judge


def _one_op(op, engine_op, arrays, params, variants, names, where, Value, Tape, rng) -> str | None:
    Tape.active.clear()
    xs = [eg.constant(a) for a in arrays]
    with eg.GradientTape() as etape:
        etape.watch(xs)
        y_t = engine_op(*xs, **params)
    y = y_t.numpy()
    g = rng.normal(size=y.shape)
    want = [w.numpy() for w in etape.gradient(y_t, xs, output_gradients=eg.constant(g))]
    with Tape() as tape:
        out = op(*[Value(a.copy()) for a in arrays], **params)
    if array(out) is None or array(out).shape != y.shape or not np.allclose(array(out), y):
        return f"{where}: the forward result is not the engine's (its value or its shape)."
    if len(tape.records) != 1:
        return f"{where}: one call of the op should make one record; it made {len(tape.records)}."
    r = tape.records[0]
    args = (Value(g), r.outputs[0], *r.inputs)
    try:
        with Tape() as probe:
            got = r.vjp(*args, **r.params)
    except Exception as exc:  # noqa: BLE001  (the learner's error, by type and message)
        return f"{where}: the VJP raised {type(exc).__name__}: {exc}"
    finally:
        Tape.active.clear()
    if type(got) not in (tuple, list) or len(got) != len(arrays):
        return (f"{where}: the VJP returns {type(got).__name__}; return a tuple with one gradient per input "
                f"({len(arrays)}).")
    parts = []
    for i, c in enumerate(got):
        if not isinstance(c, Value):
            return (f"{where}: ∂{names[i]} is {type(c).__name__}, not a Value: compute it with your ops "
                    "on the Values g, y and the inputs, so that a tape can record it.")
        if not _made_by_ops(c, args, probe):
            return (f"{where}: ∂{names[i]} was made outside your ops (a new Value of a NumPy result), so no "
                    "tape records it: compute it with your ops (g * b, not Value(g.value * b.value)).")
        a = array(c)
        if a.shape != arrays[i].shape and not _fits(a.shape, y.shape):
            turned = " (the transpose of its input's: a product in the wrong order?)" if (
                a.shape == arrays[i].shape[::-1]) else ""
            return f"{where}: ∂{names[i]} has shape {a.shape}, neither its input's nor the output's{turned}."
        parts.append(sum_to(np.broadcast_to(a, np.broadcast_shapes(a.shape, arrays[i].shape)),
                            arrays[i].shape) if a.shape != arrays[i].shape else a)
    if all(p.shape == w.shape and np.allclose(p, w, rtol=1e-6, atol=1e-9) for p, w in zip(parts, want)):
        return None
    for what, variant in variants.items():
        wrong = variant(g, y, *arrays, **params)
        if all(v is None or np.allclose(p, _summed(v, y.shape, p.shape), rtol=1e-6, atol=1e-9)
               for p, v in zip(parts, wrong)):
            return f"{where}: {what}"
    bad = next(i for i, (p, w) in enumerate(zip(parts, want)) if p.shape != w.shape or not np.allclose(p, w))
    return f"{where}: ∂{names[bad]} is not the engine's gradient."


def _summed(v: Any, out_shape: tuple, shape: tuple) -> np.ndarray:
    """A wrong VJP's gradient (of the output's shape or less) summed to its input's ``shape``."""
    return sum_to(np.broadcast_to(v, np.broadcast_shapes(np.shape(v), out_shape)), shape)


def _fits(shape: tuple, target: tuple) -> bool:
    """Whether ``shape`` broadcasts to ``target``."""
    try:
        return np.broadcast_shapes(shape, target) == target
    except ValueError:
        return False


_BINARY = [((2, 3), (2, 3)), ((3, 1), (1, 4)), ((2, 3), ()), ((4,), (3, 4))]


def _like(v, y):
    return np.broadcast_to(v, y.shape)


register("10", "arithmetic", function="add", reference=solution.ARITHMETIC, judge=op_judge({
    "add": (eg.add, [(s, {}) for s in _BINARY], {
        MISSING_G: lambda g, y, a, b: (np.ones_like(y), np.ones_like(y))}, False),
    "subtract": (eg.subtract, [(s, {}) for s in _BINARY], {
        "the sign of ∂b is wrong: a − b goes down when b goes up.": lambda g, y, a, b: (g, g),
        MISSING_G: lambda g, y, a, b: (np.ones_like(y), -np.ones_like(y))}, False),
    "multiply": (eg.multiply, [(s, {}) for s in _BINARY], {
        MISSING_G: lambda g, y, a, b: (_like(b, y), _like(a, y)),
        "the two gradients are swapped: ∂a takes the other factor, b.": lambda g, y, a, b: (g * a, g * b)},
        False),
    "divide": (eg.divide, [(s, {}) for s in _BINARY], {
        MISSING_G: lambda g, y, a, b: (_like(1 / b, y), -a / b ** 2 + 0 * y),
        "∂b has the wrong sign: a / b goes down when b goes up (the derivative of 1/b is −1/b²).":
            lambda g, y, a, b: (None, g * a / b ** 2),
        "∂b divides by b once where the quotient rule divides by b²: ∂b = −g·a/b² = −g·y/b.":
            lambda g, y, a, b: (None, -g * a / b)}, True),
}, ("a", "b")), hint=(
    "Each VJP returns (∂a, ∂b): g times the derivative of the output by that input, written with your "
    "ops on the Values. Leave broadcasting to the walk: a gradient may keep the output's shape."))

register("10", "elementwise", function="tanh", reference=solution.ELEMENTWISE, judge=op_judge({
    "tanh": (eg.tanh, [(((3,),), {}), (((2, 4),), {}), (((),), {})], {
        MISSING_G: lambda g, y, x: (1 - y * y,),
        "it uses the input x where the rule needs the output y = tanh(x).":
            lambda g, y, x: (g * (1 - x * x),),
        "the sign is flipped: tanh rises everywhere, so its derivative is positive.":
            lambda g, y, x: (g * (y * y - 1),)}, False),
    "exp": (eg.exp, [(((3,),), {}), (((2, 2),), {})], {
        MISSING_G: lambda g, y, x: (y,),
        "it multiplies g by x where the derivative of exp is exp itself (y).": lambda g, y, x: (g * x,)},
        False),
    "log": (eg.log, [(((3,),), {}), (((2, 2),), {})], {
        MISSING_G: lambda g, y, x: (1 / x,),
        "it divides by the output y where the derivative of log x is 1/x.": lambda g, y, x: (g / y,),
        "it multiplies by x where the derivative of log x is 1/x.": lambda g, y, x: (g * x,)}, True),
}, ("x",)), hint=(
    "The derivatives: tanh′ = 1 − y², exp′ = y, log′ = 1/x (y is the output, x the input); each VJP "
    "returns a tuple of one: (g times it,)."))

register("10", "matmul", function="matmul", reference=solution.MATMUL, judge=op_judge({
    "matmul": (eg.matmul, [(((2, 3), (3, 4)), {}), (((4, 4), (4, 4)), {}), (((1, 5), (5, 2)), {})], {
        MISSING_G: lambda g, y, a, b: (np.ones_like(g) @ b.T, a.T @ np.ones_like(g)),
        "∂a is transposed, or its product is in the wrong order: write the shapes down.":
            lambda g, y, a, b: ((g @ b.T).T, None),
        "∂b is transposed, or its product is in the wrong order: write the shapes down.":
            lambda g, y, a, b: (None, (a.T @ g).T)}, False),
    "transpose": (eg.transpose, [(((2, 3),), {}), (((4, 1),), {})], {}, False),
}, ("a", "b")), hint=(
    "For y = a @ b with a (n, k), b (k, m) and g (n, m): ∂a must be (n, k) and ∂b (k, m); each is a "
    "product of g with the other factor transposed (.T). Transpose's own VJP transposes g back."))


def _reductions():
    cases = [(((3, 4),), {}), (((3, 4),), {"axis": 0}), (((3, 4),), {"axis": 1}),
             (((3, 4),), {"axis": -1, "keepdims": True}), (((2, 3, 4),), {"axis": (0, 2)}),
             (((2, 3, 4),), {"axis": 1, "keepdims": True}), (((5,),), {})]
    spread = {"it forgets g: every element of x receives g (the sum's derivative is 1), times 1/n for a "
              "mean.": lambda g, y, x, **p: (np.ones_like(x),)}
    return {"reduce_sum": (eg.sum, cases, spread, False), "reduce_mean": (eg.mean, cases, {
        "the mean's gradient is the sum's divided by n, the number of elements averaged: it is not divided.":
            lambda g, y, x, **p: (np.broadcast_to(np.reshape(g, np.sum(x, keepdims=True, **{
                k: v for k, v in p.items() if k == "axis"}).shape), x.shape),), **spread}, False)}


register("10", "reductions", function="reduce_sum", reference=solution.REDUCTIONS, judge=op_judge(
    _reductions(), ("x",)), hint=(
    "g has the output's shape; put it back in the shape with the summed axes kept as 1s (the shape "
    "keepdims=True gives), then spread it over x's shape (times ones like x); the mean divides by the "
    "number of elements averaged. reshape's VJP reshapes g back to x's shape."))


# ---- part 8: unbroadcast ---------------------------------------------------------------------------------

_PAIRS = [((3, 4), (3, 1)), ((3, 4), (4,)), ((3, 4), (1, 4)), ((2, 3, 4), (3, 1)), ((3, 4), ()),
          ((3, 4), (3, 4)), ((2, 1, 4), (1, 1))]


def _judge_unbroadcast(answer: Any) -> str | None:
    ns = namespace(answer)
    if (problem := missing(ns, ("Value", "Tape", "reduce_sum"))) is not None:
        return problem
    Value, Tape = ns["Value"], ns["Tape"]
    rng = np.random.default_rng()
    for big, shape in _PAIRS:
        g = Value(rng.normal(size=big))
        Tape.active.clear()
        with Tape() as probe:
            out = answer(g, shape)
        Tape.active.clear()
        where = f"for g of shape {big} and an input of shape {shape}"
        if not isinstance(out, Value):
            return f"{where} it returns {type(out).__name__}: return a Value computed with your reduce_sum."
        if not _made_by_ops(out, (g,), probe):
            return f"{where} the result was made outside your ops: sum with reduce_sum, so a tape records it."
        got, want = out.value, sum_to(g.value, shape)
        if got.shape == want.shape:
            if not np.allclose(got, want):
                return f"{where} it sums over an axis that broadcasting did not stretch."
            continue
        if got.ndim > len(shape):
            return (f"{where} it returns shape {got.shape}: not summed over the leading axes broadcasting "
                    "added.")
        if got.ndim < len(shape):
            return (f"{where} it returns shape {got.shape}: an axis of size 1 that broadcasting stretched is "
                    "summed but must be kept (keepdims=True).")
        return (f"{where} it returns shape {got.shape}: not summed over a broadcast axis (an axis of size 1 "
                "in the input that broadcasting stretched).")
    return None


register("10", "unbroadcast", function="unbroadcast", judge=_judge_unbroadcast,
         reference=solution.UNBROADCAST, hint=(
             "Broadcasting does two things, so undo both: it adds leading axes (sum them away, axis=0, "
             "while g has more axes than the shape) and stretches axes of size 1 (sum each such axis with "
             "keepdims=True)."))

from . import lessons_10_walk  # noqa: E402,F401  (registers the walk, higher order and graph walk)
