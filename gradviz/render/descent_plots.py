"""The descent trace's pictures: the contour (2-D) or curve (1-D) of f with each optimizer's path, and
the loss per step. A mixin of `gradviz.widgets.descent_trace.DescentTrace`: it draws the trace's state.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from gradviz.model.descent_runs import Trajectory, evaluate_many, nice_box

__all__ = ["DescentPlots"]


class DescentPlots:
    """The drawing half of the descent trace (box, background, figure, moving artists)."""

    # ---- the box (axes limits) and the background ------------------------------------------------
    def _layout_box(self) -> None:
        """Axes limits from the start and the paths at the first learning rate; f on a grid there."""
        trajs = [self.trajectory(n) for n in self.selected]
        pts = np.concatenate([t.points.reshape(len(t.points), -1) for t in trajs])
        losses = np.concatenate([t.losses for t in trajs])
        start_loss = trajs[0].losses[0]
        lowest = np.nanmin(np.where(np.isfinite(losses), losses, np.nan)) if np.isfinite(losses).any() \
            else start_loss
        # points far uphill (a diverging run) do not widen the view, except each path's first step
        first = np.concatenate([np.arange(len(t.points)) <= 1 for t in trajs])
        keep = np.isfinite(losses) & np.all(np.isfinite(pts), axis=1) & \
            ((losses <= start_loss + abs(start_loss - lowest) + 1e-12) | first)
        pts = pts[keep] if keep.any() else self.start.reshape(1, -1).astype(float)
        dtype = self.start.dtype
        lows, highs = pts.min(axis=0).astype(float), pts.max(axis=0).astype(float)
        lowest_nearby = self._lowest_nearby(lows, highs, dtype)
        if lowest_nearby is not None:  # show where the paths are heading, too
            lows, highs = np.minimum(lows, lowest_nearby), np.maximum(highs, lowest_nearby)
        x0, x1 = nice_box(float(lows[0]), float(highs[0]))
        if self._xlim is not None:
            x0, x1 = map(float, self._xlim)
        self.xlim = (x0, x1)
        if self.mode == "2d":
            y0, y1 = nice_box(float(lows[1]), float(highs[1]))
            if self._ylim is not None:
                y0, y1 = map(float, self._ylim)
            self.ylim = (y0, y1)
            n = 60
            xs, ys = np.linspace(x0, x1, n), np.linspace(y0, y1, n)
            X, Y = np.meshgrid(xs, ys)
            Z = evaluate_many(self.f, np.stack([X.ravel(), Y.ravel()], axis=1), dtype).reshape(n, n)
            self._grid = (X, Y, Z)
        else:
            xs = np.linspace(x0, x1, 300)
            Z = evaluate_many(self.f, xs, dtype)
            self._grid = (xs, Z)
            finite = Z[np.isfinite(Z)]
            lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
            self.ylim = nice_box(lo, hi, pad=0.08)
        self._loss_limits = self._loss_axis_limits(trajs)

    def _lowest_nearby(self, lows: np.ndarray, highs: np.ndarray, dtype: np.dtype) -> np.ndarray | None:
        """The lowest point of f on a coarse grid three times wider than the paths' box (None when it
        is not finite): the view is widened to include it, so the minimum the paths head for shows."""
        width = np.maximum(highs - lows, np.maximum(np.abs(lows), 1.0) * 0.1)
        axes = [np.linspace(lo - width_k, hi + width_k, 41 if self.mode == "1d" else 25)
                for lo, hi, width_k in zip(lows, highs, width)]
        if self.mode == "1d":
            points = axes[0]
        else:
            X, Y = np.meshgrid(*axes)
            points = np.stack([X.ravel(), Y.ravel()], axis=1)
        try:
            values = evaluate_many(self.f, points, dtype)
        except Exception:  # noqa: BLE001  (f undefined out there: keep the paths' box)
            return None
        if not np.isfinite(values).any():
            return None
        best = int(np.nanargmin(np.where(np.isfinite(values), values, np.nan)))
        return np.atleast_1d(points[best]).astype(float)

    def _loss_axis_limits(self, trajs: list[Trajectory]) -> tuple[float, float, bool]:
        """Limits of the loss panel, fixed once (so moving the sliders never redraws the axes):
        logarithmic when the first paths' losses span more than two decades. A diverging path runs
        off the top (at 1000 × the starting loss) rather than squashing the others."""
        losses = np.concatenate([t.losses for t in trajs] or [np.zeros(1)])
        finite = losses[np.isfinite(losses)]
        if not finite.size:
            return 0.0, 1.0, False
        first = trajs[0].losses[0] if math.isfinite(trajs[0].losses[0]) else float(finite.max())
        top = float(finite.max())
        if first > 0:
            top = min(top, 1e3 * first)
        top = max(top, first)
        low = float(finite.min())
        if low > 0 and top / low > 100:
            lo = 10.0 ** (math.floor(math.log10(max(low, top * 1e-10))) - 1)
            hi = 10.0 ** math.ceil(math.log10(top * 1.5))
            return lo, hi, True
        lo, hi = nice_box(min(low, 0.0), top, pad=0.08)
        return lo, hi, False

    # ---- drawing -------------------------------------------------------------------------------
    def _make_figure(self) -> tuple[Any, dict[str, Any], list[Any], list[Any]]:
        """The figure, its artists, and the blitter's moving and overlay artists."""
        from matplotlib.colors import to_rgb
        from matplotlib.ticker import MaxNLocator

        from gradviz.render.plot import log_axis, new_figure, palette, style_axes

        colors = palette(self.theme)
        fig = new_figure((9.6, 4.0), theme=self.theme, dpi=80)
        grid = fig.add_gridspec(1, 2, width_ratios=[1.35, 1.0], wspace=0.22)
        ax = fig.add_subplot(grid[0])
        axl = fig.add_subplot(grid[1])
        style_axes(ax, self.theme)
        style_axes(axl, self.theme)
        if self.mode == "2d":
            X, Y, Z = self._grid
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
            ax.set_xlim(*self.xlim)
            ax.set_ylim(*self.ylim)
            ax.set_xlabel("θ[0]", color=colors["muted"], fontsize=9)
            ax.set_ylabel("θ[1]", color=colors["muted"], fontsize=9)
            ax.plot([self.start[0]], [self.start[1]], marker="*", ms=13, color=colors["text"], ls="none",
                    zorder=5)
            ax.set_title("contours of f and the paths", color=colors["text"], fontsize=10, y=1.0)
        else:
            xs, Z = self._grid
            ax.plot(xs, Z, color=colors["muted"], lw=1.8)
            ax.set_xlim(*self.xlim)
            ax.set_ylim(*self.ylim)
            ax.set_xlabel("θ", color=colors["muted"], fontsize=9)
            ax.set_ylabel("f(θ)", color=colors["muted"], fontsize=9)
            ax.set_title("f and the points θ₀, θ₁, …", color=colors["text"], fontsize=10, y=1.0)
        lo, hi, log = self._loss_limits
        if log:
            log_axis(axl, "y", (lo, hi))
        else:
            axl.set_ylim(lo, hi)
        axl.set_xlim(-0.02 * self.steps, self.steps * 1.02)
        axl.xaxis.set_major_locator(MaxNLocator(integer=True))
        axl.set_xlabel("step", color=colors["muted"], fontsize=9)
        axl.set_title("loss", color=colors["text"], fontsize=10, loc="left", y=1.0)

        art: dict[str, Any] = {"paths": {}, "overlay_key": None, "ax": ax, "axl": axl}
        moving: list[Any] = []
        overlay: list[Any] = []
        colors_of = self.colors()  # the panel's table shows each optimizer's colour (no legend here)
        for name in self._makers:
            color = colors_of[name]
            a: dict[str, Any] = {}
            a["full"], = ax.plot([], [], color=color, lw=1.0, alpha=0.4, zorder=3)
            a["lfull"], = axl.plot([], [], color=color, lw=1.0, alpha=0.4)
            overlay += [a["full"], a["lfull"]]
            a["done"], = ax.plot([], [], color=color, lw=1.8, marker="o", ms=3, zorder=4)
            a["here"], = ax.plot([], [], color=color, marker="o", ms=9, mec=colors["background"], mew=1.5,
                                 ls="none", zorder=6)
            if self.mode == "1d":
                a["tangent"], = ax.plot([], [], color=colors["highlight"], lw=1.6, ls="--", zorder=5)
            a["ldone"], = axl.plot([], [], color=color, lw=1.8, label=name)
            a["lhere"], = axl.plot([], [], color=color, marker="o", ms=6, ls="none")
            moving += [v for key, v in a.items() if key not in ("full", "lfull")]
            art["paths"][name] = a
        art["vline"] = axl.axvline(0, color=colors["highlight"], lw=1.0, ls=":")
        moving.append(art["vline"])
        fig.subplots_adjust(left=0.07, right=0.98, top=0.92, bottom=0.13)
        return fig, art, moving, overlay

    def _update_overlay(self, art: dict[str, Any], blitter: Any = None) -> None:
        """The artists that change with the learning rate and the selection (not with the step)."""
        key = (self.learning_rate, self.momentum, self.selected)
        if art["overlay_key"] == key:
            return
        art["overlay_key"] = key
        for name, a in art["paths"].items():
            shown = name in self.selected
            for artist in a.values():
                artist.set_visible(shown)
            if not shown:
                continue
            traj = self.trajectory(name)
            pts, losses = traj.points, traj.losses
            if self.mode == "2d":
                a["full"].set_data(pts[:, 0], pts[:, 1])
            else:
                a["full"].set_data(pts.astype(float), losses)
            a["lfull"].set_data(np.arange(len(losses)), losses)
        if blitter is not None:
            blitter.invalidate_overlay()

    def _update(self, art: dict[str, Any], blitter: Any = None) -> None:
        """Point every artist at the current state (the overlay only when it changed)."""
        self._update_overlay(art, blitter)
        k_shown = self.step
        for name in self.selected:
            a = art["paths"][name]
            traj = self.trajectory(name)
            pts = traj.points
            k = min(k_shown, len(pts) - 1)
            losses = traj.losses
            if self.mode == "2d":
                a["done"].set_data(pts[: k + 1, 0], pts[: k + 1, 1])
                a["here"].set_data([pts[k, 0]], [pts[k, 1]])
            else:
                xs = pts.astype(float)
                a["done"].set_data(xs[: k + 1], losses[: k + 1])
                a["here"].set_data([xs[k]], [losses[k]])
                g = traj.gradient_at(k)
                if g is not None and math.isfinite(float(losses[k])):
                    half = 0.16 * (self.xlim[1] - self.xlim[0])
                    tx = np.array([xs[k] - half, xs[k] + half])
                    a["tangent"].set_data(tx, losses[k] + float(g) * (tx - xs[k]))
                else:
                    a["tangent"].set_data([], [])
            steps = np.arange(len(losses))
            a["ldone"].set_data(steps[: k + 1], losses[: k + 1])
            a["lhere"].set_data([k], [losses[k]])
        art["vline"].set_xdata([k_shown, k_shown])

    def _figure(self) -> Any:
        fig, art, _, _ = self._make_figure()
        self._update(art)
        return fig

    def _draw(self) -> bytes:
        from gradviz.render.plot import Blitter

        if self._fig is None:
            self._fig, self._art, moving, overlay = self._make_figure()
            self._blitter = Blitter(self._fig, moving, overlay)
        self._update(self._art, self._blitter)
        return self._blitter.render()
