"""Exercises that say "do not call the built-in": calls seen by the identity of the function's code,
in every thread the answer starts (``sys.setprofile`` for this one, ``threading.setprofile`` for new ones)."""

from __future__ import annotations

import contextlib
import inspect
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

from engine import backward as _backward
from engine import clipping as _clipping
from engine import training as _training
from engine.nn import losses as _losses
from engine.optimizers import accumulation as _accumulation
from engine.optimizers import adam as _adam
from engine.optimizers import base as _optimizers
from engine.optimizers import momentum as _momentum


def _code_of(function: Callable[..., Any]) -> Any:
    return inspect.unwrap(function).__code__


#: The engine functions an exercise may forbid, captured at import (before any cell can replace them).
_BUILT_INS = {
    "clip_by_norm": _code_of(_clipping.clip_by_norm),
    "softmax_cross_entropy": _code_of(_losses.softmax_cross_entropy),
    "sparse_softmax_cross_entropy": _code_of(_losses.sparse_softmax_cross_entropy),
    "fused_xent": _code_of(_losses._xent_forward),  # the private fused loss both of them run
    "walk": _code_of(_backward.walk),  # every gradient the engine computes (tape, gradients_function, ...)
    "apply_gradients": _code_of(_optimizers.Optimizer.apply_gradients),
    "momentum_update": _code_of(_momentum.Momentum._update),
    "adam_update": _code_of(_adam.Adam._update),
    "clip_by_global_norm": _code_of(_clipping.clip_by_global_norm),
    "global_norm": _code_of(_clipping.global_norm),
    "accumulator_add": _code_of(_accumulation.Accumulator.add),
    "train_step": _code_of(_training.train_step),
}


_getprofile, _setprofile = sys.getprofile, sys.setprofile  # captured, like everything below
_thread_getprofile, _thread_setprofile = threading.getprofile, threading.setprofile


class _Called(list):
    """The names of the forbidden built-ins called; ``tampered`` when the answer removed the watch."""

    tampered = False


@contextlib.contextmanager
def _calls_to(*names: str) -> Iterator[_Called]:
    """Collect the names of these built-ins each time one is called, however reached, in this thread
    and in every thread started meanwhile. An answer that replaces the watch (``sys.setprofile``) is
    marked ``tampered``: a check refuses it like a forbidden call."""
    codes = [(_BUILT_INS[n], n) for n in names]
    called = _Called()
    previous, previous_threads = _getprofile(), _thread_getprofile()

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            for code, name in codes:
                if frame.f_code is code:
                    called.append(name)
        if callable(previous):
            previous(frame, event, arg)

    _setprofile(profile)
    _thread_setprofile(profile)
    try:
        yield called
    finally:
        if _getprofile() is not profile or _thread_getprofile() is not profile:
            called.tampered = True
            called.append("the check's watch (sys.setprofile)")
        _setprofile(previous)
        _thread_setprofile(previous_threads)


#: How a refusal names each built-in.
_SHOWN = {"clip_by_norm": "eg.clip_by_norm", "clip_by_global_norm": "eg.clip_by_global_norm",
          "global_norm": "eg.global_norm",
          "softmax_cross_entropy": "the fused loss eg.nn.softmax_cross_entropy",
          "sparse_softmax_cross_entropy": "the fused loss eg.nn.sparse_softmax_cross_entropy",
          "fused_xent": "the fused loss's private forward",
          "walk": "the engine's gradient (a tape or eg.gradients_function)",
          "apply_gradients": "an optimizer's apply_gradients", "momentum_update": "Momentum._update",
          "adam_update": "Adam._update", "accumulator_add": "eg.optimizers.Accumulator",
          "train_step": "eg.training.train_step"}


def _refusal(called: _Called, task: str) -> str | None:
    """None when no forbidden built-in ran; else the sentence refusing the answer, saying why."""
    if not called:
        return None
    if called.tampered:
        return ("it replaced the check's watch on calls (sys.setprofile or threading.setprofile) while it "
                "ran, so the check cannot see what it does: " + task)
    names = ", ".join(dict.fromkeys(_SHOWN.get(n, n) for n in called))
    return f"it calls {names} (under whatever name), the engine's own: {task}"
