"""The making exercise of lesson 03 (CURRICULUM.md, "Learning by making"): a new op, written as an
``eg.Primitive`` with its forward, its VJP and its rule. The learner's ``make_softsign(name)`` builds the
primitive under the name it is given, so the check can build a fresh one each time (``eg.Primitive``
refuses a name that exists) and remove it afterwards: the cell can be run again and again. The check
compares the forward with ``x / (1 + |x|)``, the gradient with central differences, the second
derivative (nested tapes) with the exact one, and draws the op with ``gv.backprop``; a wrong gradient
is named by comparing it with the typical wrong derivatives.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

import numpy as np

import engine as eg
from engine import primitive as _primitive

from .plain import _is_tensor, _plain_numbers
from .registry import register

#: The draws of the random inputs: fixed, so that a verdict never depends on luck.
_SEED = 20260

#: Captured at import: a cell may rebind eg.Primitive; the registry is the engine's own dict.
_PRIMITIVE = eg.Primitive
_REGISTRY = _primitive.REGISTRY
_fresh = itertools.count(1)

_NUMPY_VJP = ("the second derivative is None: the outer tape saw nothing of the VJP, so it was computed "
              "outside the engine (with NumPy or .numpy()). Write the VJP with engine ops on the Tensors "
              "g and x (eg.abs, arithmetic, **), so that tapes can differentiate it again.")


def _softsign(x: np.ndarray) -> np.ndarray:
    return x / (1 + np.abs(x))


def _array(value: Any, what: str, shape: tuple[int, ...]) -> np.ndarray | str:
    """A Tensor result as a float64 array of ``shape``, or what is wrong with it."""
    if not _is_tensor(value):
        return f"{what} is {type(value).__name__}, not an engine Tensor."
    got = _plain_numbers(value, f"{what} ")
    if isinstance(got, str):
        return got
    if got.shape != shape:
        return f"{what} has shape {got.shape} for x of shape {shape}: an elementwise op keeps x's shape."
    return got.astype(np.float64)


def _first_order_variants(x: np.ndarray, g: np.ndarray) -> dict[str, np.ndarray]:
    a = 1 + np.abs(x)
    return {
        "the factor g is missing: a VJP returns the upstream gradient g times the local derivative.":
            1 / a ** 2,
        "the derivative is 1 / (1 + |x|), without the square: the quotient rule divides by the square "
        "of the denominator.": g / a,
        "the derivative has a sign wrong in the quotient rule: (1 + |x|)·1 − x·sign(x), not +.":
            g * (1 + 2 * np.abs(x)) / a ** 2,
        "the derivative lost the absolute value: it is right for positive x only (d|x|/dx = sign(x)).":
            g / (1 + x) ** 2,
    }


def _try_primitive(prim: Any, x: np.ndarray, g: np.ndarray, draw: bool) -> str | None:
    shape = x.shape
    xt = eg.constant(x)
    try:
        y = prim(xt)
    except Exception as exc:  # noqa: BLE001
        return f"the forward raised {type(exc).__name__}: {exc} (for x of shape {shape})."
    got = _array(y, "the forward's result", shape)
    if isinstance(got, str):
        return got
    if not np.allclose(got, _softsign(x), rtol=1e-9, atol=1e-12):
        return f"the forward is not x / (1 + |x|) (for x of shape {shape}); use xp.abs for |x|."
    if not prim.differentiable:
        return "the Primitive has no VJP: pass vjps=[vjp] (and its rule) to eg.Primitive."
    try:
        with eg.GradientTape(persistent=True) as outer:
            outer.watch(xt)
            with eg.GradientTape() as inner:
                inner.watch(xt)
                y = prim(xt)
            dx = inner.gradient(y, xt, output_gradients=eg.constant(g))
        d2 = None if dx is None else outer.gradient(dx, xt)
    except Exception as exc:  # noqa: BLE001
        return (f"taking the gradient raised {type(exc).__name__}: {exc}. The VJP receives Tensors "
                "(g, y, x) and must return a Tensor, computed with engine ops.")
    if dx is None:
        return "the gradient is None: does the VJP return the gradient for x?"
    first = _array(dx, "the gradient", shape)
    if isinstance(first, str):
        return first
    h = 1e-6
    finite = g * (_softsign(x + h) - _softsign(x - h)) / (2 * h)
    if not np.allclose(first, finite, rtol=1e-5, atol=1e-8):
        for what, wrong in _first_order_variants(x, g).items():
            if np.allclose(first, wrong, rtol=1e-6, atol=1e-9):
                return what
        return f"the gradient does not match central differences of x / (1 + |x|) (x of shape {shape})."
    if d2 is None:
        return _NUMPY_VJP
    second = _array(d2, "the second derivative", shape)
    if isinstance(second, str):
        return second
    exact = g * -2 * np.sign(x) / (1 + np.abs(x)) ** 3
    if not np.allclose(second, exact, rtol=1e-6, atol=1e-9):
        return ("the second derivative (a tape around the gradient) is not right: the VJP's engine ops "
                "should compute the same formula as its first derivative.")
    if draw:
        return _draws(prim, x)
    return None


def _draws(prim: Any, x: np.ndarray) -> str | None:
    """The op in the backprop stepper: its step carries the learner's primitive, and its rule."""
    import gradviz as gv  # noqa: PLC0415  (only when a right answer gets this far)

    xt = eg.constant(x)
    with eg.GradientTape(persistent=True) as tape:
        tape.watch(xt)
        y = prim(xt)
    try:
        view = gv.backprop(tape, y, [xt])
    except Exception as exc:  # noqa: BLE001
        return f"gv.backprop could not draw it: it raised {type(exc).__name__}: {exc}."
    if not any(step.record.primitive is prim for step in view.steps):
        return "gv.backprop does not show a step of your op."
    return None


