"""The states a folded graph opens to without a kernel: each group opened (with the groups around it),
drawn once in Python, so that a click on a folded box answers in the browser alone, in JupyterLab and
in an exported page (svg_view.js swaps pictures; Python is told afterwards when a kernel is there).

A state is named by the group it opens ("g3"; `TOP` for the default view): opening a group opens the
groups it sits in, closing one (a click on its frame) goes back to the state of the group around it.
A view that starts with groups open (a small traced step shows every scope) has a state per such
group that closes it ("-g3"), and its box opens it again.
Groups are drawn breadth first, the top level's first, while the pictures fit `VIEWS_BUDGET` bytes;
a group past the budget opens through the kernel (when one runs).

>>> import engine as eg, gradviz as gv
>>> x = eg.constant(0.5)
>>> with eg.GradientTape() as tape:
...     tape.watch(x)
...     h = x
...     for _ in range(200):
...         h = eg.tanh(h * 1.01)
>>> states = fold_states(gv.graph(h, tape))
>>> sorted(states["views"])[-1], len(states["opens"]) >= 2
('top', True)
"""

from __future__ import annotations

from typing import Any

from gradviz.render.graph_info import OPENS, OPENS_WITH_KERNEL

__all__ = ["fold_states", "expanded_in", "state_of", "TOP", "VIEWS_BUDGET", "MAX_VIEWS"]

TOP = "top"
VIEWS_BUDGET = 600_000  # bytes of SVG the precomputed views may take together
MAX_VIEWS = 24


def fold_states(
    view: Any, budget: int = VIEWS_BUDGET, max_views: int = MAX_VIEWS
) -> dict[str, dict[str, str]]:
    """``{"views": state → SVG, "opens": SVG id → the state a click on it goes to, "info": SVG id →
    details HTML}`` for a `GraphView` (empty dicts when it does not fold).

    >>> import engine as eg, gradviz as gv
    >>> x = eg.constant(2.0)
    >>> with eg.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = x * x
    >>> fold_states(gv.graph(y, tape))["views"]
    {}
    """
    if not view.collapsible:
        return {"views": {}, "opens": {}, "info": {}}
    plan = view.full_model.fold_plan(view.fold_limit)
    opened = view.opened
    views: dict[str, str] = {}
    info: dict[str, str] = {}

    def draw(state: str) -> int:
        svg, details = view.picture(expanded_in(plan, state, opened))
        views[state] = svg
        info.update(details)
        return len(svg)

    total = draw(TOP)
    queue = [g for g in plan.top if g in plan.groups]
    while queue and len(views) < max_views:
        gid = queue.pop(0)
        state = _closed(gid) if plan.groups[gid].key in opened else gid
        total += draw(state)
        if total > budget:
            del views[state]
            break
        queue.extend(c for c in plan.groups[gid].children if c in plan.groups)
    prefix = view.prefix
    opens: dict[str, str] = {}

    for state in views:
        if state == TOP:
            continue
        gid = state.removeprefix(_CLOSED)
        if state != gid:  # open at the start: its frame closes it, its box opens it again
            opens[f"{prefix}_c{gid}"], opens[f"{prefix}_{gid}"] = state, TOP
            continue
        opens[f"{prefix}_{gid}"] = gid  # the folded box
        parent = plan.groups[gid].parent
        opens[f"{prefix}_c{gid}"] = TOP if parent is None or plan.groups[parent].key in opened else parent
    for sid in info:  # a folded box whose opened picture is not drawn ahead says so
        if sid.removeprefix(f"{prefix}_") in plan.groups and sid not in opens:
            info[sid] = info[sid].replace(OPENS, OPENS_WITH_KERNEL)
    return {"views": views, "opens": opens, "info": info}


_CLOSED = "-"  # a state that closes a group open at the start: "-g3"


def _closed(gid: str) -> str:
    return _CLOSED + gid


def expanded_in(plan: Any, state: str, opened: frozenset[str] = frozenset()) -> frozenset[str]:
    """The groups open in ``state``: `TOP` is ``opened`` (the picture a view starts with), a group's id
    adds that group and the groups around it, "-" and a group's id closes that group and those in it.

    >>> from gradviz.model.fold import FoldGroup, FoldPlan
    >>> plan = FoldPlan({"g0": FoldGroup("a", "g0", "a", (), (), 0)}, ("g0",))
    >>> sorted(expanded_in(plan, "g0")), sorted(expanded_in(plan, "-g0", frozenset({"a"})))
    (['a'], [])
    """
    if state == TOP:
        return opened
    if state.startswith(_CLOSED):
        gid = state.removeprefix(_CLOSED)
        inside = {plan.groups[g].key for g in plan.groups if gid in plan.path(g)}
        return opened - inside
    return opened | {plan.groups[p].key for p in plan.path(state)}


def state_of(plan: Any, expanded: set[str], opened: frozenset[str] = frozenset()) -> str:
    """The state ``expanded`` (a set of group keys) is, or '' when no precomputed state is.

    >>> from gradviz.model.fold import FoldPlan
    >>> state_of(FoldPlan({}, ()), set())
    'top'
    """
    if expanded == opened:
        return TOP
    for gid, g in plan.groups.items():
        state = _closed(gid) if g.key in opened else gid
        if expanded_in(plan, state, opened) == expanded:
            return state
    return ""
