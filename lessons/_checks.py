"""Self-checks for the lesson exercises: they answer "Right!" or "Not yet: <hint>", never the answer.

In a lesson notebook (the kernel runs in ``lessons/``, so this module is importable)::

    from _checks import checker
    check = checker("02")
    check("partials", (dx, dy))     # prints "Right! ..." or "Not yet: ... Hint: ..."

For lesson authors: register each exercise in your lesson's section at the bottom of this file,
under the lesson's two-digit number and a short exercise name that the notebook uses.

* ``register("04", "slots", expected=2, hint="...")`` compares the learner's answer with a value:
  numbers, arrays and tensors (with a tolerance), tuples/lists of them (part by part), ``None``,
  dtypes, strings (case and surrounding spaces ignored) and sets of strings.
* ``register("04", "step", judge=my_judge, hint="...")`` lets ``my_judge(answer)`` decide: it
  returns ``None`` when the answer is right, else a short sentence saying what is wrong.

Rules that keep the checks honest: a hint or a judge's sentence never contains the expected value
(tests/test_lessons_exercises.py checks this for every exercise, with a right and a wrong answer),
and an exception raised while checking is reported by its type only, so that no message that
might quote the expected value reaches the learner.

What a check trusts, and what it does not (tests/test_lessons_checks_honest.py tries each point):

* **Only plain values.** An answer is read as a plain copy, never through its own methods: numbers
  must be exactly ``int`` or ``float`` (not ``bool``, not a subclass) or NumPy numbers, arrays exactly
  ``numpy.ndarray``, tensors exactly the engine's ``Tensor`` or ``Variable``, text exactly ``str``,
  collections exactly ``tuple``, ``list``, ``set`` or ``frozenset``. An object that only *looks* like
  one (a subclass with its own ``__eq__``, ``__len__`` or ``strip``, or any object with
  ``__array__``/``__float__``) gets "Not yet" with the kinds that are accepted. Tuples and lists must
  have exactly the asked number of parts; shapes must match (a single number may be any size-1
  array); NaN and inf are never right; strings and booleans are not numbers.
* **"Do not call the built-in" is checked by identity.** While an answer runs, a profile hook watches
  for the code of the engine's own function (``clip_by_norm``, the fused cross-entropies), captured
  when this module is imported; it sees the call however the function is reached
  (``eg.clip_by_norm``, ``engine.clipping.clip_by_norm``, a saved reference, ``functools.partial``).
* **The checks cannot be re-wired from a cell.** The entry points (``evaluate``, ``check``,
  ``checker`` and the ``check`` functions it returns) first put back every name of this module and
  every exercise registered at import, from a snapshot that only their closures hold: assigning
  ``_checks._compare_numbers = ...`` or replacing ``_checks.EXERCISES[...]`` changes nothing. The
  engine's tensor classes, the forbidden built-ins' code and ``sys.setprofile`` are captured at import
  too, so rebinding ``eg.Tensor`` or ``sys.setprofile`` in a cell does not help. Not protected (a
  determined learner can always cheat): NumPy's and the engine's own functions and methods (patching
  ``np.allclose`` or ``eg.Tensor.numpy``), the closures' cells, and the ``check`` name in the notebook.
* **An answer that runs forever is stopped** after ``TIME_LIMIT_S`` seconds (``checker(lesson,
  time_limit=...)`` changes it) with a message that says so. In the main thread of a kernel on
  Linux or macOS a SIGALRM timer interrupts anything, ``time.sleep`` included; elsewhere (Windows, a
  non-main thread) a watchdog thread raises into the checking thread, which stops Python loops but
  not a blocking call: there, **Kernel ▸ Interrupt Kernel** (the ■ button) stops it.

>>> register("99", "demo", expected=4.0, hint="Add two and two.")
>>> check = checker("99")
>>> check("demo", 4.0)
Right!
>>> check("demo", 5.0)
Not yet: your answer is not right. Hint: Add two and two.
>>> del EXERCISES[("99", "demo")]
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import inspect
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

import engine as eg
from engine import clipping as _clipping
from engine.nn import losses as _losses

__all__ = ["Exercise", "EXERCISES", "TIME_LIMIT_S", "register", "evaluate", "check", "checker", "close_to"]

#: A judge returns None for a right answer, or a sentence saying what is wrong (never the answer).
Judge = Callable[[Any], "str | None"]

#: Seconds an answer may take to be checked before it is stopped.
TIME_LIMIT_S = 10.0


@dataclass(frozen=True)
class Exercise:
    """One registered exercise: which lesson, its name, how to judge it, and the hint."""

    lesson: str
    name: str
    judge: Judge
    hint: str
    praise: str = ""
    function: str = ""  # the answer is the learner's function of this name (not its result)


#: Every registered exercise, by (lesson, name).
EXERCISES: dict[tuple[str, str], Exercise] = {}

_NOTHING = object()


def register(lesson: str, name: str, *, hint: str, expected: Any = _NOTHING, judge: Judge | None = None,
             praise: str = "", rtol: float = 1e-4, atol: float = 1e-6, function: str = "") -> None:
    """Add an exercise: give either ``expected`` (a value to compare with) or ``judge``.

    ``function``: the answer is a function the learner wrote under this name; anything that is not
    callable gets "pass the function itself" before the judge sees it.
    """
    if (expected is _NOTHING) == (judge is None):
        raise ValueError(f"register({lesson!r}, {name!r}): give exactly one of expected= or judge=.")
    key = (str(lesson), str(name))
    if key in EXERCISES:
        raise ValueError(f"Exercise {name!r} of lesson {lesson!r} is registered twice.")
    if judge is None:
        judge = close_to(expected, rtol=rtol, atol=atol)
    EXERCISES[key] = Exercise(key[0], key[1], judge, hint.strip(), praise.strip(), function)


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


# ---- a time limit for answers that never return ----------------------------------------------------

class _TookTooLong(BaseException):
    """Raised into a check that ran past its time limit (a BaseException, so that an answer's own
    ``except Exception`` does not swallow it)."""


@contextlib.contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Raise `_TookTooLong` in this thread once ``seconds`` have passed (0 or less: no limit)."""
    if not seconds > 0:
        yield
        return
    if hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread():
        def alarm(signum: int, frame: Any) -> None:
            raise _TookTooLong

        old_handler = signal.signal(signal.SIGALRM, alarm)
        old_timer = signal.setitimer(signal.ITIMER_REAL, seconds, 0.5)  # again, should it be swallowed
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old_handler)
            if old_timer[0] > 0:
                signal.setitimer(signal.ITIMER_REAL, *old_timer)
        return
    # Windows, or not the main thread: a watchdog raises into this thread (stops Python loops only).
    target, lock, state = threading.get_ident(), threading.Lock(), {"done": False, "fired": False}

    def fire() -> None:
        with lock:
            if not state["done"]:
                state["fired"] = True
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(target),
                                                           ctypes.py_object(_TookTooLong))

    watchdog = threading.Timer(seconds, fire)
    watchdog.daemon = True
    watchdog.start()
    try:
        yield
    finally:
        with lock:
            state["done"] = True
        watchdog.cancel()
        if state["fired"]:  # it may still be pending: let it land here, not in the caller
            # (never cancel it with SetAsyncExc(id, NULL): on CPython 3.11 that leaves the eval loop
            # spinning as soon as a profile function is set)
            try:
                for _ in range(100):
                    pass
            except _TookTooLong:
                pass


