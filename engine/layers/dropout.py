"""`Dropout`: ``eg.nn.dropout`` while training, the identity otherwise.

Each training call draws a new mask; with a ``seed`` the sequence of masks is reproducible.

>>> import engine as eg
>>> layer = Dropout(0.5, seed=0)
>>> sorted(set(layer(eg.ones((4, 4)), training=True).numpy().ravel().tolist()))
[0.0, 2.0]
>>> layer(eg.ones((4, 4))).numpy().min()            # training=False: unchanged
np.float32(1.0)
"""

from __future__ import annotations

from typing import Any

from .. import checks, nn
from .. import random as _random
from ..tensor import Tensor
from .base import Layer

__all__ = ["Dropout"]


class Dropout(Layer):
    """Drop a fraction ``rate`` of the elements (scaling the rest by 1/(1 - rate)) when ``training``.

    >>> import engine as eg
    >>> eg.layers.Dropout(0.5)(eg.ones(3)).numpy()
    array([1., 1., 1.], dtype=float32)
    """

    name_prefix = "dropout"

    def __init__(self, rate: Any, seed: int | None = None, name: str | None = None):
        super().__init__(name)
        # a number, or a 0-d float Tensor / Variable read on every call (eg.function graphs too)
        self.rate = checks.live_number(rate, "rate", "Dropout", low=0, high=1, high_open=True)
        self.seed = seed
        self._rng: Any = None if seed is None else _random.generator(seed)

    def call(self, x: Tensor, training: bool = False) -> Tensor:
        if not training or (not isinstance(self.rate, Tensor) and self.rate == 0):
            return x
        return nn.dropout(x, self.rate, training=True, _seed_fn=self._next_seed)

    def _next_seed(self) -> int:
        """The seed of the next mask (drawn when the mask is, so a traced graph draws a new one too)."""
        rng = _random.stream(self._rng) if self._rng is not None else _random.generator()
        return int(rng.integers(2**31 - 1))
