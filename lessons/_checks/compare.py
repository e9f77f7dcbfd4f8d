"""The built-in value judge: compares an answer with an expected value (see the package docstring)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .answers import Computed, Hashed
from .plain import _NUMPY_NUMBERS, _kind, _plain_collection, _plain_numbers

#: A judge returns None for a right answer, or a sentence saying what is wrong (never the answer).
Judge = Callable[[Any], "str | None"]


def close_to(expected: Any, rtol: float = 1e-4, atol: float = 1e-6) -> Judge:
    """A judge comparing an answer with ``expected`` (see the package docstring for the kinds).

    ``expected`` may be `answers.computed` or `answers.hashed` (see answers.py): then the value is
    found anew on each call and never kept.
    """
    if isinstance(expected, (Computed, Hashed)):
        answer_of = expected.value

        def judge_now(answer: Any) -> str | None:
            return _compare(answer, answer_of(), rtol, atol)

        return judge_now
    if isinstance(expected, np.ndarray):
        expected = np.array(expected, copy=True)
        expected.setflags(write=False)

    def judge(answer: Any) -> str | None:
        return _compare(answer, expected, rtol, atol)

    return judge


def _compare(answer: Any, expected: Any, rtol: float, atol: float, part: str = "") -> str | None:
    who = f"{part} " if part else "your answer "
    if expected is None:
        return None if answer is None else f"{who}is not right."
    if answer is None:
        return f"{who}is None."
    if isinstance(expected, (set, frozenset)):
        if not _plain_collection(answer, (set, frozenset, list, tuple)):
            return f"{who}should be a collection of strings, a set or a list (it is {_kind(answer)})."
        if any(type(a) is not str for a in answer):
            return f"{who}should hold strings only (plain str), one per item."
        given = {a.strip().lower() for a in answer}
        wanted = {str(e).strip().lower() for e in expected}
        if given == wanted:
            return None
        if given < wanted:
            return f"{who}misses something."
        return f"{who}contains something that does not belong."
    if isinstance(expected, str):
        if type(answer) is not str:
            return f"{who}should be a plain string (it is {_kind(answer)})."
        return None if answer.strip().lower() == expected.strip().lower() else f"{who}is not right."
    if isinstance(expected, np.dtype):
        numpy_type = any(answer is t for t in _NUMPY_NUMBERS)
        if not (type(answer) is str or isinstance(answer, np.dtype) or numpy_type):
            return f"{who}is not a dtype."
        try:
            same = np.dtype(answer) == expected
        except TypeError:
            return f"{who}is not a dtype."
        return None if same else f"{who}is not the right dtype."
    if isinstance(expected, (tuple, list)):
        if not _plain_collection(answer, (tuple, list)):
            return (f"{who}should be a plain tuple or list, with one part per question (it is "
                    f"{_kind(answer)}).")
        if len(answer) != len(expected):
            return f"{who}has {len(answer)} parts, which is not the number of parts the exercise asks for."
        for i, (a, e) in enumerate(zip(answer, expected)):
            problem = _compare(a, e, rtol, atol, part=f"part {i + 1} of your answer")
            if problem is not None:
                return problem
        return None
    return _compare_numbers(answer, expected, rtol, atol, who)


def _compare_numbers(answer: Any, expected: Any, rtol: float, atol: float, where: str) -> str | None:
    want = np.asarray(expected)
    got = _plain_numbers(answer, where)
    if isinstance(got, str):
        return got
    if got.shape != want.shape and not (got.size == want.size == 1):
        return f"{where}has shape {got.shape}, which is not the shape the exercise asks for."
    got = got.reshape(want.shape).astype(np.float64)
    want = want.astype(np.float64)
    if not np.all(np.isfinite(got)):
        return f"{where}contains NaN or inf."
    if np.allclose(got, want, rtol=rtol, atol=atol):
        return None
    return f"{where}is not right." if got.size == 1 else f"{where}has entries that are not right."
