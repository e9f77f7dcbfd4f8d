"""Making exercises of lessons 05 to 07 (CURRICULUM.md, "Learning by making"): the pieces of a training
step, written by the learner. Clipping by the global norm (05), accumulating micro-batch gradients
(06), and the training step itself (07). Each check runs the learner's code beside the engine's own
(`eg.clip_by_global_norm`, `eg.optimizers.Accumulator`, `eg.training.train_step`) on random inputs,
names the kind of mistake by comparing with typical wrong variants, and refuses an answer that calls
the engine's function (seen by the identity of its code, however it is reached).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import engine as eg
from engine import clipping as _clipping
from engine import training as _training
from engine.nn import losses as _losses
from engine.optimizers import accumulation as _accumulation

from .forbidden import _calls_to, _refusal
from .plain import _is_tensor, _plain_numbers
from .registry import register
from .through import flows_back, watching

#: The draws of the random inputs: fixed, so that a verdict never depends on luck.
_SEED = 20260

#: The engine's own functions, captured at import (a cell may rebind eg.clip_by_global_norm).
_engine_clip = _clipping.clip_by_global_norm
_engine_accumulator = _accumulation.Accumulator
_engine_train_step = _training.train_step
_engine_xent = _losses.sparse_softmax_cross_entropy


def _close(a: np.ndarray, b: np.ndarray, rtol: float = 1e-6, atol: float = 1e-9) -> bool:
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=rtol, atol=atol))


def _all_close(got: list, want: list, rtol: float = 1e-6, atol: float = 1e-9) -> bool:
    """Lists of arrays (or None) agree entry by entry, None where None."""
    return all((g is None) == (w is None) and (g is None or _close(g, w, rtol, atol))
               for g, w in zip(got, want))


# ---- lesson 05: clipping by the global norm, by hand ---------------------------------------------------

_LISTS = (((3,), None, (2, 2), ()), ((4,), (2, 3)), (None, (5,), None))


def _judge_global_clip(answer: Any) -> str | None:
    rng = np.random.default_rng(_SEED)  # fixed: the same answer gets the same verdict on every run
    for shapes in _LISTS:
        arrays = [None if s is None else rng.normal(size=s) for s in shapes]
        total = float(np.sqrt(sum(np.sum(a * a) for a in arrays if a is not None)))
        for c in (0.5 * total, 2.0 * total):  # clipped, and left alone
            tensors = [None if a is None else eg.constant(a) for a in arrays]
            want_list, want_norm = _engine_clip(tensors, c)
            want = [None if t is None else t.numpy() for t in want_list]
            problem = _one_clip(answer, arrays, c, want, float(want_norm.numpy()))
            if problem is not None:
                return problem
    return None


def _one_clip(answer: Any, arrays: list, c: float, want: list, want_norm: float) -> str | None:
    where = f"(for {len(arrays)} gradients, {sum(a is None for a in arrays)} of them None)"
    inputs = [None if a is None else eg.constant(a) for a in arrays]
    tape = watching(inputs)
    with _calls_to("clip_by_global_norm", "clip_by_norm", "global_norm") as called:
        try:
            out = answer(list(inputs), c)
        except Exception as exc:  # noqa: BLE001
            return (f"calling it raised {type(exc).__name__}: {exc} {where}. Does it let a None gradient "
                    "through?")
        finally:
            tape.__exit__(None, None, None)
    if called:
        return _refusal(called, "the exercise is to build the clip yourself, from the global norm.")
    if type(out) not in (tuple, list) or len(out) != 2:
        return "return a tuple of 2: (the list of clipped gradients, the global norm)."
    clipped, norm = out
    if type(clipped) not in (list, tuple) or len(clipped) != len(arrays):
        return f"the clipped gradients should be a plain list with one entry per gradient {where}."
    got = []
    for a, t in zip(arrays, clipped):
        if a is None:
            if t is not None:
                return "a None gradient should stay None in the clipped list (nothing to clip)."
            got.append(None)
            continue
        if not _is_tensor(t):
            return ("return engine tensors, computed with engine operations (so the clip stays "
                    "differentiable).")
        value = _plain_numbers(t, "a clipped gradient ")
        if isinstance(value, str):
            return value
        if value.shape != a.shape:
            return f"a clipped gradient has shape {value.shape}: it keeps its gradient's shape, {a.shape}."
        got.append(value.astype(np.float64))
    n = _plain_numbers(norm, "the norm ")
    if isinstance(n, str):
        return n
    if n.size != 1:
        return (f"the norm has {n.size} entries: return one global norm, of all the gradients together "
                "(not one per gradient).")
    squares = want_norm ** 2
    n = float(n.reshape(()))
    if not np.isclose(n, want_norm, rtol=1e-6) and np.isclose(n, squares, rtol=1e-6):
        return "the norm is the sum of the squares: the square root is missing."
    if not np.isclose(n, want_norm, rtol=1e-6):
        return ("the global norm is not right: it is the square root of the sum of the squares of all the "
                "entries of all the gradients.")
    if _all_close(got, want):
        return flows_back(tape, list(clipped), inputs)
    per_tensor = [None if a is None else a * c / max(float(np.sqrt(np.sum(a * a))), c) for a in arrays]
    if _all_close(got, per_tensor):
        return ("each gradient was clipped by its own norm: scale them all by one factor, from the global "
                "norm (that keeps the direction of the whole gradient).")
    if c > want_norm and _all_close(got, [None if a is None else a * c / want_norm for a in arrays]):
        return ("gradients whose global norm is below clip_norm were scaled up: the factor is "
                "clip_norm / max(global norm, clip_norm), so they stay as they are.")
    if c < want_norm and _all_close(got, [None if a is None else a * c / squares for a in arrays]):
        return "the factor divides by the sum of the squares: the square root is missing."
    return f"the clipped gradients are not what eg.clip_by_global_norm returns {where}."


def _clip_by_global_norm(grads: list, clip_norm: float) -> tuple[list, Any]:
    """The course's answer to lesson 05's global_clip_by_hand."""
    norm = eg.sqrt(sum(eg.sum(g * g) for g in grads if g is not None))
    scale = clip_norm / eg.maximum(norm, clip_norm)
    return [None if g is None else g * scale for g in grads], norm


def _clip_per_tensor(grads: list, clip_norm: float) -> tuple[list, Any]:
    _, norm = _clip_by_global_norm(grads, clip_norm)
    return [None if g is None else g * (clip_norm / eg.maximum(eg.sqrt(eg.sum(g * g)), clip_norm))
            for g in grads], norm


def _clip_no_max(grads: list, clip_norm: float) -> tuple[list, Any]:
    norm = eg.sqrt(sum(eg.sum(g * g) for g in grads if g is not None))
    return [None if g is None else g * (clip_norm / norm) for g in grads], norm


def _clip_no_sqrt(grads: list, clip_norm: float) -> tuple[list, Any]:
    norm = sum(eg.sum(g * g) for g in grads if g is not None)
    return [None if g is None else g * (clip_norm / eg.maximum(norm, clip_norm)) for g in grads], norm


register("05", "global_clip_by_hand",
         idea=("One norm for all the gradients together, and one factor for all of them, which leaves "
               "them alone when they are short enough; a missing gradient stays missing."),
         function="clip_by_global_norm_by_hand", judge=_judge_global_clip,
         reference=_clip_by_global_norm,
         wrong=((_clip_no_max, "scaled up"), (_clip_per_tensor, "its own norm"),
                (_clip_no_sqrt, "square root is missing"),
                (lambda grads, c: ([g for g in grads if g is not None], 1.0), "one entry per gradient")),
         hint=("The global norm is one number for all the gradients: the square root of the sum of every "
               "entry squared (skip the None ones). Every gradient is multiplied by the same factor, which "
               "leaves them unchanged when the norm is at most clip_norm. Return (clipped list, norm)."),
         praise="Same gradients, same norm as eg.clip_by_global_norm, None entries included.")


# ---- lesson 06: a gradient accumulator ---------------------------------------------------------------

_SHAPES = ((3,), (2, 2), ())
# Which gradients are None, micro-batch by micro-batch, in each of the two rounds (reset in between):
# in round 1 the second variable misses one micro-batch, in round 2 it gets none at all.
_ROUNDS = (((False, False, False), (False, True, False), (False, False, True)),
          ((False, True, False), (False, True, False)))


_ADDS_INTO_CALLERS = ("it adds into the arrays add() was given (the first gradient kept as the sum, then += "
                      "onto it): the caller's gradients changed. Start each sum from a copy.")


def _judge_accumulator(answer: Any) -> str | None:
    rng = np.random.default_rng(_SEED)  # fixed: the same answer gets the same verdict on every run
    variables = [eg.Variable(np.zeros(s)) for s in _SHAPES]
    reference = _engine_accumulator()
    with _calls_to("accumulator_add") as called:
        try:
            acc = answer()
        except Exception as exc:  # noqa: BLE001
            return f"creating it, {type(answer).__name__}(), raised {type(exc).__name__}: {exc}."
    history: list[list[list]] = []  # every round's gradients, for the variants
    handed: list[tuple[np.ndarray, np.ndarray]] = []  # each array given to add, and what it held
    for r, pattern in enumerate(_ROUNDS):
        rounds = []
        for nones in pattern:
            grads = [None if none else rng.normal(size=s) for none, s in zip(nones, _SHAPES)]
            rounds.append(grads)
            reference.add([(None if g is None else eg.constant(g), v) for g, v in zip(grads, variables)])
            passed = [None if g is None else g.copy() for g in grads]
            handed.extend((p, g) for p, g in zip(passed, grads) if g is not None)
            with _calls_to("accumulator_add") as called:
                try:
                    acc.add(passed)
                except Exception as exc:  # noqa: BLE001
                    more = " Does add let a None gradient through?" if any(nones) else ""
                    return f"add(grads) raised {type(exc).__name__}: {exc}.{more}"
            if called:
                return _refusal(called, "the exercise is to write the accumulator yourself.")
            if any(not np.array_equal(p, g) for p, g in handed):
                return _ADDS_INTO_CALLERS
        history.append(rounds)
        try:
            out = acc.mean()
        except Exception as exc:  # noqa: BLE001
            return f"mean() raised {type(exc).__name__}: {exc}."
        if any(not np.array_equal(p, g) for p, g in handed):
            return _ADDS_INTO_CALLERS
        want = [None if (t := reference.gradient(v)) is None else t.numpy() for v in variables]
        problem = _compare_means(out, want, history, r)
        if problem is not None:
            return problem
        try:
            acc.reset()
        except Exception as exc:  # noqa: BLE001
            return f"reset() raised {type(exc).__name__}: {exc}."
        reference.reset()
    return None


def _sums(rounds: list[list]) -> list:
    per_variable = list(zip(*rounds))
    return [None if all(g is None for g in gs) else sum(g for g in gs if g is not None)
            for gs in per_variable]


def _compare_means(out: Any, want: list, history: list, r: int) -> str | None:
    if type(out) not in (list, tuple) or len(out) != len(want):
        return f"mean() should return a plain list with one entry per variable ({len(want)} here)."
    got = []
    for o in out:
        if o is None:
            got.append(None)
            continue
        value = _plain_numbers(o, "an entry of mean() ")
        if isinstance(value, str):
            return value
        got.append(value.astype(np.float64))
    if _all_close(got, want):
        return None
    rounds, count = history[-1], len(history[-1])
    sums = _sums(rounds)
    everything = [g for past in history for g in past]
    old_sums, total = _sums(everything), len(everything)
    if r > 0 and any(_all_close(got, [None if s is None else s / k for s in sums_])
                     for sums_, k in ((old_sums, total), (old_sums, count), (sums, total))):
        return ("after reset() the old micro-batches still count: reset() should forget the sums and "
                "the count.")
    if _all_close(got, sums):
        return "mean() returns the sums: divide by the number of add calls."
    seen = [sum(g is not None for g in gs) for gs in zip(*rounds)]
    if _all_close(got, [None if s is None else s / k for s, k in zip(sums, seen)]):
        return ("it divides by the number of gradients that were not None: a None gradient counts as "
                "zero for its micro-batch, so the mean divides by the number of add calls.")
    if any(w is None and g is not None for w, g in zip(want, got)):
        return ("a variable that only got None gradients has no mean: mean() gives None for it, as "
                "eg.optimizers.Accumulator does.")
    if any(w is not None and g is None for w, g in zip(want, got)):
        return "mean() gives None for a variable that got gradients."
    if any(g is not None and g.shape != w.shape for w, g in zip(want, got)):
        return "an entry of mean() does not have its variable's shape."
    return f"the means after {count} micro-batches are not what eg.optimizers.Accumulator gives."


class _GradientAccumulator:
    """The course's answer to lesson 06's accumulator."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.sums: list | None = None
        self.count = 0

    def add(self, grads: list) -> None:
        if self.sums is None:
            self.sums = [None] * len(grads)
        self.sums = [s if g is None else (g.copy() if s is None else s + g) for s, g in zip(self.sums, grads)]
        self.count += 1

    def mean(self) -> list:
        return [None if s is None else s / self.count for s in self.sums or []]


