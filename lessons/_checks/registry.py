"""The exercise registry and the entry points: `register`, `evaluate`, `check`, `checker`, `hint`."""

from __future__ import annotations

import dis
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .answers import Computed, Hashed
from .compare import Judge, close_to
from .timelimit import TIME_LIMIT_S, _time_limit, _TookTooLong


@dataclass(frozen=True)
class Exercise:
    """One registered exercise: which lesson, its name, how to judge it, and its hints.

    The hints come in tiers (see `hint`): ``idea`` (what to think about, never code: it is the one
    every "Not yet" shows), then the kind of mistake the last check found, then ``hint`` (the recipe,
    which may name the functions to call).
    """

    lesson: str
    name: str
    judge: Judge
    hint: str
    praise: str = ""
    function: str = ""  # the answer is the learner's function of this name (not its result)
    #: The course's own answer, beside the registration (never imported by a lesson): the value, or
    #: for a function exercise the function, or for a value exercise the `answers.Computed` /
    #: `answers.Hashed` that finds the value on each check. Read it as `reference`.
    solution: Any = None
    #: Typical wrong answers of a function exercise, each with a fragment of the sentence its judge
    #: gives it (the mistake it names): the tests prove each is refused with that diagnosis.
    wrong: tuple[tuple[Any, str], ...] = ()
    #: The first tier of hints: the idea, without code (empty: the hint is shown, as before tiers).
    idea: str = ""

    @property
    def reference(self) -> Any:
        """The course's answer: the value (computed now, for an expected value that is not stored in
        plain form), or the function of a function exercise. The tests and the graded assignments
        judge it."""
        return self.solution.value() if isinstance(self.solution, (Computed, Hashed)) else self.solution


#: Every registered exercise, by (lesson, name).
EXERCISES: dict[tuple[str, str], Exercise] = {}

_NOTHING = object()

#: What an untouched exercise gets, and nothing more (no diagnosis, no hint).
NOT_ANSWERED = "Not yet: not answered yet (replace the `...` with your answer, then run the cell again)."

#: After this many wrong answers to a value exercise in one kernel, `check` stops saying in which way
#: an answer is off ("too large", "misses something"): a search would find the value from the verdicts.
DIRECTED_TRIES = 5

#: The same for an answer that is a set of names: one wrong answer only. Each "misses something" /
#: "contains something that does not belong" tells about the names tried, so a question of four or five
#: options would be found by trying them one at a time within `DIRECTED_TRIES`.
SET_DIRECTED_TRIES = 1

#: What `check.hint` says a check found once the check no longer says which way an answer is off.
UNDIRECTED = "your answer is not right (the check no longer says in which way an answer is off)."


