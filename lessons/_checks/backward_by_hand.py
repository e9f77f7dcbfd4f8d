"""Lesson 07's backward passes by hand (cs231n-style): the softmax-cross-entropy backward and max pooling's
VJP, each a NumPy function the check compares with the engine's gradient on random batches.

* ``xent_backward(logits, labels)`` → ∂ mean(softmax_cross_entropy) / ∂ logits = (softmax − labels) / B.
  Hints name a missing 1/B, a flipped sign, a softmax that is not normalised and one that overflows.
* ``max_pool_vjp(g, x, k)`` → ∂x for ``max_pool2d(x, k, k, "VALID")`` with upstream ``g``: each window's
  ``g`` goes to its maximum; with ties to the *first* maximum in row-major order, as
  ``engine/nn/pooling.py`` documents (TensorFlow's rule). Hints name ties given to every maximum or
  split between them, the last maximum, an average pool's spreading, and a missing ``g``.

The course's answers are the ``reference=`` of each registration.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import engine as eg

from .forbidden import _calls_to
from .plain import _is_tensor
from .registry import register

#: what a backward by hand must not call (seen by the identity of their code, however reached)
_ENGINE = ("softmax_cross_entropy", "sparse_softmax_cross_entropy", "walk")
ASKS_THE_ENGINE = ("it asks the engine for the gradient (a tape, or the engine's cross-entropy): write the "
                   "backward pass yourself, with NumPy.")


def _xent_reference(logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(axis=1, keepdims=True)
    p = np.exp(shifted)
    p /= p.sum(axis=1, keepdims=True)
    return (p - labels) / len(logits)


def _windows(x: np.ndarray, k: int) -> np.ndarray:
    """(N, H/k, W/k, C, k·k): each window's pixels in row-major order."""
    n, h, w, c = x.shape
    tiles = x.reshape(n, h // k, k, w // k, k, c).transpose(0, 1, 3, 5, 2, 4)
    return tiles.reshape(n, h // k, w // k, c, k * k)


def _unwindows(t: np.ndarray, k: int) -> np.ndarray:
    n, oh, ow, c, _ = t.shape
    return t.reshape(n, oh, ow, c, k, k).transpose(0, 1, 4, 2, 5, 3).reshape(n, oh * k, ow * k, c)


def _max_pool_reference(g: np.ndarray, x: np.ndarray, k: int) -> np.ndarray:
    # self-contained (the graded assignment copies this body alone into the learner's cell)
    n, h, w, c = x.shape
    windows = x.reshape(n, h // k, k, w // k, k, c).transpose(0, 1, 3, 5, 2, 4).reshape(
        n, h // k, w // k, c, k * k)  # each window's pixels in row-major order
    first = np.argmax(windows, axis=-1)  # argmax returns the first of tied maxima
    hit = np.arange(k * k) == first[..., None]
    dx = (hit * g[..., None]).reshape(n, h // k, w // k, c, k, k)
    return dx.transpose(0, 1, 4, 2, 5, 3).reshape(n, h, w, c)


def _array_answer(out: Any, shape: tuple, what: str) -> np.ndarray | str:
    if _is_tensor(out):
        return f"{what} returns an engine Tensor; compute it with NumPy and return the array."
    if type(out) is not np.ndarray:
        return f"{what} returns {type(out).__name__}; return a NumPy array."
    if out.shape != shape:
        return f"{what} returns shape {out.shape}; the gradient has the shape of its input, {shape}."
    return out.astype(np.float64)


def _judge_xent(answer: Callable) -> str | None:
    rng = np.random.default_rng()
    for batch, classes, shift in ((4, 3, 0.0), (16, 10, 0.0), (5, 10, 1000.0)):
        logits = rng.normal(size=(batch, classes)) * 3.0 + shift  # exp(1000) overflows: every time
        labels = np.eye(classes)[rng.integers(classes, size=batch)]
        z, y = eg.constant(logits), eg.constant(labels)
        with eg.GradientTape() as tape:
            tape.watch(z)
            loss = eg.mean(eg.nn.softmax_cross_entropy(y, z))
        want = tape.gradient(loss, z).numpy()
        where = f"for a batch of {batch} with {classes} classes" + (
            " and large logits" if shift else "")
        with np.errstate(all="ignore"), _calls_to(*_ENGINE) as called:
            out = answer(logits.copy(), labels.copy())
        if called:
            return ASKS_THE_ENGINE
        got = _array_answer(out, want.shape, "xent_backward")
        if isinstance(got, str):
            return f"{where} {got}"
        if np.allclose(got, want, rtol=1e-6, atol=1e-9):
            continue
        if not np.all(np.isfinite(got)):
            return (f"{where} it gives inf or NaN: exp of a large logit overflows. Subtract each row's "
                    "maximum from the logits first (softmax does not change).")
        if np.allclose(got, want * batch, rtol=1e-6, atol=1e-9):
            return f"{where} it is B times too large: the loss is the mean over the batch, so divide by B."
        if np.allclose(got, -want, rtol=1e-6, atol=1e-9) or np.allclose(got, -want * batch, rtol=1e-6):
            return f"{where} the sign is flipped: raising the true class's logit lowers the loss."
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        if np.allclose(got, (e - labels) / batch) or np.allclose(got, e - labels):
            return f"{where} the softmax is not normalised: divide each row's exponentials by their sum."
        return f"{where} it is not the engine's gradient."
    return None


def _judge_max_pool(answer: Callable) -> str | None:
    rng = np.random.default_rng()
    for shape, k, ties in (((2, 4, 4, 3), 2, False), ((1, 6, 6, 2), 3, False), ((2, 4, 4, 2), 2, True)):
        x = rng.integers(0, 2, size=shape).astype(np.float64) if ties else rng.normal(size=shape)
        xt = eg.constant(x)
        with eg.GradientTape() as tape:
            tape.watch(xt)
            y = eg.nn.max_pool2d(xt, k, k, "VALID")
        g = rng.normal(size=y.shape)
        want = tape.gradient(y, xt, output_gradients=eg.constant(g)).numpy()
        where = f"for x of shape {shape} and {k}x{k} windows" + (" with tied maxima" if ties else "")
        with _calls_to(*_ENGINE) as called:
            out = answer(g.copy(), x.copy(), k)
        if called:
            return ASKS_THE_ENGINE
        got = _array_answer(out, x.shape, "max_pool_vjp")
        if isinstance(got, str):
            return f"{where} {got}"
        if np.allclose(got, want, rtol=1e-6, atol=1e-9):
            continue
        win = _windows(x, k)
        is_max = win == win.max(axis=-1, keepdims=True)
        last = (k * k - 1 - np.argmax(win[..., ::-1], axis=-1))[..., None] == np.arange(k * k)
        variants = {
            "ties: it gives g to every tied maximum; the engine gives it to the first one in row-major order "
            "only (TensorFlow's rule, engine/nn/pooling.py).": _unwindows(is_max * g[..., None], k),
            "ties: it splits g between the tied maxima; the engine gives it all to the first one in "
            "row-major order (TensorFlow's rule, engine/nn/pooling.py).":
                _unwindows(is_max * g[..., None] / is_max.sum(axis=-1, keepdims=True), k),
            "ties: it gives g to the last tied maximum; the engine picks the first one in row-major order.":
                _unwindows(last * g[..., None], k),
            "it spreads g over the whole window, as average pooling would; max pooling sends it to the "
            "maximum only.": _unwindows(np.broadcast_to(g[..., None] / (k * k), win.shape), k),
            "it leaves out the upstream gradient g: the maximum receives g, not 1.":
                _max_pool_reference(np.ones_like(g), x, k),
        }
        for what, wrong in variants.items():
            if np.allclose(got, wrong, rtol=1e-6, atol=1e-9):
                return f"{where} {what}"
        return f"{where} it is not the engine's gradient."
    return None


def _xent_sum(logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """A wrong answer: the gradient of the summed loss (no 1/B)."""
    return _xent_reference(logits, labels) * len(logits)


def _xent_unshifted(logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """A wrong answer: the softmax without subtracting the row maximum (overflows on large logits)."""
    p = np.exp(logits)
    return (p / p.sum(axis=1, keepdims=True) - labels) / len(logits)


def _xent_flipped(logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """A wrong answer: labels − softmax."""
    return -_xent_reference(logits, labels)


def _pool_every_max(g: np.ndarray, x: np.ndarray, k: int) -> np.ndarray:
    """A wrong answer: g to every tied maximum."""
    win = _windows(x, k)
    return _unwindows((win == win.max(axis=-1, keepdims=True)) * g[..., None], k)


def _pool_average(g: np.ndarray, x: np.ndarray, k: int) -> np.ndarray:
    """A wrong answer: average pooling's VJP."""
    return _unwindows(np.broadcast_to(g[..., None] / (k * k), _windows(x, k).shape), k)


def _pool_without_g(g: np.ndarray, x: np.ndarray, k: int) -> np.ndarray:
    """A wrong answer: 1 at each maximum instead of g."""
    return _max_pool_reference(np.ones_like(g), x, k)


register("07", "xent_backward", function="xent_backward", judge=_judge_xent, reference=_xent_reference,
         wrong=((_xent_sum, "B times too large"), (_xent_unshifted, "overflows"),
                (_xent_flipped, "sign is flipped")),
         idea=("The loss of one example is minus the log of its softmax probability for the true class; "
               "its derivative with respect to each logit is the probability the model gives that class "
               "minus the label. The batch's loss is a mean."),
         hint=("For one example, ∂loss/∂logits = softmax(logits) − labels; the loss is the mean over B "
               "examples. Compute the softmax row by row (subtract the row's max before exp)."))
register("07", "max_pool_vjp", function="max_pool_vjp", judge=_judge_max_pool,
         reference=_max_pool_reference,
         wrong=((_pool_every_max, "every tied maximum"), (_pool_average, "average pooling"),
                (_pool_without_g, "leaves out the upstream gradient")),
         idea=("Each output of max pooling copies one input: its window's largest. Only that input moved "
               "the output, so only it receives the output's upstream gradient; the rest of the window "
               "gets zero. When several inputs tie for the largest, the engine picks one of them."),
         hint=(
             "Cut x into its k×k windows (reshape to (N, H/k, k, W/k, k, C)); in each window only the "
             "maximum "
             "moved the output, so it receives the window's g and the others 0. With ties, the first "
             "maximum in row-major order (np.argmax returns the first)."))