# ---- "do not call the built-in": calls seen by the identity of the function's code -----------------

def _code_of(function: Callable[..., Any]) -> Any:
    return inspect.unwrap(function).__code__


#: The engine functions an exercise may forbid, captured at import (before any cell can replace them).
_BUILT_INS = {
    "clip_by_norm": _code_of(_clipping.clip_by_norm),
    "softmax_cross_entropy": _code_of(_losses.softmax_cross_entropy),
    "sparse_softmax_cross_entropy": _code_of(_losses.sparse_softmax_cross_entropy),
}


_getprofile, _setprofile = sys.getprofile, sys.setprofile  # captured, like everything below


@contextlib.contextmanager
def _calls_to(*names: str) -> Iterator[list[str]]:
    """Collect the names of these built-ins each time one is called in this thread, however reached."""
    codes = [(_BUILT_INS[n], n) for n in names]
    called: list[str] = []
    previous = _getprofile()

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            for code, name in codes:
                if frame.f_code is code:
                    called.append(name)
        if callable(previous):
            previous(frame, event, arg)

    _setprofile(profile)
    try:
        yield called
    finally:
        _setprofile(previous)


# ---- plain values: answers are read as copies, never through their own methods --------------------

_NUMPY_NUMBERS = frozenset(np.dtype(c).type for c in np.typecodes["AllInteger"] + np.typecodes["Float"])


class _NotPlain(Exception):
    """An answer that is not a plain number, array or tensor; the message says what it is."""


#: The engine's tensor classes and their reading, captured at import (a cell may rebind eg.Tensor).
_TENSOR_TYPES = (eg.Tensor, eg.Variable)
_tensor_numpy = eg.Tensor.numpy


def _is_tensor(value: Any) -> bool:
    """Exactly an engine Tensor or Variable (a subclass could answer for itself)."""
    return any(type(value) is kind for kind in _TENSOR_TYPES)


def _kind(value: Any) -> str:
    """What an answer is, for a message: "True/False" or "of type X"."""
    return "True/False" if type(value) in (bool, np.bool_) else f"of type {type(value).__name__}"


def _plain_array(value: Any) -> np.ndarray:
    """A fresh NumPy array of numbers copied from a number, array, tensor or (nested) list/tuple.

    Raises `_NotPlain` for anything else, booleans and subclasses included.
    """
    kind = type(value)
    if kind is int or kind is float or kind in _NUMPY_NUMBERS:
        array = np.array(value)
    elif kind is np.ndarray:
        array = np.array(value, copy=True)
    elif _is_tensor(value):
        array = _tensor_numpy(value)
        if type(array) is not np.ndarray:
            raise _NotPlain("a tensor whose values are not a plain NumPy array")
    elif kind is list or kind is tuple:
        parts = [_plain_array(v) for v in value]
        if any(p.shape != parts[0].shape for p in parts):
            raise _NotPlain("a list whose parts have different shapes")
        array = np.array(parts) if parts else np.zeros(0)
    else:
        raise _NotPlain(_kind(value))
    if array.dtype.kind not in "iuf":
        if array.dtype.kind == "b":
            raise _NotPlain("made of True/False values")
        raise _NotPlain(f"made of values of dtype {array.dtype}")
    return array


