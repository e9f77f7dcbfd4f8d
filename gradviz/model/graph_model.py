"""The graph model: tensors and ops as nodes, with values, gradients and names; no drawing here.

Built from a tape's records (what `GradientTape.records` holds), keeping the ops that the target
depends on. A Variable and the snapshots its reads produced are one node. Gradients come from the
engine's own backward pass over the same records (the tape itself is not consumed). Large graphs
collapse into groups: layers / name scopes, then runs of ops (`GraphModel.collapse`, `gradviz.model.fold`).

>>> import engine as eg
>>> x = eg.constant(2.0)
>>> with eg.GradientTape(persistent=True) as tape:
...     tape.watch(x)
...     y = x * x + x
>>> m = build_model(y, tape, names={"x": x, "y": y})
>>> [n.label for n in m.nodes.values()]
['x', '×', 't', '+', 'y']
>>> float(m.node_for(x).grad)      # dy/dx = 2x + 1
5.0
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from gradviz.model import protocol, tapeinfo
from gradviz.model.checks import NAMES, expect_mapping, expect_tensors
from gradviz.model.explain import drawn_id, variable_reads
from gradviz.model.fold import fold_plan
from gradviz.model.scopes import assign_scopes

__all__ = ["Node", "Edge", "GraphModel", "build_model", "COLLAPSE_THRESHOLD", "FOLD_BOXES"]

COLLAPSE_THRESHOLD = 150  # graphs with more nodes collapse unless told otherwise
_EDGE_RANK = {"data": 0, "control": 1, "order": 2}  # two edges merged by folding: drawn as the first
FOLD_BOXES = 40  # boxes a level of a collapsed graph shows at most (gradviz.model.fold.BOXES)


@dataclass
class Node:
    """A tensor, an op, or a collapsed group of them."""

    id: str
    kind: str  # "tensor" | "op" | "group"
    label: str
    name: str | None = None
    tensor: Any = None
    record: Any = None
    shape: tuple = ()
    dtype: str = ""
    device: str = ""
    variable: bool = False
    watched: bool = False
    leaf: bool = False
    target: bool = False
    grad: np.ndarray | None = None
    tapes: tuple[str, ...] = ()
    scope: str = ""
    order: int = 0  # execution order (op_id for ops; the producer's for tensors)
    members: tuple[str, ...] = ()
    detail: str = ""  # a group: what is inside, in words ("3 ops each, 72 side by side")
    group_kind: str = ""  # a group: "scope", "series", "stack", "copies" or "range"
    grad_norm: float | None = None  # a group: the norm of the gradient leaving it (d target / d outputs)
    role: str = ""  # a traced op's part of the step: "" (forward), "backward" or "update"
    _value: np.ndarray | None = field(default=None, repr=False)

    @property
    def value(self) -> np.ndarray | None:
        """The tensor's value as a host NumPy array (None for ops and groups)."""
        if self._value is None and self.tensor is not None and self.tensor.kept:
            self._value = self.tensor.numpy()
        return self._value

    @property
    def op(self) -> str | None:
        return self.record.op if self.record is not None else None

    @property
    def uid(self) -> int | None:
        return self.tensor.id if self.tensor is not None else None


@dataclass
class Edge:
    """``src`` → ``dst``; ``index`` is the input position for tensor → op edges."""

    src: str
    dst: str
    index: int = 0
    tensor_id: int | None = None
    count: int = 1
    label: str = ""
    kind: str = "data"  # "data"; "control" (must run first, no value flows); "order" (layout only)


