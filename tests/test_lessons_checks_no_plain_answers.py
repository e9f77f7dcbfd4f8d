"""Issue 31: "expected values are not stored in plain form". Each value exercise's answer is computed on
every check by the course's computation of it (the engine doing what the lesson asks), or, where
nothing can compute it, kept as a SHA-256 of its canonical form (lessons/_checks/answers.py).

The same holds for the value exercises judged by a judge of their own (`JUDGED_ORACLE`: it names the
mistakes, and computes what it compares with from the engine or the lesson's setup on each check).

The answers as they were once written in the checks are kept here only, as the oracle the computations
must reproduce. Nowhere else may they be read: not in the source of lessons/_checks/*.py (its
``lessons_10_solution.py`` holds the source text of lesson 10's function exercises, no value), not in
a judge's closure cells nor in anything they reach, not in the exercise record's fields.
"""

from __future__ import annotations

import dataclasses
import inspect
import itertools
import re
import sys
from pathlib import Path
from types import CodeType, FunctionType, MethodType
from typing import Any

import numpy as np
import pytest

import engine as eg
from tests.test_lessons_exercises import CASES, _leaks, _number_forms, checks

ANSWERS = sys.modules[checks.__name__ + ".answers"]
CHECKS_DIR = Path(checks.__file__).parent

#: The oracle: the value exercises' answers as the checks once held them literally.
ORACLE: dict[tuple[str, str], Any] = {
    ("01", "floor_mod"): (-4, 3),
    ("02", "partials"): (6.0, -3.0),
    ("03", "third_derivative"): 0.5,
    ("03", "watch_constant"): 29.0,
    ("03", "jacobian"): np.array([[3.0, 2.0], [1.0, 1.0], [0.0, 6.0]]),
    ("04", "adam_slots"): (0.58, 0.019996),
    ("05", "global_clip"): (13.0, 0.5),
    ("05", "keeps_direction"): {"global norm"},
    ("06", "sum_lr"): 0.025,
    ("08", "bit_identical"): {"a", "b", "c"},
    ("09", "trace_count"): 4,
}
KEYS = sorted(ORACLE)
IDS = ["-".join(k) for k in KEYS]

#: Their wrong answers (one per kind of message the value judge gives) and today's message for each.
WRONG: dict[tuple[str, str], list[tuple[Any, str]]] = {
    ("01", "floor_mod"): [((-3, -2), "part 1 of your answer is not right."), ((-4, 2), "part 2 of your "
                          "answer is not right."), ((-4,), "your answer has 1 parts, which is not the "
                          "number of parts the exercise asks for.")],
    ("02", "partials"): [((3.0, -3.0), "part 1 of your answer is not right."),
                         ((6.0, -4.0), "part 2 of your answer is not right."),
                         ((None, -3.0), "part 1 of your answer is None.")],
    ("03", "third_derivative"): [(-0.5, "your answer is not right."), (None, "your answer is None.")],
    ("03", "watch_constant"): [(27.0, "your answer is not right."),
                               (float("nan"), "your answer contains NaN or inf.")],
    ("03", "jacobian"): [(np.array([[3.0, 2.0], [1.0, 1.0], [1.0, 6.0]]),
                          "your answer has entries that are not right."),
                         (np.zeros((2, 3)), "your answer has shape (2, 3), which is not the shape the "
                          "exercise asks for.")],
    ("04", "adam_slots"): [((0.6, 0.02), "part 1 of your answer is not right."),
                           ((0.58, 0.02), "part 2 of your answer is not right.")],
    ("05", "global_clip"): [((13.0, 2.0), "part 2 of your answer is not right."),
                            ([12.0, 0.5], "part 1 of your answer is not right.")],
    ("05", "keeps_direction"): [(set(), "your answer misses something."),
                                ({"global norm", "norm"}, "your answer contains something that does not "
                                 "belong."),
                                ({"value"}, "your answer contains something that does not belong."),
                                ("global norm", "your answer should be a collection of strings, a set or a "
                                 "list (it is of type str).")],
    ("06", "sum_lr"): [(0.4, "your answer is not right."),
                       ("0.1", "your answer is of type str, not a number: give a plain number, a NumPy "
                        "array or an engine tensor.")],
    ("08", "bit_identical"): [({"a", "b"}, "your answer misses something."),
                              ({"a", "b", "c", "d"}, "your answer contains something that does not belong."),
                              ({"A", " B", "c "}, None), (["c", "b", "a"], None),
                              ({"x"}, "your answer contains something that does not belong."),
                              ([1, 2], "your answer should hold strings only (plain str), one per item.")],
    ("09", "trace_count"): [(3, "your answer is not right."), (5.0, "your answer is not right.")],
}


