"""Folding a big graph into groups, nested so that every view of it stays small.

Layer / name scopes fold first ("dense_1"). When the top level would still show more than
``max_nodes`` boxes (an unrolled loop, a long chain of unscoped ops), it folds again into runs:
a unit is a scope's group, or an op with its outputs and the constants it reads; consecutive units
fold into chunks of at most ``leaf_boxes`` boxes ("ops 12–96"), and consecutive chunks into bigger
chunks until a level holds at most ``branch`` of them. So the default view of any graph has at most
``branch`` + a few boxes, and opening one group shows at most ~``leaf_boxes`` more. Targets always
stay in sight. Nothing here draws; `GraphModel.collapse` turns a plan plus the set of opened groups
into the model that is drawn.

>>> import engine as eg
>>> from gradviz.model.graph_model import build_model
>>> x = eg.constant(0.5)
>>> with eg.GradientTape() as tape:
...     tape.watch(x)
...     h = x
...     for _ in range(300):
...         h = eg.tanh(h * 1.01)
>>> plan = fold_plan(build_model(h, tape, grads=False))
>>> len(plan.top) <= BRANCH + 1, plan.groups[plan.top[0]].label.startswith("ops 1–")
(True, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["FoldGroup", "FoldPlan", "fold_plan", "LEAF_BOXES", "BRANCH"]

LEAF_BOXES = 120  # boxes one opened chunk shows at most (a single op with more inputs is one chunk)
BRANCH = 24  # chunks one level shows at most


@dataclass(frozen=True)
class FoldGroup:
    """A group: ``key`` is what `GraphModel.collapse`'s ``expanded`` names it by (a scope name or
    "ops 12–96"), ``id`` its node id ("g3"), ``children`` the node and group ids one level down,
    ``members`` every node id inside it at any depth."""

    key: str
    id: str
    label: str
    children: tuple[str, ...]
    members: tuple[str, ...]
    order: int


@dataclass(frozen=True)
class FoldPlan:
    """The groups by id, and the ids (nodes and groups) of the top level, in execution order."""

    groups: dict[str, FoldGroup]
    top: tuple[str, ...]

    def by_key(self, key: str) -> FoldGroup | None:
        """The group called ``key`` (None if there is none)."""
        for g in self.groups.values():
            if g.key == key:
                return g
        return None


def fold_plan(
    model: Any, max_nodes: int = 150, leaf_boxes: int = LEAF_BOXES, branch: int = BRANCH
) -> FoldPlan:
    """How ``model`` (a `GraphModel`) folds: its scopes, then runs of units when the top level
    would show more than ``max_nodes`` boxes (``max_nodes=0``: always fold the runs)."""
    if leaf_boxes < 2 or branch < 2:
        raise ValueError(f"fold_plan: leaf_boxes and branch must be at least 2, got {leaf_boxes}, {branch}.")
    nodes = model.nodes
    groups: dict[str, FoldGroup] = {}
    keys: set[str] = set()
    rank = {n.id: k for k, n in enumerate(sorted((n for n in nodes.values() if n.kind == "op"),
                                                  key=lambda n: n.order), 1)}  # "ops 1–60": this graph's
    span: dict[str, tuple[str, str]] = {}  # group id → its first and last scope (runs of scopes only)

    def make(label: str | None, children: list[str], members: list[str]) -> str:
        gid = f"g{len(groups)}"
        if label is None:
            label = _label(rank, span, children, members)
            if all(c in span for c in children):
                span[gid] = (span[children[0]][0], span[children[-1]][1])
        key, k = label, 2
        while key in keys:  # a scope could be called "ops 3–9" too
            key, k = f"{label} ({k})", k + 1
        keys.add(key)
        order = min(nodes[m].order for m in members)
        groups[gid] = FoldGroup(key, gid, label, tuple(children), tuple(members), order)
        return gid

    def order_of(item: str) -> int:
        return groups[item].order if item in groups else nodes[item].order

    scoped = {s: ms for s, ms in model.scopes.items() if len(ms) >= 2}
    in_scope = {m for ms in scoped.values() for m in ms}
    loose = [n for n in nodes.values() if n.id not in in_scope and not n.target]
    targets = sorted((n.id for n in nodes.values() if n.target), key=order_of)

    if len(scoped) + len(loose) <= max_nodes:  # scopes alone keep the view small enough
        scope_ids = [make(s, ms, ms) for s, ms in sorted(scoped.items(), key=lambda kv: _first(nodes, kv[1]))]
        top = sorted(scope_ids + [n.id for n in loose], key=order_of)
        return FoldPlan(groups, tuple(top + targets))

    # Units: each scope's group; each loose op with the loose tensors it makes and the loose
    # constants / inputs it reads first (so a 2,000-op chain folds into its ops, not its leaves).
    producer: dict[str, str] = {}
    first_reader: dict[str, str] = {}
    for e in model.edges:
        if nodes[e.src].kind == "op":
            producer.setdefault(e.dst, e.src)
        else:
            old = first_reader.get(e.src)
            if old is None or nodes[e.dst].order < nodes[old].order:
                first_reader[e.src] = e.dst
    scope_of_node = {m: s for s, ms in scoped.items() for m in ms}
    extra: dict[str, list[str]] = {s: [] for s in scoped}  # loose leaves read first inside a scope
    units: dict[str, list[str]] = {n.id: [n.id] for n in loose if n.kind == "op"}
    singles: list[str] = []
    for n in loose:
        if n.kind == "op":
            continue
        home = producer.get(n.id) if n.id in producer else first_reader.get(n.id)
        if home in units:
            units[home].append(n.id)
        elif home in scope_of_node:
            extra[scope_of_node[home]].append(n.id)
        else:
            singles.append(n.id)
    items: list[tuple[int, str | None, list[str]]] = []  # (order, scope group id or None, node ids)
    for s, ms in scoped.items():
        ms = list(ms) + extra[s]
        gid = make(s, ms, ms)
        span[gid] = (s, s)
        items.append((_first(nodes, ms), gid, ms))
    for op, ms in units.items():
        items.append((nodes[op].order, None, ms))
    for nid in singles:
        items.append((nodes[nid].order, None, [nid]))
    items.sort(key=lambda it: it[0])

    # Leaf chunks: consecutive units, at most `leaf_boxes` boxes each once opened.
    level: list[str] = []
    run: list[tuple[int, str | None, list[str]]] = []
    boxes = 0

    def flush() -> None:
        nonlocal run, boxes
        if not run:
            return
        children = [gid if gid else nid for _, gid, ms in run for nid in ([gid] if gid else ms)]
        members = [m for _, _, ms in run for m in ms]
        if len(children) == 1:
            level.append(children[0])
        else:
            level.append(make(None, children, members))
        run, boxes = [], 0

    total = sum(1 if it[1] else len(it[2]) for it in items)
    budget = min(leaf_boxes, max(12, -(-total // branch)))  # ≤ `branch` chunks when that fits
    for it in items:
        size = 1 if it[1] else len(it[2])
        if run and boxes + size > budget:
            flush()
        run.append(it)
        boxes += size
    flush()
    # Bigger chunks: consecutive chunks, until one level shows at most `branch` of them.
    while len(level) > branch:
        per = -(-len(level) // branch)
        nxt = []
        for k in range(0, len(level), per):
            part = level[k : k + per]
            if len(part) == 1:
                nxt.append(part[0])
                continue
            members = [m for c in part for m in (groups[c].members if c in groups else (c,))]
            nxt.append(make(None, part, members))
        level = nxt
    return FoldPlan(groups, tuple(sorted(level, key=order_of) + targets))


def _first(nodes: dict, members: list[str]) -> int:
    return min(nodes[m].order for m in members)


def _label(rank: dict, span: dict, children: list[str], members: list[str]) -> str:
    """"layer_0 … layer_23" for a run of scopes, else which of the graph's ops it holds ("ops 12–96")."""
    if all(c in span for c in children):
        return f"{span[children[0]][0]} … {span[children[-1]][1]}"
    ops = [rank[m] for m in members if m in rank]
    if not ops:
        return f"{len(members)} nodes"
    return f"ops {min(ops)}–{max(ops)}"
