"""The lessons' exercise self-checks (lessons/_checks/).

Every registered exercise is called with a right answer and with wrong ones: the right answer gets
"Right!", each wrong one "Not yet: ... Hint: ...", and no message shows the expected answer.

The right answer is the one the registration carries (`Exercise.reference`, the single source of
truth the graded assignments use too), and so are a function exercise's typical wrong variants
(`Exercise.wrong`). Lesson authors: when you register an exercise in lessons/_checks/ (its lesson's
module), give it ``reference=`` (and ``wrong=`` for a function), and add a `Case` for it to `CASES`
below, or to CASES from a tests/test_lessons_exercises_<lessons>.py of your own (wrong answers of other
kinds, with a fragment of the message each should get). `test_every_exercise_has_a_case` fails until
you do.
"""

from __future__ import annotations

import importlib.util
import json
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import engine as eg
from tests.checks_package import LESSONS, checks  # noqa: F401 (LESSONS: for the tests that import it)


@dataclass
class Case:
    """How to answer one exercise besides its registered reference and wrong variants: ``wrong`` lists
    ``(build_wrong_answer, fragment_the_message_must_contain)``; ``right()``, when given, builds
    another right answer (a learner's way, computed with the engine); ``secrets`` are extra strings
    that must never be printed (numbers in the right answers are added automatically)."""

    wrong: list[tuple[Callable[[], Any], str]]
    right: Callable[[], Any] | None = None
    secrets: list[str] = field(default_factory=list)


# ---- right and wrong answers, written as a learner would -----------------------------------------


def _floor_mod():
    a, b = eg.constant([-17]), eg.constant([5])
    return a // b, a % b


def _float32_product():
    return eg.constant(np.linspace(0.0, 1.0, 5), dtype="float32") * eg.constant([1.0, 2.0, 3.0, 4.0, 5.0])


def _float64_product():
    return eg.constant(np.linspace(0.0, 1.0, 5)) * eg.constant([1.0, 2.0, 3.0, 4.0, 5.0], dtype="float64")


def _landing():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the soft-placement warning without a GPU
        with eg.device("gpu:0"):
            return eg.ones([1]).device


def _other_device():
    return "cpu:0" if eg.gpu_available() else "gpu:0"


def _partials():
    return eg.gradients_function(lambda x, y: x**3 * y - y**2)(1.0, 2.0)











def _third_derivative():
    x = eg.Variable(2.0)
    with eg.GradientTape() as t1:
        with eg.GradientTape() as t2:
            with eg.GradientTape() as t3:
                y = eg.log(x**2)
            d1 = t3.gradient(y, x)
        d2 = t2.gradient(d1, x)
    return t1.gradient(d2, x)


def _second_derivative():
    x = eg.Variable(2.0)
    with eg.GradientTape() as t1:
        with eg.GradientTape() as t2:
            y = eg.log(x**2)
        d1 = t2.gradient(y, x)
    return t1.gradient(d1, x)


def _watch_constant(watch: bool):
    x = eg.constant(3.0)
    with eg.GradientTape() as tape:
        if watch:
            tape.watch(x)
        y = x**3 + 2 * x
    return tape.gradient(y, x)


def _jacobian(kind: str):
    x = eg.Variable([2.0, 3.0])
    with eg.GradientTape() as tape:
        y = eg.stack([x[0] * x[1], x[0] + x[1], x[1] ** 2])
    if kind == "sum":
        return tape.gradient(y, x)
    jac = tape.jacobian(y, x)
    return eg.transpose(jac) if kind == "transposed" else jac