class _SumAccumulator(_GradientAccumulator):
    def mean(self) -> list:
        return list(self.sums or [])


class _NeverReset(_GradientAccumulator):
    def reset(self) -> None:
        if not hasattr(self, "sums"):
            super().reset()


class _CrashesOnNone(_GradientAccumulator):
    def add(self, grads: list) -> None:
        if self.sums is None:
            self.sums = [np.zeros_like(g) for g in grads]
        self.sums = [s + g for s, g in zip(self.sums, grads)]
        self.count += 1


class _CountsGradients(_GradientAccumulator):
    def reset(self) -> None:
        super().reset()
        self.seen: list | None = None

    def add(self, grads: list) -> None:
        super().add(grads)
        self.seen = [(k if self.seen else 0) + (g is not None) for k, g in zip(self.seen or grads, grads)]

    def mean(self) -> list:
        return [None if s is None else s / k for s, k in zip(self.sums or [], self.seen or [])]


register("06", "accumulator",
         idea=("An accumulator remembers a running sum per variable and how many micro-batches it saw; a "
               "missing gradient adds nothing but its micro-batch still counts."),
         function="GradientAccumulator", judge=_judge_accumulator,
         reference=_GradientAccumulator,
         wrong=((_SumAccumulator, "returns the sums"), (_NeverReset, "reset()"),
                (_CrashesOnNone, "None gradient through"), (_CountsGradients, "counts as zero")), hint=(
    "Keep one running sum per variable (None until its first gradient) and count the add calls; a None "
    "gradient adds nothing but its micro-batch still counts. mean() divides the sums by that count; "
    "reset() starts again from nothing."),
    praise="Micro-batch for micro-batch, it is eg.optimizers.Accumulator.")


