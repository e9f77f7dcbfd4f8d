"""Momentum (heavy ball) and Nesterov momentum.

TensorFlow's rule (``MomentumOptimizer``), with the slot ``momentum`` (the accumulator ``a``):

    a ← μ·a + g
    w ← w − lr·a                 (classic)
    w ← w − lr·(g + μ·a)         (nesterov=True, with the new a)

>>> import engine as eg
>>> w = eg.Variable(0.0)
>>> opt = eg.optimizers.Momentum(learning_rate=1.0, momentum=0.5)
>>> for _ in range(2):
...     opt.apply_gradients([(eg.constant(1.0), w)])
>>> float(w), float(opt.get_slot(w, "momentum"))   # a: 1, then 1.5; w: -1, then -2.5
(-2.5, 1.5)
"""

from __future__ import annotations

from typing import Any

from .base import LearningRate, Optimizer, _check_number

__all__ = ["Momentum"]


class Momentum(Optimizer):
    """Gradient descent with momentum ``μ`` (``momentum``), optionally Nesterov's variant.

    >>> import engine as eg
    >>> w = eg.Variable(1.0)
    >>> opt = eg.optimizers.Momentum(0.1, momentum=0.9)
    >>> for _ in range(2):
    ...     _ = opt.minimize(lambda: w * w)
    ...
    >>> round(float(w), 4)
    0.46
    """

    slot_names = ("momentum",)

    def __init__(self, learning_rate: LearningRate = 0.01, momentum: float = 0.9, nesterov: bool = False,
                 name: str | None = None):
        super().__init__(learning_rate, name)
        self.momentum = _check_number(momentum, "momentum", type(self).__name__, low=0.0)
        self.nesterov = bool(nesterov)

    def _update(self, xp: Any, w: Any, g: Any, slots: dict[str, Any], lr: float, step: int):
        a = self.momentum * slots["momentum"] + g
        if self.nesterov:
            return w - lr * (g + self.momentum * a), {"momentum": a}
        return w - lr * a, {"momentum": a}

    def _hyper(self) -> str:
        return f"{super()._hyper()} momentum={self.momentum} nesterov={self.nesterov}"
