"""The self-check of lesson 06b (what backprop keeps), in lessons/_checks/lessons_06b.py.

The learner's ``saved_bytes(batch, n_in, n_out)`` is judged against ``eg.memory_profile`` of the very
layer; the course's reference (the registration's ``reference=``) is right, and the typical wrong
counts each get the hint that names their mistake. Cases in the `Case` format of
tests/test_lessons_exercises.py, added to its `CASES`.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.test_lessons_exercises import CASES, Case, checks


def saved_right(batch, n_in, n_out):
    return 4 * batch * n_in + 4 * batch * n_out


def saved_numbers(batch, n_in, n_out):
    return batch * n_in + batch * n_out


def saved_input_only(batch, n_in, n_out):
    return 4 * batch * n_in


def saved_output_only(batch, n_in, n_out):
    return 4 * batch * n_out


def saved_float64(batch, n_in, n_out):
    return 8 * batch * (n_in + n_out)


def saved_with_weights(batch, n_in, n_out):
    return 4 * (batch * (n_in + n_out) + n_in * n_out + n_out)


def saved_one_row(batch, n_in, n_out):
    return 4 * (n_in + n_out)


def saved_pre_activation_too(batch, n_in, n_out):
    return 4 * batch * (n_in + 2 * n_out)


def saved_float(batch, n_in, n_out):
    return 4.0 * batch * (n_in + n_out) + 0.5


CASES_06B = {
    ("06b", "saved_bytes"): Case(
        right=lambda: saved_right,
        wrong=[(lambda: saved_numbers, "numbers kept, not the bytes"),
               (lambda: saved_input_only, "derivative of tanh"),
               (lambda: saved_output_only, "gradient of the kernel"),
               (lambda: saved_float64, "float64"),
               (lambda: saved_with_weights, "Variables"),
               (lambda: saved_one_row, "one example"),
               (lambda: saved_pre_activation_too, "bias add keeps nothing"),
               (lambda: saved_float, "whole number"),
               (lambda: 524288, "function itself")],
    ),
}
CASES.update(CASES_06B)


def test_every_exercise_of_lesson_06b_has_a_case():
    assert {key for key in checks.EXERCISES if key[0] == "06b"} == set(CASES_06B)


@pytest.mark.parametrize("shape", [(128, 784, 512), (32, 64, 10), (5, 3, 7), (1, 1, 1)])
def test_the_reference_is_what_the_profile_measures(shape):
    from lesson_checks import lessons_06b  # noqa: PLC0415  (loaded by tests/test_lessons_exercises.py)

    exercise = checks.EXERCISES[("06b", "saved_bytes")]
    assert exercise.reference(*shape) == lessons_06b.measured_saved_bytes(*shape)
    assert checks.evaluate("06b", "saved_bytes", exercise.reference)[0]


def test_numbers_of_numpy_and_whole_floats_are_taken():
    assert checks.evaluate("06b", "saved_bytes", lambda b, i, o: np.int64(saved_right(b, i, o)))[0]
    assert checks.evaluate("06b", "saved_bytes", lambda b, i, o: float(saved_right(b, i, o)))[0]
