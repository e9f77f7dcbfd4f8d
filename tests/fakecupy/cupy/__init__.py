"""A fake ``cupy`` for the tests: NumPy underneath, CuPy's rules on top, two fake GPUs.

The test session puts this package first on ``sys.path`` when no working CuPy GPU is present, so the
engine's GPU code paths run on every machine (``tests/conftest.py``). What it models, as CuPy does:

- ``cupy.cuda.Device(i)`` (a context manager; the current device is per thread, 0 by default) and
  ``cupy.cuda.runtime.getDeviceCount()`` (2).
- ``cupy.ndarray``: a distinct type wrapping a NumPy array, tagged with the device that was current
  when it was allocated. Every function, method and operator runs "on the current device": an array
  of another device raises ``ValueError`` ("Array device must be same as the current device"), a NumPy
  array raises ``TypeError`` ("Unsupported type"), ``np.asarray(a)`` raises ``TypeError``. New arrays
  (``zeros``, ``zeros_like``, results) go to the current device, whatever their inputs' device.
- Transfers are counted (``cupy._array.counts``): device→host for ``.get()``, ``asnumpy``, ``.item()``,
  ``.tolist()``, ``float/int/bool/complex()``, ``repr/str``, and the size of a boolean-mask index;
  host→device for ``asarray``/``array`` of host data and host index arrays.
- Integer-array indices that are out of range wrap silently (``x[[0, 5]]`` of a 3-vector reads
  ``x[[0, 2]]``); scalar integer indices out of range raise ``IndexError``.
- ``cupyx.scatter_add`` refuses complex arrays; ``asarray`` of another device's array returns it
  unmoved, while ``ndarray.copy()`` copies to the current device from any device.
- ``get_default_memory_pool()`` with ``used_bytes``/``total_bytes`` (live bytes, and a high-water
  mark that ``free_all_blocks`` resets), per device.
- ``cupy.random.default_rng(seed)``: a generator drawing on the current device.

What it does NOT model: streams, events and asynchrony (everything is synchronous); real kernels,
their speed, and memory limits; peer-to-peer access (it is stricter: even a view of another
device's array raises); dtype corner cases where CuPy and NumPy differ (type promotion with Python
scalars, float16 accumulation, integer overflow); the random streams (a seed gives NumPy's numbers,
not CuPy's); ``__array_function__`` dispatch (NumPy functions on fake arrays raise); ``cupyx.scipy``,
``RawKernel``, ``ElementwiseKernel``, fusion, DLPack, pinned memory; and CuPy's acceptance of plain
Python lists in only some functions (the fake accepts them in all).

>>> import cupy                                # the fake, inside the test session
>>> with cupy.cuda.Device(1):
...     a = cupy.zeros(3)
>>> a.device.id, type(a).__name__              # doctest: +SKIP
(1, 'ndarray')
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

from . import cuda, random  # noqa: F401  (cupy.cuda, cupy.random)
from ._array import arg, count, current, kernel, ndarray, out, upload
from .cuda import get_default_memory_pool  # noqa: F401

__version__ = "0.0.0+fake"
FAKE = True


def is_available() -> bool:
    return True


# ---- moving data -------------------------------------------------------------------------------------
def asarray(a: Any, dtype: Any = None, order: Any = None) -> ndarray:
    """``a`` on the current device; a CuPy array of another device is returned unmoved (as in CuPy)."""
    if isinstance(a, ndarray):
        return a if dtype is None or a.dtype == np.dtype(dtype) else a.astype(dtype)
    return ndarray._new(np.asarray(upload(a), dtype=dtype), current())


def array(obj: Any, dtype: Any = None, copy: bool = True, order: str = "K", ndmin: int = 0) -> ndarray:
    if isinstance(obj, ndarray):
        return out(np.array(arg(obj), dtype=dtype, copy=copy, ndmin=ndmin))
    return ndarray._new(np.array(upload(obj), dtype=dtype, ndmin=ndmin), current())


def asnumpy(a: Any, stream: Any = None) -> np.ndarray:
    if isinstance(a, ndarray):
        return a.get()
    return np.asarray(a)


def get_array_module(*args: Any) -> Any:
    import sys  # noqa: PLC0415

    return sys.modules[__name__] if any(isinstance(a, ndarray) for a in args) else np


# ---- allocation on the current device (``*_like`` reads only the model's shape and dtype) -------------
def _alloc(fn: Any) -> Any:
    def make(*args: Any, **kwargs: Any) -> ndarray:
        return ndarray._new(fn(*args, **kwargs), current())
    make.__name__ = fn.__name__
    return make


def _like(fn: Any) -> Any:
    def make(a: Any, *args: Any, dtype: Any = None, shape: Any = None, **kwargs: Any) -> ndarray:
        if isinstance(a, np.ndarray):
            raise TypeError(f"Unsupported type {type(a)}")
        model = np.empty(a.shape if shape is None else shape, dtype=a.dtype if dtype is None else dtype)
        return ndarray._new(fn(model, *args, **kwargs), current())
    make.__name__ = fn.__name__
    return make


zeros, ones, empty, full, eye, identity, arange, linspace = (
    _alloc(getattr(np, n)) for n in "zeros ones empty full eye identity arange linspace".split())
zeros_like, ones_like, empty_like, full_like = (
    _like(getattr(np, n)) for n in "zeros_like ones_like empty_like full_like".split())

# ---- kernels: NumPy's functions under CuPy's rules -----------------------------------------------------
_KERNELS = """abs absolute add all allclose amax amin angle any argmax argmin argsort around array_equal
broadcast_arrays broadcast_to ceil clip concatenate conj conjugate cos cosh count_nonzero cumprod cumsum
bitwise_and diag diagonal divide dot einsum equal exp expm1 expand_dims flip floor floor_divide fmod greater
greater_equal hypot imag inner isclose isfinite isinf isnan kron less less_equal log log10 log1p log2
logaddexp logical_and logical_not logical_or logical_xor matmul max maximum mean min minimum mod
moveaxis multiply negative nonzero not_equal outer pad positive power prod ravel real reciprocal
remainder repeat reshape rint round sign sin sinh sort split sqrt square squeeze stack std subtract sum
swapaxes take take_along_axis tan tanh tensordot tile trace transpose tril triu true_divide trunc var
vstack hstack where""".split()
globals().update({name: kernel(getattr(np, name)) for name in _KERNELS})

lib = SimpleNamespace(stride_tricks=SimpleNamespace(
    as_strided=lambda x, shape=None, strides=None: out(np.lib.stride_tricks.as_strided(
        arg(x), shape=shape, strides=strides))))

# ---- dtypes and constants: NumPy's own ---------------------------------------------------------------
_NUMPY_NAMES = """bool_ int8 int16 int32 int64 uint8 uint16 uint32 uint64 float16 float32 float64
complex64 complex128 dtype iinfo finfo inf nan pi e newaxis result_type can_cast issubdtype integer
floating complexfloating number signedinteger unsignedinteger generic""".split()
globals().update({name: getattr(np, name) for name in _NUMPY_NAMES})

__all__ = ["ndarray", "asarray", "array", "asnumpy", "cuda", "random", "count"]
