"""Lesson 07's backward passes by hand (lessons/_checks/backward_by_hand.py): the course's reference
(beside each registration) is right, and the typical wrong versions get the hint naming their mistake
(a missing 1/B, the sign, an unnormalised or overflowing softmax; ties to every, split or last maximum,
an average pool's spreading, a missing g). Added to `CASES`."""

from __future__ import annotations

import numpy as np

import engine as eg
from tests.test_lessons_exercises import CASES, Case, checks


def reference(name: str):
    return checks.EXERCISES[("07", name)].reference


def softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def windows(x, k):
    n, h, w, c = x.shape
    tiles = x.reshape(n, h // k, k, w // k, k, c).transpose(0, 1, 3, 5, 2, 4)
    return tiles.reshape(n, h // k, w // k, c, k * k)


def unwindows(t, k):
    n, oh, ow, c, _ = t.shape
    return t.reshape(n, oh, ow, c, k, k).transpose(0, 1, 4, 2, 5, 3).reshape(n, oh * k, ow * k, c)


def pool_to_every_max(g, x, k):
    win = windows(x, k)
    return unwindows((win == win.max(axis=-1, keepdims=True)) * g[..., None], k)


def pool_split(g, x, k):
    win = windows(x, k)
    hit = win == win.max(axis=-1, keepdims=True)
    return unwindows(hit * g[..., None] / hit.sum(axis=-1, keepdims=True), k)


def pool_average(g, x, k):
    return unwindows(np.broadcast_to(g[..., None] / (k * k), windows(x, k).shape), k)


def xent_by_engine(z, y):  # the engine's gradient, brought back to NumPy
    zt = eg.constant(z)
    with eg.GradientTape() as tape:
        tape.watch(zt)
        loss = eg.mean(eg.nn.softmax_cross_entropy(eg.constant(y), zt))
    return tape.gradient(loss, zt).numpy()


def pool_by_engine(g, x, k):
    xt = eg.constant(x)
    with eg.GradientTape() as tape:
        tape.watch(xt)
        out = eg.nn.max_pool2d(xt, k, k, "VALID")
    return tape.gradient(out, xt, output_gradients=eg.constant(g)).numpy()


CASES_07: dict[tuple[str, str], Case] = {
    ("07", "xent_backward"): Case(
        right=lambda: reference("xent_backward"),
        wrong=[
            (lambda: lambda z, y: softmax(z) - y, "divide by B"),
            (lambda: lambda z, y: (y - softmax(z)) / len(z), "sign"),
            (lambda: lambda z, y: (np.exp(z) / np.exp(z).sum(axis=1, keepdims=True) - y) / len(z),
             "overflows"),
            (lambda: lambda z, y: (np.exp(z - z.max(axis=1, keepdims=True)) - y) / len(z), "not normalised"),
            (lambda: lambda z, y: eg.constant((softmax(z) - y) / len(z)), "engine Tensor"),
            (lambda: lambda z, y: ((softmax(z) - y) / len(z)).T, "shape"),
            (lambda: xent_by_engine, "asks the engine"),
        ],
    ),
    ("07", "max_pool_vjp"): Case(
        right=lambda: reference("max_pool_vjp"),
        wrong=[
            (lambda: pool_to_every_max, "every tied maximum"),
            (lambda: pool_split, "splits g"),
            (lambda: pool_average, "average pooling"),
            (lambda: lambda g, x, k: reference("max_pool_vjp")(np.ones_like(g), x, k), "upstream gradient g"),
            (lambda: lambda g, x, k: x * 0, "not the engine's"),
            (lambda: pool_by_engine, "asks the engine"),
        ],
    ),
}
CASES.update(CASES_07)
