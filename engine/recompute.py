"""`eg.recompute_grad(f)`: gradient checkpointing (TensorFlow's ``tf.recompute_grad``).

Under a tape, ``f`` runs with the tapes paused, so none of its inner results is kept; the tapes keep
one record instead, whose inputs are ``f``'s tensor arguments and the Variables ``f`` read, and whose
VJP runs ``f`` again under a fresh tape and walks that one backwards. Memory for time: a block's
activations live only while the walk is inside the block (one more forward per block).

- Gradients equal plain ``f``'s, bit for bit on the CPU: the recomputation runs the same ops on the same
  values, and its walk makes the same VJP calls in the same order.
- Under nested tapes the derivative of any order is exact: the recomputation and its walk are engine
  ops, recorded by the outer tapes that are still recording (as a plain ``f``'s VJPs are).
- Inside `eg.function` it is traced like that: the graph holds ``f``'s ops once in the forward pass and
  once more under ``gradients/`` (a recompute in the graph, as TensorFlow's graph has).

>>> import engine as eg
>>> w = eg.Variable([[0.5]])
>>> block = eg.recompute_grad(lambda x: eg.tanh(eg.tanh(x @ w)))
>>> x = eg.constant([[1.0]])
>>> with eg.GradientTape() as tape:
...     loss = eg.sum(block(x))
>>> [r.op for r in tape.records]          # the block's inner results are not kept: one record
['recompute_grad', 'sum']
>>> tape.gradient(loss, w).shape
(1, 1)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from . import listeners as _listeners
from . import nest
from .primitive import Primitive
from .record import Record, op_ids
from .tape import GradientTape
from .tensor import Tensor, is_floating

__all__ = ["recompute_grad"]


def _recompute_vjp(index: int, g: Tensor, y: Tensor, *inputs: Tensor, f: Callable, structure: Any,
                   cache: dict) -> Tensor | None:
    """Input ``index``'s gradient: ``f`` run again on the kept inputs under a fresh tape, walked back
    from ``g`` (once per upstream gradient: every input's gradient comes from that one walk)."""
    if cache.get("g") is not g:
        args, kwargs = _rebuild(structure, inputs)
        sources = [t for t in inputs if is_floating(t.dtype)]
        with GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(sources)
            again = f(*args, **kwargs)
        grads = dict(zip([t._uid for t in sources], tape.gradient(again, sources, output_gradients=g)))
        cache.clear()
        cache.update(g=g, grads=grads)
    return cache["grads"].get(inputs[index]._uid)


_recompute = Primitive(
    "recompute_grad", lambda xp, *xs, **params: None, vjps=_recompute_vjp, inputs=("xs",), needs=("xs",),
    rule="∂xs = the gradients of f run again on xs (and the Variables it reads), walked back from g",
    symbol="recompute", doc="The record `eg.recompute_grad` keeps for a call of f: its inputs, not f's "
    "inner results. Never run as an op (its forward is f itself).",
)


def _rebuild(structure: Any, inputs: tuple[Tensor, ...]) -> tuple[tuple, dict]:
    """``(args, kwargs)`` with each tensor slot filled from ``inputs`` (the record's first inputs)."""
    flat = nest.flatten(structure)
    it = iter(inputs)
    return nest.pack_like(structure, [next(it) if leaf is _SLOT else leaf for leaf in flat])


_SLOT = object()  # where a tensor argument was


def recompute_grad(f: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """``f`` (returning one tensor) whose inner results are not kept for the backward pass but recomputed
    from its inputs when gradients are taken (see the module docstring for nested tapes and graphs).

    >>> import engine as eg
    >>> f = eg.recompute_grad(lambda x: eg.exp(x) * x)
    >>> x = eg.constant(1.0)
    >>> with eg.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = f(x)
    >>> round(float(tape.gradient(y, x)), 4)    # (1 + x)·eˣ
    5.4366
    """
    if not callable(f):
        raise TypeError(f"recompute_grad: f must be callable, got {type(f).__name__}.")

    @functools.wraps(f)
    def wrapped(*args: Any, **kwargs: Any) -> Tensor:
        tapes = [t for t in _listeners.active_tapes() if t._recording]
        if not tapes:  # nothing would keep anything: f itself
            return f(*args, **kwargs)
        with _listeners.tapes_paused(tapes) as reads:
            y = f(*args, **kwargs)
        if not isinstance(y, Tensor):
            raise TypeError(f"recompute_grad: f must return one Tensor, got {type(y).__name__}; return "
                            "the block's output (wrap each output in its own recompute_grad).")
        flat = nest.flatten((args, kwargs))
        tensors = [a for a in flat if isinstance(a, Tensor)]
        structure = nest.pack_like((args, kwargs), [_SLOT if isinstance(a, Tensor) else a for a in flat])
        variables = list({v._uid: v for v in reads if v._uid not in {t._uid for t in tensors}}.values())
        for tape in tapes:
            for v in variables:
                if v._trainable and tape._watch_accessed:
                    tape._watch_one(v)
        _keep(tapes, (*tensors, *variables), y, {"f": f, "structure": structure, "cache": {}})
        return y

    wrapped.recompute_grad = True  # type: ignore[attr-defined]
    return wrapped


def _keep(tapes: list[Any], inputs: tuple[Tensor, ...], y: Tensor, params: dict) -> None:
    """One record for the call on each tape that watches one of its inputs (what `listeners.record`
    does for an op; this one is not an op, so a trace does not see it: f's own ops are traced)."""
    if not is_floating(y.dtype):
        return
    rec = None
    for tape in tapes:
        if any(t._uid in tape._watched for t in inputs):
            tape._watched.add(y._uid)
            if rec is None:
                rec = Record(next(op_ids), _recompute, inputs, y, params, tape._persistent)
            elif tape._persistent:
                rec.keep_all(inputs, y)
            tape._records.append(rec)
    if rec is not None and _listeners.subscribed:
        for listener in _listeners.active():
            listener.on_kept_call(_recompute, y)