CASES: dict[tuple[str, str], Case] = {
    ("01", "floor_mod"): Case(
        right=_floor_mod,
        wrong=[
            (lambda: (eg.constant([-3]), eg.constant([-2])), "part 1 of your answer is not right"),
            (lambda: (-4,), "parts"),
        ],
    ),
    ("01", "float32_product"): Case(
        right=_float32_product,
        wrong=[
            (_float64_product, "float64"),
            (lambda: np.linspace(0.0, 1.0, 5).astype(np.float32), "engine tensor"),
            (lambda: eg.constant([0.0, 0.5, 1.5, 3.0, 5.5]), "not right"),
        ],
        secrets=["[0.  0.5 1.5 3.  5. ]", "0.5, 1.5, 3.0, 5.0"],
    ),
    ("01", "landing_device"): Case(
        right=_landing,
        wrong=[
            (_other_device, "not where the tensor ends up"),
            (lambda: "cpu", "a colon"),
            (lambda: 0, "device name"),
        ],
        secrets=[_landing()],
    ),
    ("02", "partials"): Case(
        right=_partials,
        wrong=[
            (lambda: (3.0, -3.0), "part 1"),
            (lambda: (6.0, -4.0), "part 2"),
            (lambda: (None, -3.0), "None"),
        ],
    ),
    ("02", "sgd_step"): Case(wrong=[(lambda: "sgd_step", "function itself")]),
    ("02", "fix_broadcast"): Case(wrong=[(lambda: 3.0, "function itself")]),
    ("03", "third_derivative"): Case(
        right=_third_derivative,
        wrong=[(_second_derivative, "not right"), (lambda: None, "None")],
    ),
    ("03", "watch_constant"): Case(
        right=lambda: _watch_constant(True),
        wrong=[(lambda: _watch_constant(False), "None"), (lambda: 27.0, "not right")],
    ),
    ("03", "jacobian"): Case(
        right=lambda: _jacobian("full"),
        wrong=[
            (lambda: _jacobian("transposed"), "shape"),
            (lambda: _jacobian("sum"), "shape"),
            (lambda: np.array([[3.0, 2.0], [1.0, 1.0], [1.0, 6.0]]), "entries"),
        ],
        secrets=["[[3. 2.]", "[0. 6.]"],
    ),
}


# ---- helpers -------------------------------------------------------------------------------------


def _scalars(value: Any) -> list[float]:
    """The scalar answers inside a right answer (a number, or a tuple of numbers)."""
    if isinstance(value, (tuple, list)):
        return [s for v in value for s in _scalars(v)]
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        return []
    return [float(array.reshape(()))] if array.size == 1 else []


def _number_forms(v: float) -> set[str]:
    forms = {f"{v:g}", repr(v), str(np.float32(v)), f"{v:.1f}", f"{v:.2f}", f"{v:.4f}"}
    if v == int(v):
        forms.add(str(int(v)))
    return forms


def _right_answers(key: tuple[str, str]) -> list[Any]:
    """The registered reference, and the case's learner-style right answer when it gives one."""
    answers = [] if checks.EXERCISES[key].reference is None else [_course_answer(key)]
    if CASES[key].right is not None:
        answers.append(CASES[key].right())
    return answers


def _secrets(key: tuple[str, str]) -> set[str]:
    found = set(CASES[key].secrets)
    for answer in _right_answers(key):
        for v in _scalars(answer):
            found |= _number_forms(v)
    return found


def _leaks(message: str, secrets: set[str]) -> list[str]:
    """The secrets that appear in ``message`` as whole numbers/words."""
    return [s for s in secrets if re.search(r"(?<![\w.])" + re.escape(s) + r"(?![\w])", message)]


# Lessons 04-08 keep their cases in tests/test_lessons_exercises_*.py, which add them to CASES when
# imported: import them now, so that every parametrised test below covers every lesson's exercises.
for _path in sorted(Path(__file__).parent.glob("test_lessons_exercises_*.py")):
    importlib.import_module(f"{__package__}.{_path.stem}" if __package__ else _path.stem)

IDS = [f"{lesson}-{name}" for lesson, name in CASES]


# ---- tests ---------------------------------------------------------------------------------------


def test_every_exercise_has_a_case():
    missing = sorted(set(checks.EXERCISES) - set(CASES))
    assert not missing, f"add a Case (here or in tests/test_lessons_exercises_*.py) for: {missing}"


