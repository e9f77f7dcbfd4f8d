"""Layer / name scopes of a graph recorded eagerly, read off the Variables' names.

An eager tape records no scope (``eg.name_scope`` names ops only while tracing), but a layer's
Variables carry it ("dense_1/kernel"): the ops that read them are the layer's, and so is the
activation that only they feed. A loss that also reads a label, or an op that mixes two layers,
stays outside.

>>> import engine as eg
>>> from gradviz.model.graph_model import build_model
>>> layer = eg.layers.Dense(2, activation="relu", seed=0, name="dense_1")
>>> with eg.GradientTape() as tape:
...     loss = eg.sum(layer(eg.ones((1, 3))) * 2.0)
>>> m = build_model(loss, tape)
>>> sorted({n.record.op: n.scope for n in m.nodes.values() if n.kind == "op"}.items())
[('add', 'dense_1'), ('matmul', 'dense_1'), ('multiply', ''), ('relu', 'dense_1'), ('sum', '')]
"""

from __future__ import annotations

from typing import Any

__all__ = ["assign_scopes"]


def assign_scopes(model: Any) -> None:
    """Layer / name scopes: a Variable's scope is its name's prefix ("dense_1/kernel" → "dense_1");
    an op takes the scope of the Variables it reads, else that of the ops that made its inputs when
    every input was made in one scope (a layer's activation; not the loss that also reads a label);
    a tensor takes its producer's scope. (Eager tapes record no scopes: layers' Variables name them.)"""
    producer: dict[str, str] = {}
    inputs: dict[str, list[str]] = {}
    outputs: dict[str, list[str]] = {}
    for e in model.edges:
        if model.nodes[e.src].kind == "op":
            producer[e.dst] = e.src
            outputs.setdefault(e.src, []).append(e.dst)
        else:
            inputs.setdefault(e.dst, []).append(e.src)
    for n in model.nodes.values():
        if n.kind == "tensor" and n.variable and n.name and "/" in n.name:
            n.scope = n.name.rsplit("/", 1)[0]
    for n in sorted((n for n in model.nodes.values() if n.kind == "op"), key=lambda n: n.order):
        ins = [model.nodes[i] for i in inputs.get(n.id, [])]
        from_vars = [i.scope for i in ins if i.variable and i.scope]
        if from_vars:
            n.scope = from_vars[0]
        else:
            upstream = {model.nodes[producer[i.id]].scope if i.id in producer else "" for i in ins}
            if len(upstream) == 1 and "" not in upstream:
                n.scope = upstream.pop()
        for out in outputs.get(n.id, []):
            model.nodes[out].scope = n.scope
