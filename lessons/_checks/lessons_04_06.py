"""The self-checks of lessons 04 (inside the optimizer), 05 (clipping) and 06 (gradients outside the step)."""

from __future__ import annotations

from typing import Any

import numpy as np

import engine as eg
from gradviz.model.clip_results import METHODS as CLIPPING_METHODS
from gradviz.model.clip_results import clip_gradients, measure_before

from .answers import computed, plain_value
from .forbidden import _calls_to, _refusal
from .plain import _is_tensor, _plain_numbers
from .registry import register
from .through import flows_back, watching

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


def stable_quadratic(v: Any) -> Any:
    """Exercise 4's loss: f(v) = 2.5 v0² + 2 v0 v1 + v1² (the lesson defines the same function)."""
    return 2.5 * v[0] ** 2 + 2.0 * v[0] * v[1] + v[1] ** 2


def _sgd_distance(learning_rate: float, steps: int = 300) -> float:
    """How far from the minimum (0, 0) plain SGD on `stable_quadratic` ends, from (1, 1), in float64."""
    v = eg.Variable(np.array([1.0, 1.0]))
    opt = eg.optimizers.SGD(learning_rate)
    with np.errstate(all="ignore"):
        for _ in range(steps):
            opt.minimize(lambda: stable_quadratic(v))
            distance = float(np.linalg.norm(v.numpy()))
            if not np.isfinite(distance) or distance > 1e6:
                return float("inf")
    return distance


def _stable_quadratic_hessian() -> np.ndarray:
    """The Hessian of `stable_quadratic` (the same everywhere: f is quadratic), from nested tapes, as
    lesson 03 takes it."""
    v = eg.Variable(np.zeros(2), dtype="float64")
    with eg.GradientTape() as outer:
        with eg.GradientTape() as inner:
            loss = stable_quadratic(v)
        gradient = inner.gradient(loss, v)
    return np.asarray(outer.jacobian(gradient, v).numpy(), dtype=np.float64)


def _stable_rate_answer() -> float:
    """Exercise 4 of lesson 04: the largest stable rate of plain SGD, 2 over the largest eigenvalue of
    the Hessian the engine computes."""
    return plain_value(2.0 / np.linalg.eigvalsh(_stable_quadratic_hessian()).max())


def _judge_stable_rate(answer: Any) -> str | None:
    got = _plain_numbers(answer, "your answer ")
    if isinstance(got, str):
        return got
    if got.size != 1:
        return f"your answer has shape {got.shape}; give one number, a learning rate."
    rate = float(got.reshape(()))
    if not np.isfinite(rate) or rate <= 0:
        return "a learning rate is a positive number."
    below, above = _sgd_distance(0.97 * rate) < 1e-3, _sgd_distance(1.03 * rate) < 1e-3
    if below and not above:
        return None
    hessian = _stable_quadratic_hessian()
    curvatures = np.linalg.eigvalsh(hessian)
    if not below:
        problem = "SGD on f diverges (or stalls) already 3 % below your rate, so it is too large."
        if np.isclose(rate, 2.0 / hessian.diagonal().max(), rtol=0.02):
            problem += (" The largest diagonal entry of the Hessian is not the largest curvature: the "
                        "term 2·v0·v1 couples the two directions.")
        elif np.isclose(rate, 2.0 / curvatures.min(), rtol=0.02):
            problem += " The flattest direction does not decide; the steepest one does."
        return problem
    problem = "SGD on f still converges 3 % above your rate, so a larger rate is stable too."
    if np.isclose(rate, 1.0 / curvatures.max(), rtol=0.02):
        problem += (" At 1/λ one step lands on the minimum along the steepest direction; steps that "
                    "overshoot still shrink the distance, as long as |1 − ηλ| < 1.")
    return problem


def _scale_pairs(pairs: Any, factor: float) -> list:
    """The course's answer to lesson 04's scale_pairs."""
    return [(None if g is None else factor * g, v) for g, v in pairs]


def _scale_in_place(pairs: Any, factor: float) -> Any:
    for i, (g, v) in enumerate(pairs):
        pairs[i] = (None if g is None else factor * g, v)
    return pairs


def _scale_applies(pairs: Any, factor: float) -> Any:
    for g, v in pairs:
        if g is not None:
            v.assign_sub(factor * g)
    return pairs