def _course_answer(key: tuple[str, str]) -> Any:
    """The registered reference as the check receives it. Lesson 10's references are the source text of
    its cells (each builds on the ones before: one engine), so its answer is that text run in order, as
    tests/test_lessons_exercises_10.py's case for it does."""
    reference = checks.EXERCISES[key].reference
    return CASES[key].right() if isinstance(reference, str) else reference


#: Lesson 10's typical mistakes are whole cells written wrong (tests/lesson10_variants.py), run inside
#: the engine of the other cells: they are its CASES' wrong answers, not registered with wrong=.
WRONG_AS_CELLS = {"10"}


@pytest.mark.parametrize("key", sorted(checks.EXERCISES), ids=lambda k: f"{k[0]}-{k[1]}")
def test_every_exercise_carries_a_reference_its_judge_accepts(key):
    exercise = checks.EXERCISES[key]
    assert exercise.reference is not None, f"register {key} with reference= (the course's answer)"
    answer = _course_answer(key)
    if exercise.function:
        assert callable(answer)
    for _ in range(2):  # and again: the verdict does not depend on the draw
        ok, message = checks.evaluate(*key, answer)
        assert ok, message


@pytest.mark.parametrize("key", sorted(k for k, e in checks.EXERCISES.items() if e.function
                                       and k[0] not in WRONG_AS_CELLS), ids=lambda k: f"{k[0]}-{k[1]}")
def test_function_exercise_refuses_its_registered_wrong_variants_by_name(key):
    exercise = checks.EXERCISES[key]
    assert exercise.wrong, f"register {key} with wrong= (the typical mistakes its judge names)"
    for answer, fragment in exercise.wrong:
        ok, message = checks.evaluate(*key, answer)
        assert not ok, f"a registered wrong variant was accepted: {message}"
        assert fragment in message, f"{fragment!r} not in {message!r}"
        assert not _leaks(message, _secrets(key)), message


def test_lesson_10s_mistakes_are_cells():
    assert all(CASES[k].wrong for k in checks.EXERCISES if k[0] in WRONG_AS_CELLS)


@pytest.mark.parametrize("key", list(CASES), ids=IDS)
def test_right_answer_is_right(key):
    for answer in _right_answers(key):
        ok, message = checks.evaluate(*key, answer)
        assert ok, message
        assert message.startswith("Right!")
        assert not _leaks(message, _secrets(key))


@pytest.mark.parametrize("key", list(CASES), ids=IDS)
def test_wrong_answers_get_a_hint_not_the_answer(key):
    case = CASES[key]
    secrets = _secrets(key)
    assert case.wrong or checks.EXERCISES[key].wrong, "give at least one wrong answer"
    for build, fragment in case.wrong:
        ok, message = checks.evaluate(*key, build())
        assert not ok, f"a wrong answer was accepted: {message}"
        assert message.startswith("Not yet: ") and " Hint: " in message, message
        assert fragment in message, f"{fragment!r} not in {message!r}"
        leaked = _leaks(message, secrets)
        assert not leaked, f"the message shows the answer ({leaked}): {message}"


@pytest.mark.parametrize("key", list(CASES), ids=IDS)
def test_unanswered_exercise_says_replace_the_dots(key):
    ok, message = checks.evaluate(*key, ...)
    assert not ok and "replace the `...`" in message
    ok, message = checks.evaluate(*key, (..., ...))
    assert not ok and "replace the `...`" in message


@pytest.mark.parametrize("key", list(CASES), ids=IDS)
def test_printed_output_never_shows_the_answer(key, capsys):
    case = CASES[key]
    wrong = [build() for build, _ in case.wrong] + [answer for answer, _ in checks.EXERCISES[key].wrong]
    check = checks.checker(key[0])
    check(key[1], _right_answers(key)[0])
    for answer in wrong:
        check(key[1], answer)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("Right!")
    assert all(line.startswith("Not yet: ") for line in lines[1:]) and len(lines) == 1 + len(wrong)
    leaked = _leaks("\n".join(lines), _secrets(key))
    assert not leaked, f"the printed output shows the answer ({leaked})"


def test_check_prints_the_verdict(capsys):
    check = checks.checker("03")
    check("watch_constant", _watch_constant(True))
    check("watch_constant", 1.0)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("Right!")
    assert lines[1].startswith("Not yet: ")


