"""`Dense`: ``activation(x @ kernel + bias)``, a fully connected layer.

>>> import engine as eg
>>> layer = Dense(2, activation="relu", seed=0, name="d")
>>> layer(eg.ones((5, 3))).shape, [v.shape for v in layer.variables]
((5, 2), [(3, 2), (2,)])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import checks
from .. import ops as F
from ..tensor import Tensor
from . import initializers
from .base import Layer, float_input, get_activation

__all__ = ["Dense"]


class Dense(Layer):
    """``units`` outputs from the last axis of the input; kernel ``(in, units)`` Glorot-uniform,
    bias zeros. Built on the first call, in the input's dtype and on its device.

    >>> import engine as eg
    >>> eg.layers.Dense(3, activation="relu")(eg.ones((2, 5))).shape
    (2, 3)
    """

    name_prefix = "dense"

    def __init__(self, units: int, activation: str | Callable | None = None, use_bias: bool = True,
                 seed: int | None = None, name: str | None = None):
        super().__init__(name)
        self.units = checks.count(units, "units", "Dense", minimum=1)
        self.activation = get_activation(activation)
        self.use_bias = bool(use_bias)
        self.seed = seed
        self.kernel: Any = None
        self.bias: Any = None

    def build(self, input_shape: tuple[int, ...]) -> None:
        if len(input_shape) < 1:
            raise ValueError(f"{self.name}: Dense needs inputs with a feature axis, got shape {input_shape}.")
        fan_in = input_shape[-1]
        self.kernel = self.add_variable("kernel", initializers.glorot_uniform(
            (fan_in, self.units), fan_in, self.units, dtype=self.dtype, seed=self.seed))
        if self.use_bias:
            self.bias = self.add_variable("bias", initializers.zeros((self.units,), dtype=self.dtype))

    def call(self, x: Tensor, training: bool = False) -> Tensor:
        x = float_input(x)
        if x.shape[-1] != self.kernel.shape[0]:
            raise ValueError(f"{self.name}: expected inputs with {self.kernel.shape[0]} features (the size "
                             f"it was built for), got shape {x.shape}.")
        y = F.matmul(x, self.kernel)
        if self.bias is not None:
            y = y + self.bias
        return self.activation(y) if self.activation is not None else y
