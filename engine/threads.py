"""BLAS threads for the engine's matrix products on the CPU: one thread for the small ones.

A BLAS library hands every product to its threads and keeps them spinning a while afterwards. For
the many small products of a training step on a small machine that costs far more than it saves:
lesson 07's step took 156 ms with OpenBLAS's two threads on 2 cores and 15 ms with one. So a product
of fewer than ``config.blas_single_thread_below`` multiply-adds (2**28: a 645×645 by 645×645 product,
about 10 ms on one core) runs on one BLAS thread, and a larger one on the threads the library is set
to (its default, OPENBLAS_NUM_THREADS, threadpoolctl...), where they pay off. Tiny products (up to
``TINY`` = 2**18) are left alone. The previous thread count is restored right after the product, so
NumPy code outside the engine keeps its threads.

>>> import numpy as np
>>> matmul(np, np.ones((2, 3), np.float32), np.ones((3, 4), np.float32))[0]
array([3., 3., 3., 3.], dtype=float32)
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from . import config

__all__ = ["matmul", "blas_threads"]

# Below this many multiply-adds a product is left alone: threads cannot pay off in a few
# microseconds, BLAS libraries keep such products on the calling thread by themselves (OpenBLAS: up to
# 4 × 65,536), and the two calls that switch threads would cost more than the product.
TINY = 2**18

_lock = threading.Lock()
_controllers: list | None = None  # threadpoolctl's controllers of the loaded BLAS libraries
_depth = 0  # products running on one thread right now (from any Python thread)
_saved: list[int] = []


def _blas() -> list:
    global _controllers
    if _controllers is None:
        try:
            from threadpoolctl import ThreadpoolController  # noqa: PLC0415  (scans the loaded libraries)
        except ImportError:  # a dependency, but the engine must not break without it
            _controllers = []
        else:
            _controllers = list(ThreadpoolController().select(user_api="blas").lib_controllers)
    return _controllers


def blas_threads() -> list[int]:
    """The thread count of each loaded BLAS library (what products above the threshold use)."""
    return [lib.get_num_threads() for lib in _blas()]


def _enter_single_thread() -> None:
    global _depth, _saved
    with _lock:
        if _depth == 0:
            _saved = blas_threads()
            for lib, n in zip(_blas(), _saved):
                if n != 1:
                    lib.set_num_threads(1)
        _depth += 1


def _leave_single_thread() -> None:
    global _depth
    with _lock:
        _depth -= 1
        if _depth == 0:
            for lib, n in zip(_blas(), _saved):
                if n != 1:
                    lib.set_num_threads(n)


def matmul(xp: Any, a: Any, b: Any) -> Any:
    """``xp.matmul(a, b)``; on NumPy, on one BLAS thread when the product is small (see above)."""
    if xp is not np or a.ndim < 2 or b.ndim < 2:
        return xp.matmul(a, b)
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    batch = max(a.size // max(m * k, 1), b.size // max(k * n, 1))
    work = batch * m * k * n
    libs = _blas()
    if work <= TINY or work >= config.blas_single_thread_below or not libs:
        return np.matmul(a, b)
    if _depth == 0 and all(lib.get_num_threads() == 1 for lib in libs):
        return np.matmul(a, b)  # one thread already (OPENBLAS_NUM_THREADS=1...): nothing to change
    _enter_single_thread()
    try:
        return np.matmul(a, b)
    finally:
        _leave_single_thread()