def _plain_numbers(value: Any, where: str) -> np.ndarray | str:
    """`_plain_array` of the value, or the sentence saying why it is not a number (``where`` first)."""
    try:
        return _plain_array(value)
    except _NotPlain as exc:
        return f"{where}is {exc}, not a number: give a plain number, a NumPy array or an engine tensor."


def _plain_collection(value: Any, kinds: tuple[type, ...]) -> bool:
    """Exactly one of ``kinds`` (a subclass could lie about its length or parts)."""
    return type(value) in kinds


# ---- the built-in value judge ---------------------------------------------------------------------

def close_to(expected: Any, rtol: float = 1e-4, atol: float = 1e-6) -> Judge:
    """A judge comparing an answer with ``expected`` (see the module docstring for the kinds)."""
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


def _plain_count(value: Any) -> int | None:
    """A plain int for an exact int, NumPy integer, or whole float; None for anything else."""
    if type(value) is int or (type(value) in _NUMPY_NUMBERS and np.dtype(type(value)).kind in "iu"):
        return int(value)
    if (type(value) is float or type(value) in _NUMPY_NUMBERS) and float(value).is_integer():
        return int(float(value))
    return None


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


# ===================================================================================================
# Lesson 01: tensors and devices
# ===================================================================================================

def _judge_float32_product(answer: Any) -> str | None:
    if not _is_tensor(answer):
        return "the answer should be an engine tensor (the product of the two tensors)."
    if answer.dtype != np.float32:
        return f"its dtype is {answer.dtype}, and the exercise asks for float32."
    want = np.linspace(0.0, 1.0, 5) * np.arange(1.0, 6.0)
    return _compare_numbers(answer, want, 1e-6, 1e-6, "the product ")


def _judge_landing_device(answer: Any) -> str | None:
    if type(answer) is not str:
        return "the answer should be a device name, a plain string such as the `.device` of a tensor."
    wanted = "gpu:0" if eg.gpu_available() else "cpu:0"
    text = answer.strip().lower()
    if text in ("cpu", "gpu", "/cpu:0", "/gpu:0"):
        return "write the device name the way `.device` does: a kind, a colon and an index."
    return None if text == wanted else "that is not where the tensor ends up on this machine."


register("01", "floor_mod", expected=(-4, 3),
         hint="Floor division rounds down, towards minus infinity, not towards zero. The remainder "
              "then makes a == b * q + r true, and it takes the sign of the divisor b.",
         praise="Python, NumPy and TensorFlow's floordiv/floormod all round this way.")
register("01", "float32_product", judge=_judge_float32_product,
         hint="NumPy arrays keep their dtype (float64). Make the tensor float32 when you create it "
              "(eg.constant(array, dtype='float32')) or convert it with eg.cast(t, 'float32').")
register("01", "landing_device", judge=_judge_landing_device,
         hint="Create a tensor inside the exercise's `with eg.device(...)` block and print its "
              "`.device`. Without a GPU, soft placement decides where it goes.",
         praise="You can always ask a tensor where it lives.")


# ===================================================================================================
# Lesson 02: gradients of functions
# ===================================================================================================

def _judge_sgd_step(answer: Any) -> str | None:
    v1 = eg.Variable([1.0, -2.0], name="v1")
    v2 = eg.Variable(3.0, name="v2")
    v3 = eg.Variable([0.25], name="v3")
    g1, g2 = eg.constant([0.5, -1.0]), eg.constant(2.0)
    before = [v.numpy() for v in (v1, v2, v3)]
    lr = 0.1
    try:
        answer([(g1, v1), (g2, v2), (None, v3)], lr)
    except Exception as exc:
        return (f"calling sgd_step(pairs, 0.1) raised {type(exc).__name__}: {exc}. Does it skip "
                "a pair whose gradient is None?")
    after = [v.numpy() for v in (v1, v2, v3)]
    grads = [g1.numpy(), g2.numpy(), np.zeros(1, np.float32)]
    if not np.array_equal(after[2], before[2]):
        return "a variable whose gradient is None changed; it should be left alone."
    if all(np.array_equal(a, b) for a, b in zip(after, before)):
        return ("the variables did not change. Update each one in place with v.assign_sub(...): "
                "assigning to a name inside the function does not change the Variable.")
    if all(np.allclose(a, b + lr * g) for a, b, g in zip(after, before, grads)):
        return "the variables moved uphill: a descent step subtracts the scaled gradient."
    if all(np.allclose(a, b - g) for a, b, g in zip(after, before, grads)):
        return "the step ignores the learning rate."
    if all(np.allclose(a, b - lr * g, rtol=1e-6, atol=1e-7) for a, b, g in zip(after, before, grads)):
        return None
    return "the variables changed, but not by the learning rate times their gradient."


