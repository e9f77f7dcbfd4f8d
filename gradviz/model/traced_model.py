"""A traced step (an ``eg.Graph``) as a graph model, folded and drawn like a tape's graph.

Each traced node becomes one node of the model: a function argument, a Variable's read or a constant
as a tensor box (named, with its shape), every other node as an op (its type, and its name's last
part when that says more). Ops made by ``tape.gradient`` have the role "backward", assignments and
optimizer updates "update". Scopes come from the names (``sequential_1/dense_1/MatMul``); a
Variable's read sits in the layer that reads it, so each layer is one box and each Variable appears
once. The step reads left to right in three bands (forward, gradients, updates): invisible "order"
edges hang each band after the one before. Nothing here draws.

>>> import engine as eg
>>> f = eg.function(lambda x: eg.tanh(x) * 2)
>>> m = traced_model(f.get_graph(eg.ones(2)))
>>> [(n.kind, n.label) for n in m.nodes.values()]
[('tensor', 'x'), ('op', 'Tanh'), ('op', 'Mul')]
"""

from __future__ import annotations

from typing import Any

from gradviz.model.graph_model import Edge, GraphModel, Node

__all__ = ["traced_model", "band_of"]

_LEAVES = ("input", "read", "const")


def traced_model(graph: Any, constants: bool = False) -> GraphModel:
    """The model of ``graph`` (an ``eg.Graph``); ``constants``: keep its ``Const`` nodes too.

    >>> import engine as eg
    >>> w = eg.Variable(2.0, name="w")
    >>> @eg.function
    ... def step(x):
    ...     with eg.GradientTape() as tape:
    ...         loss = w * x
    ...     w.assign_sub(0.1 * tape.gradient(loss, w))
    >>> m = traced_model(step.get_graph(eg.constant(1.0)))
    >>> sorted({n.role for n in m.nodes.values() if n.kind == "op"})
    ['', 'backward', 'update']
    """
    nodes = [n for n in graph.nodes if constants or n.kind != "const"]
    same = _same_reads(nodes)
    ids = {id(n): f"n{k}" for k, n in enumerate(nodes)}
    ids.update({id(n): ids[id(first)] for n, first in same.items()})
    nodes = [n for n in nodes if n not in same]
    place = _placement(nodes, same)
    reads = {id(first): 1 for first in same.values()}
    for first in same.values():
        reads[id(first)] += 1
    model_nodes: dict[str, Node] = {}
    edges: list[Edge] = []
    for k, n in enumerate(nodes):
        nid = ids[id(n)]
        common = dict(id=nid, name=n.name, shape=tuple(n.shape), dtype=str(n.dtype), device=str(n.device),
                      scope=place[n.name], order=k, record=n)
        if n.kind in _LEAVES:
            times = reads.get(id(n), 1)
            model_nodes[nid] = Node(kind="tensor", label=n.name, leaf=True, variable=n.kind == "read",
                                    watched=n.kind == "input", **common,
                                    detail=f"read {times} times" if times > 1 else "")
        else:
            short = n.name.rsplit("/", 1)[-1]
            model_nodes[nid] = Node(kind="op", label=n.op if short == n.op else f"{n.op}\n{short}",
                                    role="update" if n.kind == "write" else "backward" if n.backward else "",
                                    **common)
    for n in [*nodes, *same]:
        nid = ids[id(n)]
        for i, m in enumerate(n.inputs):
            if id(m) in ids and ids[id(m)] != nid:
                edges.append(Edge(ids[id(m)], nid, i))
        for m in n.control_inputs:
            if id(m) in ids and not (n.kind == "write" and m.kind == "read"):  # an update after its
                edges.append(Edge(ids[id(m)], nid, kind="control"))  # Variable's read: its label says it
    edges = list({(e.src, e.dst, e.index, e.kind): e for e in edges}.values())
    edges += _band_edges(nodes, ids)
    return GraphModel(nodes=model_nodes, edges=edges)


def band_of(node: Any) -> int:
    """The band a traced node is drawn in: 0 forward, 1 backward (gradients), 2 updates."""
    return 2 if node.kind == "write" else 1 if node.backward else 0


def _band_edges(nodes: list, ids: dict[int, str]) -> list[Edge]:
    """Invisible edges that put the bands in columns: the backward pass after the forward one (it
    starts from the loss), the updates after both. Each node of a band that nothing in its band
    feeds hangs after the last op of the band before."""
    last: dict[int, Any] = {}
    for n in nodes:
        if n.kind not in _LEAVES:
            last[band_of(n)] = n
    out = []
    for n in nodes:
        b = band_of(n)
        before = last.get(b - 1) if b else None
        if before is None or any(band_of(m) == b for m in n.inputs if id(m) in ids):
            continue
        out.append(Edge(ids[id(before)], ids[id(n)], kind="order"))
    return out


def _scope(name: str) -> str:
    return name.rsplit("/", 1)[0] if "/" in name else ""


def _same_reads(nodes: list) -> dict[Any, Any]:
    """Each Variable read that reads the same value as an earlier one (same Variable, no write in
    between) → that first read: drawn as one box, so that each Variable appears once per value."""
    first: dict[tuple, Any] = {}
    out = {}
    for n in nodes:
        if n.kind == "read" and n.variable is not None:
            key = (id(n.variable), tuple(id(m) for m in n.control_inputs))  # (after the same write)
            if key in first:
                out[n] = first[key]
            else:
                first[key] = n
    return out


def _placement(nodes: list, same: dict[Any, Any]) -> dict[str, str]:
    """The scope each node is drawn in: its name's, except a Variable's read, drawn inside the layer
    that reads it first ("dense_1/kernel" in "sequential_1/dense_1"), so each layer is one box."""
    place = {n.name: _scope(n.name) for n in nodes}
    readers: dict[str, list] = {}
    for m in [*nodes, *same]:
        for i in m.inputs:
            readers.setdefault(same.get(i, i).name, []).append(m)
    for n in nodes:
        own = place[n.name]
        if n.kind != "read" or not own:
            continue
        for m in readers.get(n.name, ()):
            where = place[m.name] if m.name in place else _scope(m.name)
            if not m.backward and (where == own or where.endswith("/" + own)):
                place[n.name] = where
                break
    return place
