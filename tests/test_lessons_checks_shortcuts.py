"""Issue 31's trial, rerun on the self-checks (lessons/_checks/): shortcuts that passed a making
exercise without making anything, the machinery swapped from "a cell", answers that stop the program,
hints that handed over the code, and verdicts that depended on the draw.

Each shortcut is refused (or reported) with a message saying why; the references still pass.
"""

from __future__ import annotations

import json
import re
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import engine as eg
import engine.clipping
import engine.nn.losses
import engine.optimizers.adam
import engine.optimizers.momentum
from tests.test_lessons_exercises import CASES, checks

LESSONS = Path(__file__).resolve().parent.parent / "lessons"
REF = {key: exercise.reference for key, exercise in checks.EXERCISES.items()}
TAMPERED = sys.modules[checks.__name__ + ".seal"].TAMPERED


def _in_a_thread(function):
    """The answer, with its work done in a thread it starts (the old watch saw only the calling one)."""
    def answer(*args):
        out = []
        worker = threading.Thread(target=lambda: out.append(function(*args)))
        worker.start()
        worker.join()
        return out[0]
    return answer


# ---- the engine's own implementation of what the exercise asks ------------------------------------------


def momentum_by_update_rule(w, g, slot, learning_rate, momentum):
    opt = eg.optimizers.Momentum(learning_rate, momentum=momentum)
    new_w, slots = opt._update(np, w, g, {"momentum": slot}, learning_rate, 1)
    return new_w, slots["momentum"]


def adam_by_update_rule(w, g, m, v, step, learning_rate, beta1, beta2, epsilon):
    opt = eg.optimizers.Adam(learning_rate, beta1=beta1, beta2=beta2, epsilon=epsilon)
    new_w, slots = opt._update(np, w, g, {"m": m, "v": v}, learning_rate, step)
    return new_w, slots["m"], slots["v"]


def xent_private_fused(labels, logits):
    return engine.nn.losses._sparse_xent(logits, labels)


def rows_by_global_clip(t, c):
    rows = [t[i] for i in range(t.shape[0])]
    return eg.stack([eg.clip_by_global_norm([r], c)[0][0] for r in rows])


def global_by_clip_by_norm(grads, clip_norm):
    present = [g for g in grads if g is not None]
    flat = eg.concat([eg.reshape(g, (-1,)) for g in present], axis=0)
    clipped = eg.clip_by_norm(flat, clip_norm)
    out, start = [], 0
    for g in grads:
        if g is None:
            out.append(None)
            continue
        size = int(np.prod(g.shape))
        out.append(eg.reshape(clipped[start:start + size], g.shape))
        start += size
    return out, eg.sqrt(eg.sum(flat * flat))


def sgd_by_optimizer(grads_and_vars, learning_rate):
    eg.optimizers.SGD(learning_rate).apply_gradients([(g, v) for g, v in grads_and_vars if g is not None])


def _unwatched(function):
    def answer(*args):
        sys.setprofile(None)
        return function(*args)
    return answer


SHORTCUTS = [
    (("04", "momentum_update"), lambda: momentum_by_update_rule, "Momentum._update"),
    (("04", "adam_update"), lambda: adam_by_update_rule, "Adam._update"),
    (("07", "cross_entropy"), lambda: xent_private_fused, "fused loss"),
    (("05", "clip_rows"), lambda: rows_by_global_clip, "eg.clip_by_global_norm"),
    (("05", "global_clip_by_hand"), lambda: global_by_clip_by_norm, "eg.clip_by_norm"),
    (("02", "sgd_step"), lambda: sgd_by_optimizer, "apply_gradients"),
    # the forbidden built-in run in a thread the answer starts
    (("05", "clip_rows"), lambda: _in_a_thread(lambda t, c: eg.clip_by_norm(t, c, axes=1)),
     "eg.clip_by_norm"),
    (("07", "cross_entropy"), lambda: _in_a_thread(eg.nn.softmax_cross_entropy), "fused loss"),
    (("05", "global_clip_by_hand"),
     lambda: _in_a_thread(lambda g, c: (list(eg.clip_by_global_norm(g, c)[0]),
                                        eg.clip_by_global_norm(g, c)[1])),
     "eg.clip_by_global_norm"),
    (("07", "train_step"), lambda: _in_a_thread(lambda m, o, x, y: eg.training.train_step(m, o, x, y)[0]),
     "eg.training.train_step"),
    (("04", "adam_update"), lambda: _in_a_thread(adam_by_update_rule), "Adam._update"),
    (("02", "mse_grads"), lambda: _in_a_thread(lambda x, y, w, b: eg.gradients_function(
        lambda w, b: eg.mean((eg.constant(x) @ w + b - y) ** 2))(w, b)), "gradient"),
    # the watch itself switched off by the answer
    (("05", "clip_rows"), lambda: _unwatched(lambda t, c: eg.clip_by_norm(t, c, axes=1)), "watch"),
]