# ---- lesson 07: the training step ----------------------------------------------------------------------

_LR, _STEPS, _BATCH = 0.5, 3, 12


def _small_model(x: np.ndarray) -> Any:
    # seeded layers: the check draws nothing from the global generator (a lesson's later cells keep theirs)
    model = eg.layers.Sequential([eg.layers.Dense(8, activation="relu", seed=1),
                                 eg.layers.Dropout(0.5, seed=3), eg.layers.Dense(4, seed=2)])
    model(x[:1])  # builds the layers
    return model


def _weights(model: Any) -> list[np.ndarray]:
    return [v.numpy().astype(np.float64) for v in model.trainable_variables]


def _judge_train_step(answer: Any) -> str | None:
    rng = np.random.default_rng(_SEED)  # fixed: the same answer gets the same verdict on every run
    x = rng.normal(size=(_BATCH, 6)).astype(np.float32)
    y = rng.integers(0, 4, size=_BATCH)
    reference, mine = _small_model(x), _small_model(x)
    for r, m in zip(reference.trainable_variables, mine.trainable_variables):
        m.assign(r.numpy())
    ref_opt, my_opt = eg.optimizers.SGD(_LR), eg.optimizers.SGD(_LR)
    for step in range(1, _STEPS + 1):
        before = _weights(reference)
        eval_loss = float(eg.mean(_engine_xent(y, reference(x, training=False))).numpy())
        want_loss = float(_engine_train_step(reference, ref_opt, x, y)[0].numpy())
        want = _weights(reference)
        with _calls_to("train_step") as called:
            try:
                out = answer(mine, my_opt, x, y)
            except Exception as exc:  # noqa: BLE001
                more = (" Is the loss computed inside the `with eg.GradientTape() as tape:` block? A tape "
                        "only records what runs inside it." if "no gradients" in str(exc) else "")
                return f"at step {step} calling it raised {type(exc).__name__}: {exc}{more}"
        if called:
            return _refusal(called, "the exercise is to write the tape, the loss, the gradients and the "
                                    "update yourself.")
        loss = _plain_numbers(out, "the loss it returns ")
        if isinstance(loss, str):
            return loss + " Return the mean loss of the batch."
        if loss.size != 1:
            return f"it returns {loss.size} numbers: return the batch's mean loss, one number."
        loss = float(loss.reshape(()))
        got = _weights(mine)
        if all(_close(g, b, rtol=0, atol=0) for g, b in zip(got, before)):
            return ("the weights did not change: after computing the gradients, apply them with "
                    "optimizer.apply_gradients.")
        if not np.isclose(loss, want_loss, rtol=1e-5):
            if np.isclose(loss, want_loss * _BATCH, rtol=1e-5):
                return ("the loss is the sum over the batch: take its mean (eg.mean), so that the step does "
                        "not grow with the batch size.")
            if np.isclose(loss, eval_loss, rtol=1e-5):
                return ("the model ran with training=False, so dropout was off: a training step calls "
                        "model(x, training=True).")
            return f"at step {step} the loss is not the mean sparse softmax cross-entropy of the batch."
        if not all(_close(g, w, rtol=1e-5, atol=1e-6) for g, w in zip(got, want)):
            summed = [b + _BATCH * (w - b) for b, w in zip(before, want)]
            if all(_close(g, s, rtol=1e-4, atol=1e-5) for g, s in zip(got, summed)):
                return ("the gradients are those of the summed loss: differentiate the mean loss (the one "
                        "you return).")
            return f"at step {step} the weights are not what eg.training.train_step leaves."
    return None