def _same(a: Any, b: Any) -> bool:
    """Equal values: numbers within float64 rounding (1e-12), sets, tuples part by part, arrays."""
    if isinstance(b, (set, frozenset)):
        return isinstance(a, (set, frozenset)) and {str(x).strip().lower() for x in a} == b
    if isinstance(b, tuple):
        return type(a) is tuple and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    got = np.asarray(a, dtype=np.float64)
    return got.shape == np.shape(b) and bool(np.allclose(got, b, rtol=1e-12, atol=0.0))


# ---- the record: every value exercise computes or hashes its answer ----------------------------------


def test_every_value_exercise_is_computed_or_hashed():
    by_value = {k for k, e in checks.EXERCISES.items() if e.judge.__qualname__.startswith("close_to.")}
    assert by_value == set(ORACLE), "a value exercise registered (or gone) without the oracle knowing it"
    for key in KEYS:
        assert isinstance(checks.EXERCISES[key].solution, (ANSWERS.Computed, ANSWERS.Hashed)), key


@pytest.mark.parametrize("key", KEYS, ids=IDS)
def test_the_computed_value_is_the_oracles(key):
    reference = checks.EXERCISES[key].reference
    assert _same(reference, ORACLE[key]), (reference, ORACLE[key])
    again = checks.EXERCISES[key].reference
    assert _same(again, ORACLE[key])
    if isinstance(again, (tuple, set, np.ndarray)):
        assert again is not reference, "the value was kept, not computed anew"


def test_hashed_answers_are_the_digest_of_their_canonical_form():
    hashed = checks.EXERCISES["08", "bit_identical"].solution
    assert isinstance(hashed, ANSWERS.Hashed)
    assert hashed.digest == ANSWERS.digest_of(ORACLE["08", "bit_identical"])
    assert ANSWERS.canonical({" C", "a", "b"}) == "['a', 'b', 'c']"
    with pytest.raises(ValueError, match="no subset"):
        ANSWERS.hashed(ANSWERS.digest_of({"z"}), among=("a", "b")).value()


def test_the_computation_follows_the_engine_not_a_copy(monkeypatch):
    """The verdict is computed from the engine on each check: an engine whose floor division rounded
    towards zero (as C's does) would make (-3, -2) the right answer. Proves no value is kept."""
    assert not checks.evaluate("01", "floor_mod", (-3, -2))[0]
    monkeypatch.setattr(eg.Tensor, "__floordiv__", lambda a, b: eg.constant(int(a.numpy() / b.numpy())))
    monkeypatch.setattr(eg.Tensor, "__mod__", lambda a, b: eg.constant(int(np.fmod(a.numpy(), b.numpy()))))
    assert checks.EXERCISES["01", "floor_mod"].reference == (-3, -2)
    assert checks.evaluate("01", "floor_mod", (-3, -2))[0]


# ---- right answers pass, wrong ones get today's messages ---------------------------------------------


@pytest.mark.parametrize("key", KEYS, ids=IDS)
def test_right_answers_pass(key):
    for answer in (ORACLE[key], checks.EXERCISES[key].reference):
        ok, message = checks.evaluate(*key, answer)
        assert ok, message
    if CASES[key].right is not None:  # the learner's way, with the engine
        assert checks.evaluate(*key, CASES[key].right())[0]