def _judge_sse(answer: Any) -> str | None:
    rng = np.random.default_rng(7)
    pred = eg.constant(rng.normal(size=(4, 1)).astype(np.float32))
    target = eg.constant(rng.normal(size=(4,)).astype(np.float32))
    try:
        out = answer(pred, target)
    except Exception as exc:
        return f"calling your function on shapes (4, 1) and (4,) raised {type(exc).__name__}: {exc}."
    if not _is_tensor(out):
        return "return an engine Tensor built with engine ops, so that it can be differentiated."
    if out.size != 1:
        return f"it returns shape {out.shape}; a loss is a single number (shape ())."
    p, t = pred.numpy().astype(np.float64), target.numpy().astype(np.float64)
    got = float(out.item())
    if np.isclose(got, np.sum((p - t) ** 2), rtol=1e-5):
        return "it still sums the whole table that broadcasting builds: line the shapes up first."
    if np.isclose(got, np.mean((p[:, 0] - t) ** 2), rtol=1e-5):
        return "that is the mean; the exercise asks for the sum of squared errors."
    if np.isclose(got, np.sum((p[:, 0] - t) ** 2), rtol=1e-5):
        return None
    return "the value is not the sum of squared errors of the matching pairs."


register("02", "partials", expected=(6.0, -3.0),
         hint="Write h as a Python function of two arguments and pass it to eg.gradients_function; "
              "call the result with the two numbers, in the same order as the arguments.")
register("02", "sgd_step", judge=_judge_sgd_step, function="sgd_step",
         hint="Loop over the (gradient, variable) pairs; skip a pair whose gradient is None; "
              "otherwise call variable.assign_sub(learning_rate * gradient).")
register("02", "fix_broadcast", judge=_judge_sse, function="sse",
         hint="Make both shapes equal before subtracting: eg.reshape(target, (-1, 1)) or "
              "eg.squeeze(pred, axis=1). Then square and take eg.sum.",
         praise="Checking shapes before a reduction catches a whole family of silent bugs.")


# ===================================================================================================
# Lesson 03: GradientTape
# ===================================================================================================

register("03", "third_derivative", expected=0.5,
         hint="Nest three tapes. Take the first derivative inside the two outer blocks and the "
              "second inside the outermost block, so that each outer tape records the derivative "
              "of the tape inside it; take the third after all blocks.")
register("03", "watch_constant", expected=29.0,
         hint="A constant is not watched automatically: call tape.watch(x) inside the block, before "
              "the ops that use x.")
register("03", "jacobian", expected=np.array([[3.0, 2.0], [1.0, 1.0], [0.0, 6.0]]),
         hint="Build y with eg.stack from its three entries inside the tape, then call "
              "tape.jacobian(y, x): row i holds the derivatives of y[i] by x[0] and x[1].")


# ===================================================================================================
# Lesson 04: inside the optimizer
# ===================================================================================================

def _judge_scale_pairs(answer: Any) -> str | None:
    a = eg.Variable([1.0, -2.0], name="a")
    b = eg.Variable(3.0, name="b")
    c = eg.Variable([0.5], name="c")
    ga, gb = eg.constant([0.5, 4.0]), eg.constant(-2.0)
    pairs = [(ga, a), (None, c), (gb, b)]
    given = list(pairs)
    before = [v.numpy().copy() for v in (a, b, c)]
    try:
        out = answer(pairs, 3.0)
    except Exception as exc:
        return (f"calling scale_pairs(pairs, 3.0) raised {type(exc).__name__}: {exc}. Does it let a "
                "None gradient through?")
    if any(not np.array_equal(v.numpy(), w) for v, w in zip((a, b, c), before)):
        return ("a Variable changed: the function should only build new pairs; applying them is "
                "apply_gradients' job.")
    if out is None:
        return "it returns None; return the new list of pairs."
    if type(out) not in (list, tuple):
        return f"it returns a {type(out).__name__}; return a plain list of (gradient, variable) pairs."
    out = list(out)
    if len(pairs) != len(given) or any(now is not then for now, then in zip(pairs, given)):
        return "it changed the list it was given; build a new list instead."
    if len(out) != len(given):
        return (f"it returns {len(out)} pairs for {len(given)} pairs given; keep one pair per variable, "
                "the ones with a None gradient included.")
    for item in out:
        if type(item) not in (list, tuple) or len(item) != 2:
            return "each element of the result should be a (gradient, variable) pair."
    if any(new[1] is not old[1] for new, old in zip(out, given)):
        return "the second element of each pair should be the same Variable object, in the same order."
    if out[1][0] is not None:
        return "a None gradient should stay None (there is nothing to scale)."
    for (g_new, _), (g_old, _) in zip(out, given):
        if g_old is None:
            continue
        if not (_is_tensor(g_new) or type(g_new) is np.ndarray):
            return "each new gradient should be a tensor (or a NumPy array) with its variable's shape."
        got = _plain_numbers(g_new, "")
        if isinstance(got, str) or got.shape != tuple(g_old.shape):
            return "each new gradient should be a tensor with its variable's shape."
        want = g_old.numpy().astype(np.float64)
        if np.allclose(got, want):
            return "the gradients are unchanged: multiply each one by the factor."
        if not np.allclose(got, 3.0 * want, rtol=1e-6, atol=1e-7):
            return "the gradients are changed, but not multiplied by the factor."
    return None


register("04", "decay_half", expected=2.125,
         hint="Each step keeps the fraction (1 - decay) of the distance to b, so after n steps "
              "x = b + (x0 - b) * (1 - decay)**n. descent_trace(decay, steps) lets you check the table.")
