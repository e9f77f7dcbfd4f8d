"""eg.training.fit is public: your own step, extra scalars for the recorder, per-epoch scores, and a
live loss plot that updates one picture in place (and shows nothing outside a notebook)."""

from __future__ import annotations

import numpy as np
import pytest

import engine as eg
from engine import live_plot
from engine.training import train_step


def small_problem():
    x, y, x_test, y_test = eg.data.load_digits(seed=0, flatten=True)
    return x[:200], y[:200], x_test[:100], y_test[:100]


def test_fit_is_public_and_documented():
    assert "training" in eg.__all__ and eg.training.fit.__doc__
    assert ">>> history = eg.training.fit(" in eg.training.fit.__doc__


def test_own_step_scalars_and_on_epoch():
    x, y, x_test, y_test = small_problem()
    model = eg.layers.Sequential([eg.layers.Dense(10, seed=0)])
    opt = eg.optimizers.SGD(0.5)
    calls, epochs = [], []

    def my_step(xb, yb):
        loss, logits, pairs = train_step(model, opt, xb, yb)
        return loss, logits, pairs, {"grad_norm": eg.global_norm([g for g, _ in pairs])}

    def on_step(step, loss, grads_and_vars, **scalars):
        calls.append((step, float(loss), len(grads_and_vars), sorted(scalars)))

    history = eg.training.fit(model, x, y, opt, epochs=2, batch_size=50, seed=0, step=my_step,
                              on_step=on_step, on_epoch=lambda step, scores: epochs.append((step, scores)),
                              validation_data=(x_test, y_test), progress=False, plot=False)
    assert [c[0] for c in calls] == list(range(1, 9))
    assert all(c[2] == 2 and c[3] == ["grad_norm"] for c in calls)
    assert [step for step, _ in epochs] == [4, 8]
    assert epochs[-1][1]["val_accuracy"] == history["val_accuracy"][-1]
    assert sorted(epochs[0][1]) == ["accuracy", "loss", "val_accuracy", "val_loss"]
    assert history["loss"][-1] < history["loss"][0]


def test_no_plot_outside_a_notebook(monkeypatch):
    shown = []
    monkeypatch.setattr(live_plot.LossPlot, "draw", lambda self: shown.append(self))
    x, y, _, _ = small_problem()
    model = eg.layers.Sequential([eg.layers.Dense(10, seed=0)])
    assert not live_plot.in_notebook()
    eg.training.fit(model, x, y, eg.optimizers.SGD(0.1), epochs=1, batch_size=100, progress=False)
    assert shown == []


class FakeHandle:
    def __init__(self, log):
        self.log = log

    def update(self, image):
        self.log.append(("update", image))


def test_live_plot_is_one_picture_updated_in_place(monkeypatch):
    from IPython import display as ipy_display

    log = []

    def fake_display(image, display_id=False):
        assert display_id is True
        log.append(("display", image))
        return FakeHandle(log)

    monkeypatch.setattr(ipy_display, "display", fake_display)
    x, y, x_test, y_test = small_problem()
    model = eg.layers.Sequential([eg.layers.Dense(10, seed=0)])
    monkeypatch.setattr(eg.training, "LossPlot", lambda: live_plot.LossPlot(interval=0.0))
    eg.training.fit(model, x, y, eg.optimizers.SGD(0.1), epochs=2, batch_size=50, seed=0,
                    validation_data=(x_test, y_test), progress=False, plot=True)
    kinds = [kind for kind, _ in log]
    assert kinds[0] == "display" and set(kinds[1:]) == {"update"}, "one picture, then updates"
    assert len(log) >= 2, "drawn while training, then the whole curve at the end"
    assert all(image.data[:4] == b"\x89PNG" for _, image in log)


def test_live_plot_throttles_redraws():
    plot = live_plot.LossPlot(interval=3600.0, show=False)
    drawn, draw = [], plot.draw

    def counting_draw():
        drawn.append(len(plot.steps))
        draw()

    plot.draw = counting_draw  # type: ignore[method-assign]
    for step in range(1, 101):
        plot.add(step, 1.0 / step)
    assert drawn == [1], "the first step draws; the next ones wait for the interval"
    plot.close()
    assert drawn == [1, 100], "the end always draws the whole curve"
    assert np.isclose(plot.losses[-1], 0.01)


@pytest.mark.parametrize("loss_values", [[2.0, 1.0], [100.0, 0.5, 0.2]])
def test_png_draws_linear_and_log_scales(loss_values):
    plot = live_plot.LossPlot(show=False)
    for step, value in enumerate(loss_values, start=1):
        plot.add(step, value)
    plot.add_validation(len(loss_values), loss_values[-1])
    assert plot.png()[:4] == b"\x89PNG"