def _train_step_with(training: bool = True, reduce: Any = eg.mean, apply: bool = True,
                     tape_around: bool = True) -> Any:
    """A training step: the course's answer with the defaults, a typical mistake with one changed."""
    def my_train_step(model: Any, optimizer: Any, x: Any, y: Any) -> Any:
        with eg.GradientTape() as tape:
            if tape_around:
                loss = reduce(eg.nn.sparse_softmax_cross_entropy(y, model(x, training=training)))
        if not tape_around:
            loss = reduce(eg.nn.sparse_softmax_cross_entropy(y, model(x, training=training)))
        grads = tape.gradient(loss, model.trainable_variables)
        if apply:
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss
    return my_train_step


register("07", "train_step",
         idea=("A training step records the forward pass and the loss on a tape, asks it for the "
               "gradients of the loss, and lets the optimizer apply them."),
         function="my_train_step", judge=_judge_train_step, reference=_train_step_with(),
         wrong=((_train_step_with(tape_around=False), "inside the `with"),
                (_train_step_with(reduce=eg.sum), "sum over the batch"),
                (_train_step_with(apply=False), "apply them"),
                (_train_step_with(training=False), "training=False")), hint=(
    "Inside `with eg.GradientTape() as tape:` run the model with training=True and take the mean of "
    "eg.nn.sparse_softmax_cross_entropy(y, logits); then tape.gradient(loss, "
    "model.trainable_variables) and optimizer.apply_gradients of the (gradient, variable) pairs. "
    "Return the loss."),
    praise="Loss for loss and weight for weight, it is eg.training.train_step.")