@pytest.mark.parametrize("key, build, fragment", SHORTCUTS, ids=[f"{k[0]}-{k[1]}-{i}" for i, (k, _, _) in
                                                                enumerate(SHORTCUTS)])
def test_a_shortcut_is_refused_saying_why(key, build, fragment):
    ok, message = checks.evaluate(*key, build())
    assert not ok, f"a shortcut passed: {message}"
    assert fragment in message, f"{fragment!r} not in {message!r}"
    assert sys.getprofile() is None and threading.getprofile() is None, "the watch stayed installed"
    assert checks.evaluate(*key, REF[key])[0], "the reference no longer passes after the shortcut"


def test_the_shortcuts_do_compute_the_right_values():
    """The shortcuts are real ones: without the watch, each computes what the reference does."""
    w, g, s = np.ones(3), np.arange(3.0), np.full(3, 0.5)
    wanted = REF["04", "momentum_update"](w, g, s, 0.1, 0.9)
    for got, want in zip(momentum_by_update_rule(w, g, s, 0.1, 0.9), wanted):
        assert np.allclose(got, want)
    t = eg.constant([[3.0, 4.0], [0.3, 0.4]])
    assert np.allclose(rows_by_global_clip(t, 2.0).numpy(), REF["05", "clip_rows"](t, 2.0).numpy())
    grads = [eg.constant([3.0, 4.0]), None, eg.constant([[12.0]])]
    mine, ref = global_by_clip_by_norm(grads, 6.5), REF["05", "global_clip_by_hand"](grads, 6.5)
    assert all(a is b is None or np.allclose(a.numpy(), b.numpy()) for a, b in zip(mine[0], ref[0]))


# ---- the machinery cannot be swapped from a cell ------------------------------------------------------


def test_setattr_on_the_frozen_exercise_changes_nothing():
    key = ("05", "global_clip")
    exercise = checks.EXERCISES[key]
    judge = exercise.judge
    object.__setattr__(exercise, "judge", lambda answer: None)
    object.__setattr__(exercise, "function", "")
    try:
        ok, message = checks.evaluate(*key, (1.0, 1.0))
    finally:
        object.__setattr__(exercise, "judge", judge)
    assert not ok, message
    assert exercise.judge is judge


LESSONS_01_09 = sorted(k for k in checks.EXERCISES if k[0] != "10")


@pytest.mark.parametrize("key", LESSONS_01_09, ids=lambda k: "-".join(k))
def test_setattr_on_every_exercise_changes_nothing(key):
    exercise = checks.EXERCISES[key]
    original = exercise.judge
    object.__setattr__(exercise, "judge", lambda answer: None)
    ok, _ = checks.evaluate(*key, 12345.0)
    assert not ok and exercise.judge is original


def _patching(target: Any, name: str, replacement: Any):
    """An answer wrapper that replaces ``target.name`` while it runs (and leaves it replaced)."""
    def wrap(function):
        def answer(*args):
            setattr(target, name, replacement)
            return function(*args)
        return answer
    return wrap


def _always(*args: Any, **kwargs: Any) -> bool:
    return True


@pytest.mark.parametrize("target, name", [
    (np, "allclose"), (np, "isclose"), (np, "array_equal"),
    (sys.modules[checks.__name__ + ".making_steps"], "_all_close"),
    (sys.modules[checks.__name__ + ".making_steps"], "_close"),
])
def test_replacing_what_the_judge_compares_with_during_the_answer_fails(target, name):
    original = getattr(target, name)
    wrong = _patching(target, name, _always)(lambda grads, c: ([None if g is None else g * 0 for g in grads],
                                                               REF["05", "global_clip_by_hand"](grads, c)[1]))
    try:
        ok, message = checks.evaluate("05", "global_clip_by_hand", wrong)
    finally:
        setattr(target, name, original)
    assert (ok, message) == TAMPERED
    assert getattr(target, name) is original