_SCALE_WRONG = (
    (lambda pairs, factor: [(factor * g, v) for g, v in pairs], "raised TypeError"),
    (lambda pairs, factor: [(factor * g, v) for g, v in pairs if g is not None], "pairs"),
    (_scale_applies, "Variable changed"),
    (lambda pairs, factor: [(None if g is None else g / factor, v) for g, v in pairs], "not multiplied"),
    (lambda pairs, factor: list(pairs), "unchanged"),
    (lambda pairs, factor: ((None if g is None else factor * g, v) for g, v in pairs), "generator"),
    (_scale_in_place, "changed the list"),
)

def _decay_trace(steps: int, b: float = 1.0) -> list[float]:
    """x before each step and after the last, on lesson 04's descent (`descent_trace`): the engine's
    SGD (learning rate 1) on 0.5·(x − b)² from x0 = 10, each gradient scaled by the decay 0.5, in
    float64."""
    x = eg.Variable(10.0, dtype="float64")
    data = eg.constant(b, dtype="float64")
    opt = eg.optimizers.SGD(learning_rate=1.0)
    trace = [plain_value(x)]
    for _ in range(steps):
        pairs = opt.compute_gradients(lambda: 0.5 * (x - data) ** 2)
        opt.apply_gradients([(0.5 * g, v) for g, v in pairs])
        trace.append(plain_value(x))
    return trace


def _decay_half_answer() -> float:
    """Exercise 1 of lesson 04: x after the three steps the exercise takes."""
    return _decay_trace(3)[-1]


def _judge_decay_half(answer: Any) -> str | None:
    got = _plain_numbers(answer, "your answer ")
    if isinstance(got, str):
        return got
    if got.size != 1:
        return f"your answer has shape {got.shape}; give one number, x after the steps."
    x = float(got.reshape(()))
    after = _decay_trace(4)  # x after 0, 1, ..., 4 steps
    if np.isclose(x, after[3], rtol=1e-4, atol=1e-6):
        return None
    if any(np.isclose(x, after[n], rtol=1e-4, atol=1e-6) for n in (2, 4)):
        return "that is x after a different number of steps: count the steps the exercise takes once more."
    if np.isclose(x, _decay_trace(3, b=0.0)[-1], rtol=1e-4, atol=1e-6):
        return ("that is x0 shrunk as if the minimum were at 0: what shrinks each step is the distance to "
                "b, not x itself.")
    return "your answer is not right."


register("04", "decay_half", judge=_judge_decay_half, reference=computed(_decay_half_answer),
         idea=("Each step keeps the same fraction of the distance to the minimum, so the distances "
               "shrink geometrically."),
         hint="Each step keeps the fraction (1 - decay) of the distance to b, so after n steps "
              "x = b + (x0 - b) * (1 - decay)**n. descent_trace(decay, steps) lets you check the table.")
register("04", "scale_pairs",
         idea=("A gradient transform builds new (gradient, variable) pairs and leaves the variables, the "
               "pairs it was given and the missing gradients as they are."),
         judge=_judge_scale_pairs, function="scale_pairs", reference=_scale_pairs,
         wrong=_SCALE_WRONG,
         hint="Loop over the pairs (a list comprehension works), keep each variable as it is, and "
              "multiply only the gradients that are not None.",
         praise="This is the shape of every gradient transform: clipping, averaging, noise.")
register("04", "stable_rate",
         idea=("Along each principal direction of the curvature a step multiplies the distance by the "
               "same factor; every one of those factors must stay smaller than one in size."),
         judge=_judge_stable_rate, reference=computed(_stable_rate_answer),
         hint="Along each eigenvector of the Hessian (curvature λ), a step multiplies the distance to "
              "the minimum by 1 − ηλ. The Hessian of f comes from nested tapes or tape.jacobian of the "
              "gradient (lesson 03); np.linalg.eigvalsh gives its eigenvalues.",
         praise="Every direction must satisfy |1 − ηλ| < 1; the steepest one sets the limit, 2/λ_max.")
def _adam_slots_answer() -> tuple[float, float]:
    """Exercise 3 of lesson 04: the slots m and v of a fresh engine Adam (default betas) after it
    updated a scalar Variable with the gradient 2, then 4."""
    variable = eg.Variable(0.0, dtype="float64")
    adam = eg.optimizers.Adam()
    for gradient in (2.0, 4.0):
        adam.apply_gradients([(eg.constant(gradient, dtype="float64"), variable)])
    return plain_value(adam.get_slot(variable, "m")), plain_value(adam.get_slot(variable, "v"))