@dataclass
class GraphModel:
    nodes: dict[str, Node]
    edges: list[Edge]
    targets: list[str] = field(default_factory=list)
    tape_labels: list[str] = field(default_factory=list)
    alias: dict[int, int] = field(default_factory=dict)  # snapshot tensor id → its Variable's id
    group_of: dict[str, str] = field(default_factory=dict)  # node id → group id (collapsed models)
    clusters: dict[str, list[str]] = field(default_factory=dict)  # expanded scope → its node ids
    cluster_group: dict[str, str] = field(default_factory=dict)  # expanded scope → its group id
    cluster_parent: dict[str, str] = field(default_factory=dict)  # expanded scope → the one around it
    cluster_label: dict[str, str] = field(default_factory=dict)  # expanded scope → its frame's title
    records: list[Any] = field(default_factory=list)  # the records the graph shows, in order
    reader: Any = None  # the `protocol.Reader` that read them: values matched by identity
    folded: dict[str, Node] = field(default_factory=dict)  # nodes hidden inside groups, by id
    _plans: dict[int, Any] = field(default_factory=dict, repr=False, compare=False)  # fold plans

    def __len__(self) -> int:
        return len(self.nodes)

    def node_for(self, tensor: Any) -> Node:
        """The node showing ``tensor`` (a Variable's reads map to the Variable)."""
        uid = self.reader.key(tensor) if self.reader is not None else None
        uid = drawn_id(self.alias, tensor.id) if uid is None else drawn_id(self.alias, uid)
        nid = self.group_of.get(f"t{uid}", f"t{uid}")
        try:
            return self.nodes[nid]
        except KeyError:
            raise KeyError(f"tensor #{uid} {tensor.shape} is not in this graph.") from None

    def tensor_id(self, uid: int) -> str:
        """The id of the node that shows tensor ``uid`` (its group's, when collapsed)."""
        nid = f"t{drawn_id(self.alias, uid)}"
        return self.group_of.get(nid, nid)

    def op_id(self, record: Any) -> str:
        """The id of the node that draws ``record`` (an `Op` view, or a record it read: by identity)."""
        key = getattr(record, "key", None)
        if key is None and self.reader is not None:
            key = self.reader.key_of_op(record)
        nid = f"o{record.op_id if key is None else key}"
        return self.group_of.get(nid, nid)

    @property
    def scopes(self) -> dict[str, list[str]]:
        """Scope → the ids of its nodes (the empty scope is the top level)."""
        out: dict[str, list[str]] = {}
        for n in self.nodes.values():
            if n.scope and not n.target:  # a target always stays in sight
                out.setdefault(n.scope, []).append(n.id)
        return out

    @property
    def devices(self) -> list[str]:
        return sorted({n.device for n in self.nodes.values() if n.device})

    def fold_plan(self, max_nodes: int = FOLD_BOXES) -> Any:
        """How this graph folds into groups (`gradviz.model.fold.fold_plan`; once per ``max_nodes``)."""
        if max_nodes not in self._plans:
            self._plans[max_nodes] = fold_plan(self, max_nodes=max_nodes)
        return self._plans[max_nodes]

    def collapse(
        self, expanded: set[str] | frozenset[str] = frozenset(), max_nodes: int = FOLD_BOXES
    ) -> GraphModel:
        """A copy with each group of `fold_plan` not in ``expanded`` drawn as one node.

        Groups are the layer / name scopes, then, in a level with more than ``max_nodes`` boxes,
        repeated identical structure ("multiply → add → tanh × 666") and ranges of ops
        (`gradviz.model.fold`; ``max_nodes=0``: always). An opened group's nodes sit in a frame
        (``clusters``); a group inside a closed one stays closed. A group node carries what is inside
        (``detail``) and the norm of the gradient leaving it (``grad_norm``).
        """
        plan = self.fold_plan(max_nodes)
        shown: list[tuple[str, str | None]] = []  # (node or group id, the frame it sits in)
        frame_of: dict[str, str | None] = {}  # an opened group's key → the frame around its own
        todo: list[tuple[str, str | None]] = [(item, None) for item in reversed(plan.top)]
        while todo:  # depth-first, in order (no recursion: plans can be deep)
            item, frame = todo.pop()
            group = plan.groups.get(item)
            if group is not None and group.key in expanded:
                frame_of[group.key] = frame
                todo.extend((c, group.key) for c in reversed(group.children))
            else:
                shown.append((item, frame))
        out_nodes: dict[str, Node] = {}
        group_of: dict[str, str] = {}
        clusters: dict[str, list[str]] = {}
        for item, frame in shown:
            group = plan.groups.get(item)
            if group is None:
                out_nodes[item] = self.nodes[item]
            else:
                inner = [self.nodes[m] for m in group.members]
                out_nodes[item] = Node(
                    id=group.id,
                    kind="group",
                    label=group.label,
                    scope=group.key,
                    members=group.members,
                    order=group.order,
                    variable=any(n.variable for n in inner),
                    detail=group.detail,
                    group_kind=group.kind,
                )
                for m in group.members:
                    group_of[m] = group.id
            if frame is not None:
                clusters.setdefault(frame, []).append(item)
        edges: dict[tuple[str, str], Edge] = {}
        leaving: dict[str, set[str]] = {}  # group id → its tensors read outside it (or targets)
        for t in self.targets:
            if t in group_of:
                leaving.setdefault(group_of[t], set()).add(t)
        for e in self.edges:
            src, dst = group_of.get(e.src, e.src), group_of.get(e.dst, e.dst)
            if src == dst:
                continue
            if e.kind == "data" and src in out_nodes and out_nodes[src].kind == "group":  # a value leaves it
                leaving.setdefault(src, set()).add(e.src if self.nodes[e.src].kind == "tensor" else e.dst)
            key = (src, dst)
            if key in edges:
                kept = edges[key]
                if e.kind == kept.kind:
                    kept.count += 1
                elif _EDGE_RANK[e.kind] < _EDGE_RANK[kept.kind]:  # a value flows: drawn as data
                    edges[key] = replace(kept, kind=e.kind)
                continue
            label = ""
            if (src != e.src or dst != e.dst) and e.tensor_id is not None:
                t = self.nodes.get(f"t{drawn_id(self.alias, e.tensor_id)}")
                label = str(tuple(t.shape)) if t is not None else ""
            edges[key] = Edge(src, dst, e.index, e.tensor_id, 1, label, e.kind)
        for gid, outs in leaving.items():
            grads = [self.nodes[t].grad for t in outs if self.nodes[t].grad is not None]
            if grads:
                out_nodes[gid].grad_norm = float(np.sqrt(sum(float(np.sum(np.abs(g) ** 2)) for g in grads)))
        clusters, parents = _frames(clusters, frame_of)
        return replace(
            self,
            nodes=out_nodes,
            edges=list(edges.values()),
            folded={m: self.nodes[m] for m in group_of},
            targets=[group_of.get(t, t) for t in self.targets],
            group_of=group_of,
            clusters=clusters,
            cluster_group={s: g.id for s in clusters if (g := plan.by_key(s)) is not None},
            cluster_parent=parents,
            cluster_label={s: g.label for s in clusters if (g := plan.by_key(s)) is not None},
            _plans={},
        )


