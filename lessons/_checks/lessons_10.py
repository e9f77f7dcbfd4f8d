"""The self-checks of lesson 10 (build your own engine): the learner's VJPs and backward walk.

Each check runs the learner's function on NumPy arrays of several random shapes (shapes that
broadcast included), compares what it returns with the gradients the engine computes, and, when
they differ, names the kind of mistake by comparing with typical wrong variants (the factor ``g``
missing, not summed over a broadcast axis, transposed, the input where the rule needs the output,
contributions overwritten instead of summed, records visited in the wrong order).

`adopt` is what the lesson calls after each of the learner's cells: it checks the function and
returns it when it is right, else the course's own version (the lesson goes on either way, so it
runs top to bottom in CI with the exercises unanswered).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import engine as eg

from .plain import _is_tensor
from .registry import evaluate, register

# ---- the course's own parts (what `adopt` falls back on) ----------------------------------------------


def _unbroadcast(g: np.ndarray, shape: tuple) -> np.ndarray:
    """Sum ``g`` back to ``shape`` over the axes broadcasting added or stretched."""
    while g.ndim > len(shape):
        g = g.sum(axis=0)
    for axis, n in enumerate(shape):
        if n == 1 and g.shape[axis] != 1:
            g = g.sum(axis=axis, keepdims=True)
    return g


def _multiply_vjp(g, a, b, y):
    return _unbroadcast(g * b, np.shape(a)), _unbroadcast(g * a, np.shape(b))


def _matmul_vjp(g, a, b, y):
    return g @ b.T, a.T @ g


def _tanh_vjp(g, x, y):
    return (g * (1 - y * y),)


def _backward(tape, target):
    grads = {id(target): np.ones_like(target.value)}
    steps = []
    for r in tape.records[::-1]:
        g = grads.get(id(r.outputs[0]))
        if g is None:
            continue
        contributions = r.vjp(g)
        steps.append(_Step(r, (g,), contributions))
        for x, c in zip(r.inputs, contributions):
            grads[id(x)] = grads[id(x)] + c if id(x) in grads else c
    for r in tape.records:
        for v in (*r.inputs, *r.outputs):
            if id(v) in grads:
                v.grad = grads[id(v)]
    return steps


REFERENCE = {"multiply_vjp": _multiply_vjp, "matmul_vjp": _matmul_vjp, "tanh_vjp": _tanh_vjp,
             "backward": _backward}


# ---- a small engine of the checks' own, to build tapes for the learner's walk -----------------------


class _Value:
    def __init__(self, value, name=None):
        self.value, self.name, self.grad = np.asarray(value, dtype=np.float64), name, None


class _Record:
    def __init__(self, op, inputs, outputs, vjp):
        self.op, self.inputs, self.outputs, self.vjp = op, inputs, outputs, vjp


class _Step:
    def __init__(self, record, upstream, contributions):
        self.record, self.upstream, self.contributions = record, upstream, contributions


class _Tape:
    def __init__(self):
        self.records: list[_Record] = []

    def op(self, name: str, forward: Callable, vjp: Callable, *inputs: _Value) -> _Value:
        arrays = [x.value for x in inputs]
        out = _Value(forward(*arrays))
        self.records.append(_Record(name, list(inputs), [out], lambda g: vjp(g, *arrays, out.value)))
        return out


def _add_vjp(g, a, b, y):
    return _unbroadcast(g, np.shape(a)), _unbroadcast(g, np.shape(b))


def _sub_vjp(g, a, b, y):
    return _unbroadcast(g, np.shape(a)), _unbroadcast(-g, np.shape(b))


# ---- judging a VJP -------------------------------------------------------------------------------------

NUMPY_ONLY = ("it returns an engine Tensor: your engine works on NumPy arrays, and a VJP that asks the "
              "engine (eg.*) for the gradient is not one you wrote. Compute it with NumPy.")


def _parts(out: Any, n: int) -> list[np.ndarray] | str:
    """The learner's contributions as float arrays, or what is wrong with them."""
    if type(out) not in (tuple, list):
        return f"it returns {type(out).__name__}; return a tuple with one gradient per input ({n})."
    if len(out) != n:
        return f"it returns {len(out)} part(s); the op has {n} input(s), one gradient each."
    parts = []
    for i, p in enumerate(out):
        if _is_tensor(p):
            return NUMPY_ONLY
        if type(p) is not np.ndarray and type(p) not in (float, int) and not isinstance(p, np.floating):
            return f"part {i + 1} is {type(p).__name__}; give a NumPy array."
        parts.append(np.array(p, dtype=np.float64))
    return parts


