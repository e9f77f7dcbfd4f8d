"""The self-checks of lesson 10 (build your own engine), in lessons/_checks/lessons_10*.py.

A right answer is the course's reference (the source text beside each registration) run in order in one
namespace, as the lesson's cells run; a wrong one is the same engine with one cell replaced by a wrong
version from tests/lesson10_variants.py, each with a fragment of the hint it must get. Added to `CASES`.
Also: the references are checked against the engine on fresh random draws several times (the checks
draw new programs at every call), and the hint never shows the answer.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.lesson10_variants import VARIANTS, reference
from tests.test_lessons_exercises import CASES, Case, checks

random_program = checks.lessons_10_programs.random_program
_one_program = checks.lessons_10_walk._one_program

#: exercise → the name its cell defines and the check receives.
ANSWER = {"value": "Value", "tape": "Tape", "primitive": "primitive", "arithmetic": "add",
          "elementwise": "tanh", "matmul": "matmul", "reductions": "reduce_sum", "unbroadcast": "unbroadcast",
          "walk": "backward", "second": "second_derivative", "graph_walk": "backward_graph"}
ORDER = list(ANSWER)


def engine(replace: dict[str, str] | None = None, extra: dict | None = None) -> dict:
    """The learner's namespace after running every cell in order (``replace``: cells written otherwise;
    ``extra``: more names in the namespace)."""
    ns: dict = {"np": np, **(extra or {})}
    for name in ORDER:
        exec((replace or {}).get(name, reference(name)), ns)  # noqa: S102  (the lesson's cells, as text)
    return ns


def _answer(name: str, source: str | None = None):
    return lambda: engine({name: source} if source is not None else None)[ANSWER[name]]


CASES_10: dict[tuple[str, str], Case] = {
    ("10", name): Case(
        right=_answer(name),
        wrong=[(_answer(name, src), fragment) for src, fragment in VARIANTS.get(name, {}).items()]
        + [(lambda name=name: ANSWER[name], "function itself")],
    )
    for name in ORDER
}
CASES_10[("10", "second")].wrong += [
    (lambda: engine({"second": reference("second").replace("        backward(inner, y)\n", "").replace(
        "    first, x.grad", "    backward(inner, y)\n    first, x.grad")})["second_derivative"],
     "second derivative is missing"),
]
CASES_10[("10", "graph_walk")].wrong += [
    (lambda: engine({"graph_walk": reference("graph_walk").replace("reversed(order)", "order")})[
        "backward_graph"], "wrong order"),
]
CASES.update(CASES_10)


def test_every_exercise_of_lesson_10_has_a_reference_and_answer_name():
    names = {n for (lesson, n) in checks.EXERCISES if lesson == "10"}
    assert names == set(ANSWER)
    assert all(isinstance(reference(n), str) and "..." not in reference(n) for n in names)


@pytest.mark.parametrize("name", ORDER)
def test_the_reference_passes_on_fresh_random_draws(name):
    for _ in range(3):  # new random programs and inputs at every call
        ok, message = checks.evaluate("10", name, engine()[ANSWER[name]])
        assert ok, message


def test_the_aliasing_trap_really_corrupts_the_gradient():
    """The program the check's hint is about: with the in-place walk, df/dy of 3x + (x + y) is 4, not 1."""
    from tests.lesson10_variants import ALIASING_WALK

    for walk, want in ((reference("walk"), 1.0), (ALIASING_WALK, 4.0)):
        ns = engine({"walk": walk})
        x, y = ns["Value"](1.0), ns["Value"](2.0)
        with ns["Tape"]() as tape:
            f = 3 * x + (x + y)
        ns["backward"](tape, f)
        assert float(y.grad.value) == want and float(x.grad.value) == 4.0


def test_no_fallback_on_the_course_solution_is_left():
    """The old `adopt` (which handed the course's solution to a learner whose answer failed) is gone."""
    assert not hasattr(checks.lessons_10, "REFERENCE") and not hasattr(checks.lessons_10, "adopt")


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), graph=st.booleans())
def test_the_reference_walks_equal_eg_on_random_programs(seed, graph):
    """Differential: the course's engine (the learner's, once finished), walked by the tape or by
    micrograd's topological order, gives eg's gradients and the finite differences on any random program
    of the walk check (broadcasting, reuse, chains, every op); None means the check found nothing."""
    rng = np.random.default_rng(seed)
    program = random_program(rng, 0)
    arrays = [rng.normal(size=s) for s in program.shapes]
    ns = engine()
    walk = ns["backward_graph"] if graph else ns["backward"]
    assert _one_program(walk, ns, program, arrays, graph) is None


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_the_aliasing_walk_is_named_on_every_program_where_it_is_wrong(seed):
    """Whenever the in-place walk gets a random program wrong, the check names the aliasing, not
    something else."""
    from tests.lesson10_variants import ALIASING_WALK

    rng = np.random.default_rng(seed)
    program = random_program(rng, 0)
    arrays = [rng.normal(size=s) for s in program.shapes]
    ns = engine({"walk": ALIASING_WALK})
    problem = _one_program(ns["backward"], ns, program, arrays, graph=False)
    assert problem is None or "changed in place" in problem, problem
