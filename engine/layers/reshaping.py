"""`Flatten`: ``(batch, ...)`` → ``(batch, everything else)``, e.g. before a Dense layer.

>>> import engine as eg
>>> Flatten()(eg.ones((5, 2, 2, 3))).shape
(5, 12)
"""

from __future__ import annotations

from .. import ops as F
from ..tensor import Tensor
from .base import Layer

__all__ = ["Flatten"]


class Flatten(Layer):
    """Keep the first (batch) axis, merge all others.

    >>> import engine as eg
    >>> eg.layers.Flatten()(eg.ones((2, 3, 4))).shape
    (2, 12)
    """

    name_prefix = "flatten"

    def call(self, x: Tensor, training: bool = False) -> Tensor:
        if x.ndim < 1:
            raise ValueError(f"{self.name}: cannot flatten a scalar (it has no batch axis).")
        rest = 1
        for n in x.shape[1:]:
            rest *= n
        return F.reshape(x, (x.shape[0], rest))
