"""The descent trace's pictures: the contour (2-D) or curve (1-D) of f with each optimizer's path, and
the loss per step. `DescentPlots` is made from a `gradviz.model.descent_scene.DescentScene` (the box,
f on a grid) and the optimizers' colours; `show` points its artists at the paths and the step shown.

>>> import numpy as np, engine as eg
>>> from gradviz.model.descent_runs import run_optimizer
>>> from gradviz.model.descent_scene import descent_scene
>>> f, start = (lambda x: x * x), np.array(2.0, np.float32)
>>> run = run_optimizer(f, start, eg.optimizers.SGD(0.25), 4)
>>> plots = DescentPlots(descent_scene(f, start, [run], steps=4), {"SGD": "#1f77b4"})
>>> plots.show({"SGD": run}, step=2)
>>> float(plots.paths["SGD"]["here"].get_xdata()[0])      # θ₂ = 2 · (1 − 2 · 0.25)²
0.5
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from gradviz.model.descent_runs import Trajectory
from gradviz.model.descent_scene import DescentScene
from gradviz.render.plot import Blitter, log_axis, new_figure, plot_colors, style_axes

__all__ = ["DescentPlots", "descent_figure"]


class DescentPlots:
    """One matplotlib figure of a descent trace: the f panel (``ax``) and the loss panel (``axl``),
    with a set of artists (``paths[name]``) for each optimizer of ``colors`` (name → line colour),
    hidden until `show` shows it."""

    def __init__(self, scene: DescentScene, colors: Mapping[str, str], theme: str | None = None) -> None:
        self.scene, self.theme = scene, theme
        self._palette = plot_colors(theme)
        self.fig = new_figure((9.6, 4.0), theme=theme, dpi=80)
        grid = self.fig.add_gridspec(1, 2, width_ratios=[1.35, 1.0], wspace=0.22)
        self.ax = self.fig.add_subplot(grid[0])
        self.axl = self.fig.add_subplot(grid[1])
        style_axes(self.ax, theme)
        style_axes(self.axl, theme)
        self._draw_f()
        self._draw_loss_axes()
        #: the artists the step moves, and those that change with the paths shown (`show`)
        self.moving: list[Any] = []
        self.overlay: list[Any] = []
        self.paths = {name: self._path_artists(name, color) for name, color in colors.items()}
        self.vline = self.axl.axvline(0, color=self._palette["highlight"], lw=1.0, ls=":")
        self.moving.append(self.vline)
        self.fig.subplots_adjust(left=0.07, right=0.98, top=0.92, bottom=0.13)
        self._overlay_of: list[tuple[str, Trajectory]] | None = None  # the paths the overlay shows
        self._blitter: Any = None

    # ---- built once: the background and the artists ---------------------------------------------
    def _draw_f(self) -> None:
        """Contours of f and the start (2-D) or the curve of f (1-D), in the scene's box."""
        from matplotlib.colors import to_rgb  # deferred: matplotlib is heavy

        ax, scene, colors = self.ax, self.scene, self._palette
        if scene.mode == "2d":
            X, Y, Z = scene.grid
            finite = Z[np.isfinite(Z)]
            if finite.size > 1 and finite.max() > finite.min():
                levels = np.unique(np.quantile(finite, np.linspace(0, 1, 18) ** 2))
                if levels.size > 2:
                    # the fill: the text colour, more opaque uphill (its SVG colour becomes the theme's
                    # text variable: light-to-dark uphill in the light theme, dark-to-light in the dark)
                    shade = to_rgb(colors["text"])
                    ax.contourf(X, Y, Z, levels=levels,
                                colors=[(*shade, a) for a in np.linspace(0.0, 0.3, levels.size - 1)])
                    ax.contour(X, Y, Z, levels=levels, cmap=colors["cmap"], linewidths=0.8, alpha=0.8)
            ax.set_xlim(*scene.xlim)
            ax.set_ylim(*scene.ylim)
            ax.set_xlabel("θ[0]", color=colors["muted"], fontsize=9)
            ax.set_ylabel("θ[1]", color=colors["muted"], fontsize=9)
            ax.plot([scene.start[0]], [scene.start[1]], marker="*", ms=13, color=colors["text"], ls="none",
                    zorder=5)
            ax.set_title("contours of f and the paths", color=colors["text"], fontsize=10, y=1.0)
        else:
            xs, Z = scene.grid
            ax.plot(xs, Z, color=colors["muted"], lw=1.8)
            ax.set_xlim(*scene.xlim)
            ax.set_ylim(*scene.ylim)
            ax.set_xlabel("θ", color=colors["muted"], fontsize=9)
            ax.set_ylabel("f(θ)", color=colors["muted"], fontsize=9)
            ax.set_title("f and the points θ₀, θ₁, …", color=colors["text"], fontsize=10, y=1.0)

    def _draw_loss_axes(self) -> None:
        from matplotlib.ticker import MaxNLocator  # deferred: matplotlib is heavy

        axl, steps, colors = self.axl, self.scene.steps, self._palette
        lo, hi, log = self.scene.loss_limits
        if log:
            log_axis(axl, "y", (lo, hi))
        else:
            axl.set_ylim(lo, hi)
        axl.set_xlim(-0.02 * steps, steps * 1.02)
        axl.xaxis.set_major_locator(MaxNLocator(integer=True))
        axl.set_xlabel("step", color=colors["muted"], fontsize=9)
        axl.set_title("loss", color=colors["text"], fontsize=10, loc="left", y=1.0)

    def _path_artists(self, name: str, color: str) -> dict[str, Any]:
        """One optimizer's artists (empty): its faded full path and loss (overlay), and the path so far,
        the current point, the tangent (1-D), the loss so far and the current loss (moving)."""
        ax, axl, colors = self.ax, self.axl, self._palette
        a: dict[str, Any] = {}
        a["full"], = ax.plot([], [], color=color, lw=1.0, alpha=0.4, zorder=3)
        a["lfull"], = axl.plot([], [], color=color, lw=1.0, alpha=0.4)
        self.overlay += [a["full"], a["lfull"]]
        a["done"], = ax.plot([], [], color=color, lw=1.8, marker="o", ms=3, zorder=4)
        a["here"], = ax.plot([], [], color=color, marker="o", ms=9, mec=colors["background"], mew=1.5,
                             ls="none", zorder=6)
        if self.scene.mode == "1d":
            a["tangent"], = ax.plot([], [], color=colors["highlight"], lw=1.6, ls="--", zorder=5)
        a["ldone"], = axl.plot([], [], color=color, lw=1.8, label=name)
        a["lhere"], = axl.plot([], [], color=color, marker="o", ms=6, ls="none")
        self.moving += [v for key, v in a.items() if key not in ("full", "lfull")]
        return a

    # ---- a state: the paths shown, the step ------------------------------------------------------
    def show(self, paths: Mapping[str, Trajectory], step: int) -> None:
        """Show ``paths`` (name → run, the optimizers shown; the others are hidden) up to ``step``."""
        self._show_overlay(paths)
        for name, traj in paths.items():
            self._show_step(self.paths[name], traj, step)
        self.vline.set_xdata([step, step])

    def _show_overlay(self, paths: Mapping[str, Trajectory]) -> None:
        """The artists that change with the paths shown, not with the step (only when those changed)."""
        shown = list(paths.items())
        if self._overlay_of is not None and len(shown) == len(self._overlay_of) and \
                all(n == m and t is u for (n, t), (m, u) in zip(shown, self._overlay_of)):
            return
        self._overlay_of = shown
        for name, a in self.paths.items():
            for artist in a.values():
                artist.set_visible(name in paths)
            if name not in paths:
                continue
            pts, losses = paths[name].points, paths[name].losses
            if self.scene.mode == "2d":
                a["full"].set_data(pts[:, 0], pts[:, 1])
            else:
                a["full"].set_data(pts.astype(float), losses)
            a["lfull"].set_data(np.arange(len(losses)), losses)
        if self._blitter is not None:
            self._blitter.invalidate_overlay()

    def _show_step(self, a: dict[str, Any], traj: Trajectory, step: int) -> None:
        """One path's moving artists at ``step`` (past a divergence: its last point)."""
        pts, losses = traj.points, traj.losses
        k = min(step, len(pts) - 1)
        if self.scene.mode == "2d":
            a["done"].set_data(pts[: k + 1, 0], pts[: k + 1, 1])
            a["here"].set_data([pts[k, 0]], [pts[k, 1]])
        else:
            xs = pts.astype(float)
            a["done"].set_data(xs[: k + 1], losses[: k + 1])
            a["here"].set_data([xs[k]], [losses[k]])
            g = traj.gradient_at(k)
            if g is not None and math.isfinite(float(losses[k])):
                half = self.scene.tangent_half
                tx = np.array([xs[k] - half, xs[k] + half])
                a["tangent"].set_data(tx, losses[k] + float(g) * (tx - xs[k]))
            else:
                a["tangent"].set_data([], [])
        steps = np.arange(len(losses))
        a["ldone"].set_data(steps[: k + 1], losses[: k + 1])
        a["lhere"].set_data([k], [losses[k]])

    def png(self, paths: Mapping[str, Trajectory], step: int) -> bytes:
        """PNG bytes of `show`'s state at screen resolution, redrawing only what changed since the last
        call (`gradviz.render.plot.Blitter`)."""
        if self._blitter is None:
            self._blitter = Blitter(self.fig, self.moving, self.overlay)
        self.show(paths, step)
        return self._blitter.render()


def descent_figure(scene: DescentScene, colors: Mapping[str, str], theme: str | None,
                   paths: Mapping[str, Trajectory], step: int) -> Any:
    """A fresh matplotlib Figure of one state (for ``save``, SVG and HTML exports)."""
    plots = DescentPlots(scene, colors, theme)
    plots.show(paths, step)
    return plots.fig
