"""Numerical against analytic gradients, in float64: the arithmetic behind `gv.check_gradients`.

For each input, element by element: the analytic gradient (``eg.gradients_function(f)``, the engine's
backward pass) beside the numerical one, ``(f(x + h) − f(x − h)) / 2h`` with ``h = eps·max(1, |x|)``,
their difference and relative error, and whether they agree within the element's error bound

    ``atol + rtol·max(|a|, |n|) + ROUNDING·u·F / h``

where ``u`` is the machine epsilon of f's dtype and ``F`` the magnitude of f around x (the sum of
``|f(x ± h)|`` over its elements): the rounding error of computing f twice, divided by the step. So
the bound grows with the size of the sum f computes and with its dtype, and a correct float64
gradient of any size is not flagged for the noise of its own sum (what a fixed ``rtol`` did). An
element outside its bound is measured again with a step ``RETRY``× larger (less rounding noise, a
little more truncation), and fails only when it disagrees at both steps: a real error (a wrong factor,
a sign, a missing element) disagrees at every step. (Elements are measured again nearest to their
bound first, until ``CONFIRMED`` in a row disagree at both steps: then the check fails whatever the
rest would show, and they stay flagged.) A non-scalar ``f`` is differentiated as the sum of
its elements (what ``tape.gradient`` does). Inputs too large to check every element are checked on a
seeded random sample (`sample_size`).

>>> result = compare_gradients(lambda x, y: x * x - 2 * x * y + 3 * y, [2.0, 1.0])
>>> result.ok, [float(g) for g in result.analytic], result.max_rel_error < 1e-8
(True, [2.0, -1.0], True)
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import engine as eg
from engine import checks
from gradviz.model.checks import expect_callable, expect_numbers

__all__ = ["GradientComparison", "compare_gradients", "central_differences", "sample_size"]

ROUNDING = 4.0  # × u·F/h: the rounding bound's safety factor (measured up to 1.4 on sums of 10 to 10⁵ terms)
RETRY = 100.0  # an element outside its bound is measured again with a step this many times larger
CONFIRMED = 16  # ... until this many in a row disagree at both steps (the rest then stay flagged)
WORK = 2 * 10**8  # elements of the inputs that f reads, summed over the evaluations a check makes at most
MIN_SAMPLE = 64  # ... but never fewer sampled elements per input than this


@dataclass
class GradientComparison:
    """What `compare_gradients` found: per input (lists in argument order) the float64 ``inputs``, the
    ``analytic`` and ``numeric`` gradients, the flat indices ``checked`` (all, unless sampled), and for
    those the ``abs_error``, ``rel_error`` and ``passed``; ``names``, ``value`` (f at the inputs),
    ``none_gradient`` (the engine gave None), ``max_rel_error``, ``ok``, and the settings."""

    names: list[str]
    inputs: list[np.ndarray]
    value: np.ndarray
    none_gradient: list[bool]
    analytic: list[np.ndarray]
    numeric: list[np.ndarray]
    checked: list[np.ndarray]
    abs_error: list[np.ndarray]
    rel_error: list[np.ndarray]
    bound: list[np.ndarray]
    passed: list[np.ndarray]
    max_rel_error: float
    ok: bool
    eps: float
    rtol: float
    atol: float

    def rows(self, k: int) -> list[dict[str, Any]]:
        """The checked elements of input ``k``: index, x, analytic, numeric, abs_error, rel_error, bound
        (the largest abs_error allowed), ok."""
        shape = self.inputs[k].shape
        out = []
        for j, i in enumerate(self.checked[k]):
            out.append({
                "index": tuple(int(v) for v in np.unravel_index(i, shape)) if shape else (),
                "x": float(self.inputs[k].reshape(-1)[i]),
                "analytic": float(self.analytic[k].reshape(-1)[i]),
                "numeric": float(self.numeric[k].reshape(-1)[i]),
                "abs_error": float(self.abs_error[k][j]),
                "rel_error": float(self.rel_error[k][j]),
                "bound": float(self.bound[k][j]),
                "ok": bool(self.passed[k][j]),
            })
        return out

    def summary(self) -> str:
        """One line: how many elements agree, and the largest relative error."""
        total = sum(len(p) for p in self.passed)
        bad = sum(int((~p).sum()) for p in self.passed)
        sampled = any(len(c) < a.size for c, a in zip(self.checked, self.inputs))
        what = f"{total} checked elements" + (" (a random sample of the larger inputs)" if sampled else "")
        err = "nan" if math.isnan(self.max_rel_error) else f"{self.max_rel_error:.2e}"
        if self.ok:
            return f"✓ all {what} agree within their error bounds; largest relative error {err}"
        return f"✗ {bad} of {what} disagree; largest relative error {err}"


def compare_gradients(f: Callable, args: Sequence[Any], eps: float = 1e-6, rtol: float = 1e-5,
                      atol: float = 1e-7, max_elements: int = 2000, seed: int = 0,
                      where: str = "gv.check_gradients") -> GradientComparison:
    """``f``'s analytic gradients at ``args`` against central differences, each element held to its
    error bound (see the module); inputs with more elements than `sample_size` allows are checked on
    a random sample (``seed``). ``where`` names the call in error messages."""
    expect_callable(where, "f", f)
    if not args:
        raise ValueError("check_gradients: give the inputs to check at: check_gradients(f, x, y).")
    names = _names(f, len(args))
    inputs = [_as_float64(a, n, where) for a, n in zip(args, names)]
    eps = checks.number(eps, "eps", where, low=0, low_open=True)
    rtol = checks.number(rtol, "rtol", where, low=0)
    atol = checks.number(atol, "atol", where, low=0)
    max_elements = checks.count(max_elements, "max_elements", where, minimum=1)
    checks.seed(seed, where)
    try:
        value = _call(f, inputs)
        grads = eg.gradients_function(f)(*[eg.constant(a) for a in inputs])
    except TypeError as exc:
        raise TypeError(
            f"check_gradients runs f in float64, and f failed: {exc} (Make constants inside f with "
            "plain Python numbers, or with dtype=x.dtype.)"
        ) from exc
    analytic = [np.zeros_like(a) if g is None else np.asarray(g.numpy(), dtype=np.float64)
                for g, a in zip(grads, inputs)]
    rng = np.random.default_rng(seed)
    total = sum(a.size for a in inputs)
    checked, numeric, abs_error, rel_error, bounds, passed = [], [], [], [], [], []
    for k, a in enumerate(inputs):
        idx = np.arange(a.size)
        n_sample = sample_size(a.size, total, max_elements)
        if n_sample < a.size:
            idx = np.sort(rng.choice(a.size, size=n_sample, replace=False))
        checked.append(idx)
        grad = analytic[k].reshape(-1)[idx]
        num, magnitude, steps = central_differences(f, inputs, k, idx, eps, magnitudes=True)
        diff, rel, bound, ok = _verdict(grad, num.reshape(-1)[idx], magnitude, steps, value.dtype, rtol, atol)
        again = np.flatnonzero(~ok & np.isfinite(grad))  # outside the bound: measure with a larger step,
        again = again[np.argsort(diff[again] / bound[again], kind="stable")]  # the nearest to it first
        confirmed = 0
        for j in again:
            if confirmed >= CONFIRMED:  # that many disagree at both steps in a row: a real error
                break
            one = idx[j:j + 1]
            num2, magnitude2, steps2 = central_differences(f, inputs, k, one, eps * RETRY, magnitudes=True)
            verdict2 = _verdict(grad[j:j + 1], num2.reshape(-1)[one], magnitude2, steps2, value.dtype,
                                rtol, atol)
            if not verdict2[3][0]:
                confirmed += 1
                continue
            confirmed = 0  # it agrees at the larger step: the first step's disagreement was noise
            for mine, theirs in zip((diff, rel, bound, ok), verdict2):
                mine[j] = theirs[0]
            num.reshape(-1)[one] = num2.reshape(-1)[one]
        numeric.append(num)
        abs_error.append(diff)
        rel_error.append(rel)
        bounds.append(bound)
        passed.append(ok)
    all_rel = np.concatenate(rel_error) if rel_error else np.zeros(0)
    worst = all_rel.max() if all_rel.size else 0.0
    return GradientComparison(
        names=names, inputs=inputs, value=value.numpy(), none_gradient=[g is None for g in grads],
        analytic=analytic, numeric=numeric, checked=checked, abs_error=abs_error, rel_error=rel_error,
        bound=bounds, passed=passed, max_rel_error=float(np.nan if np.isnan(all_rel).any() else worst),
        ok=bool(all(p.all() for p in passed)), eps=eps, rtol=rtol, atol=atol)


def sample_size(size: int, total: int, max_elements: int) -> int:
    """How many elements of an input of ``size`` elements are checked, when f reads ``total`` elements
    in all: every one when that is at most ``max_elements`` and the two evaluations of f per element
    stay within ``WORK`` elements read; else a sample, of at least ``MIN_SAMPLE`` (or all).

    >>> sample_size(10, 10, 2000), sample_size(10_000, 10_000, 2000), sample_size(10**6, 10**6, 2000)
    (10, 2000, 100)
    """
    affordable = max(MIN_SAMPLE, WORK // (2 * max(total, 1)))
    return min(size, max_elements, affordable)


def _verdict(a: np.ndarray, n: np.ndarray, magnitude: np.ndarray, steps: np.ndarray, dtype: Any,
             rtol: float, atol: float) -> tuple[np.ndarray, ...]:
    """Per element: |a − n|, the relative error, the error bound and whether |a − n| is within it."""
    u = np.finfo(dtype).eps if np.dtype(dtype).kind in "fc" else np.finfo(np.float64).eps
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        diff = np.abs(a - n)
        scale = np.maximum(np.abs(a), np.abs(n))
        rel = np.where(scale > atol, diff / np.where(scale > 0, scale, 1.0), 0.0)
        rel = np.where(np.isfinite(a) & np.isfinite(n), rel, np.nan)
        bound = atol + rtol * scale + ROUNDING * u * magnitude / steps
        ok = (diff <= bound) & np.isfinite(rel)
    return diff, rel, bound, ok


def central_differences(f: Callable, inputs: list[np.ndarray], k: int, idx: np.ndarray,
                        eps: float, magnitudes: bool = False) -> Any:
    """``(sum f(x + h) − sum f(x − h)) / 2h`` with respect to input ``k`` at its flat indices ``idx``
    (NaN elsewhere), ``h = eps·max(1, |x|)``; with ``magnitudes``, also per index the larger of
    ``sum |f(x + h)|`` and ``sum |f(x − h)|``, and the step ``h`` (what the rounding bound reads).

    >>> central_differences(lambda x: x * x, [np.array([3.0])], 0, np.array([0]), 1e-6).round(6)
    array([6.])
    """
    out = np.full(inputs[k].shape, np.nan)
    flat_out = out.reshape(-1)
    magnitude, steps = np.zeros(len(idx)), np.zeros(len(idx))
    fixed = [eg.constant(a) for a in inputs]  # the other inputs: made once, read by every evaluation
    work = inputs[k].copy()
    flat = work.reshape(-1)
    for j, i in enumerate(idx):
        x = float(flat[i])
        h = eps * max(1.0, abs(x))
        flat[i] = x + h
        fp = _evaluate(f, fixed, k, work)
        flat[i] = x - h
        fm = _evaluate(f, fixed, k, work)
        flat[i] = x  # restored: the next element is perturbed alone
        flat_out[i] = (fp[0] - fm[0]) / (2 * h)
        magnitude[j], steps[j] = max(fp[1], fm[1]), h
    return (out, magnitude, steps) if magnitudes else out


def _evaluate(f: Callable, fixed: list[Any], k: int, array: np.ndarray) -> tuple[float, float]:
    """sum f and sum |f| with input ``k`` set to ``array`` (float64 sums)."""
    args = list(fixed)
    args[k] = eg.constant(array)  # a copy (eg.constant never aliases the caller's array)
    out = _checked(f(*args)).numpy()
    return float(np.sum(out, dtype=np.float64)), float(np.sum(np.abs(out), dtype=np.float64))


def _names(f: Callable, n: int) -> list[str]:
    try:
        params = [p for p in inspect.signature(f).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params[:n]]
    return names + [f"arg{k}" for k in range(len(names), n)]


def _as_float64(a: Any, name: str, where: str) -> np.ndarray:
    expect_numbers(where, f"the input {name!r}", a)
    array = np.array(a.numpy() if hasattr(a, "numpy") else a, dtype=np.float64, copy=True)
    if array.dtype.kind not in "f":
        raise TypeError(f"check_gradients: input {name!r} is not numeric.")
    return array


def _call(f: Callable, arrays: Sequence[np.ndarray]) -> Any:
    """f on float64 tensors: the tensor it returns."""
    return _checked(f(*[eg.constant(a) for a in arrays]))


def _checked(out: Any) -> Any:
    if not isinstance(out, eg.Tensor):
        raise TypeError(f"check_gradients: f must return an engine Tensor, got {type(out).__name__}.")
    return out