def test_numpy_patched_in_a_cell_before_the_check_is_put_back():
    original = np.allclose
    np.allclose = _always
    try:
        ok, message = checks.evaluate("06", "combine", lambda gradients, sizes: gradients[0] * 0)
    finally:
        np.allclose = original
    assert not ok, message


def test_an_answer_that_swaps_the_judge_while_it_runs_is_refused():
    key = ("05", "global_clip_by_hand")
    exercise = checks.EXERCISES[key]

    def answer(grads, clip_norm):
        object.__setattr__(exercise, "judge", lambda a: None)
        return [], 0.0

    assert checks.evaluate(*key, answer) == TAMPERED
    assert checks.evaluate(*key, REF[key])[0]


@pytest.mark.parametrize("exc", [SystemExit, KeyboardInterrupt, GeneratorExit])
def test_a_base_exception_from_the_answer_is_reported_not_raised(exc):
    def answer(*args):
        raise exc

    ok, message = checks.evaluate("06", "combine", answer)
    assert not ok and exc.__name__ in message, message


# ---- untouched templates, and hints in tiers -----------------------------------------------------------


def _template_cells() -> list[tuple[str, str]]:
    cells = []
    for notebook in sorted(LESSONS.glob("0*.ipynb")):
        for cell in json.loads(notebook.read_text())["cells"]:
            source = "".join(cell["source"])
            if cell["cell_type"] == "code" and re.search(r'check\("\w+"', source) and "..." in source:
                cells.append((notebook.name.split("_")[0], source))
    return cells


TEMPLATES = _template_cells()

#: What counts as code in a hint: a call, an attribute of a module or object, an assignment, a power.
CODE = re.compile(r"\b(?:eg|np|xp|tape|optimizer|model|graph|variable|v|t)\.\w|\w\(|\b\w+\s*=[^=]|\*\*")


def test_every_exercise_of_lessons_01_to_09_has_a_template_cell():
    keys = {(lesson, re.search(r'check\("(\w+)"', source).group(1)) for lesson, source in TEMPLATES}
    assert {k for k in checks.EXERCISES if k[0] != "10"} <= keys


@pytest.mark.parametrize("lesson, source", TEMPLATES,
                         ids=[f"{les}-{i}" for i, (les, _) in enumerate(TEMPLATES)])
def test_run_all_on_an_untouched_lesson_prints_not_answered_and_no_code(lesson, source, capsys):
    """The committed template cell, run as Run All runs it: "not answered yet" and nothing more."""
    namespace = {"eg": eg, "np": np, "check": checks.checker(lesson)}
    exec(compile(source, f"<lesson {lesson}>", "exec"), namespace)  # noqa: S102 (the lesson's own cell)
    out = capsys.readouterr().out.strip()
    assert out == checks.registry.NOT_ANSWERED, out
    assert "Hint" not in out


@pytest.mark.parametrize("key", LESSONS_01_09, ids=lambda k: "-".join(k))
def test_the_first_hint_is_the_idea_without_code(key):
    exercise = checks.EXERCISES[key]
    assert exercise.idea, f"register {key} with idea= (the first tier of hints)"
    assert not CODE.search(exercise.idea), f"the idea of {key} shows code: {exercise.idea}"
    assert exercise.idea != exercise.hint
    answers = [answer for answer, _ in exercise.wrong] + [build() for build, _ in CASES[key].wrong]
    for answer in answers:
        ok, message = checks.evaluate(*key, answer)
        assert not ok
        assert message.endswith(f"Hint: {exercise.idea}"), message
        assert exercise.hint not in message


def test_hint_gives_the_next_tier_each_time(capsys):
    check = checks.checker("06")
    key = ("06", "combine")
    exercise = checks.EXERCISES[key]
    check("combine", lambda gradients, sizes: np.mean(gradients, axis=0))  # the plain mean
    for _ in range(4):
        check.hint("combine")
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("Not yet: ") and "plain mean" in lines[0]
    assert lines[1] == f"Hint 1 of 3 (the idea): {exercise.idea}"
    assert lines[2].startswith("Hint 2 of 3 (your mistake): ") and "plain mean" in lines[2]
    assert lines[3] == lines[4] == f"Hint 3 of 3 (the recipe): {exercise.hint}"


