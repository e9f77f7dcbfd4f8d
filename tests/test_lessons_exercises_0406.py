"""The self-checks of lessons 04 (inside the optimizer), 05 (clipping) and 06 (gradients outside the
step), in lessons/_checks/.

Each exercise gets a right answer ("Right!") and wrong ones, written as a learner would ("Not yet:
... Hint: ...", with the fragment the message must contain), and no message, nor anything the check
prints, may show the expected answer. The cases use the `Case` format of
tests/test_lessons_exercises.py and are added to its `CASES`, so that its completeness test
(`test_every_exercise_has_a_case`) sees them too when the whole suite runs.
"""

from __future__ import annotations

import numpy as np

import engine as eg
from tests.test_lessons_exercises import CASES, Case, checks

# ---- lesson 04 -----------------------------------------------------------------------------------


def _trace_value(decay: float, steps: int) -> float:
    """x after `steps` steps of SGD(1.0) on ½(x − 1)² from 10 with the gradient times `decay`."""
    x = eg.Variable(10.0)
    opt = eg.optimizers.SGD(learning_rate=1.0)
    for _ in range(steps):
        pairs = opt.compute_gradients(lambda: 0.5 * (x - 1.0) ** 2)
        opt.apply_gradients([(decay * g, v) for g, v in pairs])
    return x.numpy().item()


def _largest_stable_rate() -> float:
    """2/λ_max of lesson 04's exercise 4, from the engine: the Hessian by nested tapes."""
    v = eg.Variable(np.array([0.3, -0.7]))
    with eg.GradientTape() as outer:
        with eg.GradientTape() as inner:
            f = 2.5 * v[0] ** 2 + 2.0 * v[0] * v[1] + v[1] ** 2
        g = inner.gradient(f, v)
    hessian = outer.jacobian(g, v).numpy()
    return 2.0 / np.linalg.eigvalsh(hessian).max()










def _adam_slots(bias_corrected: bool = False):
    w = eg.Variable(0.0)
    opt = eg.optimizers.Adam(learning_rate=0.1)
    for g in (2.0, 4.0):
        opt.apply_gradients([(eg.constant(g), w)])
    m, v = opt.get_slot(w, "m").numpy().item(), opt.get_slot(w, "v").numpy().item()
    if bias_corrected:
        return m / (1 - 0.9**2), v / (1 - 0.999**2)
    return m, v


# ---- lesson 05 -----------------------------------------------------------------------------------







def rows_library(t, c):
    return eg.clip_by_norm(t, c, axes=1)




def _global_clip():
    a, b = eg.constant([3.0, 4.0]), eg.constant([12.0])
    clipped, norm = eg.clip_by_global_norm([a, b], 6.5)
    return norm.item(), (clipped[1] / b).item()


# ---- lesson 06 -----------------------------------------------------------------------------------













CASES_0406: dict[tuple[str, str], Case] = {
    ("04", "decay_half"): Case(
        right=lambda: _trace_value(0.5, 3),
        wrong=[(lambda: _trace_value(0.5, 2), "different number of steps"),
               (lambda: _trace_value(0.5, 4), "different number of steps"), (lambda: 9 * 0.5**3, "not right"),
               (lambda: "two", "not a number")],
    ),
    ("04", "scale_pairs"): Case(wrong=[(lambda: [], "function itself")]),
    ("04", "adam_slots"): Case(
        right=_adam_slots,
        wrong=[(lambda: _adam_slots(bias_corrected=True), "part 1 of your answer is not right"),
               (lambda: (0.58, 0.0199), "part 2 of your answer is not right"),
               (lambda: (0.58,), "parts")],
    ),
    ("04", "stable_rate"): Case(
        right=_largest_stable_rate,
        wrong=[(lambda: 2.0 / 5.0, "largest diagonal entry"),  # 2 / the Hessian's largest diagonal entry
               (lambda: 0.5 * _largest_stable_rate(), "1/λ one step lands"),  # 1/λ_max
               (lambda: 2.0, "flattest direction"),  # 2/λ_min
               (lambda: 0.8 * _largest_stable_rate(), "converges 3 % above"),
               (lambda: 1.1 * _largest_stable_rate(), "diverges"),
               (lambda: 0.0, "positive"), (lambda: [0.3, 0.4], "one number"),
               (lambda: "1/3", "not a number")],
    ),
    ("05", "clip_rows"): Case(
        wrong=[(lambda: rows_library, "calls eg.clip_by_norm"),
               (lambda: checks.EXERCISES["05", "clip_rows"].reference(eg.ones([1, 2]), 1.0),
                "function itself")],
    ),
    ("05", "global_clip"): Case(
        right=_global_clip,
        wrong=[(lambda: (13.0, 2.0), "part 2 of your answer is not right"),
               (lambda: (169.0, 0.5), "part 1 of your answer is not right"),
               (lambda: (6.5, 0.5), "part 1 of your answer is not right"),
               (lambda: 13.0, "tuple")],
    ),
    ("05", "keeps_direction"): Case(
        right=lambda: {"Global Norm "},
        wrong=[(lambda: {"global norm", "per-variable norm"}, "does not belong"),
               (lambda: set(), "misses"), (lambda: "global norm", "collection")],
        secrets=["global norm"],
    ),
    ("06", "combine"): Case(
        wrong=[(lambda: lambda gradients, sizes: None, "NumPy array"), (lambda: 0.5, "function itself")],
    ),
    ("06", "server_step"): Case(wrong=[(lambda: None, "function itself")]),
    ("06", "sum_lr"): Case(
        right=lambda: 0.1 / 4,
        wrong=[(lambda: 0.4, "not right"), (lambda: 0.1, "not right"), (lambda: -0.025, "not right")],
    ),
}

# The shared completeness test reads CASES when it runs, after every module has been collected.
CASES.update(CASES_0406)


def test_every_exercise_of_lessons_04_to_06_has_a_case():
    from tests.test_lessons_exercises_making import CASES_MAKING  # noqa: PLC0415  (the making exercises)

    mine = {key for key in checks.EXERCISES if key[0] in ("04", "05", "06")} - set(CASES_MAKING)
    assert mine == set(CASES_0406)


def test_clip_rows_check_restores_clip_by_norm():
    before = eg.clip_by_norm
    checks.evaluate("05", "clip_rows", rows_library)
    for wrong, _ in checks.EXERCISES["05", "clip_rows"].wrong:
        checks.evaluate("05", "clip_rows", wrong)
    checks.evaluate("05", "clip_rows", checks.EXERCISES["05", "clip_rows"].reference)
    assert eg.clip_by_norm is before


def test_scale_pairs_check_leaves_the_learners_list_alone():
    exercise = checks.EXERCISES["04", "scale_pairs"]
    ok, _ = checks.evaluate("04", "scale_pairs", exercise.reference)
    assert ok
    in_place = next(answer for answer, fragment in exercise.wrong if fragment == "changed the list")
    ok, message = checks.evaluate("04", "scale_pairs", in_place)
    assert not ok and "changed the list" in message
