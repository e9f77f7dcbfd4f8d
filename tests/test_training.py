"""Training: the loop helpers are the hand-written loop, and the seed-002-style CNN learns the digits."""

from __future__ import annotations

import numpy as np
import pytest

import engine as eg
from engine import layers as L
from engine.training import accuracy, evaluate, fit, train_step


def digits_cnn(seed=0):
    """The seed-002-style network, sized for 8x8 digits: conv 3x3 → relu → max pool → dense."""
    return L.Sequential([
        L.Conv2D(32, 3, activation="relu", seed=seed),
        L.MaxPool2D(2),
        L.Flatten(),
        L.Dense(10, seed=seed + 1),
    ])


@pytest.mark.slow  # about 1-2 s alone; 8-15 s when BLAS threads fight other processes for the 2 cores
def test_cnn_learns_the_digits_above_95_percent():
    x_train, y_train, x_test, y_test = eg.data.load_digits(seed=0)
    model = digits_cnn()
    history = fit(model, x_train, y_train, eg.optimizers.Adam(0.01), epochs=4, batch_size=64, seed=0,
                  validation_data=(x_test, y_test), progress=False)
    assert history["loss"][-1] < history["loss"][0]
    scores = evaluate(model, x_test, y_test)
    assert scores["accuracy"] > 0.95, history
    assert scores["accuracy"] == history["val_accuracy"][-1]


def test_fit_is_the_hand_written_loop():
    x_train, y_train, _, _ = eg.data.load_digits(seed=0)
    x, y = x_train[:200], y_train[:200]
    by_fit, by_hand = digits_cnn(), digits_cnn()
    fit(by_fit, x, y, eg.optimizers.Adam(0.01), epochs=2, batch_size=50, seed=7, progress=False)
    opt = eg.optimizers.Adam(0.01)
    for epoch in range(2):
        for xb, yb in eg.data.batches(x, y, 50, seed=7 + epoch):
            with eg.GradientTape() as tape:
                loss = eg.mean(eg.nn.sparse_softmax_cross_entropy(yb, by_hand(xb, training=True)))
            opt.apply_gradients(opt.compute_gradients(loss, tape=tape))
    for a, b in zip(by_fit.trainable_variables, by_hand.trainable_variables):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_train_step_transform_and_on_step_hooks():
    x_train, y_train, x_test, y_test = eg.data.load_digits(seed=0, flatten=True)
    model = L.Sequential([L.Dense(10, seed=3)])
    seen, norms = [], []

    def clip(pairs):
        grads, variables = zip(*pairs)
        clipped, norm = eg.clip_by_global_norm(list(grads), 0.5)
        norms.append(float(norm))
        return list(zip(clipped, variables))

    def on_step(step, loss, grads_and_vars):
        seen.append((step, float(loss), len(grads_and_vars)))

    history = fit(model, x_train[:256], y_train[:256], eg.optimizers.SGD(0.5), epochs=2, batch_size=64,
                  seed=0, transform=clip, progress=False, on_step=on_step)
    assert [s for s, _, _ in seen] == list(range(1, 9)) and all(n == 2 for _, _, n in seen)
    assert len(norms) == 8 and sorted(history) == ["accuracy", "epoch_seconds", "loss"]
    loss, logits, pairs = train_step(model, eg.optimizers.SGD(0.1), x_test[:5], y_test[:5])
    assert loss.shape == () and logits.shape == (5, 10) and len(pairs) == 2
    assert accuracy(logits, y_test[:5]) == np.mean(logits.numpy().argmax(1) == y_test[:5])


def test_fit_works_with_gradient_accumulation_and_shows_progress(capsys):
    x_train, y_train, _, _ = eg.data.load_digits(seed=0, flatten=True)
    model = L.Sequential([L.Dense(10, seed=4)])
    multi = eg.optimizers.MultiSteps(eg.optimizers.Adam(0.01), every_k=2)
    fit(model, x_train[:128], y_train[:128], multi, epochs=1, batch_size=32, seed=0, progress=True)
    assert multi.iterations == 2
    assert "4/4" in capsys.readouterr().err          # tqdm's text bar outside Jupyter


@pytest.mark.parametrize("dropout", [0.0, 0.25])
def test_evaluate_turns_dropout_off(dropout):
    model = L.Sequential([L.Flatten(), L.Dropout(dropout, seed=0), L.Dense(10, seed=5)])
    _, _, x_test, y_test = eg.data.load_digits(seed=0)
    assert evaluate(model, x_test, y_test) == evaluate(model, x_test, y_test)
