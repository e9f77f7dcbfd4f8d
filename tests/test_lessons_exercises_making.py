"""The making exercises (lessons/_checks/making*.py): a gradient by hand, Momentum and Adam by hand
(02, 04); a new op as an eg.Primitive (03); clipping by the global norm, a gradient accumulator and the
training step, by hand (05-07). The right answer and the typical wrong answers (the factor 2 or 1/n
missing, not summed over the broadcast axis, transposed, the slot updated after the variable, the bias
correction missing, ε inside the root; the factor g missing, a wrong derivative, a VJP the tapes cannot
differentiate; the max, the root or the global norm missing; sums for means, no reset, None gradients; a
sum loss, no apply, training=False) are registered with each exercise (`Exercise.reference`,
`Exercise.wrong`, tried by tests/test_lessons_exercises.py); here: asking the engine is refused, and
answers of other kinds get the message that says so."""

from __future__ import annotations

import numpy as np

import engine as eg
from tests.test_lessons_exercises import CASES, Case


def mse_grads_by_tape(x, y, w, b):
    return eg.gradients_function(lambda w, b: eg.mean((eg.constant(x) @ w + b - y) ** 2))(w, b)


def adam_by_engine(w, g, m, v, step, learning_rate, beta1, beta2, epsilon):
    var = eg.Variable(w)
    eg.optimizers.Adam(learning_rate, beta1, beta2, epsilon).apply_gradients([(eg.constant(g), var)])
    return var.numpy(), m, v


def make_softsign_with(vjp, rule="∂x = g / (1 + |x|)²"):
    def make(name):
        return eg.Primitive(name, lambda xp, x: x / (1 + xp.abs(x)), vjps=[vjp], rule=rule, symbol="softsign",
                            elementwise=True)
    return make


make_softsign = make_softsign_with(lambda g, y, x: g / (1 + eg.abs(x)) ** 2)


def make_softsign_fixed_name(name):
    return make_softsign("softsign_always")


def clip_by_engine(grads, clip_norm):
    clipped, norm = eg.clip_by_global_norm(grads, clip_norm)
    return list(clipped), norm


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


def train_step_by_engine(model, optimizer, x, y):
    return eg.training.train_step(model, optimizer, x, y)[0]


CASES_MAKING: dict[tuple[str, str], Case] = {
    ("02", "mse_grads"): Case(wrong=[(lambda: mse_grads_by_tape, "asks the engine"),
                                     (lambda: lambda x, y, w, b: None, "return a tuple")]),
    ("04", "momentum_update"): Case(wrong=[(lambda: 0.9, "function itself")]),
    ("04", "adam_update"): Case(wrong=[(lambda: adam_by_engine, "engine's optimizers")]),
    ("03", "softsign"): Case(
        right=lambda: make_softsign,
        wrong=[
            (lambda: make_softsign_with(lambda g, y, x: g.numpy() / (1 + np.abs(x.numpy())) ** 2),
             "must return a Tensor"),
            (lambda: make_softsign_fixed_name, "use the name it is"),
        ],
    ),
    ("05", "global_clip_by_hand"): Case(wrong=[(lambda: clip_by_engine, "calls eg.clip_by_global_norm")]),
    ("06", "accumulator"): Case(wrong=[(lambda: ByEngine, "calls eg.optimizers.Accumulator")]),
    ("07", "train_step"): Case(wrong=[(lambda: train_step_by_engine, "calls eg.training.train_step")]),
}
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
