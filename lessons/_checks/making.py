"""Making exercises of lessons 02 and 04 (CURRICULUM.md, "Learning by making"): the learner writes a
gradient by hand and an optimizer's update with its state; the check runs it on random inputs of
several shapes, compares with what the engine computes, and names the kind of mistake by comparing
with typical wrong variants. Asking the engine for the answer (a tape, ``eg.gradients_function``, an
optimizer's ``apply_gradients``) is seen by the identity of its code and refused.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

import engine as eg

from .forbidden import _calls_to, _refusal
from .plain import _plain_numbers
from .registry import register

#: The draws of the random inputs: fixed, so that a verdict never depends on luck.
_SEED = 20260


def _arrays(out: Any, n: int, what: str) -> list[np.ndarray] | str:
    """The learner's ``n`` results as float64 arrays, or what is wrong with them."""
    if type(out) not in (tuple, list) or len(out) != n:
        return f"return a tuple of {n} ({what})."
    parts = []
    for i, p in enumerate(out):
        a = _plain_numbers(p, f"part {i + 1} ")
        if isinstance(a, str):
            return a
        parts.append(a.astype(np.float64))
    return parts


#: Tolerances by the dtype of the inputs: float64 answers are judged at float64's precision, so that
#: arithmetic done in float32 (about 7 digits) is always told apart from the float64 the exercise asks.
_TOLERANCE = {np.dtype(np.float64): (1e-9, 1e-12), np.dtype(np.float32): (1e-4, 1e-5)}
_FLOAT32_ARITHMETIC = ("the values are off by float32 rounding (about 7 digits): compute in the inputs' "
                       "dtype, float64 here, without casting to float32.")
_MUTATED = ("it changed an array it was given (in place: +=, x[...] = or out=): the caller's arrays must "
            "stay as they were; compute new arrays.")


def _kept(out: Any, dtype: np.dtype, given: list[np.ndarray], before: list[np.ndarray]) -> str | None:
    """What is wrong with the arrays around a call: inputs changed in place, or a result whose dtype is
    not the inputs' (float32 in, float32 out; float64 likewise)."""
    if any(not np.array_equal(g, b) for g, b in zip(given, before)):
        return _MUTATED
    for i, part in enumerate(out if type(out) in (tuple, list) else ()):
        if type(part) is np.ndarray or type(part) in (np.float32, np.float64):
            if part.dtype != dtype:
                return (f"for {dtype} inputs part {i + 1} is {part.dtype}: keep the inputs' dtype ({dtype} "
                        f"in, {dtype} out).")
    return None


def _close_at(got: list[np.ndarray], want: list[np.ndarray], dtype: np.dtype) -> bool:
    rtol, atol = _TOLERANCE[dtype]
    return all(np.allclose(g, w, rtol=rtol, atol=atol) for g, w in zip(got, want))


def _first_match(got: list[np.ndarray], variants: dict[str, list[np.ndarray]],
                 dtype: np.dtype) -> str | None:
    rtol, atol = _TOLERANCE[dtype]
    for what, wrong in variants.items():
        if all(np.shape(w) == g.shape and np.allclose(g, w, rtol=rtol, atol=atol)
               for g, w in zip(got, wrong) if w is not None):
            return what
    return None


# ---- lesson 02: the gradient of the mean squared error, by hand ---------------------------------------


def _engine_mse_grads(x: np.ndarray, y: np.ndarray, w: np.ndarray, b: np.ndarray) -> list[np.ndarray]:
    wv, bv = eg.Variable(w), eg.Variable(b)
    with eg.GradientTape() as tape:
        e = eg.constant(x) @ wv + bv - eg.constant(y)
        loss = eg.mean(e * e)
    return [g.numpy() for g in tape.gradient(loss, [wv, bv])]


