"""The self-checks of lessons 07 (training a CNN) and 08 (on the GPU), in lessons/_checks/.

Each exercise gets a right answer ("Right!") and wrong ones ("Not yet: ... Hint: ...", with the
expected fragment), and no message may show the expected answer. The cases use the `Case` format of
tests/test_lessons_exercises.py and are added to its `CASES`, so that its completeness test
(`test_every_exercise_has_a_case`) sees them too when the whole suite runs.
"""

from __future__ import annotations

import engine as eg
from tests.test_lessons_exercises import CASES, Case, checks

# ---- lesson 07 -----------------------------------------------------------------------------------





def xent_logsumexp(labels, logits):  # another right way: logsumexp minus the true class's logit
    return eg.logsumexp(logits, axis=-1) - eg.sum(labels * logits, axis=-1)


def xent_fused(labels, logits):
    return eg.nn.softmax_cross_entropy(labels, logits)








# ---- lesson 08 -----------------------------------------------------------------------------------


CASES_0708: dict[tuple[str, str], Case] = {
    ("07", "flatten_size"): Case(
        right=lambda: 7 * 7 * 64,
        wrong=[
            (lambda: 256, "8×8"),
            (lambda: 7 * 7 * 32, "first convolution"),
            (lambda: 14 * 14 * 64, "halved once"),
            (lambda: 1000, "not the number"),
            (lambda: "many", "whole number"),
        ],
        secrets=["3,136", "3 136"],
    ),
    ("07", "cross_entropy"): Case(
        right=lambda: xent_logsumexp,
        wrong=[
            (lambda: xent_fused, "fused loss"),
            (lambda: "cross_entropy", "function itself"),
        ],
    ),
    ("07", "accuracy"): Case(
        wrong=[(lambda: 0.97, "function itself")],
        secrets=["0.625", "0.25"],
    ),
    ("08", "activation_bytes"): Case(
        right=lambda: 50 * 8 * 8 * 32 * 4,
        wrong=[
            (lambda: 50 * 8 * 8 * 32, "not the bytes they take"),
            (lambda: 50 * 4 * 4 * 32 * 4, "after the pooling"),
            (lambda: 50 * 8 * 8 * 32 * 8, "float64"),
            (lambda: 8 * 8 * 32 * 4, "one image"),
            (lambda: 12345, "not the size"),
            (lambda: "409600", "number of bytes"),
        ],
        secrets=["409,600", "409 600", "400 KiB", "400.0 KiB"],
    ),
    ("08", "pool_drop"): Case(
        right=lambda: "used_bytes",
        wrong=[
            (lambda: "held_bytes", "stays"),
            (lambda: "both", "exactly one"),
            (lambda: "free", "name of one"),
            (lambda: 3, "string"),
        ],
        secrets=["used_bytes"],
    ),
    ("08", "bit_identical"): Case(
        right=lambda: {"c", "a", "B"},
        wrong=[
            (lambda: ["a", "b"], "misses"),
            (lambda: {"a", "b", "c", "d"}, "does not belong"),
            (lambda: "abc", "collection"),
        ],
        secrets=["{'a', 'b', 'c'}", "a, b, c", "a, b and c"],
    ),
}

# The shared completeness test reads CASES when it runs, after every module has been collected.
CASES.update(CASES_0708)


def test_cross_entropy_check_restores_the_fused_losses():
    before = (eg.nn.softmax_cross_entropy, eg.nn.sparse_softmax_cross_entropy)
    checks.evaluate("07", "cross_entropy", xent_fused)
    checks.evaluate("07", "cross_entropy", checks.EXERCISES["07", "cross_entropy"].reference)
    assert (eg.nn.softmax_cross_entropy, eg.nn.sparse_softmax_cross_entropy) == before


def test_flatten_size_check_accepts_a_whole_float():
    ok, _ = checks.evaluate("07", "flatten_size", float(7 * 7 * 64))
    assert ok
