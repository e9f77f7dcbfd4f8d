"""Lesson 07's CNN trained with a traced step learns what the eager step learns: same losses, same
weights (to rounding), same test accuracy."""

from __future__ import annotations

import numpy as np

import engine as eg
from engine import layers as L


def _cnn(seed: int = 0) -> L.Sequential:
    """Lesson 07's network at the size its tests train: conv → relu → pool → dropout → dense."""
    return L.Sequential([
        L.Conv2D(16, 3, activation="relu", seed=seed),
        L.MaxPool2D(2),
        L.Flatten(),
        L.Dropout(0.25, seed=seed),
        L.Dense(10, seed=seed + 1),
    ])


def _train(traced: bool, epochs: int = 2):
    x_train, y_train, x_test, y_test = eg.data.load_digits(seed=0)
    model, opt = _cnn(), eg.optimizers.Adam(0.01)

    def step(x, y):
        with eg.GradientTape() as tape:
            loss = eg.mean(eg.nn.sparse_softmax_cross_entropy(y, model(x, training=True)))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    run = eg.function(step) if traced else step
    losses = [float(run(eg.constant(x), eg.constant(y)))
              for _ in range(epochs) for x, y in eg.data.batches(x_train, y_train, 64, seed=1)]
    predict = eg.function(lambda x: eg.argmax(model(x), axis=-1)) if traced else (
        lambda x: eg.argmax(model(x), axis=-1))
    accuracy = float(np.mean(predict(eg.constant(x_test)).numpy() == y_test))
    return losses, accuracy, model, run


def test_lesson07_cnn_trains_to_the_same_accuracy_traced():
    eager_losses, eager_accuracy, eager_model, _ = _train(traced=False)
    traced_losses, traced_accuracy, traced_model, step = _train(traced=True)
    assert step.trace_count == 2  # a full batch of 64 and the last, smaller one
    np.testing.assert_allclose(traced_losses, eager_losses, rtol=1e-4)
    for a, b in zip(traced_model.variables, eager_model.variables):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-3, atol=1e-5)
    assert traced_accuracy == eager_accuracy and traced_accuracy > 0.9
