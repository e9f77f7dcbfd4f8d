"""The trial's corpus, assembled from where each answer already lives (one source of truth).

=================  ===========================================================================
kind               from
=================  ===========================================================================
right              the registered reference (``EXERCISES[key].reference``); the tests' learner-
                   style right answer (``CASES[key].right``; lesson 10: the course's cells run);
                   `learners.RIGHT` and lesson 10's rewritten cells (`learners.REWRITTEN_10`)
wrong              the registered wrong variants (``EXERCISES[key].wrong``); the tests' wrong
                   answers (``CASES[key].wrong``); the float32 / aliasing / wrong-dtype / NumPy-
                   wrapped answers of tests/test_lessons_checks_shortcuts.py (``KEPT``); answers
                   that never return (tests/test_lessons_checks_honest.py); `learners.WRONG`
shortcut           the engine's own implementation, or the forbidden one in a thread
                   (``SHORTCUTS``); answers that only look right (``ADVERSARIAL``); the machinery
                   swapped from a cell or during the answer (``HELPER_PATCHES``, np.allclose,
                   ``object.__setattr__`` on every record); searches (`learners.SEARCHES`)
=================  ===========================================================================

Each `Trial` declares the words its verdict must contain: a wrong answer's name its mistake, a
shortcut's say why it is refused.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

import engine as eg
from tests.exercise_trial import learners
from tests.test_lessons_checks_honest import (
    ADVERSARIAL,
    FOREVER_FRAGMENT,
    HELPER_PATCHES,
    LiarTensor,
    _float32_product_liar,
    rows_via_module,
)
from tests.test_lessons_checks_shortcuts import KEPT, SHORTCUTS, _always, _patching
from tests.test_lessons_exercises import CASES, _course_answer, checks
from tests.test_lessons_exercises_10 import ANSWER as ANSWER_10
from tests.test_lessons_exercises_10 import engine as engine_10
from tests.test_lessons_exercises_10 import reference as reference_10

KINDS = ("right", "wrong", "shortcut")


@dataclass(frozen=True)
class Trial:
    """One answer of the trial: to which exercise, of which kind, what it is, the words its verdict
    must contain, and where it is kept (``origin``). ``cell``: a cell run before the check (a
    context manager that undoes it afterwards); ``search``: instead of one answer, a search run on
    the kernel's ``check`` verdicts; ``short``: an answer that never returns, checked with a short
    time limit."""

    key: tuple[str, str]
    kind: str
    label: str
    build: Callable[[], Any]
    words: tuple[str, ...] = ()
    origin: str = ""
    cell: Callable[[], contextlib.AbstractContextManager] | None = None
    search: Callable[..., list[tuple[bool, str]]] | None = None
    short: bool = False


def _value(answer: Any) -> Callable[[], Any]:
    return lambda: answer


def _rewritten_10(name: str) -> Callable[[], Any]:
    cell = reference_10(name)
    for old, new in learners.REWRITTEN_10[name]:
        if old not in cell:
            raise ValueError(f"lesson 10's {name} cell no longer holds {old!r}: update learners.REWRITTEN_10")
        cell = cell.replace(old, new)
    return lambda: engine_10({name: cell})[ANSWER_10[name]]


def _right(key: tuple[str, str]) -> list[Trial]:
    trials = [Trial(key, "right", "the course's reference", lambda key=key: _course_answer(key),
                    origin="registered")]
    if CASES[key].right is not None and key[0] != "10":  # lesson 10's is the course's cells, run
        trials.append(Trial(key, "right", "the tests' learner answer", CASES[key].right, origin="CASES"))
    for label, build in learners.RIGHT.get(key, []):
        trials.append(Trial(key, "right", label, build, origin="trial"))
    if key[0] == "10":
        trials.append(Trial(key, "right", "the cell written otherwise", _rewritten_10(key[1]),
                            origin="trial"))
    return trials


def _wrong(key: tuple[str, str]) -> list[Trial]:
    trials = [Trial(key, "wrong", f"registered wrong variant {i + 1}", _value(answer), (fragment,),
                    origin="registered") for i, (answer, fragment) in enumerate(checks.EXERCISES[key].wrong)]
    trials += [Trial(key, "wrong", f"tests' wrong answer {i + 1}", build, (fragment,), origin="CASES")
               for i, (build, fragment) in enumerate(CASES[key].wrong)]
    trials += [Trial(key, "wrong", f"{label} (kept)", build, (fragment,), origin="shortcuts test")
               for i, (k, build, fragment) in enumerate(KEPT) if k == key
               for label in [f"dtype/aliasing/engine-ops answer {i + 1}"]]
    trials += [Trial(key, "wrong", label, build, (fragment,), origin="honest test", short=True)
               for label, build, fragment, _ in ADVERSARIAL.get(key, []) if fragment == FOREVER_FRAGMENT]
    trials += [Trial(key, "wrong", label, build, words, origin="trial")
               for label, build, words in learners.WRONG.get(key, [])]
    return trials


def _a_wrong_answer(key: tuple[str, str]) -> Any:
    """A wrong answer to ``key`` (for the shortcuts that swap the machinery and then answer wrongly)."""
    if checks.EXERCISES[key].wrong:
        return checks.EXERCISES[key].wrong[0][0]
    return CASES[key].wrong[0][0]()


@contextlib.contextmanager
def _judge_swapped(key: tuple[str, str]) -> Iterator[None]:
    """A cell: ``object.__setattr__(EXERCISES[key], "judge", lambda answer: None)`` (undone after)."""
    exercise = checks.EXERCISES[key]
    judge = exercise.judge
    object.__setattr__(exercise, "judge", lambda answer: None)
    try:
        yield
    finally:
        object.__setattr__(exercise, "judge", judge)


@contextlib.contextmanager
def _record_replaced(key: tuple[str, str]) -> Iterator[None]:
    """A cell: ``EXERCISES[key] = Exercise(..., judge=lambda answer: None)``."""
    original = checks.EXERCISES[key]
    checks.EXERCISES[key] = checks.Exercise(key[0], key[1], lambda answer: None, "a hint")
    try:
        yield
    finally:
        checks.EXERCISES[key] = original


@contextlib.contextmanager
def _helper_patched(module: str, name: str, replacement: Any) -> Iterator[None]:
    """A cell: ``_checks.<module>.<name> = replacement``."""
    home = importlib.import_module(f"{checks.__name__}.{module}")
    original = getattr(home, name)
    setattr(home, name, replacement)
    try:
        yield
    finally:
        setattr(home, name, original)


@contextlib.contextmanager
def _engine_names_rebound() -> Iterator[None]:
    """A cell: ``eg.Tensor = LiarTensor; sys.setprofile = lambda f: None``."""
    tensor, setprofile = eg.Tensor, sys.setprofile
    eg.Tensor, sys.setprofile = LiarTensor, lambda function: None
    try:
        yield
    finally:
        eg.Tensor, sys.setprofile = tensor, setprofile


def _patched_during(target: Any, name: str) -> Callable[[], Any]:
    """global_clip_by_hand answered with zeros by an answer that makes ``target.name`` always true."""
    clip = checks.EXERCISES["05", "global_clip_by_hand"].reference

    def build():
        return _patching(target, name, _always)(
            lambda grads, c: ([None if g is None else g * 0 for g in grads], clip(grads, c)[1]))

    return build


@contextlib.contextmanager
def _restored(target: Any, name: str) -> Iterator[None]:
    original = getattr(target, name)
    try:
        yield
    finally:
        setattr(target, name, original)


def _machinery() -> list[Trial]:
    """The shortcuts on the machinery: swapping the judge of every exercise's record, the record
    itself, the package's helpers, the comparisons during the answer, the engine's names."""
    trials = [Trial(key, "shortcut", "object.__setattr__ on the record's judge",
                    lambda key=key: _a_wrong_answer(key), ("Not yet",), origin="shortcuts test",
                    cell=lambda key=key: _judge_swapped(key))
              for key in sorted(checks.EXERCISES)]
    trials.append(Trial(("05", "global_clip"), "shortcut", "EXERCISES[key] replaced", _value((1.0, 1.0)),
                        ("Not yet",), origin="honest test",
                        cell=lambda: _record_replaced(("05", "global_clip"))))
    trials += [Trial(key, "shortcut", f"_checks.{module}.{name} patched in a cell", answer, ("Not yet",),
                     origin="honest test",
                     cell=lambda m=module, n=name, r=replacement: _helper_patched(m, n, r))
               for module, name, replacement, key, answer in HELPER_PATCHES]
    steps = sys.modules[checks.__name__ + ".making_steps"]
    for target, name in [(np, "allclose"), (np, "isclose"), (np, "array_equal"), (steps, "_all_close"),
                         (steps, "_close")]:
        trials.append(Trial(("05", "global_clip_by_hand"), "shortcut",
                            f"{getattr(target, '__name__', target)}.{name} replaced during the answer",
                            _patched_during(target, name), ("while it was checked", "replaced a function"),
                            origin="shortcuts test", cell=lambda t=target, n=name: _restored(t, n)))
    trials += [
        Trial(("01", "float32_product"), "shortcut", "eg.Tensor and sys.setprofile rebound in a cell",
              _float32_product_liar, ("engine tensor",), origin="honest test", cell=_engine_names_rebound),
        Trial(("05", "clip_rows"), "shortcut", "sys.setprofile rebound, clip_by_norm by its module",
              lambda: rows_via_module, ("eg.clip_by_norm",), origin="honest test",
              cell=_engine_names_rebound),
    ]
    return trials


def _shortcuts(key: tuple[str, str]) -> list[Trial]:
    trials = [Trial(key, "shortcut", f"the engine's own / a thread ({fragment})", build, (fragment,),
                    origin="shortcuts test") for k, build, fragment in SHORTCUTS if k == key]
    trials += [Trial(key, "shortcut", label, build, (fragment,), origin="honest test")
               for label, build, fragment, _ in ADVERSARIAL.get(key, []) if fragment != FOREVER_FRAGMENT]
    if key in learners.SEARCHES:
        label, search = learners.SEARCHES[key]
        trials.append(Trial(key, "shortcut", label, _value(None), ("no longer says",), origin="trial",
                            search=search))
    return trials


def trials() -> list[Trial]:
    """The whole corpus, exercise by exercise (lesson order), then the shortcuts on the machinery."""
    unknown = (set(learners.RIGHT) | set(learners.WRONG) | set(learners.SEARCHES)) - set(checks.EXERCISES)
    if unknown:
        raise KeyError(f"the trial answers exercises that are not registered: {sorted(unknown)}")
    corpus: list[Trial] = []
    for key in sorted(checks.EXERCISES):
        corpus += _right(key) + _wrong(key) + _shortcuts(key)
    return corpus + _machinery()