def test_a_value_exercise_stops_giving_directions_after_some_tries(capsys):
    """A judge that says which way an answer is off (as stable_rate's does) would let a bisection find
    the value; after DIRECTED_TRIES wrong answers `check` only says "not right"."""
    def judge(answer):
        return None if answer == 0.25 else ("it is too large." if answer > 0.25 else "it is too small.")

    checks.register("99", "directed", judge=judge, hint="h", idea="i")
    try:
        check = checks.checker("99")
        tries = checks.registry.DIRECTED_TRIES
        for k in range(tries + 3):
            check("directed", 1.0 + k)
        check("directed", 0.25)
        ok, message = checks.evaluate("99", "directed", 0.5)  # the programmatic entry point: stateless
    finally:
        del checks.EXERCISES["99", "directed"]
    lines = capsys.readouterr().out.splitlines()
    assert all(("too" in line) for line in lines[:tries])
    assert not any("too" in line for line in lines[tries:-1]) and len(lines) == tries + 4
    assert lines[-1].startswith("Right!")
    assert not ok and "too large" in message


def test_stable_rate_names_the_direction_before_the_limit(capsys):
    check = checks.checker("04")
    ok, message = checks.evaluate("04", "stable_rate", 1.1 * REF["04", "stable_rate"])
    assert not ok and "too large" in message
    check("stable_rate", REF["04", "stable_rate"])
    assert capsys.readouterr().out.startswith("Right!")


# ---- the same verdict every time ---------------------------------------------------------------------


def _float32_arithmetic(function):
    """A learner computing in float32 and handing back float64."""
    def answer(*args):
        cast = [a.astype(np.float32) if isinstance(a, np.ndarray) else a for a in args]
        return tuple(np.asarray(r, np.float64) for r in function(*cast))
    return answer


@pytest.mark.parametrize("key", [("02", "mse_grads"), ("04", "adam_update"), ("04", "momentum_update")])
def test_float32_arithmetic_gets_the_same_verdict_every_run(key):
    answer = _float32_arithmetic(REF[key])
    verdicts = {checks.evaluate(*key, answer) for _ in range(5)}
    assert len(verdicts) == 1, verdicts


# ---- dtypes kept, inputs left alone --------------------------------------------------------------------


def combine_in_place(gradients, sizes):
    total = gradients[0]
    total *= sizes[0]
    for n, g in zip(sizes[1:], gradients[1:]):
        total += n * g
    total /= sum(sizes)
    return total


def accumulator_adding_into_callers():
    base = checks.EXERCISES["06", "accumulator"].reference

    class Aliasing(base):
        def add(self, grads):
            if self.sums is None:
                self.sums = [None] * len(grads)
            for i, g in enumerate(grads):
                if g is not None:
                    if self.sums[i] is None:
                        self.sums[i] = g
                    else:
                        self.sums[i] += g
            self.count += 1

    return Aliasing


def momentum_in_place(w, g, slot, learning_rate, momentum):
    slot *= momentum
    slot += g
    return w - learning_rate * slot, slot


def sgd_fixed_rate(grads_and_vars, learning_rate):  # right for the first call's learning rate only
    for g, v in grads_and_vars:
        if g is not None:
            v.assign_sub(0.1 * g)


def server_averages_in_place(optimizer, variables, worker_gradients):
    first = worker_gradients[0]
    for other in worker_gradients[1:]:
        for a, b in zip(first, other):
            a += b
    optimizer.apply_gradients([(a / len(worker_gradients), v) for a, v in zip(first, variables)])


