"""The descent trace without a kernel: every path it can show, computed once, switched in the browser.

`gv.descent` runs each optimizer it offers at each learning rate of a grid (`rate_grid`: 1, 2, 5 per
decade from lr/100 to 50·lr, and lr itself) and keeps, per optimizer and rate, the path in the
picture's coordinates (a "trace" layer the step slider reveals) and the rows of the panel's tables
(a "rows" layer); the step slider offers every step (`step_grid`: up to 100, then 101 evenly spaced:
the paths keep the points of those steps).
Frames per optimizer: 2 × the rates (its checkbox × the rate slider), × the momenta (`momentum_grid`)
for the optimizers the momentum slider drives (Momentum's μ, Adam's β₁), never the product of all the
controls. The panel here and `DescentTrace._panel` (a static page, ``save``) are made by the same
functions, so they agree.

>>> rate_grid(0.1)
[0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0]
>>> step_grid(4), len(step_grid(1000)), step_grid(1000)[:3]
([0, 1, 2, 3, 4], 101, [0, 10, 20])
>>> momentum_grid(0.9), momentum_grid(0.6)
([0.0, 0.5, 0.9, 0.99], [0.0, 0.5, 0.6, 0.9, 0.99])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from gradviz.render import fmt
from gradviz.render.descent_panels import (
    PANEL_CLOSE,
    PANEL_OPEN,
    at_momentum,
    at_rate,
    at_step,
    diverged_note,
    slots_cell,
    step_line,
    swatch,
    table_open,
    trace_head,
)
from gradviz.render.descent_plots import DescentPlots
from gradviz.render.plot import plot_colors, svg_text
from gradviz.widgets.frames import Frames, compact_svg, rows_html, svg_with_layers, themed_svg

__all__ = ["MAX_STEPS", "rate_grid", "step_grid", "momentum_grid", "descent_frames", "panel_parts"]

#: the most steps `gv.descent` runs: each optimizer runs them at each rate of the grid when the
#: widget is made (time), and every step's numbers are kept in the widget and the page (memory)
MAX_STEPS = 1000
STEP_POSITIONS = 101  # the step slider's positions at most; beyond, an evenly spaced grid of steps
RATES_BELOW, RATES_ABOVE = 100.0, 50.0  # the learning-rate grid spans lr / 100 .. 50 · lr (far
# enough past the stable rates of most losses to show a run that flies away)
TRACE_WINDOW = 10  # rows of the 1-D trace table (the last steps up to the one shown)
MOMENTA = (0.0, 0.5, 0.9, 0.99)  # the momentum slider: none (SGD), moderate, the usual default, too much
KEYED_BOXES = 6  # up to this many optimizers, the table's head follows all their checkboxes (2^6 frames)



def step_grid(steps: int, current: int = 0) -> list[int]:
    """The steps the step slider offers: all of 0..steps up to 100 steps, else 101 evenly spaced
    (and ``current``, a step set from code)."""
    if steps < STEP_POSITIONS:
        return list(range(steps + 1))
    last = STEP_POSITIONS - 1
    return sorted({round(steps * k / last) for k in range(STEP_POSITIONS)} | {int(current)})


def rate_grid(anchor: float, current: float | None = None) -> list[float]:
    """The learning rates the slider offers: 1, 2, 5 × 10^k from ``anchor``/100 to 50·``anchor``, and
    ``anchor`` and ``current`` themselves."""
    values = {float(anchor)} | ({float(current)} if current is not None else set())
    lo, hi = anchor / RATES_BELOW, anchor * RATES_ABOVE
    if lo > 0 and math.isfinite(hi):
        for e in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1):
            for m in (1, 2, 5):
                v = float(f"{m}e{e}")
                if lo * (1 - 1e-9) <= v <= hi * (1 + 1e-9):
                    values.add(v)
    return sorted(values)


def momentum_grid(anchor: float, current: float | None = None) -> list[float]:
    """The momenta the momentum slider offers: `MOMENTA`, and ``anchor`` and ``current`` themselves."""
    return sorted(set(MOMENTA) | {float(anchor)} | ({float(current)} if current is not None else set()))


# ---- the panel: the same pieces for the browser's frames and the static page ---------------------------

def state_rows(view: Any, name: str, lr: float, steps: Sequence[int],
               mu: float | None = None) -> dict[str, Any]:
    """The main table's row of optimizer ``name`` at rate ``lr`` (and momentum ``mu``) for each of
    ``steps`` (a "rows" frame, one row shown): θ, loss, gradient there, the last update and the
    optimizer's slots."""
    traj = view.run(name, lr, mu)
    points, losses = traj.points, traj.losses
    tail = diverged_note(traj.diverged_at)
    rows = []
    for s in steps:
        k = min(s, len(traj.updates))
        u = traj.updates[k - 1] if k >= 1 else None
        g = traj.gradient_at(k)
        slots = slots_cell(u.slots if u else {})
        rows.append([str(k), fmt.cell(points[k]), fmt.cell(losses[k]), "—" if g is None else fmt.cell(g),
                     "—" if u is None else fmt.cell(u.delta), slots + tail])
    return {"lead": [swatch(view.colors()[name], name)], "rows": rows}