def _frames(items: dict[str, list[str]], frame_of: dict[str, str | None]
            ) -> tuple[dict[str, list[str]], dict[str, str]]:
    """The frames drawn: opened groups holding at least two things (nodes or frames), each with what
    it holds directly, and the frame around each. A frame around one node is left out: its node
    sits in the frame around it."""
    inner: dict[str | None, int] = {}
    for parent in frame_of.values():
        inner[parent] = inner.get(parent, 0) + 1
    keep = {k for k in frame_of if len(items.get(k, ())) + inner.get(k, 0) > 1}

    def up(key: str | None) -> str | None:
        while key is not None and key not in keep:
            key = frame_of.get(key)
        return key

    clusters: dict[str, list[str]] = {}
    for key, members in items.items():
        target = up(key)
        if target is not None:
            clusters.setdefault(target, []).extend(members)
    parents = {k: p for k in keep if (p := up(frame_of[k])) is not None}
    return {k: clusters.get(k, []) for k in frame_of if k in keep}, parents


def build_model(
    target: Any, tape: Any, names: Mapping[str, Any] | None = None, grads: bool = True,
    caller: str = "gv.graph",
) -> GraphModel:
    """The graph of the ops ``target`` depends on, as ``tape`` (or a list of tapes) recorded them.

    ``tape``: this engine's tape(s), or any engine's tape that follows the tape protocol (API.md;
    `gradviz.model.protocol` reads both, by the same code), or a `protocol.Reading` of one.
    ``target``: a tensor, a list of tensors (their sum is differentiated), or None for every record.
    ``names``: any name → tensor mapping (``locals()``), for labels. Tensor names are the fallback.
    ``grads``: d target / d node for every node: from the engine's backward pass, or for another
    engine the ``.grad`` its values carry.
    ``caller``: the gradviz call the user made (``gv.backprop``...), which errors name.

    >>> import engine as eg
    >>> import gradviz as gv
    >>> x = eg.constant(2.0)
    >>> with eg.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = x * x
    ...
    >>> [n.label for n in gv.build_model(y, tape, names={"x": x, "y": y}).nodes.values()]
    ['x', '×', 'y']
    """
    reading = tape if isinstance(tape, protocol.Reading) else protocol.read_tape(tape, caller)
    tapes, merged = reading.tapes, reading.rows
    if not merged:
        if not tapes:
            raise ValueError(f"{caller}: the tape's .records is empty: record each op as it runs.")
        raise tapeinfo.no_records_error(caller, tapes[0])
    labels = tapeinfo.tape_labels(tapes, names) if tapes else ["tape"]
    if tapes:
        targets = [reading.reader.value(t) for t in _flatten_targets(target, caller)]
    else:
        targets = _foreign_targets(target, reading, caller)

    alias = variable_reads([r for r, _ in merged])

    def key(t: Any) -> int:
        return drawn_id(alias, t.id)

    produced = {key(r.output) for r, _ in merged}
    grads: dict[int, Any] = {}
    if targets:
        kept, grads = _on_backward_path(merged, targets) if tapes else _feeding(merged, targets)
        for t in targets:
            if key(t) not in produced and not any(key(i) == key(t) for r, _ in kept for i in r.inputs):
                call = "gv.graph(y, tape=...)" if caller == "gv.graph" else f"{caller}(tape, y, ...)"
                raise ValueError(
                    f"{caller}: the target (tensor #{t.id}, shape {t.shape}) was not computed on this tape. "
                    "Compute it inside the tape's `with` block from watched tensors (tape.watch(x) or "
                    f"trainable Variables), or pass the tape that recorded it: {call}."
                )
    else:
        kept = merged

    by_name = tapeinfo.names_by_id(names, caller) if tapes else _names_by_key(names, reading, caller)
    watched = {
        key(t)
        for tp in tapes
        for t in list(tp.watched_variables()) + list(tp.watched_tensors())
        if tp.is_watching(t)
    }
    nodes: dict[str, Node] = {}
    edges: list[Edge] = []

    def tensor_node(t: Any, order: int, leaf: bool) -> str:
        uid = key(t)
        nid = f"t{uid}"
        if nid not in nodes:
            name = by_name.get(uid) or by_name.get(t.id) or (t.name if t.name else None)
            nodes[nid] = Node(
                id=nid,
                kind="tensor",
                label=name or "",
                name=name,
                tensor=t,
                shape=tuple(t.shape),
                dtype=str(t.dtype),
                device=t.device,
                variable=t.variable,
                watched=uid in watched or t.variable and leaf,
                leaf=leaf,
                order=order,
                grad=None if tapes else t.grad,
            )
        return nid

    for r, tape_idx in kept:
        if r.is_variable_read:  # the Variable's node shows the value that was read
            nid = tensor_node(r.inputs[0], r.order, leaf=True)
            if nodes[nid]._value is None:
                nodes[nid]._value = r.output.numpy()
            continue
        oid = f"o{r.key}"
        srcs = [tensor_node(x, r.order, leaf=key(x) not in produced) for x in r.inputs]  # inputs first
        nodes[oid] = Node(
            id=oid,
            kind="op",
            label=r.primitive.symbol,
            record=r,
            tapes=tuple(labels[k] for k in tape_idx),
            order=r.order,
            device=r.output.device,
        )
        for i, (x, src) in enumerate(zip(r.inputs, srcs)):
            edges.append(Edge(src, oid, i, key(x)))
        for out in r.outputs:
            edges.append(Edge(oid, tensor_node(out, r.order, leaf=False), 0, key(out)))
    for t in targets:
        nid = tensor_node(t, 0, leaf=key(t) not in produced)
        nodes[nid].target = True
    for n in nodes.values():  # anonymous intermediates get a short id-based label
        if n.kind == "tensor" and not n.label and not n.leaf:
            n.label = "t"

    model = GraphModel(
        nodes=nodes,
        edges=edges,
        targets=[f"t{key(t)}" for t in targets],
        tape_labels=labels,
        alias=alias,
        records=[r for r, _ in kept],
        reader=reading.reader,
    )
    assign_scopes(model)
    if grads and targets:
        _attach_gradients(model, grads)
    return model


