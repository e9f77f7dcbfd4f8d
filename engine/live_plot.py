"""A loss curve that redraws while a notebook cell trains: what `eg.training.fit` shows in Jupyter.

One picture (a PNG drawn with matplotlib, which the lessons install) is displayed once and then
replaced in place, and once more at the end, so the cell's output stays one image: live in
JupyterLab, the final curve in a notebook run by nbclient or exported to HTML. Redraws wait at least
``interval`` seconds and ten times as long as the last drawing took, so drawing costs training at
most about a tenth of its time. Outside a Jupyter kernel nothing is shown (``in_notebook()``).

>>> plot = LossPlot(interval=0.0, show=False)
>>> for step, loss in enumerate([2.3, 1.1, 0.7], start=1):
...     plot.add(step, loss)
>>> plot.steps, plot.losses
([1, 2, 3], [2.3, 1.1, 0.7])
>>> len(plot.png()) > 1000 and plot.png()[:4] == b"\\x89PNG"
True
"""

from __future__ import annotations

import io
import sys
import time

__all__ = ["LossPlot", "in_notebook"]


def in_notebook() -> bool:
    """True inside a Jupyter kernel (JupyterLab, nbclient), where a picture can be updated in place."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


class LossPlot:
    """The training loss per step (and the validation loss per epoch), redrawn in place.

    ``add(step, loss)`` after every step, ``add_validation(step, loss)`` after an epoch, ``close()``
    at the end (draws the final curve). ``show=False`` keeps it off the screen (``png()`` still draws).
    """

    def __init__(self, title: str = "training loss", interval: float = 1.0, show: bool = True):
        self.title, self.interval, self.show = title, interval, show
        self.steps: list[int] = []
        self.losses: list[float] = []
        self.validation: tuple[list[int], list[float]] = ([], [])
        self._handle = None
        self._next_draw = -float("inf")

    def add(self, step: int, loss: float) -> None:
        self.steps.append(int(step))
        self.losses.append(float(loss))
        self._maybe_draw()

    def add_validation(self, step: int, loss: float) -> None:
        self.validation[0].append(int(step))
        self.validation[1].append(float(loss))
        self._maybe_draw()

    def _maybe_draw(self) -> None:
        if time.perf_counter() >= self._next_draw:
            self.draw()

    def close(self) -> None:
        self.draw()

    def png(self) -> bytes:
        """The current curve as PNG bytes."""
        from matplotlib.figure import Figure  # noqa: PLC0415  (not pyplot: no second, automatic copy)

        fig = Figure(figsize=(6.0, 2.4), dpi=80)
        fig.subplots_adjust(left=0.11, right=0.98, top=0.88, bottom=0.2)
        ax = fig.add_subplot()
        ax.plot(self.steps, self.losses, lw=1, color="#1f77b4", label="training (batch)")
        if self.validation[0]:
            ax.plot(*self.validation, "o-", color="#d62728", label="validation")
        ax.set(title=self.title, xlabel="step", ylabel="loss")
        if self.losses and min(self.losses) > 0 and max(self.losses) / min(self.losses) > 20:
            ax.set_yscale("log")
        ax.grid(alpha=0.3)
        ax.legend(loc="upper right", fontsize="small")
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png")
        return buffer.getvalue()

    def draw(self) -> None:
        start = time.perf_counter()
        if self.show and self.steps:
            from IPython.display import Image, display  # noqa: PLC0415

            image = Image(data=self.png(), format="png")
            if self._handle is None:
                self._handle = display(image, display_id=True)
            else:
                self._handle.update(image)
        now = time.perf_counter()
        self._next_draw = now + max(self.interval, 10 * (now - start))