@pytest.mark.parametrize("key", KEYS, ids=IDS)
def test_wrong_answers_get_the_messages_they_always_got(key):
    """Word for word the message of the judge the literal answer once made (``close_to(literal)``)."""
    exercise = checks.EXERCISES[key]
    literal_judge = checks.close_to(ORACLE[key])
    for answer, problem in WRONG[key]:
        assert literal_judge(answer) == problem
        ok, message = checks.evaluate(*key, answer)
        if problem is None:
            assert ok, message
        else:
            assert (ok, message) == (False, f"Not yet: {problem} Hint: {exercise.idea}")


def test_after_directed_tries_the_message_stops_saying_which_way(capsys):
    """(The count is the kernel's: other tests may have spent some of the tries already.)"""
    key = ("08", "bit_identical")
    tries = checks.registry.DIRECTED_TRIES
    said = []
    for _ in range(tries + 1):
        checks.check(*key, {"a"})
        said.append("misses something" in capsys.readouterr().out)
    assert said[-1] is False and said == sorted(said, reverse=True), said
    checks.check(*key, {"a", "b", "c"})
    assert capsys.readouterr().out.startswith("Right!")


# ---- nowhere to read them ----------------------------------------------------------------------------


def _forms(v: float) -> set[str]:
    """The test suite's written forms of a number (`_number_forms`), less those that round it to
    another number (0.019996 to one decimal is "0.0", which is not the answer written)."""
    return {f for f in _number_forms(v) if abs(float(f) - v) <= 1e-3 * abs(v)}


def _scalar_parts(value: Any) -> list[float]:
    if isinstance(value, tuple):
        return [float(v) for v in value]
    if isinstance(value, (int, float)):
        return [float(value)]
    return []


def _joined(part_forms: list[set[str]]) -> set[str]:
    """The ways a tuple of numbers is written: its parts' forms joined, in brackets or not."""
    found = set()
    for combo in itertools.product(*part_forms):
        for sep in (", ", ","):
            body = sep.join(combo)
            found |= {body, f"({body})", f"[{body}]"}
    return found


def _written_forms(value: Any) -> set[str]:
    """How the whole value would be written: repr, str, the forms of a tuple's numbers joined, a set
    of strings in any order and quoting, an array's list, rows and NumPy text."""
    if isinstance(value, tuple):
        return {repr(value), str(list(value))} | _joined([_forms(float(v)) for v in value])
    if isinstance(value, set):
        forms = set()
        for order in itertools.permutations(sorted(value)):
            for quote in ("'", '"'):
                body = ", ".join(f"{quote}{s}{quote}" for s in order)
                forms |= {f"{{{body}}}", f"[{body}]", f"({body})", f"({body},)"}  # bare: part of any superset
        return forms
    if isinstance(value, np.ndarray):  # the whole list, each number written one way throughout
        forms = {repr(value), str(value), str(value.astype(np.float32))}
        writers = (repr, "{:g}".format, "{:.1f}".format, lambda v: str(int(v)) if v == int(v) else repr(v))
        for write in writers:
            for sep in (", ", ","):
                rows = [f"[{sep.join(write(float(v)) for v in row)}]" for row in np.atleast_2d(value)]
                forms.add(f"[{sep.join(rows)}]" if value.ndim == 2 else rows[0])
        return forms
    return set()


def _package_source() -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(CHECKS_DIR.glob("*.py"))
            if p.name != "lessons_10_solution.py"}


def _registration_source(key: tuple[str, str]) -> str:
    """The ``register(...)`` statement of the exercise and the source of its computation."""
    exercise = checks.EXERCISES[key]
    solution = exercise.solution
    module = sys.modules[solution.compute.__module__] if isinstance(solution, ANSWERS.Computed) else \
        next(m for n, m in sys.modules.items() if n.startswith(checks.__name__ + ".lessons_")
             and f'register("{key[0]}", "{key[1]}"' in inspect.getsource(m))
    text = inspect.getsource(module)
    start = text.index(f'register("{key[0]}", "{key[1]}"')
    end = text.find("\nregister(", start + 1)
    statement = text[start: end if end > 0 else len(text)]
    computation = inspect.getsource(solution.compute) if isinstance(solution, ANSWERS.Computed) else ""
    return statement + "\n" + computation


