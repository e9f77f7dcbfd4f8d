"""Data for the lessons: the 8×8 handwritten digits that ship inside scikit-learn, and mini-batches.

No download: the digits (1,797 images, 10 classes) are read from the file inside the scikit-learn
package (``make lab`` in the repository folder installs it).

>>> x_train, y_train, x_test, y_test = load_digits()
>>> x_train.shape, x_train.dtype, y_train[:5], float(x_train.max())
((1437, 8, 8, 1), dtype('float32'), array([4, 9, 5, 8, 5], dtype=int32), 1.0)
>>> xb, yb = next(batches(x_train, y_train, batch_size=64, seed=0))
>>> xb.shape, yb.shape
((64, 8, 8, 1), (64,))
"""

from __future__ import annotations

import functools
import importlib.util
import math
import os
from collections.abc import Iterator
from typing import Any

import numpy as np

from . import backend, checks
from . import random as _random
from .tensor import Tensor

__all__ = ["load_digits", "batches"]


@functools.lru_cache(maxsize=1)
def _digits_table() -> np.ndarray:
    """The raw table: 1,797 rows of 64 pixel values (0..16) and the label."""
    spec = importlib.util.find_spec("sklearn")
    if spec is None or spec.origin is None:
        raise ImportError(
            "eg.data.load_digits reads the digits file shipped with scikit-learn, which is not installed. "
            "Run `make lab` (or `make test`) in the repository folder: it installs the lessons' packages."
        )
    path = os.path.join(os.path.dirname(spec.origin), "datasets", "data", "digits.csv.gz")
    if os.path.exists(path):
        return np.loadtxt(path, delimiter=",", dtype=np.float64)  # reading the file directly is fast
    from sklearn.datasets import load_digits as sk_load_digits  # noqa: PLC0415  (slow import: fallback)

    bunch = sk_load_digits()
    return np.column_stack([bunch.data, bunch.target]).astype(np.float64)


def load_digits(test_fraction: float = 0.2, seed: int = 0, flatten: bool = False,
                dtype: Any = "float32") -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(x_train, y_train, x_test, y_test)`` as NumPy arrays.

    - ``x``: pixels scaled to [0, 1] (the raw values are 0..16), shape ``(n, 8, 8, 1)`` (NHWC, ready
      for ``Conv2D``), or ``(n, 64)`` with ``flatten=True``; ``dtype`` float32 by default.
    - ``y``: integer labels 0..9 (int32).
    - The split is a random permutation with ``seed``; the test set has ``ceil(test_fraction · n)``
      images (360 of 1,797 for 0.2, like scikit-learn's ``train_test_split``).

    >>> import engine as eg
    >>> x_train, y_train, x_test, y_test = eg.data.load_digits()
    >>> x_train.shape[1:], int(y_train.max())
    ((8, 8, 1), 9)
    """
    test_fraction = checks.number(test_fraction, "test_fraction", "load_digits", low=0, high=1, low_open=True,
                                  high_open=True)
    checks.seed(seed, "load_digits")
    table = _digits_table()
    pixels = (table[:, :64] / 16.0).astype(dtype)
    labels = table[:, 64].astype(np.int32)
    images = pixels if flatten else pixels.reshape(-1, 8, 8, 1)
    order = np.random.default_rng(seed).permutation(len(labels))
    n_test = math.ceil(test_fraction * len(labels))
    test, train = order[:n_test], order[n_test:]
    return images[train], labels[train], images[test], labels[test]


def batches(x: Any, y: Any, batch_size: int, shuffle: bool = True, seed: int | None = None,
            drop_remainder: bool = False) -> Iterator[tuple[Any, Any]]:
    """Yield ``(x_batch, y_batch)`` of ``batch_size`` examples (the last one smaller, unless
    ``drop_remainder``), in a shuffled order when ``shuffle``.

    ``seed=None`` shuffles with eg.random's global sequence (reproducible after
    ``eg.random.set_seed``). NumPy inputs give NumPy batches; tensors give tensors (on their device:
    the shuffled order goes to a GPU once per pass, not once per batch).

    >>> import engine as eg
    >>> import numpy as np
    >>> [len(y) for _, y in eg.data.batches(np.zeros((5, 2)), np.arange(5), 2, shuffle=False)]
    [2, 2, 1]
    """
    n = len(x)
    if len(y) != n:
        raise ValueError(f"batches: x has {n} examples but y has {len(y)}.")
    batch_size = checks.count(batch_size, "batch_size", "batches", minimum=1)
    order = _random.generator(seed).permutation(n) if shuffle else np.arange(n)
    stop = n - n % batch_size if drop_remainder else n
    on_device: dict[backend.Device, Tensor] = {}
    for v in (x, y):
        if isinstance(v, Tensor) and v._device.kind == "gpu" and v._device not in on_device:
            on_device[v._device] = Tensor._make(backend.transfer(order, v._device), v._device)
    for start in range(0, stop, batch_size):
        yield tuple(_take(v, order, on_device, start, batch_size) for v in (x, y))


def _take(values: Any, order: np.ndarray, on_device: dict, start: int, size: int) -> Any:
    if isinstance(values, Tensor):
        where = on_device.get(values._device)
        return values[order[start:start + size] if where is None else where[start:start + size]]
    return np.asarray(values)[order[start:start + size]]