register("04", "adam_slots",
         idea=("The slots are running averages, started from zero and updated once per gradient, kept "
               "before any correction."),
         expected=computed(_adam_slots_answer),
         hint="Start from m = v = 0 and apply m <- beta1*m + (1 - beta1)*g and "
              "v <- beta2*v + (1 - beta2)*g**2 once per gradient. The slots hold these raw running "
              "means, before the bias correction.")


# ===================================================================================================
# Lesson 05: clipping
# ===================================================================================================

def _judge_clip_rows(answer: Any) -> str | None:
    rng = np.random.default_rng(5)
    drawn = rng.normal(size=(6, 5)) * rng.uniform(0.2, 3.0, size=(6, 1))
    drawn[2] = 0.0  # a zero row, and rows both sides of c
    for t, c in ((eg.constant([[3.0, 4.0, 0.0], [0.3, -0.4, 0.0], [0.0, 0.0, 0.0], [-6.0, 0.0, 8.0]]), 2.0),
                 (eg.constant(drawn), float(np.median(np.linalg.norm(drawn, axis=1))))):
        problem = _clip_rows_once(answer, t, c)
        if problem is not None:
            return problem
    return None


def _clip_rows_once(answer: Any, t: Any, c: float) -> str | None:
    rows = t.numpy().astype(np.float64)
    norms = np.sqrt(np.sum(rows**2, axis=1, keepdims=True))
    want = rows * c / np.maximum(norms, c)
    whole = rows * c / max(float(np.sqrt(np.sum(rows**2))), c)

    tape = watching([t])
    with _calls_to("clip_by_norm", "clip_by_global_norm", "global_norm") as called:
        try:
            with np.errstate(all="ignore"):  # a NaN from a zero row is reported below, not warned about
                out = answer(t, c)
        except Exception as exc:
            failed = (f"calling clip_rows(t, {c:.3g}) on a {t.dtype} matrix of shape {t.shape} raised "
                      f"{type(exc).__name__}: {exc}.")
        else:
            failed = None
        finally:
            tape.__exit__(None, None, None)
    if called:
        return _refusal(called, "the exercise is to build the clip yourself, from the row lengths.")
    if failed is not None:
        return failed
    if not _is_tensor(out):
        return "return an engine tensor computed with engine operations (so it stays differentiable)."
    if out.dtype != t.dtype:
        return f"for a {t.dtype} matrix it returns {out.dtype}: keep the dtype of t."
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
    return flows_back(tape, [out], [t])


def _clip_rows(t: Any, c: float) -> Any:
    """The course's answer to lesson 05's clip_rows."""
    norms = eg.sqrt(eg.sum(t * t, axis=1, keepdims=True))
    return t * c / eg.maximum(norms, c)


_ROWS_WRONG = (
    (lambda t, c: t * c / eg.maximum(eg.sqrt(eg.sum(t * t)), c), "whole matrix"),
    (lambda t, c: t * c / eg.maximum(eg.sqrt(eg.sum(t * t, axis=1)), c), "raised"),
    (lambda t, c: t * c / eg.sqrt(eg.sum(t * t, axis=1, keepdims=True)), "NaN"),
    (lambda t, c: t * c / (eg.sqrt(eg.sum(t * t, axis=1, keepdims=True)) + 1e-3), "at most c should stay"),
    (lambda t, c: t.numpy() * c / np.maximum(np.linalg.norm(t.numpy(), axis=1, keepdims=True), c),
     "engine tensor"),
    (lambda t, c: t, "nothing was clipped"),
)

register("05", "clip_rows",
         idea=("Clipping by norm shrinks what is too long to the limit and leaves what is short alone; "
               "here each row is measured and clipped on its own."),
         judge=_judge_clip_rows, function="clip_rows", reference=_clip_rows,
         wrong=_ROWS_WRONG,
         hint="Compute each row's length with sqrt(sum(t * t, axis=1, keepdims=True)); then scale t by "
              "c divided by the larger of that length and c (eg.maximum).",
         praise="That is exactly the formula behind clip_by_norm.")
def _global_clip_answer() -> tuple[float, float]:
    """Exercise 2 of lesson 05: the global norm eg.clip_by_global_norm returns for the gradients
    (3, 4) and (12), and the factor it multiplies them by for clip_norm 6.5."""
    gradients = [eg.constant([3.0, 4.0], dtype="float64"), eg.constant([12.0], dtype="float64")]
    clipped, global_norm = eg.clip_by_global_norm(gradients, 6.5)
    return plain_value(global_norm), plain_value(clipped[1][0] / gradients[1][0])


