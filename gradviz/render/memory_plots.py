"""The memory widget's pictures: per profile, the bytes kept for backward as a stacked area by layer
(name scope) and the bytes alive as a line, over the events of the forward and the backward pass; the
cursor (a line and two dots at one event) and the panel that names the event's op and what it keeps.

`MemoryPlots` draws `gradviz.model.memory_runs.MemoryRun`s side by side on one byte axis (so two
profiles compare by eye); `cursor_svg` and `cursor_html` are the markup of one cursor position.

>>> from types import SimpleNamespace as E
>>> from gradviz.model.memory_runs import read_profile
>>> events = [E(phase="forward", op="MatMul", scope="dense", alive_bytes=3000, saved_bytes=1000),
...           E(phase="backward", op="MatMul", scope="dense", alive_bytes=2000, saved_bytes=0)]
>>> run = read_profile(E(peak_bytes=3000, saved_peak_bytes=1000, timeline=events), "step")
>>> plots = MemoryPlots([run], theme="light")
>>> plots.show([0])
>>> plots.cursors[0]["saved"].get_data()      # event 0 keeps 1000 bytes: the dot, mid-step
([0.5], [1000])
>>> byte_text(1_990_000), byte_text(512), byte_text(0)
('1.99 MB', '512 B', '0 B')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gradviz.model.memory_runs import MemoryRun
from gradviz.render.plot import new_figure, plot_colors, style_axes
from gradviz.render.svg_layers import svg_points
from gradviz.render.text import esc

__all__ = ["MemoryPlots", "memory_figure", "byte_text", "cursor_svg", "cursor_html", "scope_colors", "STYLE"]

#: the panel's style, written once (the live widget and a static page carry the same)
STYLE = ("<style>.gv-mem td,.gv-mem th{padding:1px 8px;text-align:right;white-space:nowrap;"
         "font-family:var(--jp-code-font-family,monospace)}.gv-mem td:first-child,.gv-mem th:first-child"
         "{text-align:left}.gv-mem .gv-mem-scopes{text-align:left;white-space:normal}</style>")
HEAD = ("<tr><th>profile</th><th>event</th><th>what</th><th>op</th><th>scope</th><th>this event</th>"
        "<th>kept for backward</th><th>alive</th><th class='gv-mem-scopes'>kept, by layer</th></tr>")


def byte_text(n: float) -> str:
    """Bytes in decimal units, three significant digits: 512 B, 1.99 MB."""
    n = float(n)
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(n) >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n:.0f} B"


def scope_colors(runs: Sequence[MemoryRun], theme: str | None) -> dict[str, str]:
    """One colour per layer over all ``runs`` (a layer keeps its colour in every panel)."""
    series = plot_colors(theme)["series"]
    names: list[str] = []
    for run in runs:
        names += [s for s in run.scopes if s not in names]
    return {s: series[i % len(series)] for i, s in enumerate(names)}


class MemoryPlots:
    """One matplotlib figure: a panel (``axes[i]``) per run, one byte axis for all; the cursor's
    artists of each panel (``cursors[i]``: ``line``, ``saved``, ``alive``) are hidden until `show`."""

    def __init__(self, runs: Sequence[MemoryRun], theme: str | None = None) -> None:
        self.runs, self.theme = list(runs), theme
        self._colors = plot_colors(theme)
        self.scope_colors = scope_colors(self.runs, theme)
        n = len(self.runs)
        self.fig = new_figure((max(5.2, 4.3 * n + 1.2), 3.9), theme=theme, dpi=80)
        top = max([int(r.alive.max()) for r in self.runs] + [int(r.saved.max()) for r in self.runs] + [1])
        self.axes = [self.fig.add_subplot(1, n, i + 1) for i in range(n)]
        for i, (ax, run) in enumerate(zip(self.axes, self.runs)):
            style_axes(ax, theme)
            self._draw_run(ax, run, top, first=i == 0)
        self._legend()
        self.cursors = [self._cursor_artists(ax) for ax in self.axes]
        self.fig.subplots_adjust(left=0.9 / self.fig.get_figwidth(), right=0.99, top=0.86, bottom=0.27,
                                 wspace=0.12)

    def _draw_run(self, ax: Any, run: MemoryRun, top: int, first: bool) -> None:
        """The stacked area by layer, the alive line, the forward | backward boundary, the title."""
        from matplotlib.ticker import FuncFormatter, MaxNLocator  # deferred: matplotlib is heavy

        colors, x = self._colors, np.arange(run.events)
        low = np.zeros(run.events)
        for j, scope in enumerate(run.scopes):
            high = low + run.saved_by_scope[:, j]
            ax.fill_between(x, low, high, step="post", color=self.scope_colors[scope], alpha=0.8, lw=0)
            low = high
        ax.step(x, run.alive, where="post", color=colors["text"], lw=1.4)
        ax.set_xlim(0, max(run.events, 1))
        ax.set_ylim(0, top * 1.08)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True, nbins=5))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: byte_text(v)))
        if not first:
            ax.tick_params(labelleft=False)
        for start, stop in _backward_runs(run):  # the backward walks, shaded (accumulation has several)
            ax.axvspan(start, stop, color=colors["muted"], alpha=0.12, lw=0)
        ax.set_xlabel("event (forward ops; backward steps shaded)", color=colors["muted"], fontsize=9)
        title = f"{run.label}: kept ≤ {byte_text(run.saved_peak_bytes)}, peak {byte_text(run.peak_bytes)}"
        ax.set_title(title, color=colors["text"], fontsize=10)

    def _legend(self) -> None:
        """The layers' colours and the alive line, under the panels."""
        from matplotlib.lines import Line2D  # deferred: matplotlib is heavy
        from matplotlib.patches import Patch

        handles = [Patch(color=c, alpha=0.8, label=f"kept by {s}") for s, c in self.scope_colors.items()]
        handles.append(Line2D([], [], color=self._colors["text"], lw=1.4, label="alive (all arrays)"))
        handles.append(Patch(color=self._colors["muted"], alpha=0.12, label="backward steps"))
        legend = self.fig.legend(handles=handles, loc="lower center", ncol=min(len(handles), 5), fontsize=8,
                                 frameon=False, bbox_to_anchor=(0.5, 0.0))
        for text in legend.get_texts():
            text.set_color(self._colors["text"])

    def _cursor_artists(self, ax: Any) -> dict[str, Any]:
        colors = self._colors
        a = {"line": ax.axvline(0, color=colors["highlight"], lw=1.3),
             "saved": ax.plot([], [], "o", color=colors["highlight"], ms=6, mec=colors["background"])[0],
             "alive": ax.plot([], [], "o", color=colors["text"], ms=5, mec=colors["background"])[0]}
        for artist in a.values():
            artist.set_visible(False)
        return a

    def show(self, positions: Sequence[int]) -> None:
        """The cursor of panel i at event ``positions[i]``."""
        for a, run, k in zip(self.cursors, self.runs, positions):
            x = k + 0.5  # the middle of event k's step
            a["line"].set_xdata([x, x])
            a["saved"].set_data([x], [int(run.saved[k])])
            a["alive"].set_data([x], [int(run.alive[k])])
            for artist in a.values():
                artist.set_visible(True)


