"""The making exercises (lessons/_checks/making*.py): a gradient by hand, Momentum and Adam by hand
(02, 04); a new op as an eg.Primitive (03); clipping by the global norm, a gradient accumulator and the
training step, by hand (05-07). A right answer passes; typical wrong answers get the hint that names
the mistake (the factor 2 or 1/n missing, not summed over the broadcast axis, transposed, the slot
updated after the variable, the bias correction missing, ε inside the root; the factor g missing, a
wrong derivative, a VJP the tapes cannot differentiate; the max, the root or the global norm missing;
sums for means, no reset, None gradients; a sum loss, no apply, training=False); asking the engine is
refused."""

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


# ---- lesson 03: a new op as an eg.Primitive ------------------------------------------------------------


def make_softsign_with(vjp, rule="∂x = g / (1 + |x|)²"):
    def make(name):
        return eg.Primitive(name, lambda xp, x: x / (1 + xp.abs(x)), vjps=[vjp], rule=rule, symbol="softsign",
                            elementwise=True)
    return make


make_softsign = make_softsign_with(lambda g, y, x: g / (1 + eg.abs(x)) ** 2)


def make_softsign_fixed_name(name):
    return make_softsign("softsign_always")


def make_softsign_numpy_vjp(name):
    return make_softsign_with(lambda g, y, x: eg.constant(g.numpy() / (1 + np.abs(x.numpy())) ** 2))(name)


# ---- lesson 05: clipping by the global norm, by hand ---------------------------------------------------


def clip_by_global_norm_by_hand(grads, clip_norm):
    norm = eg.sqrt(sum(eg.sum(g * g) for g in grads if g is not None))
    scale = clip_norm / eg.maximum(norm, clip_norm)
    return [None if g is None else g * scale for g in grads], norm


def clip_no_max(grads, clip_norm):
    norm = eg.sqrt(sum(eg.sum(g * g) for g in grads if g is not None))
    return [None if g is None else g * (clip_norm / norm) for g in grads], norm


def clip_per_tensor(grads, clip_norm):
    _, norm = clip_by_global_norm_by_hand(grads, clip_norm)
    return [None if g is None else g * (clip_norm / eg.maximum(eg.sqrt(eg.sum(g * g)), clip_norm))
            for g in grads], norm


def clip_no_sqrt(grads, clip_norm):
    norm = sum(eg.sum(g * g) for g in grads if g is not None)
    return [None if g is None else g * (clip_norm / eg.maximum(norm, clip_norm)) for g in grads], norm


def clip_by_engine(grads, clip_norm):
    clipped, norm = eg.clip_by_global_norm(grads, clip_norm)
    return list(clipped), norm


# ---- lesson 06: a gradient accumulator ----------------------------------------------------------------


class GradientAccumulator:
    def __init__(self):
        self.reset()

    def reset(self):
        self.sums, self.count = None, 0

    def add(self, grads):
        if self.sums is None:
            self.sums = [None] * len(grads)
        self.sums = [s if g is None else (g.copy() if s is None else s + g) for s, g in zip(self.sums, grads)]
        self.count += 1

    def mean(self):
        return [None if s is None else s / self.count for s in self.sums]


class SumAccumulator(GradientAccumulator):
    def mean(self):
        return list(self.sums)


class NeverReset(GradientAccumulator):
    def reset(self):
        if not hasattr(self, "sums"):
            super().reset()


class CrashesOnNone(GradientAccumulator):
    def add(self, grads):
        if self.sums is None:
            self.sums = [np.zeros_like(g) for g in grads]
        self.sums = [s + g for s, g in zip(self.sums, grads)]
        self.count += 1


class CountsGradients(GradientAccumulator):
    def reset(self):
        super().reset()
        self.seen = None

    def add(self, grads):
        super().add(grads)
        self.seen = [(k if self.seen else 0) + (g is not None) for k, g in zip(self.seen or grads, grads)]

    def mean(self):
        return [None if s is None else s / k for s, k in zip(self.sums, self.seen)]


class ByEngine:
    def __init__(self):
        self.acc, self.vars = eg.optimizers.Accumulator(), None

    def add(self, grads):
        self.vars = self.vars or [eg.Variable(np.zeros_like(g)) if g is not None else eg.Variable(0.0)
                                  for g in grads]
        self.acc.add([(g, v) for g, v in zip(grads, self.vars)])

    def mean(self):
        return [self.acc.gradient(v) for v in self.vars]

    def reset(self):
        self.acc.reset()


# ---- lesson 07: the training step ----------------------------------------------------------------------


