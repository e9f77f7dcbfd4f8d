"""The exercise registry and the entry points: `register`, `evaluate`, `check`, `checker`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .compare import Judge, close_to
from .timelimit import TIME_LIMIT_S, _time_limit, _TookTooLong


@dataclass(frozen=True)
class Exercise:
    """One registered exercise: which lesson, its name, how to judge it, and the hint."""

    lesson: str
    name: str
    judge: Judge
    hint: str
    praise: str = ""
    function: str = ""  # the answer is the learner's function of this name (not its result)
    #: The course's own answer, beside the registration (never imported by a lesson): the value, or
    #: for a function exercise the function. The tests and the graded assignments judge it.
    reference: Any = None
    #: Typical wrong answers of a function exercise, each with a fragment of the sentence its judge
    #: gives it (the mistake it names): the tests prove each is refused with that diagnosis.
    wrong: tuple[tuple[Any, str], ...] = ()


#: Every registered exercise, by (lesson, name).
EXERCISES: dict[tuple[str, str], Exercise] = {}

_NOTHING = object()


def register(lesson: str, name: str, *, hint: str, expected: Any = _NOTHING, judge: Judge | None = None,
             praise: str = "", rtol: float = 1e-4, atol: float = 1e-6, function: str = "",
             reference: Any = None, wrong: tuple[tuple[Any, str], ...] = ()) -> None:
    """Add an exercise: give either ``expected`` (a value to compare with) or ``judge``.

    ``function``: the answer is a function the learner wrote under this name; anything that is not
    callable gets "pass the function itself" before the judge sees it.
    ``reference``: the course's own answer (a value, or the function for a function exercise), kept
    beside the registration for the tests and the graded assignments; the judge must accept it. For
    ``expected=`` it defaults to the expected value.
    ``wrong``: typical wrong answers, ``(answer, fragment of the judge's sentence that names it)``.
    """
    if (expected is _NOTHING) == (judge is None):
        raise ValueError(f"register({lesson!r}, {name!r}): give exactly one of expected= or judge=.")
    key = (str(lesson), str(name))
    if key in EXERCISES:
        raise ValueError(f"Exercise {name!r} of lesson {lesson!r} is registered twice.")
    if judge is None:
        judge = close_to(expected, rtol=rtol, atol=atol)
        if reference is None:
            reference = expected
    EXERCISES[key] = Exercise(key[0], key[1], judge, hint.strip(), praise.strip(), function, reference,
                              tuple(wrong))


def evaluate(lesson: str, name: str, answer: Any, *, time_limit: float | None = None) -> tuple[bool, str]:
    """``(is_right, message)`` for an answer; `check` prints the message.

    ``time_limit``: seconds the check may run (default `TIME_LIMIT_S`; 0 or less: no limit).
    """
    exercise = EXERCISES.get((str(lesson), str(name)))
    if exercise is None:
        known = sorted(n for (les, n) in EXERCISES if les == str(lesson))
        raise KeyError(f"Lesson {lesson!r} has no exercise {name!r}. Its exercises: {known}")
    if _unanswered(answer):
        return False, "Not yet: replace the `...` with your answer, then run the cell again."
    if exercise.function and not callable(answer):
        return False, (f"Not yet: the answer should be your function itself: check('{exercise.name}', "
                       f"{exercise.function}), no parentheses. Hint: {exercise.hint}")
    seconds = TIME_LIMIT_S if time_limit is None else float(time_limit)
    try:
        with _time_limit(seconds):
            problem = exercise.judge(answer)
    except _TookTooLong:
        problem = (f"checking your answer took more than {seconds:g} seconds, so it was stopped: does it "
                   "run a loop that never ends? (A cell of your own that runs forever stops with "
                   "Kernel ▸ Interrupt Kernel, the ■ button.)")
    except Exception as exc:  # never show the message: it might quote the expected value
        problem = (f"your answer could not be checked (checking it raised {type(exc).__name__}); "
                   "is it the kind of value the exercise asks for?")
    if problem is None:
        return True, "Right!" + (f" {exercise.praise}" if exercise.praise else "")
    return False, f"Not yet: {problem} Hint: {exercise.hint}"


def _unanswered(answer: Any) -> bool:
    """True for ``...`` itself, or a plain tuple/list that still holds one."""
    if answer is Ellipsis:
        return True
    return type(answer) in (tuple, list) and any(_unanswered(a) for a in answer)


def check(lesson: str, name: str, answer: Any, *, time_limit: float | None = None) -> None:
    """Print "Right!" or "Not yet: <what is wrong>. Hint: <hint>" for an answer."""
    print(evaluate(lesson, name, answer, time_limit=time_limit)[1])


def checker(lesson: str, *, time_limit: float | None = None) -> Callable[[str, Any], None]:
    """``check(name, answer)`` for one lesson's exercises (``time_limit``: see `evaluate`)."""
    lesson = str(lesson)
    run = check  # the guarded entry point (this function runs guarded, after the names were put back)

    def check_exercise(name: str, answer: Any) -> None:
        run(lesson, name, answer, time_limit=time_limit)

    check_exercise.__doc__ = f"Check an answer to an exercise of lesson {lesson}: check(name, answer)."
    return check_exercise
