"""The answers only the trial holds: right answers written otherwise than the course's (a learner's
own way), the typical mistakes of issue 31 that no test held yet, and the searches.

Each right answer is ``(label, build)``; each wrong one ``(label, build, words)``: the words its verdict
must contain (the mistake named). ``build()`` makes the answer afresh (a function for a function
exercise). Lesson 10's right answers are the course's cells rewritten (`REWRITTEN_10`), run in the
engine of the other cells as the lesson runs them.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

import engine as eg
from tests.checks_package import checks

Right = tuple[str, Callable[[], Any]]
Wrong = tuple[str, Callable[[], Any], tuple[str, ...]]

REF = {key: exercise.reference for key, exercise in checks.EXERCISES.items()}


# ---- right, a learner's way -------------------------------------------------------------------------

def float32_by_cast():
    samples = np.linspace(0.0, 1.0, 5)
    scale = eg.constant([1.0, 2.0, 3.0, 4.0, 5.0])
    return eg.cast(eg.constant(samples), "float32") * scale


def landing_of_a_constant():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with eg.device("gpu:0"):
            t = eg.constant(0.0)
    return str(t.device)


def sse(pred, target):
    d = eg.reshape(pred, (-1,)) - target
    return eg.sum(d * d)


def mse_grads(x, y, w, b):
    r = x @ w + b - y
    n = x.shape[0]
    return (2.0 / n) * (x.T @ r), (2.0 / n) * np.sum(r, axis=0)


def sgd_step(grads_and_vars, learning_rate):
    for g, v in grads_and_vars:
        if g is None:
            continue
        v.assign(v - learning_rate * g)


def adam_update(w, g, m, v, step, learning_rate, beta1, beta2, epsilon):
    m_new = m + (1 - beta1) * (g - m)
    v_new = v + (1 - beta2) * (g**2 - v)
    rate = learning_rate * math.sqrt(1.0 - beta2**step) / (1.0 - beta1**step)
    return w - rate * m_new / (np.sqrt(v_new) + epsilon), m_new, v_new


def momentum_update(w, g, slot, learning_rate, momentum):
    new_slot = g + momentum * slot
    return w - learning_rate * new_slot, new_slot


def scale_pairs(pairs, factor):
    out = []
    for g, v in pairs:
        out.append((g if g is None else g * factor, v))
    return out


def clip_rows(t, c):
    norms = eg.sqrt(eg.sum(eg.square(t), axis=1, keepdims=True))
    return t / eg.maximum(norms / c, 1.0)


def clip_by_global_norm_by_hand(grads, clip_norm):
    total = 0.0
    for g in grads:
        if g is not None:
            total = total + eg.sum(eg.square(g))
    norm = eg.sqrt(total)
    factor = clip_norm / eg.maximum(norm, clip_norm)
    return [g * factor if g is not None else None for g in grads], norm


class KeepsEveryBatch:
    """Accumulates by keeping a copy of every batch's gradients; the mean at the end."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.batches = []

    def add(self, grads):
        self.batches.append([None if g is None else np.array(g, copy=True) for g in grads])

    def mean(self):
        means = []
        for column in zip(*self.batches):
            present = [g for g in column if g is not None]
            means.append(sum(present) / len(self.batches) if present else None)
        return means


def combine(gradients, sizes):
    total = np.zeros_like(gradients[0])
    for n, g in zip(sizes, gradients):
        total = total + n * g
    return total / float(sum(sizes))


def server_step(optimizer, variables, worker_gradients):
    means = [sum(grads) / len(worker_gradients) for grads in zip(*worker_gradients)]
    optimizer.apply_gradients(list(zip(means, variables)))


def my_accuracy(logits, labels):
    predicted = logits.numpy().argmax(axis=-1)
    return float((predicted == np.asarray(labels)).sum() / len(labels))


def my_train_step(model, optimizer, x, y):
    with eg.GradientTape() as tape:
        logits = model(x, training=True)
        loss = eg.mean(eg.nn.sparse_softmax_cross_entropy(y, logits))
    pairs = optimizer.compute_gradients(loss, model.trainable_variables, tape=tape)
    optimizer.apply_gradients(pairs)
    return loss


def gradient_names(graph):
    names = []
    for gradient in graph.outputs[1]:
        names.append(gradient.name)
    return names


def leaky_relu(x):
    return eg.where(x <= 0, 0.1 * x, x)


def _stable_rate_by_numpy():
    hessian = np.array([[5.0, 2.0], [2.0, 2.0]])  # the second derivatives of f, worked out on paper
    return 2.0 / max(np.linalg.eigvals(hessian).real)