def register(lesson: str, name: str, *, hint: str, expected: Any = _NOTHING, judge: Judge | None = None,
             praise: str = "", rtol: float = 1e-4, atol: float = 1e-6, function: str = "",
             reference: Any = None, wrong: tuple[tuple[Any, str], ...] = (), idea: str = "") -> None:
    """Add an exercise: give either ``expected`` (a value to compare with) or ``judge``.

    ``expected``: a plain value, or (the course's exercises: no answer in plain sight) an
    `answers.computed` computation run on each check or an `answers.hashed` set of options.

    ``function``: the answer is a function the learner wrote under this name; anything that is not
    callable gets "pass the function itself" before the judge sees it.
    ``reference``: the course's own answer (a value, an `answers.computed`, or the function for a
    function exercise), kept beside the registration for the tests and the graded assignments; the
    judge must accept it. For ``expected=`` it defaults to the expected value (or its computation).
    ``wrong``: typical wrong answers, ``(answer, fragment of the judge's sentence that names it)``.
    ``idea``: the first tier of hints, without code; ``hint`` is the last tier, the recipe.
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
                              tuple(wrong), idea.strip())


def _exercise(lesson: str, name: str) -> Exercise:
    exercise = EXERCISES.get((str(lesson), str(name)))
    if exercise is None:
        known = sorted(n for (les, n) in EXERCISES if les == str(lesson))
        raise KeyError(f"Lesson {lesson!r} has no exercise {name!r}. Its exercises: {known}")
    return exercise


def _judged(exercise: Exercise, answer: Any, time_limit: float | None) -> str | None:
    """None for a right answer, else the sentence saying what is wrong (`NOT_ANSWERED` itself for an
    untouched one)."""
    if _unanswered(answer) or (exercise.function and _untouched(answer)):
        return NOT_ANSWERED
    if exercise.function and not callable(answer):
        return (f"the answer should be your function itself: check('{exercise.name}', {exercise.function}), "
                "no parentheses.")
    seconds = TIME_LIMIT_S if time_limit is None else float(time_limit)
    try:
        with _time_limit(seconds):
            return exercise.judge(answer)
    except _TookTooLong:
        return (f"checking your answer took more than {seconds:g} seconds, so it was stopped: does it "
                "run a loop that never ends? (A cell of your own that runs forever stops with "
                "Kernel ▸ Interrupt Kernel, the ■ button.)")
    except Exception as exc:  # never show the message: it might quote the expected value
        return (f"your answer could not be checked (checking it raised {type(exc).__name__}); "
                "is it the kind of value the exercise asks for?")
    except BaseException as exc:  # SystemExit, KeyboardInterrupt, GeneratorExit from the answer: reported
        return (f"your answer raised {type(exc).__name__} while it was checked, which stops a program "
                "(or the kernel): an answer computes its result and returns it.")


def evaluate(lesson: str, name: str, answer: Any, *, time_limit: float | None = None) -> tuple[bool, str]:
    """``(is_right, message)`` for an answer; `check` prints the message.

    A wrong answer's message says what is wrong, then the first tier of hints (the idea, no code);
    an untouched one (``...``, or a function whose body is still the template's) only says so.
    ``time_limit``: seconds the check may run (default `TIME_LIMIT_S`; 0 or less: no limit).
    """
    exercise = _exercise(lesson, name)
    problem = _judged(exercise, answer, time_limit)
    _remember(exercise, problem)
    if problem is None:
        return True, "Right!" + (f" {exercise.praise}" if exercise.praise else "")
    if problem == NOT_ANSWERED:
        return False, NOT_ANSWERED
    return False, f"Not yet: {problem} Hint: {exercise.idea or exercise.hint}"


def _unanswered(answer: Any) -> bool:
    """True for ``...`` itself, or a plain tuple/list that still holds one."""
    if answer is Ellipsis:
        return True
    return type(answer) in (tuple, list) and any(_unanswered(a) for a in answer)


_EMPTY_OPS = frozenset({"RESUME", "NOP", "CACHE", "LOAD_CONST", "RETURN_VALUE", "RETURN_CONST"})


def _empty_code(code: Any) -> bool:
    """A body that does nothing: ``...``, ``pass`` or a docstring, then return None."""
    for instruction in dis.get_instructions(code):
        if instruction.opname not in _EMPTY_OPS:
            return False
        if instruction.opname in ("LOAD_CONST", "RETURN_CONST") and instruction.argval is not None:
            return False
    return True


def _inner_codes(code: Any) -> list[Any]:
    return [c for c in code.co_consts if inspect.iscode(c)]


def _untouched(answer: Any) -> bool:
    """A function (or class) still as the lesson's template leaves it: its body only ``...`` (or
    ``pass``), or a template that builds from inner functions (lesson 03's make_softsign) with every
    inner function so and a ``...`` still passed as a value, or every method of a class so."""
    if inspect.isclass(answer):
        methods = [m for m in vars(answer).values() if inspect.isfunction(m)]
        return bool(methods) and all(_untouched(m) for m in methods)
    code = getattr(answer, "__code__", None) if inspect.isfunction(answer) else None
    if code is None or code.co_name == "<lambda>":  # a template is a def; a lambda is an answer
        return False
    inner = [c for c in _inner_codes(code) if c.co_name != "<lambda>"]
    still_dots = any(c is Ellipsis for c in code.co_consts)  # a `...` used as a value (rule=...)
    return _empty_code(code) or (still_dots and bool(inner) and all(_empty_code(c) for c in inner))


def _tries_counter() -> Callable[[tuple[str, str], bool], int]:
    """How many wrong answers each exercise got in this kernel, in a closure a cell cannot reach."""
    counts: dict[tuple[str, str], int] = {}

    def count(key: tuple[str, str], wrong: bool) -> int:
        counts[key] = counts.get(key, 0) + wrong
        return counts[key]

    return count


_count_wrong = _tries_counter()


def _hint_tiers() -> tuple[Callable[[Exercise, str | None], None], Callable[[Exercise], str]]:
    """The last diagnosis and the next hint tier of each exercise, in closures a cell cannot reach."""
    last: dict[tuple[str, str], str] = {}
    asked: dict[tuple[str, str], int] = {}

    def remember(exercise: Exercise, problem: str | None) -> None:
        key = (exercise.lesson, exercise.name)
        if problem is None or problem == NOT_ANSWERED:
            last.pop(key, None)
        else:
            last[key] = problem

    def next_tier(exercise: Exercise) -> str:
        key = (exercise.lesson, exercise.name)
        tier = asked[key] = asked.get(key, 0) + 1
        idea = exercise.idea or exercise.hint
        if tier == 1:
            return f"Hint 1 of 3 (the idea): {idea}"
        if tier == 2:
            found = last.get(key)
            return ("Hint 2 of 3 (your mistake): " + (f"the last check found that {found}" if found else
                    "check an answer first; this hint names the kind of mistake the check finds in it."))
        return f"Hint 3 of 3 (the recipe): {exercise.hint}"

    return remember, next_tier


_remember, _next_tier = _hint_tiers()


def check(lesson: str, name: str, answer: Any, *, time_limit: float | None = None) -> None:
    """Print "Right!" or "Not yet: <what is wrong>. Hint: <the idea>" for an answer.

    After `DIRECTED_TRIES` wrong answers to a value exercise (`SET_DIRECTED_TRIES` for a set of
    names), the message stops saying in which way the answer is off (a search would find the value
    from the verdicts), and so does the next `hint`.
    """
    print(verdict(lesson, name, answer, time_limit=time_limit)[1])


def verdict(lesson: str, name: str, answer: Any, *, time_limit: float | None = None) -> tuple[bool, str]:
    """``(ok, message)``: what `check` prints, for callers that also need to know whether it passed
    (`progress`)."""
    exercise = _exercise(lesson, name)
    ok, message = evaluate(lesson, name, answer, time_limit=time_limit)  # the guarded entry point
    limit = SET_DIRECTED_TRIES if _names(answer) else DIRECTED_TRIES
    if not ok and message != NOT_ANSWERED and not exercise.function and \
            _count_wrong((exercise.lesson, exercise.name), True) > limit:
        message = (f"Not yet: your answer is not right. (After {limit} {'try' if limit == 1 else 'tries'} "
                   "the check no longer says in which way an answer is off: work it out from the lesson "
                   f"rather than search.) Hint: {exercise.idea or exercise.hint}")
        _remember(exercise, UNDIRECTED)  # nor does the next hint tier (it tells the last check's finding)
    return ok, message


def _names(answer: Any) -> bool:
    """An answer that is a set (or list, tuple) of plain strings: a choice among a question's options."""
    if type(answer) in (set, frozenset):
        return all(type(item) is str for item in answer)
    return type(answer) in (list, tuple) and bool(answer) and all(type(item) is str for item in answer)


def hint(lesson: str, name: str) -> None:
    """Print the next tier of hints for an exercise: the idea, then the kind of mistake the last check
    found, then the recipe (asked again, the recipe again)."""
    print(_next_tier(_exercise(lesson, name)))


def checker(lesson: str, *, time_limit: float | None = None) -> Callable[[str, Any], None]:
    """``check(name, answer)`` for one lesson's exercises (``time_limit``: see `evaluate`); its
    ``check.hint(name)`` prints the next tier of hints for an exercise (see `hint`)."""
    lesson = str(lesson)
    run, ask = check, hint  # the guarded entry points (this runs guarded, after the names were put back)

    def check_exercise(name: str, answer: Any) -> None:
        run(lesson, name, answer, time_limit=time_limit)

    def hint_for(name: str) -> None:
        ask(lesson, name)

    check_exercise.__doc__ = (f"Check an answer to an exercise of lesson {lesson}: check(name, answer); "
                              "check.hint(name) gives the next hint.")
    hint_for.__doc__ = f"The next hint for an exercise of lesson {lesson}: the idea, the mistake, the recipe."
    check_exercise.hint = hint_for  # type: ignore[attr-defined]
    return check_exercise