register("04", "scale_pairs", judge=_judge_scale_pairs, function="scale_pairs",
         hint="Loop over the pairs (a list comprehension works), keep each variable as it is, and "
              "multiply only the gradients that are not None.",
         praise="This is the shape of every gradient transform: clipping, averaging, noise.")
register("04", "adam_slots", expected=(0.58, 0.019996),
         hint="Start from m = v = 0 and apply m <- beta1*m + (1 - beta1)*g and "
              "v <- beta2*v + (1 - beta2)*g**2 once per gradient. The slots hold these raw running "
              "means, before the bias correction.")


# ===================================================================================================
# Lesson 05: clipping
# ===================================================================================================

def _judge_clip_rows(answer: Any) -> str | None:
    t = eg.constant([[3.0, 4.0, 0.0], [0.3, -0.4, 0.0], [0.0, 0.0, 0.0], [-6.0, 0.0, 8.0]])
    c = 2.0
    rows = t.numpy().astype(np.float64)
    norms = np.sqrt(np.sum(rows**2, axis=1, keepdims=True))
    want = rows * c / np.maximum(norms, c)
    whole = rows * c / max(float(np.sqrt(np.sum(rows**2))), c)

    with _calls_to("clip_by_norm") as called:
        try:
            with np.errstate(all="ignore"):  # a NaN from a zero row is reported below, not warned about
                out = answer(t, c)
        except Exception as exc:
            failed = f"calling clip_rows(t, 2.0) on a 4x3 matrix raised {type(exc).__name__}: {exc}."
        else:
            failed = None
    if called:
        return ("it calls eg.clip_by_norm (under whatever name); build the clip from sqrt, sum and "
                "maximum instead.")
    if failed is not None:
        return failed
    if not _is_tensor(out):
        return "return an engine tensor computed with engine operations (so it stays differentiable)."
    got = out.numpy().astype(np.float64)
    if got.shape != rows.shape:
        return f"it returns shape {got.shape}; the clipped matrix keeps the shape of t, {rows.shape}."
    if not np.all(np.isfinite(got)):
        return "it contains NaN or inf: an all-zero row must stay zero (never divide by a zero norm)."
    if np.allclose(got, rows):
        return "nothing was clipped: rows longer than c should be scaled down to length c."
    if np.allclose(got, whole, rtol=1e-5, atol=1e-6):
        return ("it clips the whole matrix by one norm; take one norm per row (sum over axis 1, "
                "keepdims=True).")
    short = (norms <= c).ravel()
    if not np.allclose(got[short], rows[short], rtol=1e-5, atol=1e-6):
        return "rows whose length is at most c should stay exactly as they are."
    if not np.allclose(got, want, rtol=1e-5, atol=1e-6):
        return "the long rows are changed, but they should end with length exactly c, pointing the same way."
    return None


register("05", "clip_rows", judge=_judge_clip_rows, function="clip_rows",
         hint="Compute each row's length with sqrt(sum(t * t, axis=1, keepdims=True)); then scale t by "
              "c divided by the larger of that length and c (eg.maximum).",
         praise="That is exactly the formula behind clip_by_norm.")
register("05", "global_clip", expected=(13.0, 0.5),
         hint="The global norm is the length of all entries of all gradients together: the square root "
              "of the sum of all their squares. When it exceeds clip_norm, every gradient is multiplied "
              "by clip_norm divided by it.")
register("05", "keeps_direction", expected={"global norm"},
         hint="A direction survives when every entry of every gradient is multiplied by one and the same "
              "positive number. Which methods use a single factor for everything, whatever the gradients?")


# ===================================================================================================
# Lesson 06: gradients outside the step
# ===================================================================================================

def _judge_combine(answer: Any) -> str | None:
    rng = np.random.default_rng(3)
    g1, g2 = rng.normal(size=(2, 3)), rng.normal(size=(2, 3))
    try:
        out = answer([g1, g2], [24, 8])
    except Exception as exc:
        return f"calling combine([g1, g2], [24, 8]) raised {type(exc).__name__}: {exc}."
    got = _plain_numbers(out, "the result ")
    if isinstance(got, str):
        return f"return a NumPy array (the combined gradient): {got}"
    if got.shape != g1.shape:
        return f"it returns shape {got.shape}; the combined gradient has the shape of each gradient."
    want = (24 * g1 + 8 * g2) / 32
    if np.allclose(got, (g1 + g2) / 2):
        return "that is the plain mean: with unequal micro-batches each gradient needs a weight."
    if np.allclose(got, 24 * g1 + 8 * g2):
        return "that is a weighted sum; divide it by the total number of examples."
    if np.allclose(got, (8 * g1 + 24 * g2) / 32):
        return "the weights are swapped: weight each gradient by the size of its own micro-batch."
    if not np.allclose(got, want):
        return "the result is not the full-batch gradient of the two micro-batches."
    gs = [rng.normal(size=(4,)) for _ in range(3)]
    sizes = [5, 10, 17]
    try:
        got3 = _plain_numbers(answer(gs, sizes), "")
    except Exception as exc:
        return f"it works for two micro-batches, but with three it raised {type(exc).__name__}: {exc}."
    want3 = sum(n * g for n, g in zip(sizes, gs)) / sum(sizes)
    if isinstance(got3, str) or got3.shape != want3.shape or not np.allclose(got3, want3):
        return "it works for two micro-batches but not for three of sizes 5, 10 and 17."
    return None


