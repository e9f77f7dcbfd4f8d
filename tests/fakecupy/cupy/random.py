"""``cupy.random`` of the fake: a generator whose draws land on the current device.

The numbers are NumPy's for the same seed, not CuPy's (the fake does not model CuPy's streams).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._array import current, ndarray


class Generator:
    def __init__(self, seed: Any = None):
        self._rng = np.random.default_rng(seed)

    def random(self, size: Any = None, dtype: Any = np.float64) -> ndarray:
        return ndarray._new(np.asarray(self._rng.random(size, dtype=dtype)), current())

    def standard_normal(self, size: Any = None, dtype: Any = np.float64) -> ndarray:
        return ndarray._new(np.asarray(self._rng.standard_normal(size, dtype=dtype)), current())

    def uniform(self, low: float = 0.0, high: float = 1.0, size: Any = None) -> ndarray:
        return ndarray._new(np.asarray(self._rng.uniform(low, high, size)), current())


def default_rng(seed: Any = None) -> Generator:
    return Generator(seed)