def _vjp_judge(op: Callable, shapes: list[tuple], variants: dict[str, Callable], names: tuple[str, ...],
               positive: bool = False) -> Callable[[Any], str | None]:
    """A judge for ``vjp(g, *inputs, y)`` of the engine op ``op``, on inputs of each of ``shapes``."""

    def judge(answer: Any) -> str | None:
        rng = np.random.default_rng()
        for shape in shapes:
            arrays = [rng.uniform(0.5, 2.0, s) if positive else rng.normal(size=s) for s in shape]
            xs = [eg.constant(a) for a in arrays]
            with eg.GradientTape() as tape:
                tape.watch(xs)
                y_t = op(*xs)
            y = y_t.numpy()
            g = rng.normal(size=y.shape)
            want = [w.numpy() for w in tape.gradient(y_t, xs, output_gradients=eg.constant(g))]
            try:
                out = answer(g, *[a.copy() for a in arrays], y.copy())
            except Exception as exc:  # noqa: BLE001  (the learner's error, shown by type and message)
                return (f"calling it on inputs of shapes {[a.shape for a in arrays]} raised "
                        f"{type(exc).__name__}: {exc}")
            got = _parts(out, len(arrays))
            if isinstance(got, str):
                return got
            for i, (p, w) in enumerate(zip(got, want)):
                if p.shape != w.shape:
                    if p.shape == y.shape or p.size > w.size:
                        return (f"∂{names[i]} has shape {p.shape}, but {names[i]} has shape {w.shape}: a "
                                "gradient has its input's shape, so sum it over the axes the op broadcast.")
                    if p.shape == w.T.shape:
                        return f"∂{names[i]} has shape {p.shape}, the transpose of {names[i]}'s {w.shape}."
                    return f"∂{names[i]} has shape {p.shape}, but {names[i]} has shape {w.shape}."
            if all(np.allclose(p, w, rtol=1e-6, atol=1e-9) for p, w in zip(got, want)):
                continue
            for what, variant in variants.items():
                wrong = variant(g, *arrays, y)
                if all(np.shape(v) == p.shape and np.allclose(p, v, rtol=1e-6, atol=1e-9)
                       for p, v in zip(got, wrong) if v is not None):
                    return what
            bad = next(i for i, (p, w) in enumerate(zip(got, want)) if not np.allclose(p, w, rtol=1e-6))
            return f"∂{names[bad]} is not right for inputs of shapes {[a.shape for a in arrays]}."
        return None

    return judge


_u = _unbroadcast
MISSING_G = ("it leaves out the upstream gradient g: a VJP multiplies the local derivative by g "
             "(the chain rule).")
register("10", "multiply_vjp", function="multiply_vjp", hint=(
    "Each input's gradient is g times the derivative of a·b with respect to that input, then summed "
    "back to the input's shape with unbroadcast, as add_vjp does."),
    judge=_vjp_judge(eg.multiply, [((2, 3), (2, 3)), ((3, 1), (1, 4)), ((2, 2), ())], {
        MISSING_G: lambda g, a, b, y: (_u(np.broadcast_to(b, y.shape), a.shape),
                                       _u(np.broadcast_to(a, y.shape), np.shape(b))),
        "the two gradients are swapped: ∂a takes the other factor, b.": lambda g, a, b, y: (
            _u(g * a, a.shape), _u(g * b, np.shape(b))),
    }, ("a", "b")))
register("10", "matmul_vjp", function="matmul_vjp", hint=(
    "For y = a @ b: ∂a has a's shape and ∂b has b's; which product of g with a transposed factor gives "
    "each? Write the shapes down: (n, k) @ (k, m) → (n, m)."),
    judge=_vjp_judge(eg.matmul, [((2, 3), (3, 4)), ((4, 4), (4, 4)), ((1, 5), (5, 2))], {
        "∂b is transposed: it should have b's shape and rows.": lambda g, a, b, y: (None, (a.T @ g).T),
        "∂a is transposed: it should have a's shape and rows.": lambda g, a, b, y: ((g @ b.T).T, None),
        MISSING_G: lambda g, a, b, y: (np.ones_like(g) @ b.T, a.T @ np.ones_like(g)),
    }, ("a", "b")))
register("10", "tanh_vjp", function="tanh_vjp", hint=(
    "The derivative of tanh can be written with its output y = tanh(x) alone; the VJP is g times it."),
    judge=_vjp_judge(eg.tanh, [((3,),), ((2, 4),), ((),)], {
        MISSING_G: lambda g, x, y: (1 - y * y,),
        "it uses the input x where the rule needs the output y = tanh(x).": lambda g, x, y: (
            g * (1 - x * x),),
        "the sign is flipped: tanh rises everywhere, so its derivative is positive.": lambda g, x, y: (
            g * (y * y - 1),),
    }, ("x",)))


# ---- judging a backward walk ---------------------------------------------------------------------------


