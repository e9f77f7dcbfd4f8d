"""The self-checks of lesson 06b (what backprop keeps).

The making exercise: the learner writes ``saved_bytes(batch, n_in, n_out)``, the bytes the tape keeps
for the backward pass of one float32 ``Dense(n_out, activation="tanh")`` layer applied to a batch of
``batch`` rows of ``n_in`` features (its loss the sum of the outputs), predicted from the shapes. The
judge profiles that very layer with ``eg.memory_profile`` at several shapes and compares: the answer
is checked against what the engine measures, not against a number written here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import engine as eg

from .registry import register

#: the shapes the judge profiles: (batch, n_in, n_out)
SHAPES = ((128, 784, 512), (32, 64, 10), (5, 3, 7))
FLOAT32 = 4  # bytes per number


def measured_saved_bytes(batch: int, n_in: int, n_out: int) -> int:
    """The peak bytes the tape keeps for the backward pass of ``Dense(n_out, "tanh")`` on a float32
    batch ``(batch, n_in)``, with the loss ``sum`` of its outputs, as ``eg.memory_profile`` measures it."""
    layer = eg.layers.Dense(n_out, activation="tanh", seed=0)
    x = eg.constant(np.random.default_rng(0).normal(size=(batch, n_in)).astype(np.float32))
    layer(x[:1])  # the weights exist before the step (the Variables' own values are not counted)

    def step() -> Any:
        with eg.GradientTape() as tape:
            loss = eg.sum(layer(x))
        return tape.gradient(loss, layer.trainable_variables)

    return int(eg.memory_profile(step).saved_peak_bytes)


def reference_saved_bytes(batch: int, n_in: int, n_out: int) -> int:
    """The course's answer: the matmul keeps its input x (batch × n_in; the kernel is a Variable,
    alive anyway), the bias add keeps nothing, tanh keeps its output (batch × n_out), the sum keeps
    nothing but a shape; 4 bytes per float32."""
    return 4 * batch * (n_in + n_out)  # written out: the graded assignment copies this body alone


def _mistake(answer: int, batch: int, n_in: int, n_out: int) -> str:
    """The kind of mistake an answer matches at one shape (the hint names it, not the formula)."""
    weights = n_in * n_out + n_out
    kinds = {
        batch * (n_in + n_out): "that counts the numbers kept, not the bytes they take.",
        FLOAT32 * batch * n_in: "the tanh's VJP needs something too: what does the derivative of tanh "
                                "read?",
        FLOAT32 * batch * n_out: "the matmul's VJP needs more than the tanh's output: what does the "
                                 "gradient of the kernel read?",
        2 * FLOAT32 * batch * (n_in + n_out): "that is the size in float64; the layer runs in float32.",
        FLOAT32 * (batch * (n_in + n_out) + weights): "the weights are Variables: their values live "
                                                      "anyway, the profile does not count them as kept.",
        FLOAT32 * (n_in + n_out): "that is one example's share; the batch has many rows.",
        FLOAT32 * batch * (n_in + 2 * n_out): "the bias add keeps nothing: the gradient of a sum needs no "
                                              "values, and the pre-activation is not read by tanh's VJP.",
    }
    return kinds.get(answer, "that is not what the profile measures for this layer.")


def _whole(value: Any) -> int | None:
    """``value`` as an int when it is exactly an int, a NumPy integer, or a float (Python's or NumPy's)
    with no fraction; None for anything else (bools, subclasses, NaN, objects that only look like one)."""
    kind = type(value)
    if kind is int:
        return value
    if kind in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64):
        return int(value)
    if kind in (float, np.float32, np.float64) and np.isfinite(value) and float(value).is_integer():
        return int(value)
    return None


def _judge_saved_bytes(answer: Any) -> str | None:
    for batch, n_in, n_out in SHAPES:
        try:
            got = answer(batch, n_in, n_out)
        except Exception as exc:  # noqa: BLE001  (the learner's function: report the kind only)
            return f"saved_bytes({batch}, {n_in}, {n_out}) raised {type(exc).__name__}."
        got = _whole(got)
        if got is None:
            return "it should return a whole number of bytes (a plain int)."
        if got != measured_saved_bytes(batch, n_in, n_out):
            return f"at batch {batch}, {n_in} inputs and {n_out} units: " + _mistake(got, batch, n_in, n_out)
    return None


def _counts_numbers(batch: int, n_in: int, n_out: int) -> int:
    """A wrong answer: the numbers kept, not their bytes."""
    return batch * (n_in + n_out)


def _forgets_tanh(batch: int, n_in: int, n_out: int) -> int:
    """A wrong answer: only the matmul's input."""
    return FLOAT32 * batch * n_in


def _counts_weights(batch: int, n_in: int, n_out: int) -> int:
    """A wrong answer: the Variables' values counted as kept."""
    return FLOAT32 * (batch * (n_in + n_out) + n_in * n_out + n_out)


register("06b", "saved_bytes", function="saved_bytes", judge=_judge_saved_bytes,
         reference=reference_saved_bytes,
         wrong=((_counts_numbers, "not the bytes"), (_forgets_tanh, "derivative of tanh"),
                (_counts_weights, "weights are Variables")),
         idea=("Go through the layer's ops one by one and ask what each one's backward step must read "
               "to compute its gradients; the arrays it reads are what the tape keeps alive. A Variable's "
               "value lives anyway, so it is not the tape's cost."),
         praise="Your count matches what eg.memory_profile measures, at every shape tried.",
         hint="List the ops of the layer (matmul, bias add, tanh) and, for each, which arrays its VJP "
              "reads to compute the gradients; count only those that are not a Variable's own value, "
              "then turn numbers into bytes.")
