"""What clipping does to a set of gradients, computed by the engine's clipping functions
(`eg.clip_by_value`, `eg.clip_by_norm`, `eg.clip_by_global_norm`, `eg.global_norm`, `eg.norm`).

>>> import engine as eg
>>> r = clip_gradients([eg.constant([3.0, 4.0])], "global norm", 1.0)
>>> round(r.global_norm_before, 4), round(r.global_norm_after, 4)
(5.0, 1.0)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import engine as eg
import engine.clipping
from gradviz.model.checks import expect_collection, expect_numbers

__all__ = [
    "ClipResult", "Before", "clip_gradients", "measure_before", "parse_gradients", "METHODS", "CALLS",
    "MAX_ARROWS",
]

METHODS = ("value", "norm", "global norm", "per-variable norm")

CALLS = {
    "value": "[eg.clip_by_value(g, -{c}, {c}) for g in grads]",
    "norm": "[eg.clip_by_norm(g, {c}, axes=-1) for g in grads]",
    "global norm": "clipped, global_norm = eg.clip_by_global_norm(grads, {c})",
    "per-variable norm": "[eg.clip_by_norm(g, {c}) for g in grads]",
}

MAX_ARROWS = 12


@dataclass
class ClipResult:
    """What one method and threshold did to the gradients (all numbers from the engine).

    Per-variable lists hold ``None`` / NaN where the gradient itself was ``None``.
    """

    method: str
    threshold: float
    clipped: list[Any]  # engine tensors (or None)
    norms_before: list[float]
    norms_after: list[float]
    angles_deg: list[float]  # per variable, before vs after (NaN where a norm is 0)
    global_norm_before: float
    global_norm_after: float
    angle_deg: float  # of the whole (concatenated) gradient, before vs after
    clipped_any: bool = field(default=False)

    def numpy(self) -> list[np.ndarray | None]:
        """The clipped gradients as NumPy arrays."""
        return [None if c is None else c.numpy() for c in self.clipped]


def _clip_module() -> Any:
    """``engine.clipping``: clip_by_value, clip_by_norm, global_norm, clip_by_global_norm, norm."""
    return engine.clipping


def _to_tensor(g: Any) -> Any:
    if g is None or isinstance(g, eg.Tensor):
        return g
    return eg.constant(g)


def _unit64(eg: Any, C: Any, tensors: list[Any]) -> tuple[list[Any], Any] | None:
    """``tensors`` in float64 and their global norm; None when the norm is 0 or not finite."""
    t64 = [eg.cast(t, "float64") for t in tensors]
    n = C.global_norm(t64)
    return (t64, n) if float(n) > 0 and math.isfinite(float(n)) else None


def _angle(eg: Any, C: Any, before: Any, after: list[Any]) -> float:
    """The angle (degrees) between two lists of tensors seen as one long vector each (``before``: the
    first list's `_unit64`; ``None`` entries of ``after`` are skipped, as they are in ``before``).

    Computed as 2·atan2(‖u − v‖, ‖u + v‖) with u, v the unit vectors (in float64): exact for
    small angles, where arccos of a dot product would turn rounding into a visible angle.
    """
    after = [a for a in after if a is not None]
    parts_a = _unit64(eg, C, after) if after else None
    if before is None or parts_a is None:
        return math.nan
    (b64, nb), (a64, na) = before, parts_a
    diff = C.global_norm([b / nb - a / na for b, a in zip(b64, a64)])
    total = C.global_norm([b / nb + a / na for b, a in zip(b64, a64)])
    return math.degrees(2.0 * math.atan2(float(diff), float(total)))


@dataclass
class Before:
    """What `clip_gradients` measures of the gradients before clipping (the same for every method and
    threshold: a widget exploring many computes it once, with `measure_before`)."""

    tensors: list[Any]
    norms: list[float]
    global_norm: float
    units: list[Any]  # per gradient: `_unit64` of [g] (None: g is None, or its norm 0 / not finite)
    unit: Any  # `_unit64` of all of them


def measure_before(grads: Sequence[Any]) -> Before:
    """The norms, global norm and float64 unit vectors of ``grads`` (see `Before`).

    >>> import engine as eg
    >>> b = measure_before([eg.constant([3.0, 4.0]), None])
    >>> b.norms[0], math.isnan(b.norms[1]), b.global_norm
    (5.0, True, 5.0)
    """
    C = _clip_module()
    tensors = [_to_tensor(g) for g in grads]
    present = [g for g in tensors if g is not None]
    return Before(
        tensors=tensors,
        norms=[math.nan if g is None else float(C.norm(g)) for g in tensors],
        global_norm=float(C.global_norm(present)) if present else math.nan,
        units=[None if g is None else _unit64(eg, C, [g]) for g in tensors],
        unit=_unit64(eg, C, present) if present else None,
    )


def clip_gradients(
    grads: Sequence[Any], method: str, threshold: float, before: Before | None = None,
) -> ClipResult:
    """Clip ``grads`` with the engine and measure the result (norms, global norm, angles); ``before``:
    `measure_before` of ``grads``, when already computed.

    >>> import engine as eg
    >>> r = clip_gradients([eg.constant([3.0, 4.0])], "value", 1.0)
    >>> r.clipped[0].numpy(), round(r.angle_deg, 2)
    (array([1., 1.], dtype=float32), 8.13)
    """
    C = _clip_module()
    if method not in METHODS:
        raise ValueError(f"clipping: unknown method {method!r}; choose one of {', '.join(METHODS)}.")
    c = float(threshold)
    if not c > 0:
        raise ValueError(f"clipping: the threshold must be > 0, got {threshold!r}.")
    if before is None:
        before = measure_before(grads)
    tensors = before.tensors
    if method == "global norm":
        clipped, _ = C.clip_by_global_norm(list(tensors), c)
        clipped = list(clipped)
    elif method == "value":
        clipped = [None if g is None else C.clip_by_value(g, -c, c) for g in tensors]
    elif method == "norm":
        clipped = [None if g is None else C.clip_by_norm(g, c, axes=-1 if g.ndim else None)
                   for g in tensors]
    else:
        clipped = [None if g is None else C.clip_by_norm(g, c) for g in tensors]

    def norm(t: Any) -> float:
        return math.nan if t is None else float(C.norm(t))

    present_after = [g for g in clipped if g is not None]
    return ClipResult(
        method=method,
        threshold=c,
        clipped=clipped,
        norms_before=list(before.norms),
        norms_after=[norm(g) for g in clipped],
        angles_deg=[math.nan if g is None else _angle(eg, C, u, [a])
                    for g, u, a in zip(tensors, before.units, clipped)],
        global_norm_before=before.global_norm,
        global_norm_after=float(C.global_norm(present_after)) if present_after else math.nan,
        angle_deg=_angle(eg, C, before.unit, clipped),
        clipped_any=any(
            g is not None and not np.array_equal(g.numpy(), a.numpy()) for g, a in zip(tensors, clipped)
        ),
    )


def parse_gradients(grads: Any, names: Sequence[str] | None) -> tuple[list[Any], list[str]]:
    """Gradients and their labels from a list, a list of (gradient, variable) pairs, or a dict."""
    if isinstance(grads, Mapping):
        labels = [str(k) for k in grads]
        items = list(grads.values())
    else:
        lone = isinstance(grads, eg.Tensor | np.ndarray)
        items = expect_collection(
            "gv.clipping", "the gradients", grads,
            "a list of gradients, a list of (gradient, variable) pairs (what opt.compute_gradients "
            "returns) or a dict {name: gradient}",
            "This is a single tensor, not a list: for one gradient pass [g]." if lone else "",
        )
        labels = []
        is_pairs = items and all(
            isinstance(p, tuple) and len(p) == 2 and isinstance(p[1], eg.Variable) for p in items
        )
        if is_pairs:
            labels = [getattr(v, "name", None) or f"g{k}" for k, (_, v) in enumerate(items)]
            items = [g for g, _ in items]
        else:
            labels = [f"g{k}" for k in range(len(items))]
    if names is not None:
        names = expect_collection("gv.clipping", "names", names, "a list of labels, one per gradient")
        if len(names) != len(items):
            raise ValueError(f"clipping: {len(names)} names for {len(items)} gradients.")
        labels = [str(n) for n in names]
    if not items:
        raise ValueError("clipping: the list of gradients is empty.")
    for label, g in zip(labels, items):
        if g is not None:
            expect_numbers("gv.clipping", f"the gradient {label!r}", g)
    tensors = [_to_tensor(g) for g in items]
    for label, t in zip(labels, tensors):
        if t is not None and t.dtype.kind not in "fc":
            raise TypeError(
                f"clipping: the gradient {label!r} has dtype {t.dtype}; gradients are floating-point "
                f"(convert with eg.cast(g, 'float32'))."
            )
    return tensors, labels