KEPT = [
    (("02", "sgd_step"), lambda: sgd_fixed_rate, "second call"),
    (("06", "server_step"), lambda: server_averages_in_place, "changed the workers' gradients"),
    (("06", "combine"), lambda: combine_in_place, "not"),
    (("06", "combine"), lambda: lambda gradients, sizes: sum(n * g.astype(np.float64) for n, g in
                                                           zip(sizes, gradients)) / sum(sizes), "float64"),
    (("06", "accumulator"), accumulator_adding_into_callers, "adds into the arrays"),
    (("04", "momentum_update"), lambda: momentum_in_place, "changed an array it was given"),
    (("05", "clip_rows"), lambda: lambda t, c: eg.cast(REF["05", "clip_rows"](t, c), "float32"),
     "keep the dtype"),
    (("02", "mse_grads"), lambda: lambda x, y, w, b: tuple(
        g.astype(np.float32) for g in REF["02", "mse_grads"](x, y, w, b)), "keep the inputs' dtype"),
    (("02", "fix_broadcast"), lambda: lambda p, t: eg.cast(REF["02", "fix_broadcast"](p, t), "float64"),
     "keep the inputs' dtype"),
    (("07", "cross_entropy"), lambda: lambda y, z: eg.cast(REF["07", "cross_entropy"](y, z), "float32"),
     "keep the logits' dtype"),
    (("09", "leaky_relu"), lambda: lambda x: eg.cast(eg.where(x > 0, x, 0.1 * x), "float32"),
     "keep the dtype"),
    # NumPy results wrapped in eg.constant where the exercise asks for engine ops
    (("05", "clip_rows"), lambda: lambda t, c: eg.constant(REF["05", "clip_rows"](t, c).numpy()),
     "not connected"),
    (("02", "fix_broadcast"), lambda: lambda p, t: eg.constant(REF["02", "fix_broadcast"](p, t).numpy()),
     "not connected"),
    (("05", "global_clip_by_hand"), lambda: lambda g, c: (
        [None if x is None else eg.constant(x.numpy()) for x in REF["05", "global_clip_by_hand"](g, c)[0]],
        REF["05", "global_clip_by_hand"](g, c)[1]), "not connected"),
]


@pytest.mark.parametrize("key, build, fragment", KEPT, ids=[f"{k[0]}-{k[1]}-{i}" for i, (k, _, _) in
                                                            enumerate(KEPT)])
def test_dtypes_kept_inputs_untouched_engine_ops_differentiable(key, build, fragment):
    ok, message = checks.evaluate(*key, build())
    assert not ok, message
    assert fragment in message, f"{fragment!r} not in {message!r}"


def test_a_set_of_names_gets_one_directed_verdict_and_the_hint_none_after(capsys):
    """Each "misses something" / "contains something that does not belong" tells about the names tried:
    with five tries of directions, five options tried one at a time give the answer away (the trial's
    search found 08's bit_identical so). A set gets one; and once the check stops directing,
    `check.hint`'s tier 2 (the last check's finding) does not direct either."""
    checks.register("99", "names_demo", expected={"p", "q"}, hint="h", idea="i")
    try:
        check = checks.checker("99")
        check("names_demo", {"p"})
        check("names_demo", {"r"})
        check("names_demo", ["p", "r"])
        check.hint("names_demo")
        check.hint("names_demo")
        check("names_demo", {"q", "P"})
    finally:
        del checks.EXERCISES["99", "names_demo"]
    lines = capsys.readouterr().out.splitlines()
    assert "misses something" in lines[0]
    assert all("After 1 try the check no longer says" in line for line in lines[1:3]), lines
    assert not any("belong" in line or "misses" in line for line in lines[1:5]), lines
    assert lines[4] == "Hint 2 of 3 (your mistake): the last check found that " + checks.registry.UNDIRECTED
    assert lines[5].startswith("Right!")


def test_a_number_keeps_its_directed_tries(capsys):
    def judge(answer):
        return None if answer == 0.25 else ("it is too large." if answer > 0.25 else "it is too small.")

    checks.register("99", "directed_number", judge=judge, hint="h", idea="i")
    try:
        check = checks.checker("99")
        for k in range(checks.registry.DIRECTED_TRIES + 1):
            check("directed_number", 1.0 + k)
        check.hint("directed_number")
        check.hint("directed_number")
    finally:
        del checks.EXERCISES["99", "directed_number"]
    lines = capsys.readouterr().out.splitlines()
    tries = checks.registry.DIRECTED_TRIES
    assert all("too large" in line for line in lines[:tries])
    assert "too large" not in lines[tries] and f"After {tries} tries" in lines[tries]
    assert "too large" not in lines[tries + 2], lines  # the hint's tier 2 no longer tells it