def trace_rows(view: Any, name: str, lr: float, steps: Sequence[int],
               mu: float | None = None) -> dict[str, Any]:
    """The 1-D trace table (seed 002's: before, gradient, expected after = before − lr·gradient for
    SGD, else Δθ, after) of ``name`` at ``lr``: the last `TRACE_WINDOW` rows up to the step shown.
    A 1-D trace shows it when one optimizer is shown (past `KEYED_BOXES` optimizers: one table per
    optimizer shown)."""
    rows_by_step = view.rows(name, lr, mu)
    sgd = view.is_sgd(name)
    rows = []
    for s in steps:
        k = min(s, len(rows_by_step))
        if k == 0:
            rows.append(["0 (start)", "—", "—", "—", fmt.exact(view.start)])
            continue
        r = rows_by_step[k - 1]
        middle = fmt.exact(r["expected_after"] if sgd else r["delta"])
        rows.append([str(r["step"]), fmt.exact(r["before"]), fmt.exact(r["gradient"]), middle,
                     fmt.exact(r["after"])])
    rule = f", learning rate {fmt.cell(lr)}: after = before − {fmt.cell(lr)}·gradient" if sgd else ""
    return {"head": trace_head(name, rule, sgd), "rows": rows,
            "tail": "</table>", "window": TRACE_WINDOW}


def _has_momentum_slider(view: Any) -> bool:
    """Whether an optimizer ``view`` offers follows the momentum slider (so the widget has one)."""
    return any(view.follows_momentum(n) for n in view.optimizers)


def _table_open(view: Any, any_shown: bool) -> str:
    """The main table's head, or a hint when no optimizer is shown (the head always past
    `KEYED_BOXES` optimizers: a frame per combination of their checkboxes would be too many)."""
    return table_open(any_shown or len(view.optimizers) > KEYED_BOXES)


def panel_parts(view: Any) -> list[str]:
    """The panel of ``view`` in its current state, piece by piece (what the frames' panel layers
    show at the same positions), the tables' `STYLE` first."""
    steps = view.step_grid()
    at = steps.index(view.step)
    lr, mu = view.learning_rate, view.momentum
    parts = [PANEL_OPEN]
    if view.mode == "1d":
        alone = len(view.selected) == 1 or len(view.optimizers) > KEYED_BOXES
        parts += [rows_html(trace_rows(view, n, lr, steps, mu), at) for n in view.selected if alone]
    parts += [at_step(view.step)] + ([at_momentum(mu)] if _has_momentum_slider(view) else [])
    parts += [at_rate(lr), _table_open(view, bool(view.selected))]
    parts += [rows_html(state_rows(view, n, lr, steps, mu), at) for n in view.selected]
    parts.append(PANEL_CLOSE)
    return parts


# ---- the picture: the figure once, each path as a trace in its coordinates ----------------------------