@pytest.mark.parametrize("key", KEYS, ids=IDS)
def test_no_written_form_of_the_answer_in_the_checks_source(key):
    """The whole answer (a tuple, a set, an array) in no module of the checks; its single numbers in
    neither its registration nor its computation (a bare "4" or "0.5" elsewhere in the package is
    some other number)."""
    value = ORACLE[key]
    forms = _written_forms(value)
    assert forms or _scalar_parts(value)
    hits = {name: _leaks(text, forms) for name, text in _package_source().items()}
    assert not any(hits.values()), {n: h for n, h in hits.items() if h}
    near = _registration_source(key)
    numbers = set().union(*[_forms(v) for v in _scalar_parts(value)]) if _scalar_parts(value) else set()
    assert not _leaks(near, numbers | forms), (_leaks(near, numbers | forms), near)


def _reachable(root: Any) -> list[Any]:
    """Every object a judge or a record reaches without a module's namespace: closure cells, bound
    methods' objects, functions' defaults and code constants, records' fields, containers' items."""
    seen: set[int] = set()
    found: list[Any] = []
    todo = [root]
    while todo:
        obj = todo.pop()
        if id(obj) in seen or inspect.ismodule(obj) or isinstance(obj, type):
            continue
        seen.add(id(obj))
        found.append(obj)
        if isinstance(obj, FunctionType):
            todo += [c.cell_contents for c in obj.__closure__ or ()]
            todo += [obj.__code__, obj.__defaults__ or (), obj.__kwdefaults__ or {}]
        elif isinstance(obj, MethodType):
            todo += [obj.__self__, obj.__func__]
        elif isinstance(obj, CodeType):
            todo += list(obj.co_consts)
        elif dataclasses.is_dataclass(obj):
            todo += [getattr(obj, f.name) for f in dataclasses.fields(obj)]
        elif isinstance(obj, dict):
            todo += list(obj.values()) + list(obj.keys())
        elif isinstance(obj, (tuple, list, set, frozenset)):
            todo += list(obj)
    return found


def _holds(obj: Any, value: Any) -> bool:
    """``obj`` is the answer, one of its numbers, or a text showing it."""
    if isinstance(obj, str):
        return bool(_leaks(obj, _written_forms(value) | set().union(*[_forms(v) for v in
                                                                     _scalar_parts(value)] or [set()])))
    if isinstance(obj, (set, frozenset)) and isinstance(value, set):
        return {str(x).strip().lower() for x in obj} == value
    if isinstance(value, np.ndarray):
        return isinstance(obj, np.ndarray) and obj.shape == value.shape and np.allclose(obj, value)
    if isinstance(obj, (int, float, np.number)) and not isinstance(obj, bool):
        return any(float(obj) == v for v in _scalar_parts(value))
    if isinstance(obj, tuple) and isinstance(value, tuple):
        return _same(obj, value) if all(isinstance(x, (int, float)) for x in obj) else False
    return False


@pytest.mark.parametrize("key", KEYS, ids=IDS)
def test_no_judge_closure_nor_record_field_holds_the_answer(key):
    exercise = checks.EXERCISES[key]
    assert exercise.judge.__closure__, "the judge should be a closure over the computation"
    fields = [getattr(exercise, f.name) for f in dataclasses.fields(exercise)]
    holding = [repr(obj)[:80] for obj in _reachable(fields) if _holds(obj, ORACLE[key])]
    assert not holding, holding


