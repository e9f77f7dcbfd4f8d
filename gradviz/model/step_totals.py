"""What the backprop stepper shows of each step besides the step itself: the running total each
contribution joins, whether that total is complete, and (for the engine's elementwise ops) the local
derivative. All sums of the steps' own contributions (the engine's, or another engine's read through
`gradviz.model.protocol`); nothing is differentiated here.

>>> import engine as eg
>>> from gradviz.model.protocol import Reader
>>> x = eg.constant(3.0)
>>> with eg.GradientTape() as tape:
...     tape.watch(x)
...     y = x * x + x
>>> reader = Reader()
>>> steps = [reader.step(s, k) for k, s in enumerate(eg.backward_steps(tape, y, x))]
>>> arrivals, complete, totals = accumulate(steps, reader.value(y), lambda t: t.id)
>>> [[float(a.after) for a in step] for step in arrivals], float(totals[x.id])   # x: 1, then 1+3, 4+3
([[1.0, 1.0], [4.0, 7.0]], 7.0)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine import BackwardStep, ones_like
from gradviz.model import tapeinfo

__all__ = ["Arrival", "accumulate", "local_derivative"]


@dataclass
class Arrival:
    """What one input receives at one step, with the running total it joins (host arrays, for display)."""

    index: int  # the input's position in the record
    key: int  # the node it is drawn as (a Variable's read folds into the Variable)
    value: np.ndarray  # the contribution: the step's own, from the engine
    local: np.ndarray | None  # ∂output/∂input per element, for an elementwise op of unchanged shape
    before: np.ndarray | None  # the running gradient before this step (None: first arrival)
    after: np.ndarray  # ... and after adding the contribution
    complete: bool  # no later step adds to it


def accumulate(steps: list[Any], target: Any, key: Callable[[Any], int]
               ) -> tuple[list[list[Arrival]], list[frozenset[int]], dict[int, Any]]:
    """Per step (`gradviz.model.protocol.Step`): its arrivals (one per contribution) and the keys whose
    gradient is complete after it; and the final total per key (``key(value)``: the node a value is
    drawn as), as NumPy arrays."""
    remaining: dict[int, int] = {}
    for step in steps:
        for x, c in zip(step.record.inputs, step.contributions):
            if c is not None:
                remaining[key(x)] = remaining.get(key(x), 0) + 1
    totals: dict[int, Any] = {key(target): np.ones(target.shape, target.dtype)}
    done = {k for k in totals if remaining.get(k, 0) == 0}
    arrivals: list[list[Arrival]] = []
    complete: list[frozenset[int]] = []
    for step in steps:
        here = []
        for i, (x, c) in enumerate(zip(step.record.inputs, step.contributions)):
            if c is None:
                continue
            k = key(x)
            prev = totals.get(k)
            totals[k] = c if prev is None else np.asarray(prev + c)
            remaining[k] -= 1
            if remaining[k] == 0:
                done.add(k)
            here.append(Arrival(i, k, c, local_derivative(step, i), prev, totals[k], remaining[k] == 0))
        arrivals.append(here)
        complete.append(frozenset(done))
    return arrivals, complete, totals


def local_derivative(step: Any, i: int) -> np.ndarray | None:
    """∂y/∂x_i per element, for an elementwise engine primitive whose input i has the output's shape: the
    primitive's own VJP applied to ones, kept only when upstream × local equals the step's contribution.
    (None for another engine's steps: their rules are theirs.)"""
    if not isinstance(step.source, BackwardStep):
        return None
    r, c = step.source.record, step.contributions[i]
    x = r.inputs[i]
    if not r.primitive.elementwise or x.shape != r.output.shape or x.dtype.kind not in "fc":
        return None
    with tapeinfo.quiet():
        local = r.primitive.vjp(i, ones_like(r.output), r.output, r.inputs, r.params)
    if local is None or local.shape != x.shape:
        return None
    local = local.numpy()
    with np.errstate(all="ignore"):
        if not np.allclose(step.upstream[0] * local, c, rtol=1e-5, atol=1e-6, equal_nan=True):
            return None
    return local