def _judge_softsign(answer: Any) -> str | None:
    rng = np.random.default_rng(_SEED)  # fixed: the same answer gets the same verdict on every run
    for k, shape in enumerate(((), (6,), (3, 4))):
        # away from the kink at 0, where the finite difference and the derivative disagree
        x = rng.uniform(0.2, 3.0, size=shape) * rng.choice([-1.0, 1.0], size=shape)
        g = rng.uniform(0.5, 2.0, size=shape) * rng.choice([-1.0, 1.0], size=shape)
        name = f"softsign_check_{next(_fresh)}"
        before = set(_REGISTRY)
        try:
            try:
                prim = answer(name)
            except Exception as exc:  # noqa: BLE001
                more = (" Build the Primitive under the name make_softsign is given (the check passes a "
                        "fresh name each time)." if "exists already" in str(exc) else "")
                return f"make_softsign({name!r}) raised {type(exc).__name__}: {exc}{more}"
            if type(prim) is not _PRIMITIVE:
                return (f"make_softsign(name) returns {type(prim).__name__}: return the eg.Primitive it "
                        "builds.")
            if prim.name != name:
                return (f"make_softsign({name!r}) built a Primitive named {prim.name!r}: use the name it is "
                        "given, so that the cell (and the check) can build it again.")
            if prim.rule is Ellipsis:
                return "replace the `...` in make_softsign (the forward, the VJP and rule=) with your code."
            if type(prim.rule) is not str or not re.search(r"∂x\s*=.*g", prim.rule):
                return ("rule= should be the VJP as text, '∂x = g·...' with g the upstream gradient "
                        "(like eg.primitives['multiply'].rule, '∂a = g·b, ∂b = g·a').")
            problem = _try_primitive(prim, x, g, draw=k == 0)
        finally:
            for added in set(_REGISTRY) - before:  # the check's primitives do not stay behind
                del _REGISTRY[added]
        if problem is not None:
            return problem
    return None


def _softsign_maker(vjp: Any, rule: str = "∂x = g / (1 + |x|)²") -> Any:
    """A make_softsign(name) building softsign with this VJP (the course's answer, or a wrong one)."""
    def make_softsign(name: str) -> Any:
        return eg.Primitive(name, lambda xp, x: x / (1 + xp.abs(x)), vjps=[vjp], rule=rule, symbol="softsign",
                            elementwise=True)
    return make_softsign


register("03", "softsign",
         idea=("A new op needs three things: how to compute it, how a gradient flows back through it "
               "(the local derivative times the incoming gradient, written so that tapes can follow it), "
               "and that rule as text."),
         function="make_softsign", judge=_judge_softsign,
         reference=_softsign_maker(lambda g, y, x: g / (1 + eg.abs(x)) ** 2), wrong=(
             (_softsign_maker(lambda g, y, x: 1 / (1 + eg.abs(x)) ** 2), "factor g is missing"),
            (_softsign_maker(lambda g, y, x: g / (1 + eg.abs(x))), "without the square"),
            (_softsign_maker(lambda g, y, x: g * (1 + 2 * eg.abs(x)) / (1 + eg.abs(x)) ** 2), "sign wrong"),
            (_softsign_maker(lambda g, y, x: g / (1 + x) ** 2), "absolute value"),
            (_softsign_maker(lambda g, y, x: eg.constant(g.numpy() / (1 + np.abs(x.numpy())) ** 2)),
             "second derivative is None"),
            (_softsign_maker(lambda g, y, x: g / (1 + eg.abs(x)) ** 2, rule="softsign"), "rule=")), hint=(
    "Differentiate softsign(x) = x / (1 + |x|) with the quotient rule (d|x|/dx = sign(x), and "
    "x·sign(x) = |x|). The forward works on arrays with xp; the VJP gets Tensors g, y, x and returns "
    "g times the derivative, written with engine ops; return eg.Primitive(name, forward, vjps=[vjp], "
    "rule=..., elementwise=True)."),
    praise="Your op has a gradient, a second derivative, and a place in gv.backprop's drawings.")