def test_the_scan_finds_a_plainly_stored_answer():
    """The two scans above catch an answer written in plain form (as the checks once held them)."""
    judge = checks.close_to((0.58, 0.019996))
    assert any(_holds(obj, ORACLE["04", "adam_slots"]) for obj in _reachable(judge))
    assert _leaks('expected=(0.58, 0.019996),', _written_forms(ORACLE["04", "adam_slots"]))
    assert _leaks('expected={"a", "b", "c"},', _written_forms(ORACLE["08", "bit_identical"]))
    assert _leaks("expected=np.array([[3.0, 2.0], [1.0, 1.0], [0.0, 6.0]]),",
                  _written_forms(ORACLE["03", "jacobian"]))
    assert _holds("expected=4,", ORACLE["09", "trace_count"])


# ---- the seal still holds for the computation ---------------------------------------------------------


def test_swapping_the_computation_from_a_cell_changes_nothing():
    key = ("09", "trace_count")
    solution = checks.EXERCISES[key].solution
    compute = solution.compute
    object.__setattr__(solution, "compute", lambda: 12345)
    try:
        ok, message = checks.evaluate(*key, 12345)
    finally:
        restored = solution.compute
        object.__setattr__(solution, "compute", compute)
    assert not ok, message
    assert restored is compute


def test_no_registration_of_the_course_gives_a_literal_expected():
    """In the modules that register the lessons' exercises, every ``expected=`` is computed or hashed."""
    registering = {n: t for n, t in _package_source().items() if re.search(r"^register\(", t, re.M)}
    assert len(registering) >= 5
    literal = [f"{name}:{text[:m.start()].count(chr(10)) + 1}" for name, text in registering.items()
               for m in re.finditer(r"\bexpected=(?!computed\(|hashed\()", text)]
    assert not literal, literal


# ---- the exercises whose own judges name the mistakes ---------------------------------------------------

#: The value exercises judged by a judge of their own (it names the mistakes: steps off by one, the size
#: after pooling, the coupled Hessian...), and their answers as the checks once held them, in plain sight.
#: landing_device's depends on the machine: the tests run with a GPU (the fake CuPy, or a real one).
JUDGED_ORACLE: dict[tuple[str, str], Any] = {
    ("01", "float32_product"): np.array([0.0, 0.5, 1.5, 3.0, 5.0]),
    ("01", "landing_device"): "gpu:0",
    ("04", "decay_half"): 2.125,
    ("04", "stable_rate"): 2.0 / 6.0,
    ("07", "flatten_size"): 7 * 7 * 64,
    ("08", "activation_bytes"): 50 * 8 * 8 * 32 * 4,
    ("08", "pool_drop"): "used_bytes",
}
JUDGED = sorted(JUDGED_ORACLE)
JUDGED_IDS = ["-".join(k) for k in JUDGED]
PACKAGE = checks.__name__


def _plain(value: Any) -> Any:
    """A reference as the oracle is written: a tensor's numbers as a float64 array."""
    return np.asarray(value.numpy(), np.float64) if isinstance(value, eg.Tensor) else value


def test_every_value_exercise_with_its_own_judge_is_computed_or_hashed():
    judged = {k for k, e in checks.EXERCISES.items() if not e.function and k not in ORACLE}
    assert judged == set(JUDGED_ORACLE), "a value exercise with its own judge registered (or gone) unseen"
    for key in JUDGED:
        assert isinstance(checks.EXERCISES[key].solution, (ANSWERS.Computed, ANSWERS.Hashed)), key


@pytest.mark.parametrize("key", JUDGED, ids=JUDGED_IDS)
def test_the_judged_reference_is_the_oracles_and_computed_anew(key):
    assert eg.gpu_available(), "the test suite runs with a GPU (the fake CuPy at least)"
    first, again = (_plain(checks.EXERCISES[key].reference) for _ in range(2))
    if isinstance(JUDGED_ORACLE[key], str):
        assert first == again == JUDGED_ORACLE[key]
    else:
        assert _same(first, JUDGED_ORACLE[key]) and _same(again, JUDGED_ORACLE[key]), (first, again)
    if isinstance(first, np.ndarray):
        assert first is not again


