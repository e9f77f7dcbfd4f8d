"""Dropout: during training, zero each element with probability ``rate`` and scale the survivors by
``1 / (1 - rate)`` ("inverted" dropout), so the expected value is unchanged and nothing needs
rescaling at test time, where dropout is the identity.

>>> import engine as eg
>>> x = eg.ones((2, 4))
>>> y = eg.nn.dropout(x, rate=0.5, seed=1)
>>> sorted(set(y.numpy().ravel().tolist()))          # dropped (0) or kept and doubled (2)
[0.0, 2.0]
>>> eg.nn.dropout(x, rate=0.5, training=False) is x
True
"""

from __future__ import annotations

import math
from typing import Any

from .. import backend
from .. import ops as F
from .. import random as _random
from ..tensor import Tensor, convert_to_tensor, is_floating

__all__ = ["dropout"]


def dropout(x: Any, rate: float, training: bool = True, seed: int | None = None,
            noise_shape: tuple[int, ...] | None = None) -> Tensor:
    """``x`` with each element dropped with probability ``rate`` and the rest scaled by 1/(1 - rate).

    - ``training=False`` (or ``rate == 0``): returns ``x`` itself.
    - ``seed``: the same seed gives the same mask (combined with ``eg.random.set_seed``'s global seed,
      like every random op); None draws from the global sequence.
    - ``noise_shape``: the mask's shape, broadcast against ``x`` (e.g. ``(N, 1, 1, C)`` drops whole
      channels).

    The gradient is the same mask times the same scale.
    """
    x = x if isinstance(x, Tensor) else convert_to_tensor(x)
    if isinstance(rate, bool) or not isinstance(rate, int | float) or math.isnan(rate) or not 0 <= rate < 1:
        raise ValueError(f"dropout: rate must be a number in [0, 1), got {rate!r} (it is the fraction "
                         "dropped, not kept).")
    if not is_floating(x.dtype):
        raise TypeError(f"dropout: expected a floating-point tensor, got {x.dtype}. Cast it first.")
    if not training or rate == 0:
        return x
    shape = x.shape if noise_shape is None else tuple(int(n) for n in noise_shape)
    keep = _random.generator(seed).random(shape) >= rate
    scale = keep.astype(x.dtype) * x.dtype.type(1.0 / (1.0 - rate))
    mask = Tensor._make(backend.transfer(scale, x._device) if x._device.kind == "gpu" else scale, x._device)
    return F.multiply(x, mask)
