"""Numerical against analytic gradients, in float64: the arithmetic behind `gv.check_gradients`.

For each input, element by element: the analytic gradient (``eg.gradients_function(f)``, the engine's
backward pass) beside the numerical one, ``(f(x + h) − f(x − h)) / 2h`` with ``h = eps·max(1, |x|)``,
their difference and relative error, and whether they agree within ``atol + rtol·max(|a|, |n|)``. A
non-scalar ``f`` is differentiated as the sum of its elements (what ``tape.gradient`` does).

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

from gradviz.model.checks import expect_callable, expect_numbers

__all__ = ["GradientComparison", "compare_gradients"]


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
    passed: list[np.ndarray]
    max_rel_error: float
    ok: bool
    eps: float
    rtol: float
    atol: float

    def rows(self, k: int) -> list[dict[str, Any]]:
        """The checked elements of input ``k``: index, x, analytic, numeric, abs_error, rel_error, ok."""
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
            return f"✓ all {what} agree; largest relative error {err}"
        return f"✗ {bad} of {what} disagree; largest relative error {err}"


def compare_gradients(f: Callable, args: Sequence[Any], eps: float = 1e-6, rtol: float = 1e-5,
                      atol: float = 1e-7, max_elements: int = 2000, seed: int = 0,
                      where: str = "gv.check_gradients") -> GradientComparison:
    """``f``'s analytic gradients at ``args`` against central differences (see the module); inputs
    with more than ``max_elements`` elements are checked on a random sample (``seed``). ``where``
    names the call in error messages."""
    import engine as eg
    from engine import checks

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
    checked, numeric = [], []
    for k, a in enumerate(inputs):
        idx = np.arange(a.size)
        if a.size > max_elements:
            idx = np.sort(rng.choice(a.size, size=max_elements, replace=False))
        checked.append(idx)
        numeric.append(central_differences(f, inputs, k, idx, eps))
    abs_error, rel_error, passed = [], [], []
    for k, idx in enumerate(checked):
        a = analytic[k].reshape(-1)[idx]
        n = numeric[k].reshape(-1)[idx]
        with np.errstate(invalid="ignore", divide="ignore"):
            diff = np.abs(a - n)
            scale = np.maximum(np.abs(a), np.abs(n))
            rel = np.where(scale > atol, diff / np.where(scale > 0, scale, 1.0), 0.0)
            rel = np.where(np.isfinite(a) & np.isfinite(n), rel, np.nan)
            ok = (diff <= atol + rtol * scale) & np.isfinite(rel)
        abs_error.append(diff)
        rel_error.append(rel)
        passed.append(ok)
    all_rel = np.concatenate(rel_error) if rel_error else np.zeros(0)
    worst = all_rel.max() if all_rel.size else 0.0
    return GradientComparison(
        names=names, inputs=inputs, value=value.numpy(), none_gradient=[g is None for g in grads],
        analytic=analytic, numeric=numeric, checked=checked, abs_error=abs_error, rel_error=rel_error,
        passed=passed, max_rel_error=float(np.nan if np.isnan(all_rel).any() else worst),
        ok=bool(all(p.all() for p in passed)), eps=eps, rtol=rtol, atol=atol)


def central_differences(f: Callable, inputs: list[np.ndarray], k: int, idx: np.ndarray,
                        eps: float) -> np.ndarray:
    """``(sum f(x + h) − sum f(x − h)) / 2h`` with respect to input ``k`` at its flat indices ``idx``
    (NaN elsewhere), ``h = eps·max(1, |x|)``.

    >>> central_differences(lambda x: x * x, [np.array([3.0])], 0, np.array([0]), 1e-6).round(6)
    array([6.])
    """
    out = np.full(inputs[k].shape, np.nan)
    flat_out = out.reshape(-1)
    for i in idx:
        x = inputs[k].reshape(-1)
        h = eps * max(1.0, abs(float(x[i])))
        plus, minus = x.copy(), x.copy()
        plus[i] += h
        minus[i] -= h
        args_p, args_m = list(inputs), list(inputs)
        args_p[k] = plus.reshape(inputs[k].shape)
        args_m[k] = minus.reshape(inputs[k].shape)
        fp = float(np.sum(_call(f, args_p).numpy(), dtype=np.float64))
        fm = float(np.sum(_call(f, args_m).numpy(), dtype=np.float64))
        flat_out[i] = (fp - fm) / (2 * h)
    return out


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
    import engine as eg

    out = f(*[eg.constant(a) for a in arrays])
    if not isinstance(out, eg.Tensor):
        raise TypeError(f"check_gradients: f must return an engine Tensor, got {type(out).__name__}.")
    return out
