"""The backward pass replayed one recorded op at a time, keeping every intermediate result.

Nothing here knows a derivative: each op's contribution comes from the engine (``Record.prim.vjp``
and ``engine.primitive.unbroadcast``, exactly what ``GradientTape.gradient`` calls), and the sums
use ``engine.add``. What this adds is memory: for each step, the upstream gradient, each input's
contribution, and the running total of every tensor that feeds several ops.

>>> import engine as eg
>>> x = eg.constant(3.0)
>>> with eg.GradientTape(persistent=True) as tape:
...     tape.watch(x)
...     y = x * x + x
>>> steps, grads = backward_steps(tape.records, [y], [x])
>>> [s.op for s in steps], float(grads[x.id])      # dy/dx = 2x + 1
(['add', 'multiply'], 7.0)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import tapeinfo

__all__ = ["Contribution", "Step", "backward_steps", "ELEMENTWISE"]

ELEMENTWISE = frozenset(
    {
        "add",
        "subtract",
        "multiply",
        "divide",
        "pow",
        "negative",
        "abs",
        "sign",
        "exp",
        "log",
        "log1p",
        "sqrt",
        "square",
        "sin",
        "cos",
        "tan",
        "tanh",
        "sigmoid",
        "relu",
        "softplus",
        "maximum",
        "minimum",
        "clip",
        "where",
        "cast",
        "copy_to_device",
    }
)


@dataclass
class Contribution:
    """What one input of one op receives at one step."""

    index: int  # input position
    tensor: Any  # the input tensor (a Variable for its reads)
    key: int  # the id the gradient is accumulated under (the Variable's for a read)
    value: np.ndarray  # the contribution: vjp(upstream)
    local: np.ndarray | None  # ∂output/∂input elementwise, when the op is elementwise and unbroadcast
    before: np.ndarray | None  # the input's running gradient before this step (None: first arrival)
    after: np.ndarray  # ... and after adding the contribution


@dataclass
class Step:
    """One recorded op, walked backwards."""

    record: Any
    upstream: np.ndarray  # the gradient arriving at the op's output (complete by now)
    output_key: int
    contributions: list[Contribution] = field(default_factory=list)
    complete: frozenset[int] = frozenset()  # tensor ids whose gradient is final after this step

    @property
    def op(self) -> str:
        return self.record.op


def backward_steps(
    records: list[Any],
    targets: list[Any],
    sources: list[Any] | None = None,
    output_gradients: list[Any] | None = None,
) -> tuple[list[Step], dict[int, Any]]:
    """Replay the backward pass over ``records`` (execution order) from ``targets``.

    ``sources``: the tensors whose gradients are wanted (None: every watched leaf and every op output).
    Returns the steps (in backward order) and the final gradients by tensor id (engine Tensors; a
    Variable's under its own id, its reads folded in). Reads of Variables are not steps of their own.
    """
    from engine import add, ones_like  # noqa: PLC0415
    from engine.backward import input_gradient  # noqa: PLC0415

    alias = {r.output.id: r.inputs[0].id for r in records if r.op == "read_variable"}

    def key(t: Any) -> int:
        return alias.get(t.id, t.id)

    ops = [r for r in records if r.op != "read_variable"]
    if sources is None:
        depends = {key(r.output) for r in ops} | {
            key(r.inputs[0]) for r in records if r.op == "read_variable"
        }
        depends |= {key(x) for r in ops for x in r.inputs if x.dtype.kind in "fc"}
    else:
        depends = {key(s) for s in sources}
        for r in ops:
            if any(key(x) in depends for x in r.inputs):
                depends.add(key(r.output))

    # how many contributions each tensor still expects: one per (op on a path, input slot)
    reach = {key(t) for t in targets}
    on_path = []
    for r in reversed(ops):
        if key(r.output) in reach and key(r.output) in depends:
            on_path.append(r)
            reach.update(key(x) for x in r.inputs if key(x) in depends)
    pending: dict[int, int] = {}
    for r in on_path:
        for x in r.inputs:
            if key(x) in depends:
                pending[key(x)] = pending.get(key(x), 0) + 1

    grads: dict[int, Any] = {}
    seeds = output_gradients or [None] * len(targets)
    with tapeinfo.quiet():
        for t, seed in zip(targets, seeds):
            g = ones_like(t) if seed is None else seed
            grads[key(t)] = add(grads[key(t)], g) if key(t) in grads else g
        complete = {k for k in grads if pending.get(k, 0) == 0}
        steps = []
        for r in on_path:  # already in backward order
            out = key(r.output)
            g = grads.get(out)
            if g is None:
                continue
            step = Step(record=r, upstream=g.numpy(), output_key=out)
            for i, x in enumerate(r.inputs):
                k = key(x)
                if k not in depends:
                    continue
                gi = input_gradient(r, i, g)
                pending[k] -= 1
                if gi is None:
                    continue
                prev = grads.get(k)
                grads[k] = gi if prev is None else add(prev, gi)
                step.contributions.append(
                    Contribution(
                        index=i,
                        tensor=x,
                        key=k,
                        value=gi.numpy(),
                        local=_local(r, i, g, gi),
                        before=None if prev is None else prev.numpy(),
                        after=grads[k].numpy(),
                    )
                )
                if pending[k] == 0:
                    complete.add(k)
            step.complete = frozenset(complete)
            steps.append(step)
    return steps, grads


def _local(r: Any, i: int, g: Any, gi: Any) -> np.ndarray | None:
    """∂y/∂x_i elementwise, for elementwise ops whose input and output shapes agree (else None).

    Computed by the engine as vjp(ones); kept only when upstream × local really equals the contribution.
    """
    from engine import ones_like  # noqa: PLC0415

    x = r.inputs[i]
    if r.op not in ELEMENTWISE or x.shape != r.output.shape or x.dtype.kind not in "fc":
        return None
    local = r.prim.vjp(i, ones_like(r.output), r.output, r.inputs, r.params)
    if local is None or local.shape != x.shape:
        return None
    local = local.numpy()
    with np.errstate(all="ignore"):
        if not np.allclose(g.numpy() * local, gi.numpy(), rtol=1e-5, atol=1e-6, equal_nan=True):
            return None
    return local
