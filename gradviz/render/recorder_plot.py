"""`gv.Recorder`: the recorded scalars and gradient statistics (`gradviz.model.recorder.RecordedSteps`)
with their picture, ``rec.plot()``: one panel per scalar, drawn by `scalar_panels` from the numbers the
model hands it (the model keeps the numbers; drawing them is here).

>>> import gradviz as gv
>>> rec = gv.Recorder()
>>> rec.record(0, loss=2.0)
>>> rec.record(1, loss=1.0)
>>> len(rec.plot().axes)
1
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from gradviz.model.recorder import RecordedSteps
from gradviz.render.plot import log_axis, new_figure, plain_texts, plot_colors, style_axes

__all__ = ["Recorder", "scalar_panels"]


class Recorder:
    """`gv.Recorder`: the numbers a `gradviz.model.recorder.RecordedSteps` keeps (``.recorded``; every
    method but ``plot`` is its own) and ``plot()``, their drawing (`scalar_panels`). It holds the model
    rather than inheriting it: the model knows nothing of drawing.

    >>> import gradviz as gv
    >>> rec = gv.Recorder()
    >>> rec.record(0, loss=0.5, accuracy=0.9)
    >>> rec.scalar_names, len(rec.plot().axes), type(rec.recorded).__name__
    (['loss', 'accuracy'], 2, 'RecordedSteps')
    """

    def __init__(self, recorded: RecordedSteps | None = None) -> None:
        self.recorded = RecordedSteps() if recorded is None else recorded

    @functools.wraps(RecordedSteps.record)
    def record(self, *args: Any, **kwargs: Any) -> None:
        self.recorded.record(*args, **kwargs)

    @property
    def steps(self) -> list[int]:
        """The steps recorded, in order."""
        return self.recorded.steps

    @property
    def scalar_names(self) -> list[str]:
        """The scalars recorded, in the order they first appeared."""
        return self.recorded.scalar_names

    @property
    def variable_names(self) -> list[str]:
        """The variables with gradient statistics."""
        return self.recorded.variable_names

    @functools.wraps(RecordedSteps.layers)
    def layers(self) -> dict[str, list[str]]:
        return self.recorded.layers()

    @functools.wraps(RecordedSteps.scalar)
    def scalar(self, name: str) -> tuple[list[int], list[float]]:
        return self.recorded.scalar(name)

    @functools.wraps(RecordedSteps.gradient_stats)
    def gradient_stats(self, variable: str) -> dict[str, list[float]]:
        return self.recorded.gradient_stats(variable)

    @functools.wraps(RecordedSteps.to_dict)
    def to_dict(self) -> dict[str, Any]:
        return self.recorded.to_dict()

    @property
    def history(self) -> dict[str, Any]:
        """The same as `to_dict()`."""
        return self.recorded.to_dict()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Recorder:
        """A recorder holding what `to_dict()` returned (e.g. loaded from JSON)."""
        return cls(RecordedSteps.from_dict(data))

    def __len__(self) -> int:
        return len(self.recorded)

    def __repr__(self) -> str:
        return repr(self.recorded)

    def plot(self, names: Iterable[str] | None = None, log: bool | None = None, theme: str | None = None):
        """A matplotlib `Figure` with one panel per scalar (all of them unless ``names`` is given).

        ``log``: logarithmic y axis (default: for a scalar named like a loss whose values span more
        than two decades). The figure is made without pyplot, so it is safe in scripts and tests.
        """
        recorded = self.scalar_names
        chosen = list(names) if names is not None else recorded
        missing = [n for n in chosen if n not in recorded]
        if missing:
            raise KeyError(f"Recorder.plot: no scalar {missing[0]!r}; recorded: {recorded}.")
        return scalar_panels({name: self.scalar(name) for name in chosen}, log=log, theme=theme)


def scalar_panels(scalars: Mapping[str, tuple[Sequence[int], Sequence[float]]], log: bool | None = None,
                  theme: str | None = None) -> Any:
    """A matplotlib `Figure` with one panel per ``name: (steps, values)`` of ``scalars`` (a note when
    there is none): what ``gv.Recorder.plot`` draws. ``log`` as there.

    >>> len(scalar_panels({"loss": ([0, 1], [2.0, 1.0]), "lr": ([0, 1], [0.1, 0.1])}).axes)
    2
    """
    from matplotlib.ticker import MaxNLocator  # matplotlib, heavy, loads only when a figure is made

    chosen = list(scalars)
    colors = plot_colors(theme)
    n = max(len(chosen), 1)
    cols = min(n, 3)
    rows = math.ceil(n / cols)
    fig = new_figure((3.6 * cols, 2.6 * rows), theme=theme)
    if not chosen:
        ax = fig.add_subplot(1, 1, 1)
        style_axes(ax, theme)
        ax.text(0.5, 0.5, "nothing recorded yet:\ncall rec.record(step, loss=...)", ha="center",
                va="center", transform=ax.transAxes, color=colors["muted"])
        ax.set_xticks([])
        ax.set_yticks([])
        return fig
    for k, name in enumerate(chosen):
        ax = fig.add_subplot(rows, cols, k + 1)
        style_axes(ax, theme)
        steps, values = scalars[name]
        ax.plot(steps, values, color=colors["series"][k % len(colors["series"])], lw=1.6,
                marker="o" if len(steps) <= 30 else None, ms=3)
        ax.set_title(name, color=colors["text"], fontsize=10, y=1.0)
        ax.set_xlabel("step", color=colors["muted"], fontsize=8)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        finite = np.asarray([v for v in values if math.isfinite(v)])
        use_log = log if log is not None else (
            "loss" in name and finite.size > 1 and finite.min() > 0 and finite.max() / finite.min() > 100)
        if use_log and finite.size and finite.min() > 0:
            log_axis(ax, "y")
        bad = [s for s, v in zip(steps, values) if not math.isfinite(v)]
        if bad:
            for s in bad:
                ax.axvline(s, color=colors["bad"], lw=0.8, ls=":")
            ax.text(0.98, 0.95, f"{len(bad)} non-finite", transform=ax.transAxes, ha="right",
                    va="top", color=colors["bad"], fontsize=8)
    plain_texts(fig).tight_layout()  # scalar names drawn as written (no math text)
    return fig
