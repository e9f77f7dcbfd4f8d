"""The graded assignments' side of the checks (tools/make_assignments.py writes cells that call it).

`points` gives an exercise's points from its registration: a function (or class) the learner writes is
worth 2, a value 1. `grade` is what an assignment's locked test cell runs: the same verdict as
`evaluate` (printed, then asserted, so that nbgrader scores it), and the hidden cases: the answer is
the learner's own (made in the notebook, not the course's reference taken from this package).

>>> from _checks import register
>>> register("98", "two", expected=2.0, hint="One and one.")
>>> points("98", "two")
1
>>> grade("98", "two", 2.0)
Right!
>>> grade("98", "two", 3.0)
Traceback (most recent call last):
AssertionError: Not yet: ...
"""

from __future__ import annotations

from typing import Any

from .registry import EXERCISES, evaluate

#: points of a function exercise and of a value exercise
FUNCTION_POINTS, VALUE_POINTS = 2, 1


def points(lesson: str, name: str) -> int:
    """The exercise's points: `FUNCTION_POINTS` when the learner writes a function, else `VALUE_POINTS`."""
    exercise = EXERCISES[(str(lesson), str(name))]
    return FUNCTION_POINTS if exercise.function or callable(exercise.reference) else VALUE_POINTS


def grade(lesson: str, name: str, answer: Any, *, hidden: bool = False) -> None:
    """Print the check's verdict and raise ``AssertionError`` unless the answer is right.

    ``hidden``: the hidden cases instead: the answer must be the learner's own work, not the reference
    kept in this package (a function or class must be defined in the notebook, i.e. in ``__main__``).
    """
    if hidden:
        reference = EXERCISES[(str(lesson), str(name))].reference
        assert answer is not reference or isinstance(answer, (int, float, str, bool, type(None))), \
            f"{name}: the answer is the course's reference taken from _checks, not your own"
        if callable(answer):
            module = getattr(answer, "__module__", None)
            assert module == "__main__", f"{name}: {answer!r} comes from {module}, not from this notebook"
        return
    ok, message = evaluate(lesson, name, answer)
    print(message)
    assert ok, message
