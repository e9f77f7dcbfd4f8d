"""Plain gradient descent: ``w ← w − lr·g``.

>>> import engine as eg
>>> w = eg.Variable([1.0, 2.0])
>>> eg.optimizers.SGD(0.5).apply_gradients([(eg.constant([1.0, 1.0]), w)])
>>> w.numpy()
array([0.5, 1.5], dtype=float32)
"""

from __future__ import annotations

from typing import Any

from .base import LearningRate, Optimizer

__all__ = ["SGD", "GradientDescent"]


class SGD(Optimizer):
    """Stochastic gradient descent, ``w ← w − lr·g`` (TensorFlow's ``GradientDescentOptimizer``).

    No slots: the update depends on the current gradient only.

    >>> import engine as eg
    >>> w = eg.Variable(1.0)
    >>> _ = eg.optimizers.SGD(0.1).minimize(lambda: w * w)
    >>> round(float(w), 4)                  # 1 - 0.1 * 2
    0.8
    """

    def __init__(self, learning_rate: LearningRate = 0.01, name: str | None = None):
        super().__init__(learning_rate, name)

    def _update(self, xp: Any, w: Any, g: Any, slots: dict[str, Any], lr: float, step: int):
        return w - lr * g, {}


GradientDescent = SGD
