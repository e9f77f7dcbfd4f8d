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

from gradviz.model.checks import expect_collection, expect_numbers

__all__ = ["ClipResult", "clip_gradients", "parse_gradients", "METHODS", "CALLS", "MAX_ARROWS"]

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
    import engine.clipping

    return engine.clipping


def _to_tensor(g: Any) -> Any:
    import engine as eg

    if g is None or isinstance(g, eg.Tensor):
        return g
    return eg.constant(g)


def _angle(eg: Any, C: Any, before: list[Any], after: list[Any]) -> float:
    """The angle (degrees) between two lists of tensors seen as one long vector each.

    Computed as 2·atan2(‖u − v‖, ‖u + v‖) with u, v the unit vectors (in float64): exact for
    small angles, where arccos of a dot product would turn rounding into a visible angle.
    """
    pairs = [(b, a) for b, a in zip(before, after) if b is not None and a is not None]
    if not pairs:
        return math.nan
    b64 = [eg.cast(b, "float64") for b, _ in pairs]
    a64 = [eg.cast(a, "float64") for _, a in pairs]
    nb, na = C.global_norm(b64), C.global_norm(a64)
    if not (float(nb) > 0 and float(na) > 0) or not (math.isfinite(float(nb)) and math.isfinite(float(na))):
        return math.nan
    diff = C.global_norm([b / nb - a / na for b, a in zip(b64, a64)])
    total = C.global_norm([b / nb + a / na for b, a in zip(b64, a64)])
    return math.degrees(2.0 * math.atan2(float(diff), float(total)))


def clip_gradients(grads: Sequence[Any], method: str, threshold: float) -> ClipResult:
    """Clip ``grads`` with the engine and measure the result (norms, global norm, angles).

    >>> import engine as eg
    >>> r = clip_gradients([eg.constant([3.0, 4.0])], "value", 1.0)
    >>> r.clipped[0].numpy(), round(r.angle_deg, 2)
    (array([1., 1.], dtype=float32), 8.13)
    """
    import engine as eg

    C = _clip_module()
    if method not in METHODS:
        raise ValueError(f"clipping: unknown method {method!r}; choose one of {', '.join(METHODS)}.")
    c = float(threshold)
    if not c > 0:
        raise ValueError(f"clipping: the threshold must be > 0, got {threshold!r}.")
    tensors = [_to_tensor(g) for g in grads]
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

    present = [g for g in tensors if g is not None]
    present_after = [g for g in clipped if g is not None]
    norms_before = [norm(g) for g in tensors]
    norms_after = [norm(g) for g in clipped]
    return ClipResult(
        method=method,
        threshold=c,
        clipped=clipped,
        norms_before=norms_before,
        norms_after=norms_after,
        angles_deg=[math.nan if g is None else _angle(eg, C, [g], [a]) for g, a in zip(tensors, clipped)],
        global_norm_before=float(C.global_norm(present)) if present else math.nan,
        global_norm_after=float(C.global_norm(present_after)) if present_after else math.nan,
        angle_deg=_angle(eg, C, tensors, clipped),
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
        import engine as eg

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