def _judge_mse_grads(answer: Any) -> str | None:
    rng = np.random.default_rng(_SEED)  # fixed: the same answer gets the same verdict on every run
    for n, k, dtype in ((20, 3, np.float64), (7, 1, np.float64), (5, 4, np.float64), (6, 2, np.float32)):
        dtype = np.dtype(dtype)
        x, y = rng.normal(size=(n, k)).astype(dtype), rng.normal(size=(n, 1)).astype(dtype)
        w, b = rng.normal(size=(k, 1)).astype(dtype), rng.normal(size=(1,)).astype(dtype)
        want = [a.astype(np.float64) for a in _engine_mse_grads(x, y, w, b)]
        given = [x.copy(), y.copy(), w.copy(), b.copy()]
        with _calls_to("walk") as called:
            try:
                out = answer(*given)
            except Exception as exc:  # noqa: BLE001
                return f"calling it with x of shape {(n, k)} raised {type(exc).__name__}: {exc}"
        if called:
            return _refusal(called, "it asks the engine for the gradient; the exercise is to write the "
                                    "formula yourself.")
        kept = _kept(out, dtype, given, [x, y, w, b])
        if kept is not None:
            return kept
        x, y, w, b = (a.astype(np.float64) for a in (x, y, w, b))
        got = _arrays(out, 2, "dL/dw, dL/db")
        if isinstance(got, str):
            return got
        e = x @ w + b - y
        if got[1].shape == (n, 1) or got[1].shape == (n,):
            return ("dL/db has one entry per example: b was broadcast over the rows, so its gradient is "
                    "summed over that axis (it has b's shape).")
        if got[0].shape == (1, k) and k > 1:
            return f"dL/dw has shape {got[0].shape}, the transpose of w's {w.shape}."
        if got[0].shape != w.shape or got[1].size != 1:
            return f"the gradients must have the shapes of w {w.shape} and b {b.shape}."
        got[1] = got[1].reshape(b.shape)
        if _close_at(got, want, dtype):
            continue
        if dtype == np.float64 and _close_at(got, want, np.dtype(np.float32)):  # no variant is that close
            return _FLOAT32_ARITHMETIC
        problem = _first_match(got, {
            "it misses the factor 2 that the square's derivative brings.": [x.T @ e / n, e.sum(0) / n],
            "it sums over the examples where the loss takes the mean (a factor 1/n).": [
                2 * x.T @ e, 2 * e.sum(0)],
            "the sign is flipped: the error is prediction minus target.": [
                -2 * x.T @ e / n, -2 * e.sum(0) / n],
        }, dtype)
        return problem or f"the gradients are not right for x of shape {(n, k)}."
    return None