def _flatten_by_layers():
    L = eg.layers
    layers = [L.Conv2D(32, 5, padding="SAME"), L.MaxPool2D(2, padding="SAME"),
              L.Conv2D(64, 5, padding="SAME"), L.MaxPool2D(2, padding="SAME"), L.Flatten()]
    x = eg.constant(np.zeros((1, 28, 28, 1), np.float32))
    for layer in layers:
        x = layer(x)
    return int(x.shape[1])


RIGHT: dict[tuple[str, str], list[Right]] = {
    ("01", "float32_product"): [("eg.cast after the product's input", float32_by_cast)],
    ("01", "landing_device"): [("a constant's device, as str", landing_of_a_constant)],
    ("01", "floor_mod"): [("Python ints", lambda: (-17 // 5, -17 % 5))],
    ("02", "fix_broadcast"): [("reshape and d·d", lambda: sse)],
    ("02", "mse_grads"): [("(2/n) first", lambda: mse_grads)],
    ("02", "sgd_step"): [("assign(v − lr·g)", lambda: sgd_step)],
    ("04", "adam_update"): [("slots as m + (1 − β)(g − m)", lambda: adam_update)],
    ("04", "momentum_update"): [("g + μ·slot", lambda: momentum_update)],
    ("04", "scale_pairs"): [("a loop that appends", lambda: scale_pairs)],
    ("04", "decay_half"): [("the closed form", lambda: 1.0 + (10.0 - 1.0) * (1 - 0.5) ** 3)],
    ("04", "stable_rate"): [("the Hessian on paper, np.linalg.eigvals", _stable_rate_by_numpy)],
    ("05", "clip_rows"): [("divide by max(norm/c, 1)", lambda: clip_rows)],
    ("05", "global_clip_by_hand"): [("a running total of squares", lambda: clip_by_global_norm_by_hand)],
    ("06", "accumulator"): [("keeps every batch, means at the end", lambda: KeepsEveryBatch)],
    ("06", "combine"): [("a loop over the workers", lambda: combine)],
    ("06", "server_step"): [("sum over workers / count", lambda: server_step)],
    ("07", "accuracy"): [("argmax of the last axis, count / n", lambda: my_accuracy)],
    ("07", "train_step"): [("compute_gradients with the tape", lambda: my_train_step)],
    ("07", "flatten_size"): [("the layers on a zero image", _flatten_by_layers)],
    ("08", "activation_bytes"): [("shape times the itemsize",
                                  lambda: 50 * 8 * 8 * 32 * np.dtype("float32").itemsize)],
    ("08", "pool_drop"): [("the short name", lambda: "Used")],
    ("09", "gradient_names"): [("a loop that appends", lambda: gradient_names)],
    ("09", "leaky_relu"): [("where x ≤ 0", lambda: leaky_relu)],
}

#: Lesson 10's cells, each rewritten as another learner would write it: (old text, new text) pairs
#: applied to the course's cell (every one must change the cell).
REWRITTEN_10: dict[str, list[tuple[str, str]]] = {
    "value": [("np.asarray(value, dtype=float)", "np.array(value, dtype=np.float64)"),
              ("lambda self: multiply(self, -1.0)", "lambda self: subtract(0.0, self)")],
    "tape": [("        Tape.active.remove(self)", "        Tape.active.pop()")],
    "primitive": [("        for tape in Tape.active:\n            tape.records.append(record)",
                   "        for tape in list(Tape.active):\n            tape.records += [record]")],
    "arithmetic": [("return g * b, g * a", "return b * g, a * g"),
                   ("return g / b, -g * y / b", "return g / b, -(g * a) / (b * b)")],
    "elementwise": [("return (g * (1 - y * y),)", "return (g - g * y * y,)"),
                    ("return (g / x,)", "return (g * (1 / x),)")],
    "matmul": [("return g @ b.T, a.T @ g", "return matmul(g, transpose(b)), matmul(transpose(a), g)")],
    "reductions": [("return (spread * (y.value.size / x.value.size),)",
                    "return (spread / (x.value.size / y.value.size),)")],
    "unbroadcast": [("    while len(g.shape) > len(shape):\n        g = reduce_sum(g, axis=0)\n",
                     "    for _ in range(len(g.shape) - len(shape)):\n        g = reduce_sum(g, axis=0)\n")],
    "walk": [("            grads[id(x)] = grads[id(x)] + c if id(x) in grads else c",
              "            grads[id(x)] = c if id(x) not in grads else grads[id(x)] + c")],
    "second": [("    first, x.grad = x.grad, None\n", "    first = x.grad\n    x.grad = None\n")],
    "graph_walk": [("for v in reversed(order):", "for v in order[::-1]:")],
}


# ---- wrong: the typical mistakes the issue lists, where no test held them -----------------------------

def _float32_arithmetic(function):
    """A learner computing in float32 and handing back float64 (the issue: accepted in 80 % / 55 %)."""
    def answer(*args):
        cast = [a.astype(np.float32) if isinstance(a, np.ndarray) else a for a in args]
        return tuple(np.asarray(r, np.float64) for r in function(*cast))
    return answer


def adam_step_after(w, g, m, v, step, learning_rate, beta1, beta2, epsilon):
    """Off by one step: the bias correction of the next update."""
    return REF["04", "adam_update"](w, g, m, v, step + 1, learning_rate, beta1, beta2, epsilon)


def _decay_after(steps):
    x = 10.0
    for _ in range(steps):
        x = x - 0.5 * (x - 1.0)
    return x


WRONG: dict[tuple[str, str], list[Wrong]] = {
    ("02", "mse_grads"): [
        ("float32 arithmetic", lambda: _float32_arithmetic(REF["02", "mse_grads"]), ("float32 rounding",))],
    ("04", "adam_update"): [
        ("float32 arithmetic", lambda: _float32_arithmetic(REF["04", "adam_update"]), ("float32 rounding",)),
        ("bias correction one step ahead", lambda: adam_step_after, ("off by one step",))],
    ("04", "momentum_update"): [
        ("float32 arithmetic", lambda: _float32_arithmetic(REF["04", "momentum_update"]),
         ("float32 rounding",))],
    ("04", "decay_half"): [
        ("one step too few, by hand", lambda: _decay_after(2), ("different number of steps",)),
        ("the minimum taken as 0", lambda: 10.0 * 0.5**3, ("distance to b",))],
    ("07", "flatten_size"): [
        ("pooled once", lambda: 14 * 14 * 64, ("halved once",)),
        ("the lesson's 8×8 digits", lambda: 2 * 2 * 64, ("8×8",))],
    ("08", "activation_bytes"): [
        ("the size after the pooling", lambda: 50 * 4 * 4 * 32 * 4, ("after the pooling",)),
        ("float64 bytes", lambda: 50 * 8 * 8 * 32 * 8, ("float64",))],
    ("04", "stable_rate"): [("2 over the largest diagonal entry", lambda: 2.0 / 5.0, ("diagonal",))],
}


# ---- searches: a value found from the verdicts' directions -------------------------------------------

def bisect_stable_rate(verdict: Callable[[Any], tuple[bool, str]], tries: int = 40) -> list[tuple[bool, str]]:
    """Bisect the largest stable rate between 0 and 10 from "too large" / "stable too", as a learner
    who ignores the lesson would; every verdict, in order (stops when one says Right or gives no
    direction)."""
    low, high = 0.0, 10.0
    said = []
    for _ in range(tries):
        ok, message = verdict((low + high) / 2)
        said.append((ok, message))
        if ok:
            break
        if "too large" in message:
            high = (low + high) / 2
        elif "stable too" in message:
            low = (low + high) / 2
        else:
            break
    return said


def probe_names(options: tuple[str, ...]) -> Callable[..., list[tuple[bool, str]]]:
    """Find a set of names among ``options`` by trying each name alone ("misses something": it
    belongs; "contains something that does not belong": it does not), then the set found; when the
    verdicts stop saying which way, every subset of the names still unknown, in turn."""
    def search(verdict: Callable[[Any], tuple[bool, str]]) -> list[tuple[bool, str]]:
        said: list[tuple[bool, str]] = []
        known: dict[str, bool] = {}
        for name in options:
            ok, message = verdict({name})
            said.append((ok, message))
            if ok:
                return said
            if "misses something" in message:
                known[name] = True
            elif "does not belong" in message:
                known[name] = False
        unknown = [n for n in options if n not in known]
        chosen = {n for n, belongs in known.items() if belongs}
        for size in range(len(unknown) + 1):
            for extra in itertools.combinations(unknown, size):
                ok, message = verdict(chosen | set(extra))
                said.append((ok, message))
                if ok:
                    return said
        return said
    return search


SEARCHES: dict[tuple[str, str], tuple[str, Callable[..., list[tuple[bool, str]]]]] = {
    ("04", "stable_rate"): ("bisection from the directions", bisect_stable_rate),
    ("05", "keeps_direction"): ("each method alone, then the rest",
                                probe_names(("value", "norm", "global norm", "per-variable norm"))),
    ("08", "bit_identical"): ("each letter alone, then the rest", probe_names(("a", "b", "c", "d", "e"))),
}
