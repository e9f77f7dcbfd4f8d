"""`MaxPool2D`: the maximum of each window (no variables).

>>> import engine as eg
>>> MaxPool2D(2)(eg.ones((1, 8, 8, 3))).shape
(1, 4, 4, 3)
"""

from __future__ import annotations

from .. import nn
from ..nn.windows import padding_name, pair
from ..tensor import Tensor
from .base import Layer

__all__ = ["MaxPool2D"]


class MaxPool2D(Layer):
    """``eg.nn.max_pool2d`` as a layer: ``pool_size`` windows, ``strides`` (default ``pool_size``).

    >>> import engine as eg
    >>> eg.layers.MaxPool2D(2)(eg.ones((1, 4, 4, 1))).shape
    (1, 2, 2, 1)
    """

    name_prefix = "max_pooling2d"

    def __init__(self, pool_size: int | tuple[int, int] = 2, strides: int | tuple[int, int] | None = None,
                 padding: str = "VALID", name: str | None = None):
        super().__init__(name)
        self.pool_size = pair(pool_size, "pool_size", "MaxPool2D")
        self.strides = self.pool_size if strides is None else pair(strides, "strides", "MaxPool2D")
        self.padding = padding_name(padding, "MaxPool2D")

    def call(self, x: Tensor, training: bool = False) -> Tensor:
        return nn.max_pool2d(x, self.pool_size, self.strides, self.padding)
