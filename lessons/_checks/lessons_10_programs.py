"""Programs for lesson 10's differential checks: fixed ones that hold the classic traps, and random ones.

A program is a function of ``ops`` (an object with ``add sub mul div tanh exp log matmul sum mean``)
and of its input values, so the same program runs on three engines: the learner's (their ops on their
``Value`` s), ``eg`` (the reference gradients) and NumPy (the forward that finite differences nudge).

>>> import numpy as np
>>> p = PROGRAMS[0]
>>> p.name, p.shapes, float(p.run(NUMPY_OPS, [np.array(1.0), np.array(2.0)]))
('f = 3x + (x + y)', ((), ()), 6.0)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import numpy as np

import engine as eg

#: The shapes a random program's values take: any two of them broadcast together.
FAMILY = ((3, 4), (3, 1), (1, 4), (4,), (1, 1), ())

NUMPY_OPS = SimpleNamespace(
    add=np.add, sub=np.subtract, mul=np.multiply, div=np.divide, tanh=np.tanh, exp=np.exp, log=np.log,
    matmul=np.matmul, sum=lambda x, **p: np.sum(x, **p), mean=lambda x, **p: np.mean(x, **p))
ENGINE_OPS = SimpleNamespace(
    add=eg.add, sub=eg.subtract, mul=eg.multiply, div=eg.divide, tanh=eg.tanh, exp=eg.exp, log=eg.log,
    matmul=eg.matmul, sum=lambda x, **p: eg.sum(x, **p), mean=lambda x, **p: eg.mean(x, **p))

#: the learner's names for each op of a program (the lesson's cells define them).
LEARNER_NAMES = {"add": "add", "sub": "subtract", "mul": "multiply", "div": "divide", "tanh": "tanh",
                 "exp": "exp", "log": "log", "matmul": "matmul", "sum": "reduce_sum",
                 "mean": "reduce_mean"}


def learner_ops(namespace: dict) -> SimpleNamespace:
    """The learner's ops under the programs' names (KeyError names the first one missing)."""
    return SimpleNamespace(**{k: namespace[v] for k, v in LEARNER_NAMES.items()})


@dataclass(frozen=True)
class Program:
    """A named program: ``run(ops, inputs)`` returns its scalar target; ``shapes`` of its inputs."""

    name: str
    shapes: tuple[tuple[int, ...], ...]
    run: Callable[[Any, list], Any]
    positive: bool = False  # inputs drawn in [0.5, 2] (a log or a division reads them)


def _trap(o, xs):  # add hands the same g to both inputs; an in-place += then changes y's gradient
    x, y = xs
    return o.add(o.mul(3.0, x), o.add(x, y))


def _twice(o, xs):  # one value used twice by one op (micrograd's a + a)
    x, y = xs
    return o.mul(o.add(x, x), y)


def _diamond(o, xs):  # h feeds two branches that meet again
    (x,) = xs
    h = o.tanh(x)
    return o.sum(o.add(o.mul(h, x), o.exp(h)))


def _seed(o, xs):  # seed 001's f(x, y) = x² − 2xy + 3y
    x, y = xs
    return o.add(o.sub(o.mul(x, x), o.mul(o.mul(2.0, x), y)), o.mul(3.0, y))


def _layer(o, xs):  # a layer with a broadcast bias and a broadcast scale, then a mean
    x, w, b, c = xs
    return o.mean(o.mul(o.tanh(o.add(o.matmul(x, w), b)), c))


def _chain(o, xs):  # a long chain with a quotient and a log
    x, y = xs
    z = o.div(x, o.add(o.mul(y, y), 1.0))
    return o.mean(o.sum(o.log(o.add(o.mul(z, z), 1.0)), axis=0))


PROGRAMS = [
    Program("f = 3x + (x + y)", ((), ()), _trap),
    Program("f = (x + x)·y", ((), ()), _twice),
    Program("f = sum(tanh(x)·x + exp(tanh(x)))", ((3,),), _diamond),
    Program("f = x² − 2xy + 3y", ((), ()), _seed),
    Program("f = mean(tanh(x @ w + b) · c), b of shape (4,), c of shape (3, 1)",
            ((3, 2), (2, 4), (4,), (3, 1)), _layer),
    Program("f = mean(sum(log((x / (y² + 1))² + 1), axis=0)), y of shape (1, 4)", ((3, 4), (1, 4)), _chain),
]


def _reduce_params(shape: tuple, rng: np.random.Generator) -> dict | None:
    """axis/keepdims for a sum or mean of ``shape`` whose result stays in FAMILY (None: none does)."""
    choices = [{}]
    for axis in range(len(shape)):
        choices += [{"axis": axis, "keepdims": True}, {"axis": axis - len(shape), "keepdims": True}]
    if len(shape) == 2:
        choices += [{"axis": 0}, {"axis": (0, 1), "keepdims": True}]
    good = [p for p in choices if np.sum(np.zeros(shape), **p).shape in FAMILY]
    return good[rng.integers(len(good))] if good else None


def _pick(rng: np.random.Generator, weight: int, n: int) -> int:
    """An argument: mostly a recent result (chains, values used twice), else an input (not the matrix)."""
    if n > weight + 1 and rng.random() < 0.7:
        return int(rng.integers(weight + 1, n))
    return int(rng.integers(weight))


def _result_shape(kind: str, a: tuple, b: tuple, params: dict) -> tuple:
    if kind in ("add", "sub", "mul", "div"):
        return tuple(np.broadcast_shapes(a, b))
    if kind in ("sum", "mean"):
        return np.sum(np.zeros(a), **params).shape
    return a  # matmul by the (4, 4) matrix, and the elementwise functions


def random_program(rng: np.random.Generator, k: int) -> Program:
    """A random program over every op: broadcasting shapes, values used twice, chains and diamonds."""
    shapes = [FAMILY[rng.integers(len(FAMILY))] for _ in range(int(rng.integers(2, 4)))] + [(4, 4)]
    weight = len(shapes) - 1  # the matrix a matmul multiplies by
    steps: list[tuple] = []  # (kind, argument indices, params); indices into inputs + earlier results
    value_shapes = list(shapes)
    for _ in range(int(rng.integers(4, 9))):
        kind = ("add", "sub", "mul", "div", "tanh", "exp", "log", "matmul", "sum", "mean")[rng.integers(10)]
        a, b = _pick(rng, weight, len(value_shapes)), _pick(rng, weight, len(value_shapes))
        if kind == "matmul" and value_shapes[a] not in ((3, 4), (1, 4)):
            kind = "mul"
        params = {}
        if kind in ("sum", "mean"):
            params = _reduce_params(value_shapes[a], rng)
            if params is None:
                kind, params = "tanh", {}
        if kind == "matmul":
            b = weight
        steps.append((kind, (a, b), params))
        value_shapes.append(_result_shape(kind, value_shapes[a], value_shapes[b], params))

    def run(o, xs):
        values = list(xs)
        for kind, (a, b), params in steps:
            x, y = values[a], values[b]
            if kind in ("add", "sub", "mul", "matmul"):
                values.append(getattr(o, kind)(x, y))
            elif kind == "div":  # a quotient whose denominator stays away from zero
                values.append(o.div(x, o.add(o.mul(y, y), 1.0)))
            elif kind == "log":
                values.append(o.log(o.add(o.mul(x, x), 1.0)))
            elif kind == "exp":
                values.append(o.exp(o.tanh(x)))
            elif kind == "tanh":
                values.append(o.tanh(x))
            else:
                values.append(getattr(o, kind)(x, **params))
        last = values[-1]
        return o.sum(o.add(o.mul(last, last), values[0]))

    return Program(f"random program {k} (inputs of shapes {', '.join(map(str, shapes))})", tuple(shapes), run)