def _backward_runs(run: MemoryRun) -> list[tuple[int, int]]:
    """The spans ``(first, last + 1)`` of consecutive backward events."""
    spans: list[tuple[int, int]] = []
    for k, phase in enumerate(run.phases):
        if phase != "backward":
            continue
        if spans and spans[-1][1] == k:
            spans[-1] = (spans[-1][0], k + 1)
        else:
            spans.append((k, k + 1))
    return spans


def memory_figure(runs: Sequence[MemoryRun], theme: str | None, positions: Sequence[int]) -> Any:
    """A fresh Figure of the runs with the cursors at ``positions`` (for ``save``, SVG and HTML)."""
    plots = MemoryPlots(runs, theme)
    plots.show(positions)
    return plots.fig


def cursor_svg(ax: Any, run: MemoryRun, k: int, dot_edge: str) -> str:
    """The cursor at event ``k`` as an SVG fragment in the coordinates of the figure's whole SVG (the
    figure drawn first), in the theme's CSS variables: a vertical line over the panel, a dot on the
    kept bytes, one on the alive bytes (``dot_edge``: the dots' outline, the page's background)."""
    mid = k + 0.5  # the middle of event k's step, as `MemoryPlots.show` puts it
    (x, y_top), (_, y_bottom) = svg_points(ax, [mid, mid], list(ax.get_ylim())[::-1])
    (_, saved_y), (_, alive_y) = svg_points(ax, [mid, mid], [int(run.saved[k]), int(run.alive[k])])
    return (f'<path d="M{x} {y_top}V{y_bottom}" stroke="var(--gv-highlight)" stroke-width="1.3" fill="none"/>'
            f'<circle cx="{x}" cy="{alive_y}" r="3.2" fill="var(--gv-text)" stroke="{dot_edge}"/>'
            f'<circle cx="{x}" cy="{saved_y}" r="3.8" fill="var(--gv-highlight)" stroke="{dot_edge}"/>')


def _change(run: MemoryRun, k: int) -> str:
    """What event ``k`` did to the bytes kept for backward, in words."""
    d = int(run.kept[k])
    if d > 0:
        return f"keeps {byte_text(d)}"
    if d < 0:
        return f"lets go {byte_text(-d)}"
    return "keeps nothing" if run.phases[k] == "forward" else "lets go nothing"


def cursor_html(run: MemoryRun, k: int, colors: dict[str, str]) -> str:
    """One row of the panel's table: profile ``run`` at event ``k``: the op and what it keeps."""
    e = run.event(k)
    swatch = "display:inline-block;width:9px;height:9px;margin-right:3px;vertical-align:middle;background:"
    scopes = " ".join(f"<span style='{swatch}{colors.get(s, 'gray')}'></span>{esc(s)} {byte_text(b)}"
                      for s, b in e["by_scope"].items()) or "—"
    what = f"{e['phase']} {'step' if e['kind'] == 'step' else 'op'}"
    return (f"<tr><td>{esc(run.label)}</td><td>{k + 1} of {run.events}</td><td>{what}</td>"
            f"<td><b>{esc(e['op'])}</b></td><td>{esc(e['scope'])}</td><td>{_change(run, k)}</td>"
            f"<td>{byte_text(e['saved_bytes'])}</td><td>{byte_text(e['alive_bytes'])}</td>"
            f"<td class='gv-mem-scopes'>{scopes}</td></tr>")


def panel_open(runs: Sequence[MemoryRun]) -> str:
    """The panel's start: the style, one line per profile (events, peaks), the table's head."""
    lines = "".join(
        f"<div><b>{esc(r.label)}</b>: {r.counts['op']} ops run, {r.counts['step']} backward steps; "
        f"kept for backward at most {byte_text(r.saved_peak_bytes)} ({r.saved_peak_bytes:,} bytes); "
        f"peak alive {byte_text(r.peak_bytes)} ({r.peak_bytes:,} bytes)</div>" for r in runs)
    return f"{STYLE}<div style='font-size:12px'>{lines}<table class='gv-mem'>{HEAD}"


PANEL_CLOSE = "</table></div>"
