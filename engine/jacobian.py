"""Jacobians from a tape: one backward pass per output element, stacked.

>>> import engine as eg
>>> x = eg.constant([1.0, 2.0])
>>> with eg.GradientTape() as tape:
...     tape.watch(x)
...     y = x * x
>>> tape.jacobian(y, x).numpy()
array([[2., 0.],
       [0., 4.]], dtype=float32)
"""

from __future__ import annotations

from typing import Any

from . import backend, nest, ops
from .tensor import Tensor

__all__ = ["jacobian", "batch_jacobian"]


def jacobian(tape: Any, target: Tensor, sources: Any, unconnected_gradients: str = "none") -> Any:
    """The full Jacobian: shape ``target.shape + source.shape`` for each source.

    One backward pass per element of ``target``.
    """
    tape._start_gradient()
    flat_sources = nest.flatten(sources)
    if target.size == 0:  # no rows: one pass with the (empty) seed tells which sources are connected
        empty = _empty_jacobians(tape, target, flat_sources, unconnected_gradients)
        tape._finish_gradient()
        return nest.pack_like(sources, empty)
    rows: list[list[Tensor | None]] = []
    for i in range(int(target.size)):
        seed = _one_hot(target, i)
        rows.append(tape._gradients([target], flat_sources, [seed], unconnected_gradients))
    tape._finish_gradient()
    out = []
    for k, src in enumerate(flat_sources):
        col = [row[k] for row in rows]
        if any(g is None for g in col):
            out.append(None if unconnected_gradients == "none" else
                       _zeros_beside(src, target.shape + src.shape))
            continue
        out.append(ops.reshape(ops.stack(col, axis=0), target.shape + src.shape))
    return nest.pack_like(sources, out)


def _empty_jacobians(tape: Any, target: Tensor, sources: list[Tensor], unconnected_gradients: str,
                     batch: bool = False) -> list[Tensor | None]:
    """The Jacobians of a ``target`` with no elements (or, ``batch``, no elements per example): zeros of
    shape ``target.shape + source.shape`` (``source.shape[1:]`` for batch Jacobians), which hold no
    numbers, or None for a source the target does not depend on (``unconnected_gradients="none"``).
    One backward pass with an all-zero seed tells which sources are connected."""
    with target._device.activate():
        seed = Tensor._make(target._device.xp.zeros(target.shape, dtype=target.dtype), target._device)
    grads = tape._gradients([target], sources, [seed], unconnected_gradients)
    return [None if g is None else _zeros_beside(src, target.shape + src.shape[1 if batch else 0:])
            for g, src in zip(grads, sources)]


def batch_jacobian(tape: Any, target: Tensor, source: Tensor,
                   unconnected_gradients: str = "none") -> Tensor | None:
    """Per-example Jacobians: ``target`` (B, *T), ``source`` (B, *S) → (B, *T, *S).

    Assumes example b of target depends only on example b of source (as TensorFlow does).
    """
    if target.ndim < 1 or source.ndim < 1 or target.shape[0] != source.shape[0]:
        raise ValueError(
            f"batch_jacobian: target {target.shape} and source {source.shape} need the same "
            "first (batch) dimension."
        )
    tape._start_gradient()
    batch, inner = target.shape[0], target.shape[1:]
    cols = []
    n_inner = 1
    for n in inner:
        n_inner *= n
    if n_inner == 0 or batch == 0:  # nothing to seed: zeros (B, *T, *S) with no elements, or None
        [empty] = _empty_jacobians(tape, target, [source], unconnected_gradients, batch=True)
        tape._finish_gradient()
        return empty
    for j in range(n_inner):
        seed = _batch_one_hot(target, j)
        cols.append(tape._gradients([target], [source], [seed], unconnected_gradients)[0])
    tape._finish_gradient()
    if any(c is None for c in cols):
        return None
    stacked = ops.stack(cols, axis=1)  # (B, n_inner, *S)
    return ops.reshape(stacked, (batch,) + inner + source.shape[1:])


def _zeros_beside(src: Tensor, shape: tuple[int, ...]) -> Tensor:
    with backend.device(src._device):  # on the source's device, not the current one
        return ops.zeros(shape, dtype=src.dtype)


def _one_hot(target: Tensor, index: int) -> Tensor:
    xp = target._device.xp
    with target._device.activate():  # the seed goes beside the target, not on the current device
        data = xp.zeros(target.shape, dtype=target.dtype)
        data.reshape(-1)[index] = 1
    return Tensor._make(data, target._device)


def _batch_one_hot(target: Tensor, index: int) -> Tensor:
    xp = target._device.xp
    with target._device.activate():
        data = xp.zeros((target.shape[0], target.size // target.shape[0]), dtype=target.dtype)  # B > 0
        data[:, index] = 1
        data = data.reshape(target.shape)
    return Tensor._make(data, target._device)
