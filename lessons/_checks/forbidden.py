"""Exercises that say "do not call the built-in": calls seen by the identity of the function's code."""

from __future__ import annotations

import contextlib
import inspect
import sys
from collections.abc import Callable, Iterator
from typing import Any

from engine import backward as _backward
from engine import clipping as _clipping
from engine import training as _training
from engine.nn import losses as _losses
from engine.optimizers import accumulation as _accumulation
from engine.optimizers import base as _optimizers


def _code_of(function: Callable[..., Any]) -> Any:
    return inspect.unwrap(function).__code__


#: The engine functions an exercise may forbid, captured at import (before any cell can replace them).
_BUILT_INS = {
    "clip_by_norm": _code_of(_clipping.clip_by_norm),
    "softmax_cross_entropy": _code_of(_losses.softmax_cross_entropy),
    "sparse_softmax_cross_entropy": _code_of(_losses.sparse_softmax_cross_entropy),
    "walk": _code_of(_backward.walk),  # every gradient the engine computes (tape, gradients_function, ...)
    "apply_gradients": _code_of(_optimizers.Optimizer.apply_gradients),
    "clip_by_global_norm": _code_of(_clipping.clip_by_global_norm),
    "accumulator_add": _code_of(_accumulation.Accumulator.add),
    "train_step": _code_of(_training.train_step),
}


_getprofile, _setprofile = sys.getprofile, sys.setprofile  # captured, like everything below


@contextlib.contextmanager
def _calls_to(*names: str) -> Iterator[list[str]]:
    """Collect the names of these built-ins each time one is called in this thread, however reached."""
    codes = [(_BUILT_INS[n], n) for n in names]
    called: list[str] = []
    previous = _getprofile()

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            for code, name in codes:
                if frame.f_code is code:
                    called.append(name)
        if callable(previous):
            previous(frame, event, arg)

    _setprofile(profile)
    try:
        yield called
    finally:
        _setprofile(previous)
