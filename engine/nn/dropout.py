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

from typing import Any

import numpy as np

from .. import checks
from .. import ops as F
from .. import random as _random
from ..primitive import Primitive
from ..tensor import Tensor, convert_to_tensor

__all__ = ["dropout"]


def dropout(x: Any, rate: Any, training: bool = True, seed: int | None = None,
            noise_shape: tuple[int, ...] | None = None, _seed_fn: Any = None) -> Tensor:
    """``x`` with each element dropped with probability ``rate`` and the rest scaled by 1/(1 - rate).

    - ``training=False`` (or ``rate == 0``): returns ``x`` itself.
    - ``seed``: the same seed gives the same mask (combined with ``eg.random.set_seed``'s global seed,
      like every random op); None draws from the global sequence. The mask is computed on ``x``'s
      device (nothing is uploaded) by integer hashing of a key drawn on the host
      (`eg.random.hashed_uniform`), so a seed gives the same mask, bit for bit, on every device.
    - ``noise_shape``: the mask's shape, broadcast against ``x`` (e.g. ``(N, 1, 1, C)`` drops whole
      channels).
    - ``rate``: a number in [0, 1) (Python or NumPy), or a 0-d float Tensor or Variable: then it is an
      input of the mask op, read each time the op runs (an ``eg.function`` graph reads the Variable on
      every call); its value is checked on the CPU (on a GPU, a rate outside [0, 1) gives NaN).

    The gradient is the same mask times the same scale. (``_seed_fn``, for the `Dropout` layer: a
    function giving each call's seed, called when the mask is drawn, so in a traced graph too.)

    >>> import engine as eg
    >>> eg.nn.dropout(eg.ones(4), 0.5, training=False).numpy()
    array([1., 1., 1., 1.], dtype=float32)
    """
    x = x if isinstance(x, Tensor) else convert_to_tensor(x)
    rate = checks.live_number(rate, "rate (the fraction dropped, not kept)", "dropout", low=0, high=1,
                              high_open=True)
    checks.floating(x.dtype, x.shape, "dropout")
    if not training or (not isinstance(rate, Tensor) and rate == 0):
        return x
    checks.seed(seed, "dropout")
    shape = x.shape if noise_shape is None else checks.shape(noise_shape, "dropout", "noise_shape")
    if len(shape) > x.ndim or any(n not in (1, m) for n, m in zip(shape[::-1], x.shape[::-1], strict=False)):
        raise ValueError(f"dropout: noise_shape {shape} does not broadcast to x's shape {x.shape}: aligned "
                         "from the right, each size must equal x's or be 1.")
    if isinstance(rate, Tensor):  # live: an input of the mask op, read when it runs
        if rate._device is not x._device:
            rate = rate.to(x._device)
        if rate._device.kind == "cpu":  # its value now, checked here so that the error names dropout
            _check_live_rate(np, rate._data)
        return F.multiply(x, _mask(x, rate, seed=seed, shape=shape, seed_fn=_seed_fn))
    return F.multiply(x, _mask(x, rate=rate, seed=seed, shape=shape, seed_fn=_seed_fn))


def _check_live_rate(xp: Any, rate: Any) -> None:
    if xp is np and not 0 <= float(rate) < 1:
        raise ValueError(f"dropout: rate (the fraction dropped, not kept) must be a number in [0, 1), got "
                         f"{float(rate)!r} (the tensor's value now).")


def _mask_forward(xp: Any, x: Any, live_rate: Any = None, *, rate: float = 0.0, seed: int | None,
                  shape: tuple[int, ...], seed_fn: Any = None) -> Any:
    if seed_fn is not None:  # a layer's own sequence of seeds: the next one, drawn on every call
        seed = seed_fn()
    key = int(_random.generator(seed).integers(2**63))  # on the host: no transfer
    u = _random.hashed_uniform(xp, key, shape)  # on x's device (apply made it current)
    if live_rate is not None:  # a tensor rate: its value now, on x's device (no transfer)
        _check_live_rate(xp, live_rate)
        keep = u >= live_rate.astype(np.float32)
        return keep.astype(x.dtype) * (1 / (1 - live_rate.astype(x.dtype)))
    keep = u >= np.float32(rate)
    return keep.astype(x.dtype) * x.dtype.type(1.0 / (1.0 - rate))


# The mask is an op of its own (not differentiable: a constant for tapes) so that a traced graph
# draws a new mask on every call instead of freezing the first one.
_mask = Primitive("dropout_mask", _mask_forward, vjps=None, same_dtype=False,
                  doc="The scaled keep-mask of dropout: 0 or 1/(1 - rate), drawn anew on every call.")