def _programs(rng: np.random.Generator) -> list[tuple[str, Callable, tuple]]:
    """(description, build(tape, *values) → target, shapes): functions with fan-out and broadcasting."""
    def f(t, x, y):  # x² − 2xy + 3y: x and y each feed two ops
        return t.op("add", np.add, _add_vjp,
                    t.op("subtract", np.subtract, _sub_vjp,
                         t.op("multiply", np.multiply, _multiply_vjp, x, x),
                         t.op("multiply", np.multiply, _multiply_vjp,
                              t.op("multiply", np.multiply, _multiply_vjp, _Value(2.0), x), y)),
                    t.op("multiply", np.multiply, _multiply_vjp, _Value(3.0), y))

    def mlp(t, x, w, b):  # sum(tanh(x @ w + b)): b broadcast over the rows
        h = t.op("tanh", np.tanh, _tanh_vjp, t.op("add", np.add, _add_vjp,
                                                 t.op("matmul", np.matmul, _matmul_vjp, x, w), b))
        return t.op("multiply", np.multiply, _multiply_vjp, h, h)

    return [("f(x, y) = x² − 2xy + 3y", f, ((), ())), ("tanh(x @ w + b)²", mlp, ((4, 3), (3, 2), (1, 2)))]


def _engine_f(x, y):
    return eg.add(eg.subtract(x * x, eg.multiply(2.0, x) * y), eg.multiply(3.0, y))


def _engine_mlp(x, w, b):
    h = eg.tanh(x @ w + b)
    return h * h


def _judge_backward(answer: Any) -> str | None:
    rng = np.random.default_rng()
    engines = {"f(x, y) = x² − 2xy + 3y": _engine_f, "tanh(x @ w + b)²": _engine_mlp}
    for name, build, shapes in _programs(rng):
        arrays = [rng.normal(size=s) for s in shapes]
        values = [_Value(a, f"v{i}") for i, a in enumerate(arrays)]
        tape = _Tape()
        target = build(tape, *values)
        ts = [eg.constant(a) for a in arrays]
        with eg.GradientTape() as etape:
            etape.watch(ts)
            y = engines[name](*ts)
        want = [w.numpy() for w in etape.gradient(y, ts)]
        try:
            steps = answer(tape, target)
        except Exception as exc:  # noqa: BLE001
            kind = type(exc).__name__
            if kind in ("KeyError", "TypeError", "AttributeError"):
                return (f"on {name} it raised {kind}: {exc}. Is each record visited after every record "
                        "that uses its output (last record first), so that its upstream gradient is there?")
            return f"on {name} it raised {kind}: {exc}"
        if target.grad is None:
            return "the target's .grad is None: the walk starts from ∂target/∂target = ones like the target."
        if any(v.grad is None for v in values):
            return ("an input's .grad is None: set .grad on every value the walk reaches (the sum of the "
                    "contributions it received).")
        if type(steps) is not list or len(steps) != len(tape.records):
            return ("return the list of steps (one per record visited, a Step(record, upstream, "
                    "contributions) each).")
        if [s.record for s in steps] == tape.records and len(steps) > 1:
            return "the steps visit the records first to last; a backward walk visits them last to first."
        if [s.record for s in steps] != tape.records[::-1]:
            return "the steps are not the records from last to first."
        got = [np.asarray(v.grad, dtype=np.float64) for v in values]
        if all(g.shape == w.shape and np.allclose(g, w, rtol=1e-6, atol=1e-9) for g, w in zip(got, want)):
            continue
        last = {}
        for s in steps:  # what each input would hold if contributions overwrote instead of adding up
            for x, c in zip(s.record.inputs, s.contributions):
                last[id(x)] = c
        if all(np.allclose(v.grad, last.get(id(v), np.nan)) for v in values):
            return ("a value used by several ops keeps only one contribution: its gradient is the sum of "
                    "all the contributions it receives (add them up).")
        return f"the gradients of {name} are not right."
    return None


register("10", "backward", function="backward", judge=_judge_backward, hint=(
    "Start with grads = {id(target): ones}; for each record from last to first take g = the gradient of "
    "its output (skip it when there is none), ask r.vjp(g) for the contributions, keep a Step, and add "
    "each contribution to its input's gradient; at the end set v.grad for every value."))


def adopt(name: str, function: Any) -> Any:
    """Check the learner's ``function`` for exercise ``name`` of lesson 10 and print the verdict; return
    it when it is right, else the course's own version, so that the lesson can go on.

    >>> f = adopt("tanh_vjp", lambda g, x, y: (g * (1 - y * y),))
    Right!
    """
    ok, message = evaluate("10", name, function)
    print(message)
    if ok:
        return function
    print("(The lesson goes on with the course's version until yours passes.)")
    return REFERENCE[name]