def _foreign_targets(target: Any, reading: protocol.Reading, caller: str = "gv.graph") -> list[Any]:
    """Another engine's target(s): values of its tape, matched by identity (None: every record)."""
    if target is None:
        return []
    items = list(target) if isinstance(target, list | tuple) else [target]
    out = []
    for t in items:
        if reading.reader.key(t) is None:
            raise ValueError(f"{caller}: the target ({type(t).__name__}) is no input or output of any record "
                             "on this tape: pass the value your engine's last op returned, the very object "
                             "(values are matched by identity).")
        out.append(reading.reader.value(t))
    return out


def _names_by_key(names: Mapping[str, Any] | None, reading: protocol.Reading,
                  caller: str = "gv.graph") -> dict[int, str]:
    """Value id → a variable name, for another engine's values (matched by identity)."""
    expect_mapping(caller, "names", names, NAMES)
    out: dict[int, str] = {}
    for name, obj in (names or {}).items():
        k = reading.reader.key(obj) if isinstance(name, str) and not name.startswith("_") else None
        if k is not None:
            out.setdefault(k, name)
    return out


def _feeding(merged: list, targets: list) -> tuple[list, dict[int, Any]]:
    """Another engine's records that the targets depend on, in execution order (no gradients here:
    its values carry their own ``.grad``)."""
    needed = {t.id for t in targets}
    kept = []
    for r, k in merged[::-1]:
        if any(o.id in needed for o in r.outputs):
            kept.append((r, k))
            needed.update(x.id for x in r.inputs)
    return kept[::-1], {}


