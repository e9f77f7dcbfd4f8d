"""The making exercises of lessons 02 and 04 (lessons/_checks/making.py): a gradient by hand, Momentum
and Adam by hand. A right answer passes; typical wrong answers get the hint that names the mistake
(the factor 2 or 1/n missing, not summed over the broadcast axis, transposed, the slot updated after
the variable, the bias correction missing, ε inside the root); asking the engine is refused."""

from __future__ import annotations

import math

import numpy as np

import engine as eg
from tests.test_lessons_exercises import CASES, Case


def mse_grads(x, y, w, b):
    e = x @ w + b - y
    return 2 * x.T @ e / len(x), 2 * e.sum(axis=0) / len(x)


def mse_grads_by_tape(x, y, w, b):
    return eg.gradients_function(lambda w, b: eg.mean((eg.constant(x) @ w + b - y) ** 2))(w, b)


def momentum_update(w, g, slot, learning_rate, momentum):
    slot = momentum * slot + g
    return w - learning_rate * slot, slot


def adam_update(w, g, m, v, step, learning_rate, beta1, beta2, epsilon):
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    lr = learning_rate * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
    return w - lr * m / (np.sqrt(v) + epsilon), m, v


def adam_no_correction(w, g, m, v, step, learning_rate, beta1, beta2, epsilon):
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    return w - learning_rate * m / (np.sqrt(v) + epsilon), m, v


def adam_late_slots(w, g, m, v, step, learning_rate, beta1, beta2, epsilon):
    lr = learning_rate * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
    new_w = w - lr * m / (np.sqrt(v) + epsilon)
    return new_w, beta1 * m + (1 - beta1) * g, beta2 * v + (1 - beta2) * g * g


def adam_eps_inside(w, g, m, v, step, learning_rate, beta1, beta2, epsilon):
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    lr = learning_rate * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
    return w - lr * m / np.sqrt(v + epsilon), m, v


def adam_by_engine(w, g, m, v, step, learning_rate, beta1, beta2, epsilon):
    var = eg.Variable(w)
    eg.optimizers.Adam(learning_rate, beta1, beta2, epsilon).apply_gradients([(eg.constant(g), var)])
    return var.numpy(), m, v


CASES_MAKING: dict[tuple[str, str], Case] = {
    ("02", "mse_grads"): Case(
        right=lambda: mse_grads,
        wrong=[
            (lambda: lambda x, y, w, b: tuple(g / 2 for g in mse_grads(x, y, w, b)), "factor 2"),
            (lambda: lambda x, y, w, b: tuple(g * len(x) for g in mse_grads(x, y, w, b)), "factor 1/n"),
            (lambda: lambda x, y, w, b: (mse_grads(x, y, w, b)[0], 2 * (x @ w + b - y) / len(x)),
             "summed over that axis"),
            (lambda: lambda x, y, w, b: (mse_grads(x, y, w, b)[0].T, mse_grads(x, y, w, b)[1]), "transpose"),
            (lambda: lambda x, y, w, b: tuple(-g for g in mse_grads(x, y, w, b)), "sign"),
            (lambda: mse_grads_by_tape, "asks the engine"),
            (lambda: lambda x, y, w, b: None, "return a tuple"),
        ],
    ),
    ("04", "momentum_update"): Case(
        right=lambda: momentum_update,
        wrong=[
            (lambda: lambda w, g, s, lr, mu: (w - lr * s, mu * s + g), "old slot"),
            (lambda: lambda w, g, s, lr, mu: (w - lr * g, mu * s + g), "gradient alone"),
            (lambda: lambda w, g, s, lr, mu: (w + lr * (mu * s + g), mu * s + g), "uphill"),
            (lambda: lambda w, g, s, lr, mu: (w - lr * (mu * s + g),), "return a tuple of 2"),
        ],
    ),
    ("04", "adam_update"): Case(
        right=lambda: adam_update,
        wrong=[
            (lambda: adam_no_correction, "bias correction"),
            (lambda: adam_late_slots, "old slots"),
            (lambda: adam_eps_inside, "inside the square root"),
            (lambda: adam_by_engine, "engine's optimizers"),
        ],
    ),
}
CASES.update(CASES_MAKING)
