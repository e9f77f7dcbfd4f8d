"""`Conv2D`: ``activation(conv2d(x, kernel) + bias)`` on NHWC images.

>>> import engine as eg
>>> layer = Conv2D(4, 3, activation="relu", seed=0)
>>> layer(eg.ones((2, 8, 8, 1))).shape, layer.kernel.shape
((2, 8, 8, 4), (3, 3, 1, 4))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import checks, nn
from ..nn.windows import padding_name, pair
from ..tensor import Tensor
from . import initializers
from .base import Layer, float_input, get_activation

__all__ = ["Conv2D"]


class Conv2D(Layer):
    """``filters`` output channels from ``kernel_size`` windows; kernel HWIO Glorot-uniform
    (fan_in = kh·kw·in, fan_out = kh·kw·filters, as Keras), bias zeros.

    >>> import engine as eg
    >>> eg.layers.Conv2D(4, 3)(eg.ones((1, 8, 8, 1))).shape
    (1, 8, 8, 4)
    """

    name_prefix = "conv2d"

    def __init__(self, filters: int, kernel_size: int | tuple[int, int], strides: int | tuple[int, int] = 1,
                 padding: str = "SAME", activation: str | Callable | None = None, use_bias: bool = True,
                 seed: int | None = None, name: str | None = None):
        super().__init__(name)
        self.filters = checks.count(filters, "filters", "Conv2D", minimum=1)
        self.kernel_size = pair(kernel_size, "kernel_size", "Conv2D")
        self.strides = pair(strides, "strides", "Conv2D")
        self.padding = padding_name(padding, "Conv2D")
        self.activation = get_activation(activation)
        self.use_bias = bool(use_bias)
        self.seed = seed
        self.kernel: Any = None
        self.bias: Any = None

    def build(self, input_shape: tuple[int, ...]) -> None:
        if len(input_shape) != 4:
            raise ValueError(f"{self.name}: Conv2D needs NHWC inputs (batch, height, width, channels), got "
                             f"shape {input_shape}. Reshape, e.g. x.reshape(-1, 8, 8, 1).")
        kh, kw = self.kernel_size
        channels = input_shape[3]
        self.kernel = self.add_variable("kernel", initializers.glorot_uniform(
            (kh, kw, channels, self.filters), kh * kw * channels, kh * kw * self.filters,
            dtype=self.dtype, seed=self.seed))
        if self.use_bias:
            self.bias = self.add_variable("bias", initializers.zeros((self.filters,), dtype=self.dtype))

    def call(self, x: Tensor, training: bool = False) -> Tensor:
        y = nn.conv2d(float_input(x), self.kernel, strides=self.strides, padding=self.padding)
        if self.bias is not None:
            y = y + self.bias
        return self.activation(y) if self.activation is not None else y
