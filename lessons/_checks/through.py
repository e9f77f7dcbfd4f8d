"""Exercises that say "with engine ops": the check takes a gradient through the learner's result, so a
NumPy result wrapped in ``eg.constant`` (or computed from ``.numpy()``) is told apart from engine ops."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import engine as eg

from .plain import _is_tensor

#: The tape, captured at import (a cell may rebind eg.GradientTape).
_TAPE = eg.GradientTape

NOT_THROUGH = ("its result is not connected to the inputs by engine ops (NumPy values wrapped in "
               "eg.constant, or computed from .numpy()), so no gradient flows back through it: compute it "
               "with engine operations on the tensors it is given.")


def watching(inputs: Sequence[Any]) -> Any:
    """A persistent tape watching these input tensors (None entries skipped)."""
    tape = _TAPE(persistent=True)
    tape.__enter__()
    for t in inputs:
        if t is not None:
            tape.watch(t)
    return tape


def flows_back(tape: Any, outputs: Sequence[Any], inputs: Sequence[Any]) -> str | None:
    """None when a gradient of the outputs (each summed, as a tape does for a non-scalar target)
    reaches every input that is not None, else `NOT_THROUGH`."""
    present = [t for t in inputs if t is not None]
    reached = [False] * len(present)
    for out in outputs:
        if not _is_tensor(out):
            continue
        with np.errstate(all="ignore"):
            grads = tape.gradient(out, present)
        reached = [r or g is not None for r, g in zip(reached, grads)]
    return None if reached and all(reached) else NOT_THROUGH
