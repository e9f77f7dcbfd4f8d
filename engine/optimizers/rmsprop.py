"""RMSProp (Tieleman & Hinton, 2012): divide by a running root-mean-square of the gradients.
Slots ``rms`` (the mean square), ``momentum`` (with ``momentum > 0``), ``mg`` (with ``centered``):

    rms ← ρ·rms + (1 − ρ)·g²
    mg  ← ρ·mg + (1 − ρ)·g                      (centered only; then rms − mg² replaces rms below)
    Δ   ← lr·g / √(rms + ε)
    mom ← μ·mom + Δ;  w ← w − mom               (momentum > 0)
    w   ← w − Δ                                 (momentum = 0)

Defaults ρ = 0.9, μ = 0, ε = 1e-7. ε sits inside the square root, as in TensorFlow's kernel.

>>> import engine as eg
>>> w = eg.Variable(0.0)
>>> opt = eg.optimizers.RMSProp(learning_rate=0.1, epsilon=0.0)
>>> opt.apply_gradients([(eg.constant(2.0), w)])
>>> round(float(w), 6), round(float(opt.get_slot(w, "rms")), 6)   # rms = 0.1·4; w = −0.1·2/√0.4
(-0.316228, 0.4)
"""

from __future__ import annotations

from typing import Any

from .base import LearningRate, Optimizer, _check_number

__all__ = ["RMSProp"]


class RMSProp(Optimizer):
    """RMSProp with optional momentum and centering (see the module docstring for the rule).

    >>> import engine as eg
    >>> w = eg.Variable(1.0)
    >>> _ = eg.optimizers.RMSProp(0.1).minimize(lambda: w * w)
    >>> round(float(w), 4)
    0.6838
    """

    def __init__(self, learning_rate: LearningRate = 0.001, rho: float = 0.9, momentum: float = 0.0,
                 epsilon: float = 1e-7, centered: bool = False, name: str | None = None):
        super().__init__(learning_rate, name)
        owner = type(self).__name__
        self.rho = _check_number(rho, "rho", owner, low=0.0, high=1.0)
        self.momentum = _check_number(momentum, "momentum", owner, low=0.0)
        self.epsilon = _check_number(epsilon, "epsilon", owner, low=0.0)
        self.centered = bool(centered)
        self.slot_names = ("rms",) + (("momentum",) if self.momentum > 0 else ()) + \
            (("mg",) if self.centered else ())

    def _update(self, xp: Any, w: Any, g: Any, slots: dict[str, Any], lr: float, step: int):
        rho = self.rho
        new = {"rms": rho * slots["rms"] + (1 - rho) * g * g}
        denominator = new["rms"]
        if self.centered:
            new["mg"] = rho * slots["mg"] + (1 - rho) * g
            denominator = denominator - new["mg"] * new["mg"]
        delta = lr * g / xp.sqrt(denominator + self.epsilon)
        if self.momentum > 0:
            new["momentum"] = self.momentum * slots["momentum"] + delta
            delta = new["momentum"]
        return w - delta, new

    def _hyper(self) -> str:
        return f"{super()._hyper()} rho={self.rho} momentum={self.momentum} centered={self.centered}"