def train_step_with(training=True, reduce=eg.mean, apply=True, tape_around=True):
    def train_step(model, optimizer, x, y):
        with eg.GradientTape() as tape:
            if tape_around:
                loss = reduce(eg.nn.sparse_softmax_cross_entropy(y, model(x, training=training)))
        if not tape_around:
            loss = reduce(eg.nn.sparse_softmax_cross_entropy(y, model(x, training=training)))
        grads = tape.gradient(loss, model.trainable_variables)
        if apply:
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss
    return train_step


def train_step_by_engine(model, optimizer, x, y):
    return eg.training.train_step(model, optimizer, x, y)[0]


CASES_MAKING.update({
    ("03", "softsign"): Case(
        right=lambda: make_softsign,
        wrong=[
            (lambda: make_softsign_with(lambda g, y, x: 1 / (1 + eg.abs(x)) ** 2), "factor g is missing"),
            (lambda: make_softsign_with(lambda g, y, x: g / (1 + eg.abs(x))), "without the square"),
            (lambda: make_softsign_with(lambda g, y, x: g * (1 + 2 * eg.abs(x)) / (1 + eg.abs(x)) ** 2),
             "sign wrong"),
            (lambda: make_softsign_with(lambda g, y, x: g / (1 + x) ** 2), "absolute value"),
            (lambda: make_softsign_numpy_vjp, "second derivative is None"),
            (lambda: make_softsign_with(lambda g, y, x: g.numpy() / (1 + np.abs(x.numpy())) ** 2),
             "must return a Tensor"),
            (lambda: make_softsign_fixed_name, "use the name it is"),
            (lambda: make_softsign_with(lambda g, y, x: g / (1 + eg.abs(x)) ** 2, rule="softsign"), "rule="),
        ],
    ),
    ("05", "global_clip_by_hand"): Case(
        right=lambda: clip_by_global_norm_by_hand,
        wrong=[
            (lambda: clip_no_max, "scaled up"),
            (lambda: clip_per_tensor, "its own norm"),
            (lambda: clip_no_sqrt, "square root is missing"),
            (lambda: clip_by_engine, "calls eg.clip_by_global_norm"),
            (lambda: lambda grads, c: ([g for g in grads if g is not None], 1.0), "one entry per gradient"),
        ],
    ),
    ("06", "accumulator"): Case(
        right=lambda: GradientAccumulator,
        wrong=[
            (lambda: SumAccumulator, "returns the sums"),
            (lambda: NeverReset, "reset()"),
            (lambda: CrashesOnNone, "None gradient through"),
            (lambda: CountsGradients, "counts as zero"),
            (lambda: ByEngine, "runs eg.optimizers.Accumulator"),
        ],
    ),
    ("07", "train_step"): Case(
        right=lambda: train_step_with(),
        wrong=[
            (lambda: train_step_with(tape_around=False), "inside the `with"),
            (lambda: train_step_with(reduce=eg.sum), "sum over the batch"),
            (lambda: train_step_with(apply=False), "apply them"),
            (lambda: train_step_with(training=False), "training=False"),
            (lambda: train_step_by_engine, "calls eg.training.train_step"),
        ],
    ),
})
CASES.update(CASES_MAKING)


# ---- inside lesson 03's own kernel: the cell runs again and again, and the op is the learner's ---------

SOFTSIGN_CELL = '''
def make_softsign(name):
    def forward(xp, x):
        return x / (1 + xp.abs(x))
    def vjp(g, y, x):
        return g / (1 + eg.abs(x)) ** 2
    return eg.Primitive(name, forward, vjps=[vjp], rule="∂x = g / (1 + |x|)²", symbol="softsign",
                        elementwise=True)

check("softsign", make_softsign)
'''


def test_the_softsign_cell_runs_again_and_the_op_draws(lesson):
    run = lesson("03_gradient_tape.ipynb")
    first, again = run.run(SOFTSIGN_CELL), run.run(SOFTSIGN_CELL)
    assert first.startswith("Right!") and again.startswith("Right!"), (first, again)
    out = run.run(
        'print(sorted(n for n in eg.primitives if n.startswith("softsign")))\n'
        'softsign = make_softsign("softsign_03")\n'
        "x = eg.constant(2.0)\n"
        "with eg.GradientTape(persistent=True) as tape:\n"
        "    tape.watch(x)\n"
        "    y = softsign(x)\n"
        "print(gv.backprop(tape, y, [x]).steps[0].record.primitive.rule)"
    )
    assert out.splitlines() == ["[]", "∂x = g / (1 + |x|)²"], out
