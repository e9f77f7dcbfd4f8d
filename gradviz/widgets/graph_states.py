"""The states a folded graph opens to without a kernel: each group opened (with the groups around it),
drawn once in Python, so that a click on a folded box answers in the browser alone, in JupyterLab and
in an exported page (svg_view.js swaps pictures; Python is told afterwards when a kernel is there).

A state is named by the group it opens ("g3"; `TOP` for the default view): opening a group opens the
groups it sits in, closing one (a click on its frame) goes back to the state of the group around it.
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

__all__ = ["fold_states", "TOP", "VIEWS_BUDGET", "MAX_VIEWS"]

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
    views: dict[str, str] = {}
    info: dict[str, str] = {}

    def draw(state: str, expanded: frozenset[str]) -> int:
        svg, details = view.picture(expanded)
        views[state] = svg
        info.update(details)
        return len(svg)

    total = draw(TOP, frozenset())
    queue = [g for g in plan.top if g in plan.groups]
    while queue and len(views) < max_views:
        gid = queue.pop(0)
        total += draw(gid, frozenset(plan.groups[p].key for p in plan.path(gid)))
        if total > budget:
            del views[gid]
            break
        queue.extend(c for c in plan.groups[gid].children if c in plan.groups)
    prefix = view.prefix
    opens: dict[str, str] = {}
    for gid in views:
        if gid != TOP:
            opens[f"{prefix}_{gid}"] = gid  # the folded box
            opens[f"{prefix}_c{gid}"] = plan.groups[gid].parent or TOP  # its frame, once open
    return {"views": views, "opens": opens, "info": info}


def state_of(plan: Any, expanded: set[str]) -> str:
    """The state ``expanded`` (a set of group keys) is, or '' when no precomputed state is.

    >>> from gradviz.model.fold import FoldPlan
    >>> state_of(FoldPlan({}, ()), set())
    'top'
    """
    if not expanded:
        return TOP
    for gid, g in plan.groups.items():
        if g.key in expanded and {plan.groups[p].key for p in plan.path(gid)} == expanded:
            return gid
    return ""
