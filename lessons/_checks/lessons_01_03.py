"""The self-checks of lessons 01 (tensors and devices), 02 (gradients of functions) and 03 (GradientTape)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

import engine as eg

from .answers import computed, plain_value
from .compare import _compare_numbers
from .forbidden import _calls_to, _refusal
from .plain import _is_tensor
from .registry import register
from .through import flows_back, watching

# ===================================================================================================
# Lesson 01: tensors and devices
# ===================================================================================================

def _float32_product_answer() -> Any:
    """Exercise 2 of lesson 01, from the lesson's own cell: its float64 samples made float32 where
    they enter the engine, times its float32 scale."""
    samples = np.linspace(0.0, 1.0, 5)
    scale = eg.constant([1.0, 2.0, 3.0, 4.0, 5.0])
    return eg.constant(samples, dtype=scale.dtype) * scale


def _judge_float32_product(answer: Any) -> str | None:
    if not _is_tensor(answer):
        return "the answer should be an engine tensor (the product of the two tensors)."
    if answer.dtype != np.float32:
        return f"its dtype is {answer.dtype}, and the exercise asks for float32."
    return _compare_numbers(answer, _float32_product_answer().numpy(), 1e-6, 1e-6, "the product ")


def _landing_device_answer() -> str:
    """Exercise 3 of lesson 01: the `.device` of a tensor the engine creates inside
    ``with eg.device("gpu:0")`` on this machine (soft placement decides without a GPU)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the soft-placement warning without a GPU
        with eg.device("gpu:0"):
            return eg.ones([1]).device


def _judge_landing_device(answer: Any) -> str | None:
    if type(answer) is not str:
        return "the answer should be a device name, a plain string such as the `.device` of a tensor."
    text = answer.strip().lower()
    if text in ("cpu", "gpu", "/cpu:0", "/gpu:0"):
        return "write the device name the way `.device` does: a kind, a colon and an index."
    if text == _landing_device_answer():
        return None
    return "that is not where the tensor ends up on this machine."