def _judge_server_step(answer: Any) -> str | None:
    a = eg.Variable(np.array([1.0, 2.0]), name="a")
    b = eg.Variable(np.array([[3.0]]), name="b")
    opt = eg.optimizers.SGD(learning_rate=0.5)
    worker_gradients = [[np.array([1.0, 0.0]), np.array([[2.0]])],
                        [np.array([3.0, -2.0]), np.array([[0.0]])],
                        [np.array([2.0, 2.0]), np.array([[4.0]])]]
    try:
        answer(opt, [a, b], worker_gradients)
    except Exception as exc:
        return (f"calling server_step(optimizer, [a, b], gradients of 3 workers) raised "
                f"{type(exc).__name__}: {exc}.")
    if type(opt.iterations) is not int:
        return "the optimizer's step count is no longer a plain int: leave the optimizer's fields alone."
    if opt.iterations == 0:
        return "the variables were not updated: end with one call of optimizer.apply_gradients."
    if opt.iterations == len(worker_gradients):
        return "it applied once per worker; average over the workers first, then apply once."
    if opt.iterations != 1:
        return f"optimizer.apply_gradients ran {opt.iterations} times; it should run exactly once."
    got_a, got_b = a.numpy(), b.numpy()
    summed = (np.array([1.0 - 0.5 * 6.0, 2.0 - 0.5 * 0.0]), np.array([[3.0 - 0.5 * 6.0]]))
    if np.allclose(got_a, summed[0]) and np.allclose(got_b, summed[1]):
        return "the workers' gradients were added, not averaged."
    mean_a = np.mean([w[0] for w in worker_gradients], axis=0)
    mean_b = np.mean([w[1] for w in worker_gradients], axis=0)
    if np.allclose(got_a, 1.0 * np.array([1.0, 2.0]) - 0.5 * mean_a) and \
            np.allclose(got_b, np.array([[3.0]]) - 0.5 * mean_b):
        return None
    return "the variables changed, but not by the workers' averaged gradients."


register("06", "combine", judge=_judge_combine, function="combine",
         hint="The full-batch loss is a mean over all examples, so a micro-batch of n examples counts n "
              "times: weight each gradient by its size, add, and divide by the total size.",
         praise="Weighting by size keeps accumulation exact for any split.")
register("06", "server_step", judge=_judge_server_step, function="server_step",
         hint="zip(*worker_gradients) groups the arrays per Variable; np.mean(..., axis=0) averages "
              "each group; zip the means with the variables and call apply_gradients once.")
register("06", "sum_lr", expected=0.025,
         hint="Adding k gradients gives k times their mean. The learning rate has to undo that factor.")


# ===================================================================================================
# Lesson 07: training a CNN
# ===================================================================================================

