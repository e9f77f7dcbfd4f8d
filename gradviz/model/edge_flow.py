"""The gradient flowing along each edge of a graph model: its size, read off the engine's own backward
steps. The model computes it; `gradviz.render.edges` draws it (pen widths).

>>> import engine as eg
>>> from gradviz.model.graph_model import build_model
>>> x = eg.constant([3.0, 4.0])
>>> with eg.GradientTape() as tape:
...     tape.watch(x)
...     y = eg.sum(x * 2.0)
>>> mags = edge_magnitudes(build_model(y, tape))
>>> sorted(round(v, 3) for v in mags.values())   # ‖g‖ into y, through x·2, back to x and to 2.0
[1.0, 1.414, 1.414, 2.828, 7.0]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gradviz.model import tapeinfo

__all__ = ["edge_magnitudes"]


def edge_magnitudes(model: Any) -> dict[tuple[str, str], float]:
    """The L2 norm of the gradient flowing along each edge of a `gradviz.model.graph_model.GraphModel`.

    For an op → tensor edge: the gradient arriving at the op's output (the step's upstream); for a
    tensor → op edge: what that op contributes to the tensor's gradient. Both are read off the
    engine's own backward steps (``eg.backward_steps``) from the model's targets.
    """
    targets = [model.nodes[t].tensor.obj for t in model.targets if model.nodes[t].tensor is not None]
    if not targets:
        raise ValueError("flow: the graph has no target to take gradients of; pass one: gv.flow(y, tape).")
    records = [r.source for r in model.records]  # the engine's own records (`gradviz.model.protocol`)
    sources = {t.id: t for r in records for t in r.inputs if t.dtype.kind in "fc"}
    steps, _ = tapeinfo.walk(records, targets, list(sources.values()))
    out: dict[tuple[str, str], float] = {}

    def norm(t: Any) -> float:
        a = t.numpy()
        return float(np.sqrt(np.sum(np.abs(a.astype(np.float64) if a.dtype.kind != "c" else a) ** 2)))

    for step in steps:
        if step.record.is_variable_read:  # drawn as the Variable's own node: no edge of its own
            continue
        op = model.op_id(step.record)
        key = (op, model.tensor_id(step.record.output.id))
        out[key] = out.get(key, 0.0) + norm(step.upstream[0])  # (collapsed groups: summed over members)
        for x, c in zip(step.record.inputs, step.contributions):
            if c is not None:
                key = (model.tensor_id(x.id), op)
                out[key] = out.get(key, 0.0) + norm(c)
    return out