def _floor_mod_answer() -> tuple[int, int]:
    """Exercise 1 of lesson 01: -17 // 5 and -17 % 5, computed by the engine's floordiv and mod."""
    dividend, divisor = eg.constant(-17), eg.constant(5)
    return plain_value(dividend // divisor), plain_value(dividend % divisor)


register("01", "floor_mod",
         idea=("Floor division rounds down, towards minus infinity, and the remainder is whatever makes "
               "the quotient times the divisor plus the remainder give back the dividend."),
         expected=computed(_floor_mod_answer),
         hint="Floor division rounds down, towards minus infinity, not towards zero. The remainder "
              "then makes a == b * q + r true, and it takes the sign of the divisor b.",
         praise="Python, NumPy and TensorFlow's floordiv/floormod all round this way.")
register("01", "float32_product",
         idea=("A tensor keeps the dtype it was made with, and an operation on two tensors keeps theirs: "
               "decide the dtype where the numbers enter."),
         judge=_judge_float32_product, reference=computed(_float32_product_answer),
         hint="NumPy arrays keep their dtype (float64). Make the tensor float32 when you create it "
              "(eg.constant(array, dtype='float32')) or convert it with eg.cast(t, 'float32').")
register("01", "landing_device",
         idea=("A tensor can tell where it lives; without the device that was asked for, soft placement "
               "chooses another one."),
         judge=_judge_landing_device, reference=computed(_landing_device_answer),
         hint="Create a tensor inside the exercise's `with eg.device(...)` block and print its "
              "`.device`. Without a GPU, soft placement decides where it goes.",
         praise="You can always ask a tensor where it lives.")


# ===================================================================================================
# Lesson 02: gradients of functions
# ===================================================================================================

def _judge_sgd_step(answer: Any) -> str | None:
    v1 = eg.Variable([1.0, -2.0], name="v1")
    v2 = eg.Variable(3.0, name="v2")
    v3 = eg.Variable([0.25], name="v3")
    g1, g2 = eg.constant([0.5, -1.0]), eg.constant(2.0)
    before = [v.numpy() for v in (v1, v2, v3)]
    lr = 0.1
    with _calls_to("apply_gradients") as called:
        try:
            answer([(g1, v1), (g2, v2), (None, v3)], lr)
        except Exception as exc:
            return (f"calling sgd_step(pairs, 0.1) raised {type(exc).__name__}: {exc}. Does it skip "
                    "a pair whose gradient is None?")
    if called:
        return _refusal(called, "the exercise is to write the step yourself, one assign_sub per pair.")
    after = [v.numpy() for v in (v1, v2, v3)]
    grads = [g1.numpy(), g2.numpy(), np.zeros(1, np.float32)]
    if not np.array_equal(after[2], before[2]):
        return "a variable whose gradient is None changed; it should be left alone."
    if all(np.array_equal(a, b) for a, b in zip(after, before)):
        return ("the variables did not change. Update each one in place with v.assign_sub(...): "
                "assigning to a name inside the function does not change the Variable.")
    if all(np.allclose(a, b + lr * g) for a, b, g in zip(after, before, grads)):
        return "the variables moved uphill: a descent step subtracts the scaled gradient."
    if all(np.allclose(a, b - g) for a, b, g in zip(after, before, grads)):
        return "the step ignores the learning rate."
    if all(np.allclose(a, b - lr * g, rtol=1e-6, atol=1e-7) for a, b, g in zip(after, before, grads)):
        return _sgd_step_again(answer)
    return "the variables changed, but not by the learning rate times their gradient."


def _sgd_step_again(answer: Any) -> str | None:
    """A second call: random float64 variables and gradients, another learning rate."""
    rng = np.random.default_rng(2)
    start = [rng.normal(size=(3, 2)), rng.normal(size=(4,))]
    variables = [eg.Variable(s) for s in start]
    grads = [eg.constant(rng.normal(size=s.shape)) for s in start]
    with _calls_to("apply_gradients") as called:
        try:
            answer(list(zip(grads, variables)), 0.05)
        except Exception as exc:
            return f"a second call, with float64 variables, raised {type(exc).__name__}: {exc}."
    if called:
        return _refusal(called, "the exercise is to write the step yourself, one assign_sub per pair.")
    for v, s, g in zip(variables, start, grads):
        if v.dtype != np.float64 or not np.allclose(v.numpy(), s - 0.05 * g.numpy(), rtol=1e-12, atol=1e-12):
            return ("a second call, with float64 variables of other shapes and a learning rate of 0.05, did "
                    "not step each variable by the learning rate times its gradient.")
    return None


def _judge_sse(answer: Any) -> str | None:
    rng = np.random.default_rng(7)
    for n, dtype in ((4, np.float32), (6, np.float64)):  # several calls, both float dtypes
        pred = eg.constant(rng.normal(size=(n, 1)).astype(dtype))
        target = eg.constant(rng.normal(size=(n,)).astype(dtype))
        tape = watching([pred, target])
        try:
            out = answer(pred, target)
        except Exception as exc:
            return f"calling your function on shapes ({n}, 1) and ({n},) raised {type(exc).__name__}: {exc}."
        finally:
            tape.__exit__(None, None, None)
        if not _is_tensor(out):
            return "return an engine Tensor built with engine ops, so that it can be differentiated."
        if out.size != 1:
            return f"it returns shape {out.shape}; a loss is a single number (shape ())."
        if out.dtype != dtype:
            return f"for {np.dtype(dtype)} inputs it returns {out.dtype}: keep the inputs' dtype."
        p, t = pred.numpy().astype(np.float64), target.numpy().astype(np.float64)
        got = float(out.item())
        if np.isclose(got, np.sum((p - t) ** 2), rtol=1e-5):
            return "it still sums the whole table that broadcasting builds: line the shapes up first."
        if np.isclose(got, np.mean((p[:, 0] - t) ** 2), rtol=1e-5):
            return "that is the mean; the exercise asks for the sum of squared errors."
        if not np.isclose(got, np.sum((p[:, 0] - t) ** 2), rtol=1e-5):
            return "the value is not the sum of squared errors of the matching pairs."
        problem = flows_back(tape, [out], [pred])
        if problem is not None:
            return problem
    return None


def _sgd_step(grads_and_vars: Any, learning_rate: float) -> None:
    """The course's answer to lesson 02's sgd_step."""
    for g, v in grads_and_vars:
        if g is not None:
            v.assign_sub(learning_rate * g)


def _sgd_rebinds(grads_and_vars: Any, learning_rate: float) -> None:
    for g, v in grads_and_vars:
        if g is not None:
            v = v - learning_rate * g  # noqa: PLW2901, F841  (the mistake: a new name, not an update)


def _sgd_uphill(grads_and_vars: Any, learning_rate: float) -> None:
    for g, v in grads_and_vars:
        if g is not None:
            v.assign_add(learning_rate * g)


def _sgd_no_lr(grads_and_vars: Any, learning_rate: float) -> None:
    for g, v in grads_and_vars:
        if g is not None:
            v.assign_sub(g)


def _sgd_no_none_check(grads_and_vars: Any, learning_rate: float) -> None:
    for g, v in grads_and_vars:
        v.assign_sub(learning_rate * g)


def _sse(pred: Any, target: Any) -> Any:
    """The course's answer to lesson 02's fix_broadcast."""
    return eg.sum((eg.squeeze(pred, axis=1) - target) ** 2)


def _partials_answer() -> tuple[float, float]:
    """Exercise 1 of lesson 02: (dh/dx, dh/dy) of h(x, y) = x³y − y² at (1, 2), by
    eg.gradients_function."""
    partials = eg.gradients_function(lambda x, y: x**3 * y - y**2)(1.0, 2.0)
    return tuple(plain_value(d) for d in partials)


register("02", "partials",
         idea=("A partial derivative holds every other argument fixed; the engine can turn a Python "
               "function into the function of its partial derivatives."),
         expected=computed(_partials_answer),
         hint="Write h as a Python function of two arguments and pass it to eg.gradients_function; "
              "call the result with the two numbers, in the same order as the arguments.")
register("02", "sgd_step",
         idea=("A descent step moves each variable a little against its gradient, changing the Variable "
               "itself; a variable without a gradient is left alone."),
         judge=_judge_sgd_step, function="sgd_step", reference=_sgd_step,
         wrong=((_sgd_rebinds, "did not change"), (_sgd_uphill, "uphill"), (_sgd_no_lr, "learning rate"),
                (_sgd_no_none_check, "None")),
         hint="Loop over the (gradient, variable) pairs; skip a pair whose gradient is None; "
              "otherwise call variable.assign_sub(learning_rate * gradient).")
register("02", "fix_broadcast",
         idea=("Subtracting tensors of different shapes broadcasts them into a table; line the shapes up "
               "so that each prediction meets its own target."),
         judge=_judge_sse, function="sse", reference=_sse,
         wrong=((lambda pred, target: eg.sum((pred - target) ** 2), "broadcasting"),
                (lambda pred, target: eg.mean((eg.reshape(target, (-1, 1)) - pred) ** 2), "mean"),
                (lambda pred, target: float(np.sum((pred.numpy()[:, 0] - target.numpy()) ** 2)),
                 "engine Tensor")),
         hint="Make both shapes equal before subtracting: eg.reshape(target, (-1, 1)) or "
              "eg.squeeze(pred, axis=1). Then square and take eg.sum.",
         praise="Checking shapes before a reduction catches a whole family of silent bugs.")


# ===================================================================================================
# Lesson 03: GradientTape
# ===================================================================================================

def _third_derivative_answer() -> float:
    """Exercise 1 of lesson 03: d³y/dx³ of y = log x² at x = 2, from three nested tapes."""
    x = eg.Variable(2.0, dtype="float64")
    with eg.GradientTape() as outer:
        with eg.GradientTape() as middle:
            with eg.GradientTape() as inner:
                y = eg.log(x**2)
            first = inner.gradient(y, x)
        second = middle.gradient(first, x)
    return plain_value(outer.gradient(second, x))


def _watch_constant_answer() -> float:
    """Exercise 2 of lesson 03: dy/dx of y = x³ + 2x at the constant x = 3, watched by the tape."""
    x = eg.constant(3.0, dtype="float64")
    with eg.GradientTape() as tape:
        tape.watch(x)
        y = x**3 + 2 * x
    return plain_value(tape.gradient(y, x))


def _jacobian_answer() -> np.ndarray:
    """Exercise 3 of lesson 03: the Jacobian of y = (x0·x1, x0 + x1, x1²) at x = (2, 3), by
    tape.jacobian."""
    x = eg.Variable([2.0, 3.0], dtype="float64")
    with eg.GradientTape() as tape:
        y = eg.stack([x[0] * x[1], x[0] + x[1], x[1] ** 2])
    return plain_value(tape.jacobian(y, x))


register("03", "third_derivative",
         idea=("A tape can record what another tape computes, so each derivative taken inside an outer "
               "tape can be differentiated again."),
         expected=computed(_third_derivative_answer),
         hint="Nest three tapes. Take the first derivative inside the two outer blocks and the "
              "second inside the outermost block, so that each outer tape records the derivative "
              "of the tape inside it; take the third after all blocks.")
register("03", "watch_constant",
         idea=("A tape only follows what it was told to follow: Variables by themselves, other tensors "
               "only when watched."),
         expected=computed(_watch_constant_answer),
         hint="A constant is not watched automatically: call tape.watch(x) inside the block, before "
              "the ops that use x.")
register("03", "jacobian",
         idea=("A Jacobian holds one row per output entry and one column per input entry."),
         expected=computed(_jacobian_answer),
         hint="Build y with eg.stack from its three entries inside the tape, then call "
              "tape.jacobian(y, x): row i holds the derivatives of y[i] by x[0] and x[1].")
