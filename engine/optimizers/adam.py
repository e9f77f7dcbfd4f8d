"""Adam (Kingma & Ba, 2015) with bias correction, as TensorFlow implements it. Slots ``m``, ``v``;
at update ``t`` (1, 2, ...):

    m   ← β₁·m + (1 − β₁)·g
    v   ← β₂·v + (1 − β₂)·g²
    lr_t = lr·√(1 − β₂ᵗ) / (1 − β₁ᵗ)
    w   ← w − lr_t·m / (√v + ε)

This is the paper's "more efficient" ordering (end of its section 2); ``ε`` is its ε̂. Defaults
β₁ = 0.9, β₂ = 0.999, ε = 1e-7.

>>> import engine as eg
>>> w = eg.Variable(1.0)
>>> opt = eg.optimizers.Adam(learning_rate=0.1)
>>> opt.apply_gradients([(eg.constant(5.0), w)])
>>> round(float(w), 6)          # the first step moves by about lr, whatever the gradient's size
0.9
"""

from __future__ import annotations

import math
from typing import Any

from .base import LearningRate, Optimizer, _check_number

__all__ = ["Adam"]


class Adam(Optimizer):
    """Adam: running means of the gradient (``m``) and its square (``v``), bias-corrected.

    >>> import engine as eg
    >>> w = eg.Variable(1.0)
    >>> opt = eg.optimizers.Adam(0.1)
    >>> _ = opt.minimize(lambda: w * w)
    >>> round(float(w), 4), sorted(opt.slots(w))
    (0.9, ['m', 'v'])
    """

    slot_names = ("m", "v")

    def __init__(self, learning_rate: LearningRate = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-7, name: str | None = None):
        super().__init__(learning_rate, name)
        owner = type(self).__name__
        self.beta1 = _check_number(beta1, "beta1", owner, low=0.0, high=1.0)
        self.beta2 = _check_number(beta2, "beta2", owner, low=0.0, high=1.0)
        self.epsilon = _check_number(epsilon, "epsilon", owner, low=0.0)

    def _update(self, xp: Any, w: Any, g: Any, slots: dict[str, Any], lr: float, step: int):
        # The formulas of the module docstring, written out, make about ten arrays of w's size per
        # variable. Here the new m, v and w are fresh arrays (the old ones may be held by tensors
        # handed out, and a traced function's undo keeps them) and everything between is computed in
        # place in them and one scratch array: the same operations in the same order, so the same
        # bits, about four times faster for lesson 07's net.
        b1, b2 = self.beta1, self.beta2
        m, v, scratch, new_w = (xp.empty_like(w) for _ in range(4))
        xp.multiply(slots["m"], b1, out=m)
        m += xp.multiply(g, 1 - b1, out=scratch)                   # m = b1·m + (1 − b1)·g
        xp.multiply(slots["v"], b2, out=v)
        xp.multiply(g, 1 - b2, out=scratch)
        scratch *= g
        v += scratch                                               # v = b2·v + (1 − b2)·g·g
        lr_t = lr * math.sqrt(1 - b2 ** step) / (1 - b1 ** step)
        xp.sqrt(v, out=new_w)
        new_w += self.epsilon
        xp.multiply(m, lr_t, out=scratch)
        xp.divide(scratch, new_w, out=scratch)
        xp.subtract(w, scratch, out=new_w)                         # w − lr_t·m / (√v + ε)
        return new_w, {"m": m, "v": v}

    def _hyper(self) -> str:
        return f"{super()._hyper()} beta1={self.beta1} beta2={self.beta2} epsilon={self.epsilon}"