def _keeps_direction_answer() -> set[str]:
    """Exercise 3 of lesson 05: the clipping lab's methods that keep the direction of the combined
    gradient, measured with the lab's own computation (gradviz's clip_gradients, the engine's clipping
    functions): those whose angle stays zero on drawn gradients of three shapes and sizes, for
    thresholds that clip some of them and not others."""
    rng = np.random.default_rng(0)
    gradients = [eg.constant(rng.normal(size=shape) * rng.uniform(0.1, 10.0), dtype="float64")
                 for shape in ((2,), (2, 3), (4,))]
    before = measure_before(gradients)
    worst = {method: max(clip_gradients(gradients, method, threshold, before).angle_deg
                         for threshold in (0.3, 1.0, 3.0))
             for method in CLIPPING_METHODS}
    return {method for method, angle in worst.items() if angle < 1e-6}


register("05", "global_clip",
         idea=("The global norm measures all gradients together as one long vector; clipping scales "
               "every gradient by the same factor."),
         expected=computed(_global_clip_answer),
         hint="The global norm is the length of all entries of all gradients together: the square root "
              "of the sum of all their squares. When it exceeds clip_norm, every gradient is multiplied "
              "by clip_norm divided by it.")
register("05", "keeps_direction",
         idea=("A direction survives only when everything is multiplied by one and the same positive "
               "factor."),
         expected=computed(_keeps_direction_answer),
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
    return _combine_keeps(answer, rng)


def _combine_keeps(answer: Any, rng: np.random.Generator) -> str | None:
    """float32 gradients give a float32 result, the caller's arrays stay as they were, and the same
    array given twice (two micro-batches with equal gradients) combines to itself."""
    g = rng.normal(size=(5,)).astype(np.float32)
    for gradients, sizes, want in (([g, 2 * g], [1, 3], 1.75 * g), ([g, g], [2, 6], g)):
        before = [a.copy() for a in gradients]
        try:
            out = answer(gradients, sizes)
        except Exception as exc:
            return f"for float32 gradients it raised {type(exc).__name__}: {exc}."
        if any(not np.array_equal(a, b) for a, b in zip(gradients, before)):
            return ("it changed a gradient it was given (in place: += or x[...] =): the caller's arrays must "
                    "stay as they were; start the sum from a new array.")
        if type(out) is not np.ndarray or out.dtype != np.float32:
            kind = out.dtype if type(out) is np.ndarray else type(out).__name__
            return f"for float32 gradients it returns {kind}: return a NumPy array of the gradients' dtype."
        if out.shape != want.shape or not np.allclose(out, want, rtol=1e-5, atol=1e-6):
            return "it is not right for float32 gradients (or for the same array given twice)."
    return None


_WORKERS_CHANGED = "it changed the workers' gradients in place: average them into new arrays."


def _judge_server_step(answer: Any) -> str | None:
    a = eg.Variable(np.array([1.0, 2.0]), name="a")
    b = eg.Variable(np.array([[3.0]]), name="b")
    opt = eg.optimizers.SGD(learning_rate=0.5)
    worker_gradients = [[np.array([1.0, 0.0]), np.array([[2.0]])],
                        [np.array([3.0, -2.0]), np.array([[0.0]])],
                        [np.array([2.0, 2.0]), np.array([[4.0]])]]
    sent = [[g.copy() for g in w] for w in worker_gradients]
    try:
        answer(opt, [a, b], sent)
    except Exception as exc:
        return (f"calling server_step(optimizer, [a, b], gradients of 3 workers) raised "
                f"{type(exc).__name__}: {exc}.")
    if any(not np.array_equal(x, y) for w, s in zip(worker_gradients, sent) for x, y in zip(w, s)):
        return _WORKERS_CHANGED
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
        return _server_step_again(answer)
    return "the variables changed, but not by the workers' averaged gradients."


def _server_step_again(answer: Any) -> str | None:
    """A second call: four workers, random gradients, another learning rate; theirs stay untouched."""
    rng = np.random.default_rng(6)
    start = [rng.normal(size=(2, 3)), rng.normal(size=(5,))]
    variables = [eg.Variable(s) for s in start]
    workers = [[rng.normal(size=s.shape) for s in start] for _ in range(4)]
    sent = [[g.copy() for g in w] for w in workers]
    try:
        answer(eg.optimizers.SGD(learning_rate=0.2), variables, sent)
    except Exception as exc:
        return f"a second call, with four workers, raised {type(exc).__name__}: {exc}."
    if any(not np.array_equal(a, b) for w, s in zip(workers, sent) for a, b in zip(w, s)):
        return _WORKERS_CHANGED
    for k, (v, s) in enumerate(zip(variables, start)):
        mean = np.mean([w[k] for w in workers], axis=0)
        if not np.allclose(v.numpy(), s - 0.2 * mean, rtol=1e-9, atol=1e-12):
            return "with four workers and a learning rate of 0.2 the step is not the workers' mean."
    return None


def _combine(gradients: Any, sizes: Any) -> Any:
    """The course's answer to lesson 06's combine."""
    return sum(n * g for n, g in zip(sizes, gradients)) / sum(sizes)


def _server_step(optimizer: Any, variables: Any, worker_gradients: Any) -> None:
    """The course's answer to lesson 06's server_step."""
    means = [np.mean(arrays, axis=0) for arrays in zip(*worker_gradients)]
    optimizer.apply_gradients(zip(means, variables))


def _server_per_worker(optimizer: Any, variables: Any, worker_gradients: Any) -> None:
    for grads in worker_gradients:
        optimizer.apply_gradients(zip(grads, variables))


def _server_twice(optimizer: Any, variables: Any, worker_gradients: Any) -> None:
    half = [np.mean(arrays, axis=0) / 2 for arrays in zip(*worker_gradients)]
    optimizer.apply_gradients(zip(half, variables))
    optimizer.apply_gradients(zip(half, variables))


_COMBINE_WRONG = (
    (lambda gradients, sizes: np.mean(gradients, axis=0), "plain mean"),
    (lambda gradients, sizes: sum(n * g for n, g in zip(sizes, gradients)), "weighted sum"),
    (lambda gradients, sizes: sum(n * g for n, g in zip(reversed(sizes), gradients)) / sum(sizes), "swapped"),
    (lambda gradients, sizes: (sizes[0] * gradients[0] + sizes[1] * gradients[1]) / (sizes[0] + sizes[1]),
     "three"),
)
_SERVER_WRONG = (
    (_server_per_worker, "once per worker"),
    (lambda opt, variables, grads: opt.apply_gradients(
        zip([np.sum(a, axis=0) for a in zip(*grads)], variables)), "added"),
    (lambda opt, variables, grads: opt.apply_gradients(zip(grads[0], variables)), "averaged"),
    (lambda opt, variables, grads: [np.mean(a, axis=0) for a in zip(*grads)], "not updated"),
    (_server_twice, "exactly once"),
)

register("06", "combine",
         idea=("The full-batch loss is a mean over every example, so each micro-batch counts as many "
               "times as it has examples."),
         judge=_judge_combine, function="combine", reference=_combine,
         wrong=_COMBINE_WRONG,
         hint="The full-batch loss is a mean over all examples, so a micro-batch of n examples counts n "
              "times: weight each gradient by its size, add, and divide by the total size.",
         praise="Weighting by size keeps accumulation exact for any split.")
register("06", "server_step",
         idea=("The server averages what the workers send, variable by variable, then updates once."),
         judge=_judge_server_step, function="server_step", reference=_server_step,
         wrong=_SERVER_WRONG,
         hint="zip(*worker_gradients) groups the arrays per Variable; np.mean(..., axis=0) averages "
              "each group; zip the means with the variables and call apply_gradients once.")
def _sum_lr_answer() -> float:
    """Exercise 3 of lesson 06: the learning rate lr for which MultiSteps(SGD(lr), every_k=4,
    average=False) steps as full-batch SGD(0.1) does, for four micro-batches of equal size (the
    full-batch gradient is their mean): the ratio of the two engines' steps, measured with lr = 1."""
    micro_gradients = np.random.default_rng(6).normal(size=(4, 3))
    full, summed = eg.Variable(np.zeros(3)), eg.Variable(np.zeros(3))
    eg.optimizers.SGD(0.1).apply_gradients([(micro_gradients.mean(axis=0), full)])
    adding = eg.optimizers.MultiSteps(eg.optimizers.SGD(1.0), every_k=4, average=False)
    for gradient in micro_gradients:
        adding.apply_gradients([(gradient, summed)])
    return plain_value(np.mean(full.numpy() / summed.numpy()))


register("06", "sum_lr",
         idea=("Adding gradients instead of averaging them multiplies the step; the learning rate can "
               "undo that factor."),
         expected=computed(_sum_lr_answer),
         hint="Adding k gradients gives k times their mean. The learning rate has to undo that factor.")
