"""Adagrad (Duchi, Hazan & Singer, 2011): a per-coordinate step that shrinks as squared gradients
add up. Slot ``accumulator`` (starts at ``initial_accumulator_value``, 0.1 as in TensorFlow):

    acc ← acc + g²
    w   ← w − lr·g / (√acc + ε)

``ε`` (``epsilon``, 1e-7 as in Keras) only guards against a zero accumulator; TensorFlow 1's
``AdagradOptimizer`` had none (``epsilon=0`` reproduces it exactly).

>>> import engine as eg
>>> w = eg.Variable(0.0)
>>> opt = eg.optimizers.Adagrad(learning_rate=1.0, initial_accumulator_value=0.0, epsilon=0.0)
>>> opt.apply_gradients([(eg.constant(3.0), w)])
>>> float(w), float(opt.get_slot(w, "accumulator"))     # 0 − 3/√9
(-1.0, 9.0)
"""

from __future__ import annotations

from typing import Any

from .base import LearningRate, Optimizer, _check_number

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad: ``acc ← acc + g²``, ``w ← w − lr·g / (√acc + ε)``.

    >>> import engine as eg
    >>> w = eg.Variable(1.0)
    >>> _ = eg.optimizers.Adagrad(0.1).minimize(lambda: w * w)
    >>> round(float(w), 4)
    0.9012
    """

    slot_names = ("accumulator",)

    def __init__(self, learning_rate: LearningRate = 0.001, initial_accumulator_value: float = 0.1,
                 epsilon: float = 1e-7, name: str | None = None):
        super().__init__(learning_rate, name)
        owner = type(self).__name__
        self.initial_accumulator_value = _check_number(initial_accumulator_value, "initial_accumulator_value",
                                                       owner, low=0.0)
        self.epsilon = _check_number(epsilon, "epsilon", owner, low=0.0)

    def _initial_slots(self, var: Any) -> dict[str, Any]:
        xp = var._device.xp
        return {"accumulator": xp.full(var.shape, self.initial_accumulator_value, dtype=var.dtype)}

    def _update(self, xp: Any, w: Any, g: Any, slots: dict[str, Any], lr: float, step: int):
        acc = slots["accumulator"] + g * g
        return w - lr * g / (xp.sqrt(acc) + self.epsilon), {"accumulator": acc}

    def _hyper(self) -> str:
        return f"{super()._hyper()} initial_accumulator_value={self.initial_accumulator_value}"