def _judge_flatten_size(answer: Any) -> str | None:
    answer = _plain_count(answer)
    if answer is None:
        return "the answer should be a whole number (a plain int): how many numbers per image."
    side = 28
    for _ in range(2):
        side = -(-side // 2)  # SAME pooling with stride 2 rounds up
    if answer == side * side * 64:
        return None
    if answer == 2 * 2 * 64:
        return "that is the flatten size for the 8×8 digits of this lesson; redo it for 28×28 images."
    if answer == side * side * 32:
        return "the channels are those of the first convolution; after the second block there are more."
    if answer == 14 * 14 * 64:
        return "that size has only been halved once; the network pools twice."
    if answer in (side * side, 28 * 28 * 64, 28 * 28):
        return "count height, width and channels after both pooling steps."
    return "that is not the number of values per image after the second pooling."


def _judge_cross_entropy(answer: Any) -> str | None:
    cases = [
        (np.eye(4, dtype=np.float32)[[2, 0, 3]],
         np.array([[0.5, -1.0, 2.0, 0.0], [1.5, 0.2, -0.3, 0.7], [-2.0, 0.0, 1.0, 3.0]], np.float32)),
        (np.eye(3, dtype=np.float32)[[1, 0]],
         np.array([[250.0, 0.0, -80.0], [-300.0, 400.0, 10.0]], np.float32)),
    ]
    for k, (labels, logits) in enumerate(cases):
        y, z = eg.constant(labels), eg.constant(logits)
        with _calls_to("softmax_cross_entropy", "sparse_softmax_cross_entropy") as used_fused:
            try:
                with eg.GradientTape() as tape:
                    tape.watch(z)
                    out = answer(y, z)
                    total = eg.sum(out) if _is_tensor(out) else None
                grad = tape.gradient(total, z) if total is not None else None
            except Exception as exc:
                failed = f"calling cross_entropy(labels, logits) raised {type(exc).__name__}: {exc}."
            else:
                failed = None
        if used_fused:
            return ("it calls the engine's fused loss (under whatever name); the exercise asks you to "
                    "build it yourself.")
        if failed is not None:
            return failed
        if not _is_tensor(out):
            return "return an engine Tensor built with engine ops, so that it can be differentiated."
        if out.shape != (len(labels),):
            return (f"it returns shape {out.shape}; the exercise asks for one loss per example, "
                    f"shape (batch,), not their sum or mean.")
        z64, y64 = logits.astype(np.float64), labels.astype(np.float64)
        top = z64.max(axis=1, keepdims=True)
        log_p = z64 - (top + np.log(np.exp(z64 - top).sum(axis=1, keepdims=True)))
        want = -(y64 * log_p).sum(axis=1)
        got = out.numpy().astype(np.float64)
        if not np.all(np.isfinite(got)) or grad is None or not np.all(np.isfinite(grad.numpy())):
            if k == 0:
                return "it gives NaN or inf even for small logits."
            return ("it is not finite for large logits (or its gradient is not): it probably takes the "
                    "log of a softmax.")
        if np.allclose(-got, want, rtol=1e-4, atol=1e-4):
            return "the losses have the wrong sign: a cross-entropy is never negative."
        if not np.allclose(got, want, rtol=1e-4, atol=1e-4):
            return "the values are not the cross-entropy of these logits and labels."
        want_grad = np.exp(log_p) - y64
        if not np.allclose(grad.numpy(), want_grad, rtol=1e-3, atol=1e-4):
            return "the values are right but the gradient is not: is part of it cut off (stop_gradient)?"
    return None


def _judge_accuracy(answer: Any) -> str | None:
    rng = np.random.default_rng(70)
    for n, classes, hits in ((8, 5, 5), (12, 10, 3)):
        logits = rng.normal(size=(n, classes)).astype(np.float32)
        predicted = logits.argmax(axis=1)
        labels = predicted.copy()
        misses = rng.choice(n, n - hits, replace=False)
        labels[misses] = (predicted[misses] + 1 + rng.integers(0, classes - 1, len(misses))) % classes
        labels = labels.astype(np.int32)
        try:
            got = answer(eg.constant(logits), labels)
        except Exception as exc:
            return f"calling my_accuracy(logits, labels) raised {type(exc).__name__}: {exc}."
        array = _plain_numbers(got, "")
        if isinstance(array, str) or array.size != 1:
            return ("it should return one plain number (a float, a NumPy number or a tensor), the "
                    "fraction of right predictions.")
        value = float(array.reshape(()))
        want = hits / n
        if np.isclose(value, 100 * want):
            return "that looks like a percentage; return a fraction between 0 and 1."
        if np.isclose(value, 1 - want):
            return "it counts the wrong predictions instead of the right ones."
        if np.isclose(value, hits):
            return "it counts the right predictions; divide by the number of examples."
        if not np.isclose(value, want, rtol=1e-6, atol=1e-6):
            return ("the fraction is not right: compare the arg-max over the class axis (axis=1) with "
                    "the labels.")
    return None


register("07", "flatten_size", judge=_judge_flatten_size,
         hint="The convolutions keep height and width (SAME padding); each 2×2 pooling with stride 2 "
              "halves them, rounding up. Multiply the final height, width and number of channels.")
register("07", "cross_entropy", judge=_judge_cross_entropy, function="cross_entropy",
         hint="log p = eg.log_softmax(logits, axis=-1) never takes the log of a rounded-off zero. The loss "
              "per example is minus the sum over the class axis of labels * log p.",
         praise="That is the stable formula TensorFlow's softmax_cross_entropy_with_logits uses.")
register("07", "accuracy", judge=_judge_accuracy, function="my_accuracy",
         hint="np.argmax(logits.numpy(), axis=1) gives the predicted class of each example; compare it "
              "with the labels and take the mean of the comparison.")


# ===================================================================================================
# Lesson 08: on the GPU
# ===================================================================================================

def _judge_activation_bytes(answer: Any) -> str | None:
    answer = _plain_count(answer)
    if answer is None:
        return "the answer should be a whole number of bytes (a plain int)."
    values = 50 * 8 * 8 * 32
    if answer == values * 4:
        return None
    if answer == values:
        return "that counts the numbers, not the bytes they take."
    if answer == values * 8:
        return "that is the size in float64; the activations are float32."
    if answer == 8 * 8 * 32 * 4:
        return "that is one image; the batch holds 50."
    if answer == 50 * 8 * 8 * 4 or answer == 50 * 4 * 4 * 32 * 4:
        return "check the shape of the first convolution's output: channels, and no pooling yet."
    return "that is not the size of that tensor in bytes."


def _judge_pool_drop(answer: Any) -> str | None:
    if type(answer) is not str:
        return "the answer should be a plain string: the name of one of the two numbers."
    text = answer.strip().strip("'\"").lower()
    if text in ("used_bytes", "used"):
        return None
    if text in ("held_bytes", "held"):
        return "that number stays where it was: think about what a pool does with a freed block."
    if text in ("both", "neither", "none"):
        return "exactly one of the two numbers falls."
    return "answer with the name of one of the two numbers that eg.memory_info reports."


register("08", "activation_bytes", judge=_judge_activation_bytes,
         hint="Write down the shape of the first Conv2D's output for a batch of 50 (SAME padding keeps "
              "8×8; one channel per filter), multiply the sizes, then multiply by the bytes per float32.")
register("08", "pool_drop", judge=_judge_pool_drop,
         hint="A memory pool keeps freed blocks for the next allocation instead of returning them to "
              "the driver. Which number counts memory in use by tensors, and which the pool's total?")
register("08", "bit_identical", expected={"a", "b", "c"},
         hint="For each item ask: does it come from the host's random generator (NumPy), copied to the "
              "device or turned into a mask by exact integer arithmetic, or is it the result of the "
              "device's floating-point arithmetic, where the order in which numbers are added differs "
              "between NumPy and CUDA libraries?",
         praise="Random draws on the host are the reason a seed means the same thing on every device.")


# ===================================================================================================
# Lesson 09: graphs
# ===================================================================================================

def _traced_check_step() -> tuple[Any, Any, list[Any]]:
    """A small traced step returning (loss, grads): its graph, its input and the tape's gradients."""
    w = eg.Variable(np.array([[1.0, -2.0], [0.5, 3.0]], np.float32), name="check/w")
    b = eg.Variable(np.array([0.1, -0.2], np.float32), name="check/b")

    def step(x: Any) -> Any:
        with eg.GradientTape() as tape:
            loss = eg.sum(eg.tanh(x @ w + b) ** 2)
        return loss, tape.gradient(loss, [w, b])

    x = eg.constant([[1.0, 2.0], [-1.0, 0.5]])
    graph = eg.function(step).get_graph(x)
    return graph, x, [g.numpy() for g in step(x)[1]]


def _judge_gradient_names(answer: Any) -> str | None:
    graph, x, expected = _traced_check_step()
    names = answer(graph)
    if names is None:
        return "your function returns None; return the names, a list of strings."
    if type(names) not in (list, tuple):
        return "return a plain list (or tuple) of names, one per gradient."
    if any(hasattr(n, "node") for n in names):
        return "those are the graph tensors themselves; the exercise asks for their names (strings)."
    if not all(type(n) is str for n in names):
        return "every entry should be a name: a plain string."
    if len(names) != len(expected):
        return "return one name per gradient (the step returns one gradient per Variable)."
    variables = {n.name for n in graph.nodes if n.op == "ReadVariable"}
    if set(names) & variables:
        return ("at least one of those names is a Variable's: fetching it gives the Variable's value, not "
                "its gradient (TensorFlow 1.x's pitfall).")
    try:
        fetched = graph.run(list(names), feeds={"x": x})
    except KeyError:
        return "at least one of those names is not in the graph."
    for got, want in zip(fetched, expected):
        if got.shape != want.shape or not np.allclose(got.numpy(), want, rtol=1e-5, atol=1e-6):
            return ("those names fetch tensors of the graph, but not the gradients (or not in the right "
                    "order).")
    return None


def _judge_leaky_relu(answer: Any) -> str | None:
    traced = eg.function(answer)
    for values in ([-2.0, -0.5, 0.0, 1.5], [3.0, -1.0, 2.0, -4.0]):
        v = np.array(values, np.float32)
        try:
            y = traced(eg.constant(v))
        except eg.TracingError:
            return ("your function asks a traced tensor for a Python value (an `if` on a tensor, or "
                    ".numpy()), which a graph cannot do.")
        if not _is_tensor(y) or y.shape != v.shape:
            return "return a tensor with the shape of x."
        got = y.numpy()
        if np.allclose(got, np.maximum(v, 0)):
            return "negative inputs should be scaled down, not set to zero."
        if not np.allclose(got, np.where(v > 0, v, 0.1 * v), atol=1e-6):
            return "the values are not right for every element."
    return None


register("09", "gradient_names", judge=_judge_gradient_names, function="gradient_names",
         hint="The step returned (loss, grads), so graph.outputs holds the loss and the list of the "
              "gradients as graph tensors; each graph tensor has a .name.")
register("09", "trace_count", expected=4,
         hint="A tensor argument counts by its shape, dtype and device; any other argument by its value. "
              "Go through the calls and count the signatures not seen before.")
register("09", "leaky_relu", judge=_judge_leaky_relu, function="leaky_relu",
         hint="eg.where(condition, a, b) picks elementwise from a where the condition holds and from b "
              "elsewhere, inside the graph.",
         praise="eg.where keeps the choice inside the graph, so every replay chooses anew.")


# ===================================================================================================
# Sealing: the entry points put this module's names and exercises back before every check
# ===================================================================================================

def _seal(namespace: dict[str, Any], entry_points: tuple[str, ...]) -> None:
    """Wrap the entry points so that each first restores ``namespace`` and the exercises registered so
    far from a snapshot held only in their closures (see "cannot be re-wired" in the module docstring).
    Later registrations (a lesson author's experiments, the tests' demo exercises) are left alone."""
    names: dict[str, Any] = {}
    registry: dict[tuple[str, str], Exercise] = namespace["EXERCISES"]
    exercises = dict(registry)
    missing = object()

    def restore() -> None:
        for name, value in names.items():
            if namespace.get(name, missing) is not value:
                namespace[name] = value
        for key, exercise in exercises.items():
            if registry.get(key, missing) is not exercise:
                registry[key] = exercise

    def guarded(function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        def entry(*args: Any, **kwargs: Any) -> Any:
            restore()
            return function(*args, **kwargs)

        return entry

    for name in entry_points:
        namespace[name] = guarded(namespace[name])
    names.update((k, v) for k, v in namespace.items() if not (k.startswith("__") and k.endswith("__")))


_seal(globals(), ("evaluate", "check", "checker"))