def _flatten_targets(target: Any, caller: str = "gv.graph") -> list[Any]:
    if target is None:
        return []
    return expect_tensors(caller, "the target", target)


def _on_backward_path(merged: list, targets: list) -> tuple[list, dict[int, Any]]:
    """The records the engine's backward walk visits from ``targets`` (every recorded float input a
    source), in execution order, and the gradients it gives each tensor: gradviz draws what backprop
    does, and walks nothing itself."""
    records = [r.source for r, _ in merged]  # the engine's own records: its walk reads them
    sources = {t.id: t for r in records for t in r.inputs if t.dtype.kind in "fc"}
    steps, grads = tapeinfo.walk(records, [t.obj for t in targets], list(sources.values()))
    visited = {step.record.op_id for step in steps}  # (an engine Record's op_id is its view's)
    return [(r, k) for r, k in merged if r.op_id in visited], grads


def _attach_gradients(model: GraphModel, grads: dict[int, Any]) -> None:
    """d sum(targets) / d node for every float tensor node that is computed or watched."""
    for n in model.nodes.values():
        if n.kind != "tensor" or not n.dtype.startswith(("float", "complex")):
            continue
        g = grads.get(n.tensor.id)
        if g is not None and (not n.leaf or n.watched):
            n.grad = g.numpy()