def _to_svg(ax: Any, xs: Any, ys: Any) -> np.ndarray:
    """Data coordinates of ``ax`` → the figure's SVG coordinates (points, y down; NaN where not finite;
    far-off points pulled in to ±1e5, outside every clip box)."""
    fig = ax.figure
    with np.errstate(all="ignore"):
        pixels = ax.transData.transform(np.column_stack([np.asarray(xs, float), np.asarray(ys, float)]))
        scale = 72.0 / fig.dpi
        out = np.column_stack([pixels[:, 0] * scale, fig.get_figheight() * 72.0 - pixels[:, 1] * scale])
    out[~np.isfinite(out).all(axis=1)] = np.nan
    return np.clip(out, -1e5, 1e5)


def _clip_box(ax: Any) -> list[float]:
    box = ax.get_window_extent()
    scale, height = 72.0 / ax.figure.dpi, ax.figure.get_figheight() * 72.0
    return [round(box.x0 * scale, 1), round(height - box.y1 * scale, 1), round(box.width * scale, 1),
            round(box.height * scale, 1)]


def _kept(n: int, steps: Sequence[int]) -> np.ndarray:
    """The indices of a path of ``n`` points that the step grid shows (past a divergence: its end)."""
    return np.unique(np.minimum(np.asarray(steps), n - 1))


def _trace(ax: Any, xs: Any, ys: Any, steps: Sequence[int], **style: Any) -> dict[str, Any] | None:
    """A "trace" frame: the path's finite points at the grid's steps, and how many of them each step
    position shows."""
    at = _kept(len(xs), steps)
    xy = _to_svg(ax, np.asarray(xs)[at], np.asarray(ys)[at])
    ok = np.isfinite(xy).all(axis=1)
    if not ok.any():
        return None
    kept = np.cumsum(ok)
    where = np.searchsorted(at, np.minimum(np.asarray(steps), len(xs) - 1))
    return {"points": np.round(xy[ok], 1).tolist(), "counts": kept[where].astype(int).tolist(),
            "clip": _clip_box(ax), **style}


def _tangents(view: Any, ax: Any, traj: Any, steps: Sequence[int]) -> list[list[float] | None]:
    """The dashed tangent of f at each point of a 1-D path (slope: the gradient the engine computed),
    one per point the path's trace keeps (None where there is no finite tangent)."""
    xs, losses = traj.points.astype(float), traj.losses
    at = _kept(len(xs), steps)
    xs, losses = xs[at], losses[at]
    grads = np.array([np.nan if g is None else float(g) for g in map(traj.gradient_at, at)])
    half = view.scene.tangent_half
    with np.errstate(all="ignore"):
        ends = np.hstack([_to_svg(ax, xs - half, losses - grads * half),
                          _to_svg(ax, xs + half, losses + grads * half)])
    kept = np.isfinite(_to_svg(ax, xs, losses)).all(axis=1)  # the path's points (the others dropped)
    ends = np.round(ends, 1)
    return [e.tolist() if np.isfinite(e).all() else None for e in ends[kept]]


