"""Folding a big graph by meaning, nested so that every view of it stays small.

1. **Name scopes** first: a layer ("dense_1": the ops that read its Variables and its activation), the
   gradients, the optimizer's updates. Each scope is a box that opens.
2. Then **repeated identical structure** inside each level that is still too big: a block of pieces
   (same ops, same shapes) repeated in a row is one box, "multiply → add → tanh × 666" when each copy
   reads the one before (a series), "matmul → add → relu × 72" when the copies sit side by side (a
   stack: per-sample work). Opened, it shows its first copy and the others folded behind it.
3. Only what neither explains folds into **ranges** of op numbers ("ops 12–96").

A piece is an op with its outputs and the constants only it reads, a constant or Variable read by
several ops, or a scope's box. Targets always stay in sight. Nothing here draws:
`GraphModel.collapse` turns a plan plus the set of opened groups into the model that is drawn.

>>> import engine as eg
>>> from gradviz.model.graph_model import build_model
>>> x = eg.constant(0.5)
>>> with eg.GradientTape() as tape:
...     tape.watch(x)
...     h = x
...     for _ in range(300):
...         h = eg.tanh(h * 1.01)
>>> plan = fold_plan(build_model(h, tape, grads=False))
>>> [plan.groups[g].label for g in plan.top if g in plan.groups]
['multiply → tanh × 300']
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from gradviz.model.repeats import find_runs

__all__ = ["FoldGroup", "FoldPlan", "fold_plan", "BOXES", "BRANCH"]

BOXES = 40  # boxes one level (the default view, an opened group) shows at most once folded
BRANCH = 24  # range boxes one level shows at most


@dataclass(frozen=True)
class FoldGroup:
    """A group: ``key`` is what `GraphModel.collapse`'s ``expanded`` names it by (its label, made
    unique), ``id`` its node id ("g3"), ``children`` the node and group ids one level down, ``members``
    every node id inside it at any depth. ``kind``: "scope", "series" (copies in a chain), "stack"
    (copies side by side), "copies" (the copies after the first) or "range"; ``count``: the copies of
    a series or stack; ``detail``: what is inside, in words ("3 ops, 666 in a chain")."""

    key: str
    id: str
    label: str
    children: tuple[str, ...]
    members: tuple[str, ...]
    order: int
    kind: str = "range"
    count: int = 1
    detail: str = ""
    parent: str | None = None


@dataclass(frozen=True)
class FoldPlan:
    """The groups by id, and the ids (nodes and groups) of the top level, in execution order."""

    groups: dict[str, FoldGroup]
    top: tuple[str, ...]

    def by_key(self, key: str) -> FoldGroup | None:
        """The group called ``key`` (None if there is none)."""
        return self._keys.get(key)

    @cached_property
    def _keys(self) -> dict[str, FoldGroup]:
        return {g.key: g for g in self.groups.values()}

    def path(self, gid: str) -> list[str]:
        """The ids of ``gid``'s enclosing groups, outermost first, and ``gid`` itself."""
        out = []
        while gid is not None:
            out.append(gid)
            gid = self.groups[gid].parent
        return out[::-1]


@dataclass
class _Piece:
    ids: list[str]  # what the level shows: its nodes, or its group's id
    members: list[str]  # every node inside
    order: int
    sig: Any
    ops: list[str]  # op names (or scope names) in order, for labels
    group: bool = False
    lead: bool = False  # sorted before the others of its level

    def key(self) -> tuple[bool, int]:
        return (not self.lead, self.order)


def fold_plan(model: Any, max_nodes: int = BOXES, branch: int = BRANCH) -> FoldPlan:
    """How ``model`` (a `GraphModel`) folds: scopes, then repeats, then ranges in every level with more
    than ``max_nodes`` boxes (``max_nodes=0``: fold repeats everywhere, ranges over `BOXES`).

    >>> import engine as eg
    >>> from gradviz.model.graph_model import build_model
    >>> x = eg.constant([1.0, 2.0])
    >>> with eg.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = eg.sum(eg.tanh(eg.tanh(eg.tanh(x))))
    >>> plan = fold_plan(build_model(y, tape), max_nodes=0)
    >>> [(g.label, g.kind, g.count) for g in plan.groups.values() if g.kind == "series"]
    [('tanh × 3', 'series', 3)]
    """
    if branch < 2:
        raise ValueError(f"fold_plan: branch must be at least 2, got {branch}.")
    return _Planner(model, max_nodes, branch).plan()