def _package_functions(code: CodeType, found: dict[str, FunctionType], module: Any) -> None:
    """The functions of the checks package that ``code`` (and the code inside it) calls by name."""
    for name in code.co_names:
        target = vars(module).get(name)
        if isinstance(target, FunctionType) and target.__module__.startswith(PACKAGE) and \
                target.__qualname__ not in found:
            found[target.__qualname__] = target
            _package_functions(target.__code__, found, sys.modules[target.__module__])
    for const in code.co_consts:
        if isinstance(const, CodeType):
            _package_functions(const, found, module)


def _judge_and_helpers(key: tuple[str, str]) -> list[FunctionType]:
    """The exercise's judge, its computation, and every function of the package they call by name."""
    exercise = checks.EXERCISES[key]
    roots = [exercise.judge] + ([exercise.solution.compute] if isinstance(exercise.solution,
                                                                           ANSWERS.Computed) else [])
    found: dict[str, FunctionType] = {}
    for root in roots:
        found[root.__qualname__] = root
        _package_functions(root.__code__, found, sys.modules[root.__module__])
    return list(found.values())


def _quoted(text: str) -> set[str]:
    return {f'"{text}"', f"'{text}'"}


def _without_options(source: str) -> str:
    """A module's text less the ``among=(...)`` options of its hashed answers (the options the
    question offers, every one of them, are not the answer)."""
    return re.sub(r"among=\([^)]*\)", "among=(...)", source)


@pytest.mark.parametrize("key", JUDGED, ids=JUDGED_IDS)
def test_no_written_form_of_the_judged_answer_in_the_checks_source(key):
    """Not in the registration, the judge, the computation, or any function of the package they call;
    a name (a string answer) in no module of the package but as one of its question's options."""
    value = JUDGED_ORACLE[key]
    exercise = checks.EXERCISES[key]
    module = sys.modules[exercise.judge.__module__]
    text = inspect.getsource(module)
    start = text.index(f'register("{key[0]}", "{key[1]}"')
    end = text.find("\nregister(", start + 1)
    near = text[start: end if end > 0 else len(text)] + "\n".join(
        inspect.getsource(f) for f in _judge_and_helpers(key))
    if isinstance(value, str):
        if key == ("01", "landing_device"):  # "gpu:0" is also the device the exercise asks for
            assert not _leaks(near, _quoted("cpu:0")), near
            assert "gpu_available" not in near, "the answer chosen by the checks, not placed by the engine"
            return
        hits = {n: _leaks(_without_options(t), _quoted(value)) for n, t in _package_source().items()}
        assert not any(hits.values()), hits
        return
    forms = _written_forms(value) | set().union(*[_forms(v) for v in _scalar_parts(value)] or [set()])
    assert forms
    assert not _leaks(near, forms), (_leaks(near, forms), near)
    hits = {n: _leaks(t, _written_forms(value)) for n, t in _package_source().items()}
    assert not any(hits.values()), hits


def _reachable_with_helpers(key: tuple[str, str]) -> list[Any]:
    """What the judge, the record and the functions they call reach, less the options of a hashed
    answer."""
    exercise = checks.EXERCISES[key]
    fields = [getattr(exercise, f.name) for f in dataclasses.fields(exercise)]
    found = _reachable([fields, _judge_and_helpers(key)])
    options = set(exercise.solution.among) if isinstance(exercise.solution, ANSWERS.Hashed) else set()
    return [obj for obj in found if not (isinstance(obj, str) and obj in options)]


def _holds_judged(obj: Any, value: Any) -> bool:
    """`_holds`, and a name equal to a string answer, and an engine tensor holding an array answer."""
    if isinstance(value, str):
        return isinstance(obj, str) and obj.strip().lower() == value
    if isinstance(obj, eg.Tensor):
        obj = _plain(obj)
    return _holds(obj, value)


