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


def scale_right(pairs, factor):
    return [(None if g is None else factor * g, v) for g, v in pairs]


def scale_crashes_on_none(pairs, factor):
    return [(factor * g, v) for g, v in pairs]


def scale_drops_none(pairs, factor):
    return [(factor * g, v) for g, v in pairs if g is not None]


def scale_applies(pairs, factor):
    for g, v in pairs:
        if g is not None:
            v.assign_sub(factor * g)
    return pairs


def scale_divides(pairs, factor):
    return [(None if g is None else g / factor, v) for g, v in pairs]


def scale_unchanged(pairs, factor):
    return list(pairs)


def scale_generator(pairs, factor):
    return ((None if g is None else factor * g, v) for g, v in pairs)


def scale_in_place(pairs, factor):
    for i, (g, v) in enumerate(pairs):
        pairs[i] = (None if g is None else factor * g, v)
    return pairs


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


def rows_right(t, c):
    norms = eg.sqrt(eg.sum(t * t, axis=1, keepdims=True))
    return t * c / eg.maximum(norms, c)


def rows_whole_matrix(t, c):
    return t * c / eg.maximum(eg.sqrt(eg.sum(t * t)), c)


def rows_no_keepdims(t, c):
    return t * c / eg.maximum(eg.sqrt(eg.sum(t * t, axis=1)), c)


def rows_always_normalise(t, c):
    return t * c / eg.sqrt(eg.sum(t * t, axis=1, keepdims=True))


def rows_scale_up(t, c):
    norms = eg.sqrt(eg.sum(t * t, axis=1, keepdims=True))
    return t * c / (norms + 1e-3)


def rows_library(t, c):
    return eg.clip_by_norm(t, c, axes=1)


def rows_numpy(t, c):
    a = t.numpy()
    n = np.linalg.norm(a, axis=1, keepdims=True)
    return a * c / np.maximum(n, c)


def rows_identity(t, c):
    return t


def _global_clip():
    a, b = eg.constant([3.0, 4.0]), eg.constant([12.0])
    clipped, norm = eg.clip_by_global_norm([a, b], 6.5)
    return norm.item(), (clipped[1] / b).item()


# ---- lesson 06 -----------------------------------------------------------------------------------


def combine_right(gradients, sizes):
    total = sum(sizes)
    return sum(n * g for n, g in zip(sizes, gradients)) / total


def combine_plain_mean(gradients, sizes):
    return np.mean(gradients, axis=0)


def combine_weighted_sum(gradients, sizes):
    return sum(n * g for n, g in zip(sizes, gradients))


def combine_swapped(gradients, sizes):
    return sum(n * g for n, g in zip(reversed(sizes), gradients)) / sum(sizes)


def combine_only_two(gradients, sizes):
    return (sizes[0] * gradients[0] + sizes[1] * gradients[1]) / (sizes[0] + sizes[1])


def server_right(optimizer, variables, worker_gradients):
    means = [np.mean(arrays, axis=0) for arrays in zip(*worker_gradients)]
    optimizer.apply_gradients(zip(means, variables))


def server_per_worker(optimizer, variables, worker_gradients):
    for grads in worker_gradients:
        optimizer.apply_gradients(zip(grads, variables))


def server_sums(optimizer, variables, worker_gradients):
    sums = [np.sum(arrays, axis=0) for arrays in zip(*worker_gradients)]
    optimizer.apply_gradients(zip(sums, variables))


def server_first_worker(optimizer, variables, worker_gradients):
    optimizer.apply_gradients(zip(worker_gradients[0], variables))


def server_forgets(optimizer, variables, worker_gradients):
    return [np.mean(arrays, axis=0) for arrays in zip(*worker_gradients)]


def server_twice(optimizer, variables, worker_gradients):
    means = [np.mean(arrays, axis=0) for arrays in zip(*worker_gradients)]
    half = [m / 2 for m in means]
    optimizer.apply_gradients(zip(half, variables))
    optimizer.apply_gradients(zip(half, variables))


CASES_0406: dict[tuple[str, str], Case] = {
    ("04", "decay_half"): Case(
        right=lambda: _trace_value(0.5, 3),
        wrong=[(lambda: _trace_value(0.5, 2), "not right"), (lambda: 9 * 0.5**3, "not right"),
               (lambda: "two", "not a number")],
    ),
    ("04", "scale_pairs"): Case(
        right=lambda: scale_right,
        wrong=[(lambda: scale_crashes_on_none, "raised TypeError"), (lambda: scale_drops_none, "pairs"),
               (lambda: scale_applies, "Variable changed"), (lambda: scale_divides, "not multiplied"),
               (lambda: scale_unchanged, "unchanged"), (lambda: scale_generator, "generator"),
               (lambda: scale_in_place, "changed the list"), (lambda: [], "function itself")],
    ),
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
        right=lambda: rows_right,
        wrong=[(lambda: rows_library, "calls eg.clip_by_norm"), (lambda: rows_whole_matrix, "whole matrix"),
               (lambda: rows_no_keepdims, "raised"), (lambda: rows_always_normalise, "NaN"),
               (lambda: rows_scale_up, "at most c should stay"), (lambda: rows_numpy, "engine tensor"),
               (lambda: rows_identity, "nothing was clipped"), (lambda: rows_right(eg.ones([1, 2]), 1.0),
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
        right=lambda: combine_right,
        wrong=[(lambda: combine_plain_mean, "plain mean"), (lambda: combine_weighted_sum, "weighted sum"),
               (lambda: combine_swapped, "swapped"), (lambda: combine_only_two, "three"),
               (lambda: lambda gradients, sizes: None, "NumPy array"), (lambda: 0.5, "function itself")],
    ),
    ("06", "server_step"): Case(
        right=lambda: server_right,
        wrong=[(lambda: server_per_worker, "once per worker"), (lambda: server_sums, "added"),
               (lambda: server_first_worker, "averaged"), (lambda: server_forgets, "not updated"),
               (lambda: server_twice, "exactly once"), (lambda: None, "function itself")],
    ),
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
    checks.evaluate("05", "clip_rows", rows_no_keepdims)
    checks.evaluate("05", "clip_rows", rows_right)
    assert eg.clip_by_norm is before


def test_scale_pairs_check_leaves_the_learners_list_alone():
    ok, _ = checks.evaluate("04", "scale_pairs", scale_right)
    assert ok
    ok, message = checks.evaluate("04", "scale_pairs", scale_in_place)
    assert not ok and "changed the list" in message
