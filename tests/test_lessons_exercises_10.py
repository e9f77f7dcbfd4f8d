"""The self-checks of lesson 10 (build your own engine), in lessons/_checks/lessons_10.py: a right
answer, typical wrong ones with the hint each should get (the factor g missing, not summed over a
broadcast axis, transposed, swapped, the input where the rule needs the output, contributions
overwritten, records visited first to last), and no message showing the answer. Added to `CASES`."""

from __future__ import annotations

import numpy as np

import engine as eg
from tests.test_lessons_exercises import CASES, Case


def unbroadcast(g, shape):
    while g.ndim > len(shape):
        g = g.sum(axis=0)
    for axis, n in enumerate(shape):
        if n == 1 and g.shape[axis] != 1:
            g = g.sum(axis=axis, keepdims=True)
    return g


class Step:
    def __init__(self, record, upstream, contributions):
        self.record, self.upstream, self.contributions = record, upstream, contributions


def backward(tape, target):
    grads = {id(target): np.ones_like(target.value)}
    steps = []
    for record in tape.records[::-1]:
        g = grads.get(id(record.outputs[0]))
        if g is None:
            continue
        contributions = record.vjp(g)
        steps.append(Step(record, (g,), contributions))
        for x, c in zip(record.inputs, contributions):
            grads[id(x)] = grads[id(x)] + c if id(x) in grads else c
    for record in tape.records:
        for v in (*record.inputs, *record.outputs):
            if id(v) in grads:
                v.grad = grads[id(v)]
    return steps


def backward_overwriting(tape, target):  # the classic slip: = where += belongs
    grads = {id(target): np.ones_like(target.value)}
    steps = []
    for record in tape.records[::-1]:
        g = grads.get(id(record.outputs[0]))
        if g is None:
            continue
        contributions = record.vjp(g)
        steps.append(Step(record, (g,), contributions))
        for x, c in zip(record.inputs, contributions):
            grads[id(x)] = c
    for record in tape.records:
        for v in (*record.inputs, *record.outputs):
            v.grad = grads.get(id(v))
    return steps


def backward_forwards(tape, target):  # visits the records in the order they ran
    grads = {id(target): np.ones_like(target.value)}
    for record in tape.records:
        g = grads[id(record.outputs[0])]
        for x, c in zip(record.inputs, record.vjp(g)):
            grads[id(x)] = c
    return []


def backward_unseeded(tape, target):  # forgets d target / d target = 1 on the target itself
    steps = backward(tape, target)
    target.grad = None
    return steps


def backward_no_steps(tape, target):
    backward(tape, target)


CASES_10: dict[tuple[str, str], Case] = {
    ("10", "multiply_vjp"): Case(
        right=lambda: lambda g, a, b, y: (unbroadcast(g * b, np.shape(a)), unbroadcast(g * a, np.shape(b))),
        wrong=[
            (lambda: lambda g, a, b, y: (g * b, g * a), "sum it over the axes the op broadcast"),
            (lambda: lambda g, a, b, y: (unbroadcast(b + 0 * g, np.shape(a)),
                                         unbroadcast(a + 0 * g, np.shape(b))), "upstream gradient g"),
            (lambda: lambda g, a, b, y: (unbroadcast(g * a, np.shape(a)), unbroadcast(g * b, np.shape(b))),
             "swapped"),
            (lambda: lambda g, a, b, y: (eg.constant(g * b), eg.constant(g * a)), "engine Tensor"),
            (lambda: lambda g, a, b, y: None, "return a tuple"),
            (lambda: lambda g, a, b, y: (g,), "one gradient each"),
            (lambda: "multiply_vjp", "function itself"),
        ],
    ),
    ("10", "matmul_vjp"): Case(
        right=lambda: lambda g, a, b, y: (g @ b.T, a.T @ g),
        wrong=[
            (lambda: lambda g, a, b, y: (g @ b.T, g.T @ a), "transpose"),
            (lambda: lambda g, a, b, y: (np.ones_like(g) @ b.T, a.T @ np.ones_like(g)),
             "upstream gradient g"),
            (lambda: lambda g, a, b, y: (g @ b.T, (a.T @ g).T) if a.shape[0] == a.shape[1]
             else (g @ b.T, a.T @ g), "∂b is transposed"),
            (lambda: lambda g, a, b, y: (b @ g, a @ g), "raised ValueError"),
        ],
    ),
    ("10", "tanh_vjp"): Case(
        right=lambda: lambda g, x, y: (g * (1 - y * y),),
        wrong=[
            (lambda: lambda g, x, y: (1 - y * y,), "upstream gradient g"),
            (lambda: lambda g, x, y: (g * (1 - x * x),), "input x where the rule needs the output"),
            (lambda: lambda g, x, y: (g * (y * y - 1),), "sign"),
            (lambda: lambda g, x, y: g * (1 - y * y), "return a tuple"),
            (lambda: lambda g, x, y: (g * np.cosh(x),), "not right"),
        ],
    ),
    ("10", "backward"): Case(
        right=lambda: backward,
        wrong=[
            (lambda: backward_overwriting, "sum of all the contributions"),
            (lambda: backward_forwards, "last record first"),
            (lambda: backward_unseeded, "starts from ∂target/∂target"),
            (lambda: backward_no_steps, "return the list of steps"),
        ],
    ),
}
CASES.update(CASES_10)
