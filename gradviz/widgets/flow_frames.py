"""`gv.flow`'s kernel-free frames, built faster: its line panel apart from the rest of the figure.

The flow view's figure depends on ``by``, ``log`` and ``stat``, but ``stat`` changes only the line
panel (its lines, y axis, title, legend). So the figure is drawn once per (``by``, ``log``) with that
part hidden (`plot_frames`' "figure" layer), and the part alone, for every (``by``, ``log``,
``stat``), fills a "lines" layer drawn under the moving artists: 4 whole figures instead of 12, the
same picture (`tests/test_gradviz_flow.py` compares it with the whole figure's, path by path).
"""

from __future__ import annotations

import itertools
from typing import Any

from gradviz.model.flow_stats import RATIO_GUIDE, STATS
from gradviz.render.html import grids_note
from gradviz.render.plot import log_axis, plain_texts, plot_colors, wants_log
from gradviz.render.svg_layers import artists_svg, layer_before, themed_svg
from gradviz.widgets.frames import frame_key, plot_frames

__all__ = ["draw_lines", "flow_frames", "LINES"]

LINES = "lines"  # the layer (and SVG slot) of the line panel


def short_name(name: str, width: int = 28) -> str:
    """A legend label: ``name``, or its last ``width - 1`` characters after an ellipsis.

    >>> short_name("model/dense_1/kernel", width=10)
    '…_1/kernel'
    """
    return name if len(name) <= width else "…" + name[-(width - 1):]


def draw_lines(view: Any, ax: Any, old: list[Any] | None = None) -> list[Any]:
    """Draw ``view.stat`` of each layer over the steps on ``ax`` (y scale, guide, title, legend),
    replacing the artists ``old`` of an earlier call. Returns what the ``stat`` control changes, in
    drawing order: the y axis (with its grid), the lines, the guide, the title, the legend."""
    for artist in old or []:
        if artist is not ax.yaxis and artist is not ax.title:
            artist.remove()
    colors = plot_colors(view.theme)
    steps, names, _ = view._summary("norm")
    lines = view._summary(view.stat)[2]
    series = view._colors(len(names))
    ax.set_yscale("linear")  # the default locator and formatter again
    drawn = [ax.plot(steps, lines[:, j], color=series[j], lw=1.4, label=short_name(name))[0]
             for j, name in enumerate(names)]
    ax.relim()  # the limits of these lines (and not of the ones removed)
    if view.log and wants_log(lines, span=10.0):
        log_axis(ax, "y")
    if view.stat == "update_ratio":
        drawn.append(ax.axhline(RATIO_GUIDE, color=colors["muted"], lw=0.9, ls="--"))
    ax.set_title(STATS[view.stat], color=colors["text"], fontsize=10, y=1.0)
    drawn.append(ax.title)
    if len(names) <= 10:
        drawn.append(ax.legend(fontsize=7, frameon=False, labelcolor=colors["text"], loc="best"))
    return [ax.yaxis] + drawn


def flow_frames(view: Any, specs: list[Any], **layout: Any) -> Any:
    """`plot_frames` of the flow view ``view`` (with ``layout``: `_frame_layout`'s) whose figure
    leaves out the line panel, plus the "lines" layer that draws it (see the module's docstring)."""
    import matplotlib  # noqa: PLC0415 (deferred: matplotlib is heavy)

    layout = {**layout, "figure_controls": [n for n in layout["figure_controls"] if n != "stat"]}
    frames = plot_frames(view, view.kind, specs, title=view.title, note=grids_note(specs),
                         make_figure=lambda snap: snap._make_figure(lines_shown=False), **layout)
    for spec in frames.layers:
        if spec["name"] == "figure":
            spec["frames"] = {k: layer_before(v, LINES, "moving") for k, v in spec["frames"].items()}
    deps = ["by", "log", "stat"]
    sizes = [frames.positions(n) for n in deps]
    start = {c.name: c.index(view) for c in specs}
    drawn: dict[tuple[int, int], tuple[Any, dict[str, Any]]] = {}
    content: dict[str, str] = {}
    colors = plot_colors(view.theme)
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "gradviz"}):
        for combo in itertools.product(*(range(s) for s in sizes)):
            snap = view.at(view.snapshot(specs, {**start, **dict(zip(deps, combo))}), specs)
            if combo[:2] not in drawn:
                fig, art = snap._make_figure(lines_shown=False)[:2]
                plain_texts(fig).draw_without_rendering()  # the layout the figure layer's SVG has
                drawn[combo[:2]] = (fig, art)
            fig, art = drawn[combo[:2]]
            art["lines"] = draw_lines(snap, art["ax"], art["lines"])
            for artist in art["lines"]:
                artist.set_visible(True)
            art["ax"].get_ylim()  # the new limits in place before anything is drawn
            content[frame_key(combo)] = themed_svg(artists_svg(fig, art["lines"]), colors)
    frames.layers.insert(1, {"name": LINES, "type": "svg", "deps": deps, "frames": content, "reveal": None})
    return frames