def _mse_grads(x: np.ndarray, y: np.ndarray, w: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The course's answer: dL/dw and dL/db of L = mean((x @ w + b − y)²)."""
    e = x @ w + b - y
    return 2 * x.T @ e / len(x), 2 * e.sum(axis=0) / len(x)


_MSE_WRONG = (
    (lambda x, y, w, b: tuple(g / 2 for g in _mse_grads(x, y, w, b)), "factor 2"),
    (lambda x, y, w, b: tuple(g * len(x) for g in _mse_grads(x, y, w, b)), "factor 1/n"),
    (lambda x, y, w, b: (_mse_grads(x, y, w, b)[0], 2 * (x @ w + b - y) / len(x)), "summed over that axis"),
    (lambda x, y, w, b: (_mse_grads(x, y, w, b)[0].T, _mse_grads(x, y, w, b)[1]), "transpose"),
    (lambda x, y, w, b: tuple(-g for g in _mse_grads(x, y, w, b)), "sign"),
)

register("02", "mse_grads",
         idea=("Differentiate the loss by the error first, then follow the chain rule back to each "
               "parameter; a parameter that was broadcast collects the gradient of every place it was "
               "used."),
         function="mse_grads", judge=_judge_mse_grads, reference=_mse_grads,
         wrong=_MSE_WRONG, hint=(
    "Write e = x @ w + b − y; differentiate mean(e²) by e first, then follow the chain rule through "
    "x @ w (mind the shapes) and through the broadcast of b over the rows."),
    praise="That is what the engine's tape computed for you in this lesson.")


# ---- lesson 04: Momentum and Adam, step by step, slots included ----------------------------------------


def _run_optimizer(answer: Callable, make: Callable, slots: tuple[str, ...], call: Callable,
                   variants: Callable, shapes=((3, 2), (), (4,))) -> str | None:
    """Run ``eg.optimizers`` and the learner's update side by side for 5 steps of random gradients,
    in float64 for the first shapes and float32 for the last."""
    rng = np.random.default_rng(_SEED)  # fixed: the same answer gets the same verdict on every run
    for shape, dtype in zip(shapes, (np.float64, np.float64, np.float32)):
        dtype = np.dtype(dtype)
        w0 = rng.normal(size=shape).astype(dtype)
        var, opt = eg.Variable(w0), make()
        w, state = w0.copy(), [np.zeros(shape, dtype) for _ in slots]
        for step in range(1, 6):
            g = rng.normal(size=shape).astype(dtype)
            opt.apply_gradients([(eg.constant(g), var)])
            want = [var.numpy().astype(np.float64)] + [opt.get_slot(var, s).numpy().astype(np.float64)
                                                       for s in slots]
            given = [w.copy(), g.copy()] + [s.copy() for s in state]
            with _calls_to("apply_gradients", "momentum_update", "adam_update") as called:
                try:
                    out = call(answer, given[0], given[1], given[2:], step)
                except Exception as exc:  # noqa: BLE001
                    return f"at step {step} (shape {shape}) calling it raised {type(exc).__name__}: {exc}"
            if called:
                return _refusal(called, "it runs the engine's optimizers; the exercise is to write the "
                                        "update yourself, with NumPy.")
            kept = _kept(out, dtype, given, [w, g, *state])
            if kept is not None:
                return kept
            got = _arrays(out, 1 + len(slots), "the new variable, then the new slots")
            if isinstance(got, str):
                return got
            if any(gv.shape != wv.shape for gv, wv in zip(got, want)):
                return f"at step {step} a result has the wrong shape: each has the variable's, {shape}."
            if _close_at(got, want, dtype):
                w, state = np.asarray(out[0], dtype), [np.asarray(part, dtype) for part in out[1:]]
                continue
            w, g, state = w.astype(np.float64), g.astype(np.float64), [s.astype(np.float64) for s in state]
            problem = _first_match(got, variants(w, g, state, step), dtype)
            if problem is None and dtype == np.float64 and _close_at(got, want, np.dtype(np.float32)):
                return _FLOAT32_ARITHMETIC
            if problem is None:
                which = "the variable" if not np.allclose(got[0], want[0], rtol=1e-6) else "a slot"
                problem = f"at step {step} {which} is not what eg.optimizers computes."
            return problem
    return None


LR, MU = 0.1, 0.9


def _momentum_variants(w, g, state, step):
    (s,) = state
    a = MU * s + g
    return {
        "the variable moved with the old slot: update the slot first, then step the variable with the "
        "new slot.": [w - LR * s, a],
        "the step uses the gradient alone: the variable moves by the slot (the running sum of "
        "gradients).": [w - LR * g, a],
        "the variable moved uphill: subtract the step.": [w + LR * a, a],
        "the slot forgets its old value: it is momentum times the old slot plus the gradient.": [
            w - LR * g, g],
    }


def _judge_momentum(answer: Any) -> str | None:
    return _run_optimizer(answer, lambda: eg.optimizers.Momentum(LR, momentum=MU), ("momentum",),
                         lambda f, w, g, st, step: f(w, g, st[0], LR, MU), _momentum_variants)


B1, B2, EPS, LR_ADAM = 0.9, 0.999, 1e-7, 0.01


def _adam_variants(w, g, state, step):
    m0, v0 = state
    m, v = B1 * m0 + (1 - B1) * g, B2 * v0 + (1 - B2) * g * g
    lr_t = LR_ADAM * math.sqrt(1 - B2 ** step) / (1 - B1 ** step)
    return {
        "the bias correction is missing: early on m and v are too small, and Adam divides by (1 − β^t).": [
            w - LR_ADAM * m / (np.sqrt(v) + EPS), m, v],
        "the variable moved with the old slots: update m and v first, then the variable.": [
            w - lr_t * m0 / (np.sqrt(v0) + EPS), m, v],
        "ε is inside the square root; eg.optimizers.Adam (as TensorFlow) adds it after: √v + ε.": [
            w - lr_t * m / np.sqrt(v + EPS), m, v],
        "v is a running mean of the squared gradient, g·g, not of g.": [None, m, B2 * v0 + (1 - B2) * g],
        _OFF_BY_ONE: [w - _lr_t(step + 1) * m / (np.sqrt(v) + EPS), m, v],
    } | ({_OFF_BY_ONE + " ": [w - _lr_t(step - 1) * m / (np.sqrt(v) + EPS), m, v]} if step > 1 else {})


_OFF_BY_ONE = ("the bias correction is off by one step: at the update number t (1 for the first update) "
               "both corrections use the betas to the power t.")


def _lr_t(step: int) -> float:
    return LR_ADAM * math.sqrt(1 - B2 ** step) / (1 - B1 ** step)


def _judge_adam(answer: Any) -> str | None:
    return _run_optimizer(answer, lambda: eg.optimizers.Adam(LR_ADAM, beta1=B1, beta2=B2, epsilon=EPS),
                         ("m", "v"),
                         lambda f, w, g, st, step: f(w, g, st[0], st[1], step, LR_ADAM, B1, B2, EPS),
                         _adam_variants)


def _momentum_update(w: np.ndarray, g: np.ndarray, slot: np.ndarray, learning_rate: float,
                     momentum: float) -> tuple[np.ndarray, np.ndarray]:
    """The course's answer: one step of Momentum, slot first."""
    slot = momentum * slot + g
    return w - learning_rate * slot, slot


def _adam_update(w: np.ndarray, g: np.ndarray, m: np.ndarray, v: np.ndarray, step: int, learning_rate: float,
                 beta1: float, beta2: float, epsilon: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The course's answer: one step of Adam (TensorFlow's form: bias correction in the rate)."""
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    lr = learning_rate * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
    return w - lr * m / (np.sqrt(v) + epsilon), m, v


def _adam_no_correction(w, g, m, v, step, learning_rate, beta1, beta2, epsilon):
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    return w - learning_rate * m / (np.sqrt(v) + epsilon), m, v


def _adam_late_slots(w, g, m, v, step, learning_rate, beta1, beta2, epsilon):
    lr = learning_rate * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
    return w - lr * m / (np.sqrt(v) + epsilon), beta1 * m + (1 - beta1) * g, beta2 * v + (1 - beta2) * g * g


def _adam_eps_inside(w, g, m, v, step, learning_rate, beta1, beta2, epsilon):
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    lr = learning_rate * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
    return w - lr * m / np.sqrt(v + epsilon), m, v


register("04", "momentum_update",
         idea=("Momentum keeps a decaying running sum of the gradients, and the variable moves along "
               "that sum, not along the gradient alone."),
         function="momentum_update", judge=_judge_momentum,
         reference=_momentum_update, wrong=(
             (lambda w, g, s, lr, mu: (w - lr * s, mu * s + g), "old slot"),
            (lambda w, g, s, lr, mu: (w - lr * g, mu * s + g), "gradient alone"),
            (lambda w, g, s, lr, mu: (w + lr * (mu * s + g), mu * s + g), "uphill"),
            (lambda w, g, s, lr, mu: (w - lr * g, g), "forgets its old value"),
            (lambda w, g, s, lr, mu: (w - lr * (mu * s + g),), "return a tuple of 2")), hint=(
    "The slot is a running sum of the gradients, decayed by the momentum at every step, and the "
    "variable steps along the slot (the table of update rules above). Return (new_w, new_slot)."),
    praise="Step by step, slot included, it is eg.optimizers.Momentum.")
register("04", "adam_update",
         idea=("Adam keeps running means of the gradient and of its square, steps by their ratio, and "
               "corrects for the zeros both means start from."),
         function="adam_update", judge=_judge_adam, reference=_adam_update,
         wrong=((_adam_no_correction, "bias correction"), (_adam_late_slots, "old slots"),
                (_adam_eps_inside, "inside the square root"),
                (lambda w, g, m, v, t, lr, b1, b2, eps: _adam_update(w, g, m, v, t + 1, lr, b1, b2, eps),
                 "off by one step")), hint=(
    "m and v are running means of g and g·g (β₁, β₂); the step uses m / (√v + ε), with the learning "
    "rate corrected for the zeros m and v start from at step t = 1, 2, ... Return (new_w, new_m, new_v)."),
    praise="Step by step, slots included, it is eg.optimizers.Adam.")
