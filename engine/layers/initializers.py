"""Initial values for layer variables, reproducible with a seed.

`glorot_uniform` (Glorot & Bengio, 2010, the Keras default) draws from ``U(-limit, limit)`` with
``limit = sqrt(6 / (fan_in + fan_out))``, which keeps the variance of activations and gradients
about the same from layer to layer.

>>> import engine as eg
>>> w = glorot_uniform((64, 10), fan_in=64, fan_out=10, seed=0)
>>> bool(eg.max(eg.abs(w)) <= (6 / 74) ** 0.5)
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .. import creation
from .. import random as _random
from ..tensor import Tensor

__all__ = ["glorot_uniform", "zeros"]


def glorot_uniform(shape: Sequence[int], fan_in: int, fan_out: int, dtype: Any = "float32",
                   seed: int | None = None) -> Tensor:
    """Uniform on ``[-limit, limit]``, ``limit = sqrt(6 / (fan_in + fan_out))``.

    ``seed=None`` draws from eg.random's global sequence (reproducible after ``eg.random.set_seed``).
    """
    limit = math.sqrt(6.0 / max(fan_in + fan_out, 1))
    return _random.uniform(tuple(shape), -limit, limit, dtype=dtype, seed=seed)


def zeros(shape: Sequence[int], dtype: Any = "float32") -> Tensor:
    return creation.zeros(tuple(shape), dtype=dtype)