@pytest.mark.parametrize("key", [k for k in JUDGED if k != ("01", "landing_device")],  # see the next test
                         ids=[i for i in JUDGED_IDS if i != "01-landing_device"])
def test_no_judge_nor_helper_nor_record_field_holds_the_judged_answer(key):
    """Code constants included: ``7 * 7 * 64`` or ``2.0 / 6.0`` written in a judge is folded into the
    answer by the compiler, and found."""
    value = JUDGED_ORACLE[key]
    holding = [repr(obj)[:80] for obj in _reachable_with_helpers(key) if _holds_judged(obj, value)]
    assert not holding, holding


def test_the_landing_device_is_where_the_engine_places_the_tensor(monkeypatch):
    """The answer is the engine's placement, found on each check: an engine whose soft placement kept
    every new tensor on the CPU makes "cpu:0" right and "gpu:0" wrong."""
    key = ("01", "landing_device")
    assert eg.gpu_available() and checks.evaluate(*key, "gpu:0")[0]
    assert not checks.evaluate(*key, "cpu:0")[0]
    ones = eg.ones

    def ones_kept_on_the_cpu(*args: Any, **kwargs: Any) -> Any:
        with eg.device("cpu:0"):
            return ones(*args, **kwargs)

    monkeypatch.setattr(eg, "ones", ones_kept_on_the_cpu)
    assert checks.EXERCISES[key].reference == "cpu:0"
    assert checks.evaluate(*key, "cpu:0")[0]
    ok, message = checks.evaluate(*key, "gpu:0")
    assert not ok and "not where the tensor ends up" in message


def test_the_judged_answers_follow_the_engine(monkeypatch):
    """flatten_size and activation_bytes are the engine's shapes: a conv2d that dropped the channels
    changes what is right. decay_half is the engine's SGD: a rate read as half changes it too."""
    conv2d = eg.nn.conv2d
    monkeypatch.setattr(eg.nn, "conv2d", lambda x, f, **kw: conv2d(x, f[..., :1], **kw))
    assert checks.evaluate("07", "flatten_size", 7 * 7)[0]
    assert checks.evaluate("08", "activation_bytes", 50 * 8 * 8 * 4)[0]
    monkeypatch.undo()
    apply = eg.optimizers.SGD.apply_gradients
    monkeypatch.setattr(eg.optimizers.SGD, "apply_gradients",
                        lambda self, pairs, **kw: apply(self, [(0.5 * g, v) for g, v in pairs], **kw))
    assert checks.evaluate("04", "decay_half", 1.0 + 9.0 * 0.75 ** 3)[0]
    assert not checks.evaluate("04", "decay_half", JUDGED_ORACLE["04", "decay_half"])[0]


def test_the_judged_scans_find_a_plainly_held_answer():
    """The scans above catch an answer written in plain form in a judge (as these checks once held
    them), folded or not, and a name written outside its options."""
    def plain_flatten_judge(answer):
        return None if answer == 7 * 7 * 64 else "no."

    def plain_rate_judge(answer):
        return None if abs(answer - 2.0 / 6.0) < 1e-3 else "no."

    assert any(_holds(obj, JUDGED_ORACLE["07", "flatten_size"]) for obj in _reachable(plain_flatten_judge))
    assert any(_holds(obj, JUDGED_ORACLE["04", "stable_rate"]) for obj in _reachable(plain_rate_judge))
    assert any(_holds_judged(obj, "used_bytes") for obj in _reachable(lambda a: a == "used_bytes"))
    plain_product = eg.constant(np.linspace(0.0, 1.0, 5), dtype="float32") * eg.constant([1.0, 2, 3, 4, 5])
    assert _holds_judged(plain_product, JUDGED_ORACLE["01", "float32_product"])
    assert _leaks(_without_options('reference="used_bytes",'), _quoted("used_bytes"))
    assert not _leaks(_without_options('among=("held_bytes", "used_bytes"))'), _quoted("used_bytes"))
    assert _leaks("reference=2.125,", _forms(2.125))