class _Planner:
    def __init__(self, model: Any, max_nodes: int, branch: int):
        self.model, self.nodes = model, model.nodes
        self.force = max_nodes <= 0
        self.budget = max_nodes if max_nodes > 0 else BOXES
        self.branch = branch
        self.groups: dict[str, FoldGroup] = {}
        self.keys: set[str] = set()
        self.rank = {n.id: k for k, n in enumerate(
            sorted((n for n in self.nodes.values() if n.kind == "op"), key=lambda n: n.order), 1)}
        self.producer: dict[str, str] = {}
        self.readers: dict[str, list[str]] = {}
        self.inputs: dict[str, list[str]] = {}
        for e in model.edges:
            if e.kind != "data":
                continue  # control and layout edges carry no value
            if self.nodes[e.dst].kind == "tensor":
                self.producer[e.dst] = e.src
            else:  # an op reads a tensor, or (a traced graph) another op's result directly
                self.readers.setdefault(e.src, []).append(e.dst)
                self.inputs.setdefault(e.dst, []).append(e.src)

    # ---- groups -------------------------------------------------------------------------------------
    def made_by(self, t: str) -> str | None:
        """The op that computed ``t``: its producer, or ``t`` itself when it is an op (a traced graph
        links ops directly)."""
        return t if self.nodes[t].kind == "op" else self.producer.get(t)

    def make(self, label: str, children: list[str], members: list[str], kind: str, count: int = 1,
             detail: str = "", key: str | None = None) -> str:
        gid = f"g{len(self.groups)}"
        key, k = key or label, 2
        label_base = key
        while key in self.keys:  # two stacks of the same ops, a scope called "ops 3–9"
            key, k = f"{label_base} ({k})", k + 1
        self.keys.add(key)
        order = min(self.nodes[m].order for m in members)
        for c in children:
            if c in self.groups:
                self.groups[c] = _with_parent(self.groups[c], gid)
        self.groups[gid] = FoldGroup(key, gid, label, tuple(children), tuple(members), order, kind, count,
                                     detail or self._ops_text(members))
        return gid

    def _ops_text(self, members: list[str]) -> str:
        ops = Counter(self.nodes[m].op for m in members if self.nodes[m].kind == "op")
        total = sum(ops.values())
        if not total:
            return f"{len(members)} nodes"
        names = ", ".join(name for name, _ in ops.most_common(3)) + (", …" if len(ops) > 3 else "")
        return f"{total} op{'s' if total > 1 else ''}: {names}"

    # ---- pieces -------------------------------------------------------------------------------------
    def plan(self) -> FoldPlan:
        nodes = self.nodes
        targets = sorted((n.id for n in nodes.values() if n.target), key=lambda i: nodes[i].order)
        scope_of, parent_scope = _scope_tree(self.model.scopes)
        # a constant / input read by one op only travels with that op; other leaves are pieces
        owner: dict[str, str] = {}
        for n in nodes.values():
            if n.kind != "tensor" or n.target or n.id in self.producer or n.id in scope_of and n.variable:
                continue
            readers = set(self.readers.get(n.id, ()))
            if len(readers) == 1:
                owner[n.id] = readers.pop()
        by_level: dict[str, list[_Piece]] = {}  # scope ("" = top) → its pieces
        for n in nodes.values():
            if n.target or n.id in owner or n.kind == "tensor" and n.id in self.producer:
                continue  # inside an op's piece
            if n.kind == "op":
                piece = self._op_piece(n, owner)
            else:  # shared leaves (a layer's Variables) lead their level, so that the copies line up
                piece = _Piece([n.id], [n.id], n.order, ("leaf", n.shape, n.variable), [], lead=True)
            level = scope_of.get(n.id, "")
            by_level.setdefault(level, []).append(piece)
        top = by_level.pop("", [])
        depth = {s: _depth(s, parent_scope) for s in parent_scope}
        for scope in sorted(parent_scope, key=lambda s: -depth[s]):  # inner scopes first
            pieces = sorted(by_level.pop(scope, []), key=_Piece.key)
            members = [m for p in pieces for m in p.members]
            children = self.arrange(pieces)
            outer = parent_scope[scope]
            label = scope[len(outer) + 1:] if outer else scope  # "dense_1" inside "sequential_1"
            gid = self.make(label, children, members, "scope", key=scope)
            piece = _Piece([gid], members, min(p.order for p in pieces),
                           ("scope", tuple(p.sig for p in pieces)), [label], group=True)
            (by_level.setdefault(outer, []) if outer else top).append(piece)
        top.sort(key=_Piece.key)
        if not self.force and sum(len(p.ids) for p in top) <= self.budget:
            shown = [i for p in top for i in p.ids]
        else:
            shown = self.arrange(top)
        return FoldPlan(self.groups, tuple(shown + targets))

    def _op_piece(self, n: Any, owner: dict[str, str]) -> _Piece:
        made = sorted(self._outputs(n.id))
        outs = [t for t in made if not self.nodes[t].target]
        own = [t for t in self.inputs.get(n.id, ()) if owner.get(t) == n.id]
        kinds = tuple("flow" if owner.get(t) == n.id or self.made_by(t) else "shared"
                      for t in self.inputs.get(n.id, ()))  # a chain's first op reads its input
        shapes = tuple(self.nodes[t].shape for t in self.inputs.get(n.id, ()))
        out_shapes = tuple(self.nodes[t].shape for t in made)  # a chain's last copy makes the target
        sig = (n.op, n.role, shapes, out_shapes if made else (n.shape,), kinds)
        members = list(dict.fromkeys(own)) + [n.id] + outs
        return _Piece(members, members, n.order, sig, [n.op])

    def _outputs(self, op: str) -> list[str]:
        if not hasattr(self, "_outs"):
            self._outs: dict[str, list[str]] = {}
            for t, o in self.producer.items():
                self._outs.setdefault(o, []).append(t)
        return self._outs.get(op, [])

    # ---- one level ----------------------------------------------------------------------------------
    def arrange(self, pieces: list[_Piece]) -> list[str]:
        """The ids one level shows: its pieces, with repeats and then ranges folded when it is big."""
        if not self.force and sum(len(p.ids) for p in pieces) <= self.budget:
            return [i for p in pieces for i in p.ids]
        folded: list[_Piece] = []
        runs = {start: (period, count) for start, period, count in find_runs([p.sig for p in pieces])}
        k = 0
        while k < len(pieces):
            if k in runs:
                period, count = runs[k]
                folded.append(self._repeat(pieces[k : k + period * count], period, count))
                k += period * count
            else:
                folded.append(pieces[k])
                k += 1
        if sum(len(p.ids) for p in folded) <= self.budget:
            return [i for p in folded for i in p.ids]
        return self._ranges(folded)

    def _repeat(self, pieces: list[_Piece], period: int, count: int) -> _Piece:
        copies = [pieces[k * period : (k + 1) * period] for k in range(count)]
        members = [m for p in pieces for m in p.members]
        first = {m for p in copies[0] for m in p.members}
        second = {m for p in copies[1] for m in p.members}
        chained = any(self.made_by(t) in first for m in second for t in self.inputs.get(m, ()))
        names = [name for p in copies[0] for name in p.ops]
        if len(names) > 4:
            names = [*names[:3], "…", names[-1]]
        if copies[0][0].group and all(p.group for p in pieces):
            label = f"{pieces[0].ops[0]} … {pieces[-1].ops[0]} × {count}"
        else:
            label = f"{' → '.join(names) or 'constants'} × {count}"
        ops = sum(1 for m in first if self.nodes[m].kind == "op")
        detail = (f"{ops} op{'s' if ops != 1 else ''} each, {count} "
                  + ("in a chain" if chained else "side by side"))
        rest = [p for c in copies[1:] for p in c]
        rest_ids = self._copies(rest, period, 2)
        rest_members = [m for p in rest for m in p.members]
        more = self.make(f"copies 2–{count}", rest_ids, rest_members, "copies", count - 1,
                         f"{count - 1} more copies of " + (" → ".join(names) or "the first"))
        children = [i for p in copies[0] for i in p.ids] + [more]
        gid = self.make(label, children, members, "series" if chained else "stack", count, detail)
        return _Piece([gid], members, pieces[0].order, ("repeat", pieces[0].sig, count), names, group=True)

    def _copies(self, pieces: list[_Piece], period: int, first_number: int) -> list[str]:
        """The copies after the first: shown as they are when small, else in ranges of whole copies."""
        if sum(len(p.ids) for p in pieces) <= self.budget:
            return [i for p in pieces for i in p.ids]
        per_copy = max(1, sum(len(p.ids) for p in pieces[:period]))
        per_chunk = max(1, self.budget // per_copy)  # copies per range
        count = len(pieces) // period
        per_chunk = max(per_chunk, -(-count // self.branch ** 2))
        chunks: list[str] = []
        for c in range(0, count, per_chunk):
            part = pieces[c * period : (c + per_chunk) * period]
            lo, hi = first_number + c, first_number + min(c + per_chunk, count) - 1
            ids = [i for p in part for i in p.ids]
            members = [m for p in part for m in p.members]
            if lo == hi and len(ids) == 1:
                chunks.append(ids[0])
                continue
            chunks.append(self.make(f"copies {lo}–{hi}" if hi > lo else f"copy {lo}", ids, members, "range"))
        return self._nest(chunks)

    def _ranges(self, pieces: list[_Piece]) -> list[str]:
        """Consecutive pieces in ranges of at most `budget` boxes, nested until a level shows at most
        `branch` of them."""
        total = sum(len(p.ids) for p in pieces)
        per = min(self.budget, max(12, -(-total // self.branch)))
        chunks: list[str] = []
        run: list[_Piece] = []

        def flush() -> None:
            if not run:
                return
            ids = [i for p in run for i in p.ids]
            if len(ids) == 1:
                chunks.append(ids[0])
            else:
                chunks.append(self.make(self._range_label(run), ids, [m for p in run for m in p.members],
                                        "range"))
            run.clear()

        size = 0
        for p in pieces:
            if run and size + len(p.ids) > per:
                flush()
                size = 0
            run.append(p)
            size += len(p.ids)
        flush()
        return self._nest(chunks)

    def _nest(self, level: list[str]) -> list[str]:
        while len(level) > self.branch:
            per = -(-len(level) // self.branch)
            nxt = []
            for k in range(0, len(level), per):
                part = level[k : k + per]
                if len(part) == 1:
                    nxt.append(part[0])
                    continue
                members = [m for c in part for m in (self.groups[c].members if c in self.groups else (c,))]
                first, last = (self.groups[c].label if c in self.groups else c for c in (part[0], part[-1]))
                nxt.append(self.make(self._span(first, last, members), part, members, "range"))
            level = nxt
        return level

    def _range_label(self, run: list[_Piece]) -> str:
        if all(p.group and p.sig[0] == "scope" for p in run):
            return f"{run[0].ops[0]} … {run[-1].ops[0]}"
        return self._span("", "", [m for p in run for m in p.members])

    def _span(self, first: str, last: str, members: list[str]) -> str:
        """"copies 2–40" / "ops 12–96": which copies or which of the graph's ops a range holds."""
        if first.startswith("copies ") and last.startswith(("copies ", "copy ")):
            return f"copies {first.split()[1].split('–')[0]}–{last.split()[-1].split('–')[-1]}"
        ops = [self.rank[m] for m in members if m in self.rank]
        if not ops:
            return f"{len(members)} nodes"
        return f"ops {min(ops)}–{max(ops)}"


def _scope_tree(scopes: dict[str, list[str]]) -> tuple[dict[str, str], dict[str, str]]:
    """Which scope box each node sits in, and the box around each box ("" = the top level).

    Scopes nest by their names ("sequential_1/dense_1" sits in "sequential_1"). A scope with fewer
    than two nodes gets no box, nor does one that would hold nothing but one inner box (that box
    takes its place: "gradients/sequential_1" as one box).

    >>> scope_of, around = _scope_tree({"a/b": ["n1", "n2"], "a/c": ["n3"], "d/e": ["n5", "n6"], "f": ["n7"]})
    >>> scope_of
    {'n1': 'a/b', 'n2': 'a/b', 'n3': 'a', 'n5': 'd/e', 'n6': 'd/e'}
    >>> around
    {'a': '', 'a/b': 'a', 'd/e': ''}
    """
    total: dict[str, int] = {}
    for scope, members in scopes.items():
        parts = scope.split("/")
        for k in range(1, len(parts) + 1):
            total["/".join(parts[:k])] = total.get("/".join(parts[:k]), 0) + len(members)
    kept = {s for s, count in total.items() if count >= 2}

    def outer(scope: str) -> str:  # the nearest kept scope strictly around ``scope``
        while "/" in scope:
            scope = scope.rsplit("/", 1)[0]
            if scope in kept:
                return scope
        return ""

    def home(scope: str) -> str:  # the nearest kept scope holding a node of ``scope``
        return scope if scope in kept else outer(scope)

    changed = True
    while changed:  # drop boxes that would hold only one inner box
        changed = False
        direct = {home(s) for s, ms in scopes.items() if ms}
        inner: dict[str, int] = {}
        for s in kept:
            inner[outer(s)] = inner.get(outer(s), 0) + 1
        for s in sorted(kept):
            if s not in direct and inner.get(s, 0) == 1:
                kept.discard(s)
                changed = True
                break
    scope_of = {m: h for s, ms in scopes.items() if (h := home(s)) for m in ms}
    return scope_of, {s: outer(s) for s in sorted(kept)}


def _depth(scope: str, parent: dict[str, str]) -> int:
    k = 0
    while parent.get(scope):
        scope, k = parent[scope], k + 1
    return k


def _with_parent(group: FoldGroup, parent: str | None) -> FoldGroup:
    return FoldGroup(group.key, group.id, group.label, group.children, group.members, group.order,
                     group.kind, group.count, group.detail, parent)