def test_unknown_exercise_names_the_known_ones():
    with pytest.raises(KeyError, match="watch_constant"):
        checks.evaluate("03", "no_such_exercise", 1.0)


def test_a_failing_judge_never_shows_its_message():
    def judge(answer):
        raise ValueError("expected 12345")

    checks.register("99", "boom", judge=judge, hint="a hint")
    try:
        ok, message = checks.evaluate("99", "boom", 1.0)
    finally:
        del checks.EXERCISES[("99", "boom")]
    assert not ok and "ValueError" in message and "12345" not in message


def test_register_refuses_duplicates_and_ambiguity():
    with pytest.raises(ValueError, match="twice"):
        checks.register("03", "jacobian", expected=1.0, hint="h")
    with pytest.raises(ValueError, match="exactly one"):
        checks.register("99", "both", expected=1.0, judge=lambda a: None, hint="h")
    with pytest.raises(ValueError, match="exactly one"):
        checks.register("99", "neither", hint="h")


@pytest.mark.parametrize(
    "expected, right, wrong, fragment",
    [
        (None, None, 0.0, "not right"),
        ({"w", "b"}, ["b", "W"], ["w"], "misses"),
        ("float32", " Float32 ", "float64", "not right"),
        (np.dtype("float32"), "float32", "int32", "dtype"),
        (np.ones((2, 2)), eg.ones([2, 2]), np.ones(4), "shape"),
        (2.5, np.array([2.5]), float("nan"), "NaN"),
    ],
)
def test_value_judge_kinds(expected, right, wrong, fragment):
    judge = checks.close_to(expected)
    assert judge(right) is None
    problem = judge(wrong)
    assert problem is not None and fragment in problem


def _code_of(notebook: Path) -> str:
    cells = json.loads(notebook.read_text())["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")


@pytest.mark.parametrize("key", sorted(checks.EXERCISES), ids=lambda k: f"{k[0]}-{k[1]}")
def test_each_exercise_is_used_in_its_lesson(key):
    lesson, name = key
    notebooks = sorted(LESSONS.glob(f"{lesson}_*.ipynb"))
    assert notebooks, f"no notebook lessons/{lesson}_*.ipynb for exercise {name!r}"
    code = _code_of(notebooks[0])
    assert any(f"{how}({q}{lesson}{q})" in code for how in ("checker", "progress") for q in "\"'")
    assert f'"{name}"' in code or f"'{name}'" in code, f"{notebooks[0].name} never checks {name!r}"


# ---- the same checks inside the lessons' own kernels (shared with tests/test_notebooks.py) ---------

IN_LESSON = [
    (
        "01_tensors_and_devices.ipynb",
        'check("floor_mod", (eg.constant([-17]) // eg.constant([5]), eg.constant([-17]) % eg.constant([5])))',
        'check("floor_mod", (eg.constant([-3]), eg.constant([-2])))',
    ),
    (
        "02_gradients_of_functions.ipynb",
        'check("partials", eg.gradients_function(lambda x, y: x**3 * y - y**2)(1.0, 2.0))',
        'check("partials", eg.gradients_function(lambda x, y: x**3 * y - y**2)(2.0, 1.0))',
    ),
    (
        "03_gradient_tape.ipynb",
        "x = eg.constant(3.0)\nwith eg.GradientTape() as t:\n    t.watch(x)\n    y = x**3 + 2 * x\n"
        'check("watch_constant", t.gradient(y, x))',
        "x = eg.constant(3.0)\nwith eg.GradientTape() as t:\n    y = x**3 + 2 * x\n"
        'check("watch_constant", t.gradient(y, x))',
    ),
]


@pytest.mark.parametrize("name, right, wrong", IN_LESSON, ids=[n[:2] for n, _, _ in IN_LESSON])
def test_checks_work_inside_the_lesson(lesson, name, right, wrong):
    run = lesson(name)
    assert run.run(right).startswith("Right!")
    assert run.run(wrong).startswith("Not yet: ")