def descent_frames(view: Any, specs: Sequence[Any], note: str = "") -> Frames:
    """The `Frames` of a `DescentTrace` with controls ``specs`` (step, learning rate, a checkbox per
    optimizer, as `DescentTrace._frame_controls` makes them)."""
    import matplotlib  # deferred: matplotlib is heavy

    colors = plot_colors(view.theme)
    frames = Frames(view.kind, title=view.title, note=note)
    frames.add_controls(specs, view)
    steps, rates, names = view.step_grid(), view.rate_grid(), list(view.optimizers)
    moms = view.momentum_grid()
    shows = [f"show {n}" for n in names]

    def controls(name: str) -> list[str]:
        """What a layer of optimizer ``name`` depends on besides its checkbox: the rate, the momentum."""
        return ["learning_rate", "momentum"] if view.follows_momentum(name) else ["learning_rate"]

    def mu_at(name: str, at: Sequence[int]) -> float | None:
        """The momentum selected by the trailing control positions ``at`` (None: not driven)."""
        return moms[at[-1]] if view.follows_momentum(name) else None
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "gradviz"}):
        plots = DescentPlots(view.scene, view.colors(), view.theme)  # the background: no path shown
        plots.vline.set_visible(False)
        slots = [f"loss{i}" for i in range(len(names))] + ["vline"] + [f"path{i}" for i in range(len(names))]
        frames.picture = themed_svg(svg_with_layers(compact_svg(svg_text(plots.fig)), slots), colors)
    ax, axl = plots.ax, plots.axl
    halo = f"var(--jp-layout-color0, {colors['background']})"
    for i, name in enumerate(names):
        color = view.colors()[name]

        def path(on: int, r: int, *m: int, name: str = name, color: str = color) -> dict[str, Any] | None:
            if not on:
                return None
            traj = view.run(name, rates[r], mu_at(name, m))
            pts = traj.points.astype(float)
            xs, ys = (pts[:, 0], pts[:, 1]) if view.mode == "2d" else (pts, traj.losses)
            extra = {"segments": _tangents(view, ax, traj, steps), "segment_color": colors["highlight"]} \
                if view.mode == "1d" else {}
            return _trace(ax, xs, ys, steps, color=color, width=1.8, marker=1.5, radius=4.5, halo=halo,
                          ghost=0.4, ghost_width=1.0, **extra)

        def loss(on: int, r: int, *m: int, name: str = name, color: str = color) -> dict[str, Any] | None:
            if not on:
                return None
            losses = view.run(name, rates[r], mu_at(name, m)).losses
            return _trace(axl, np.arange(len(losses)), losses, steps, color=color, width=1.8, radius=3,
                          ghost=0.4, ghost_width=1.0)

        frames.layer(f"path{i}", "trace", [shows[i], *controls(name)], path, reveal="step")
        frames.layer(f"loss{i}", "trace", [shows[i], *controls(name)], loss, reveal="step")
    _, y0, _, h = _clip_box(axl)

    def vline(p: int) -> str:
        x = round(float(_to_svg(axl, [steps[p]], [axl.get_ylim()[0]])[0, 0]), 1)
        return step_line(x, y0, round(y0 + h, 1), colors["highlight"])

    frames.layer("vline", "svg", ["step"], vline)
    # the panel, in `panel_parts`' order
    frames.layer("open", "html", [], lambda: PANEL_OPEN)
    if view.mode == "1d":  # the trace table of the one optimizer shown
        keyed = len(shows) <= KEYED_BOXES
        for i, name in enumerate(names):
            def table(*at: int, i: int = i, n: str = name) -> dict[str, Any] | None:
                k = 2 if view.follows_momentum(n) else 1
                on, r = at[:-k], at[-k]
                alone = (on[i] and sum(on) == 1) if keyed else on[0]
                return trace_rows(view, n, rates[r], steps, mu_at(n, at)) if alone else None

            deps = shows if keyed else [shows[i]]
            frames.layer(f"trace{i}", "rows", [*deps, *controls(name)], table, reveal="step")
    frames.layer("at step", "html", ["step"], lambda p: at_step(steps[p]))
    if _has_momentum_slider(view):
        frames.layer("at momentum", "html", ["momentum"], lambda m: at_momentum(moms[m]))
    frames.layer("at rate", "html", ["learning_rate"], lambda r: at_rate(rates[r]))
    keyed = shows if len(shows) <= KEYED_BOXES else []
    frames.layer("table", "html", keyed, lambda *on: _table_open(view, any(on)))
    for i, name in enumerate(names):
        def row(on: int, r: int, *m: int, n: str = name) -> dict[str, Any] | None:
            return state_rows(view, n, rates[r], steps, mu_at(n, m)) if on else None

        frames.layer(f"row{i}", "rows", [shows[i], *controls(name)], row, reveal="step")
    frames.layer("end", "html", [], lambda: PANEL_CLOSE)
    return frames
