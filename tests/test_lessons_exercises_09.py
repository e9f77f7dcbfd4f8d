"""The self-checks of lesson 09 (graphs), in lessons/_checks/: a right answer, wrong answers with
the hint each should get, and no message showing the answer. Added to the shared `CASES`."""

from __future__ import annotations

import numpy as np

import engine as eg
from tests.test_lessons_exercises import CASES, Case


def leaky_numpy(x):
    v = x.numpy()
    return eg.constant(np.where(v > 0, v, 0.1 * v))


CASES_09: dict[tuple[str, str], Case] = {
    ("09", "gradient_names"): Case(
        wrong=[
            (lambda: lambda graph: ["gradients/w", "gradients/b"], "not in the graph"),
            (lambda: lambda graph: None, "returns None"),
            (lambda: lambda graph: "names", "list"),
            (lambda: "names", "function itself"),
        ],
        secrets=["outputs[1]"],
    ),
    ("09", "trace_count"): Case(
        right=lambda: 4,
        wrong=[(lambda: 6, "not right"), (lambda: 3, "not right"), (lambda: 2, "not right")],
    ),
    ("09", "leaky_relu"): Case(
        wrong=[
            (lambda: leaky_numpy, "Python value"),
            (lambda: lambda x: None, "tensor with the shape"),
        ],
        secrets=["eg.where(x > 0, x, 0.1 * x)"],
    ),
}

CASES.update(CASES_09)


def test_trace_count_is_what_eg_function_counts():
    f = eg.function(lambda x, lr: x * lr)
    for x, lr in [(eg.ones((64, 10)), 0.1), (eg.ones((64, 10)), 0.1), (eg.ones((29, 10)), 0.1),
                  (eg.ones((64, 10)), 0.05), (eg.ones((64, 10)), eg.constant(0.05)),
                  (eg.ones((64, 10)), eg.constant(0.01))]:
        f(x, lr)
    assert f.trace_count == 4
