"""The fake CuPy's core: devices, the array type, and the transfer counter.

Every rule here is one CuPy enforces (see the package docstring for what is *not* modelled).
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

import numpy as np

DEVICE_COUNT = 2

# ---- devices --------------------------------------------------------------------------------------
_local = threading.local()  # CuPy's current device is per thread, and 0 until set


def current() -> int:
    return getattr(_local, "device", 0)


def set_current(index: int) -> None:
    _local.device = index


# ---- counters (what the tests' transfer budgets read) -----------------------------------------------
counts = {"to_host": 0, "to_device": 0}


def count(kind: str, n: int = 1) -> None:
    counts[kind] += n


# ---- memory: bytes of live arrays per device, and a pool that keeps freed blocks ---------------------
_live: list[weakref.WeakValueDictionary] = [weakref.WeakValueDictionary() for _ in range(DEVICE_COUNT)]
_held = [0] * DEVICE_COUNT


def used_bytes(dev: int) -> int:
    seen: dict[int, int] = {}
    for arr in list(_live[dev].values()):
        base = arr._a if arr._a.base is None else arr._a.base
        seen[id(base)] = getattr(base, "nbytes", 0)
    used = sum(seen.values())
    _held[dev] = max(_held[dev], used)
    return used


def held_bytes(dev: int) -> int:
    return max(_held[dev], used_bytes(dev))


def free_all_blocks(dev: int) -> None:
    _held[dev] = 0


# ---- unwrapping arguments and wrapping results -------------------------------------------------------
def arg(x: Any) -> Any:
    """A NumPy view of a fake array on the current device; what CuPy refuses raises as in CuPy."""
    if isinstance(x, ndarray):
        cur = current()
        if x._dev != cur:  # CuPy's kernels run on the current device only (no peer access modelled)
            raise ValueError(f"Array device must be same as the current device: array device = {x._dev} "
                             f"while current = {cur}")
        return x._a
    if isinstance(x, np.ndarray):
        raise TypeError(f"Unsupported type {type(x)}")
    if isinstance(x, list | tuple):
        return type(x)(arg(i) for i in x)
    if isinstance(x, dict):
        return {k: arg(v) for k, v in x.items()}
    return x  # Python and NumPy scalars, dtypes, slices, None


def out(r: Any) -> Any:
    """NumPy results as fake arrays on the current device (CuPy returns 0-d arrays, never scalars)."""
    if isinstance(r, np.ndarray):
        return ndarray._new(r, current())
    if isinstance(r, np.generic):
        return ndarray._new(np.asarray(r), current())
    if isinstance(r, tuple | list):
        return type(r)(out(i) for i in r)
    return r


def upload(x: Any) -> np.ndarray:
    """A host value (NumPy array, list, scalar) copied to the device: counted."""
    count("to_device")
    return np.array(x, copy=True)


def kernel(fn: Any) -> Any:
    """``fn`` (a NumPy function) as a CuPy function: inputs on the current device, output there too."""
    def run(*args: Any, **kwargs: Any) -> Any:
        return out(fn(*arg(args), **arg(kwargs)))
    run.__name__ = getattr(fn, "__name__", "kernel")
    return run


# ---- indexing: CuPy wraps out-of-range integer-array indices, and moves host index arrays -----------
def _key(a: np.ndarray, key: Any) -> Any:
    key = key if isinstance(key, tuple) else (key,)
    parts = []
    for k in key:
        if isinstance(k, ndarray):
            k = arg(k)
        elif isinstance(k, np.ndarray | list):
            k = upload(k)
        parts.append(k)
    consuming = sum(p.ndim if isinstance(p, np.ndarray) and p.dtype == bool else
                    0 if p is None or p is Ellipsis else 1 for p in parts)
    axis, fixed = 0, []
    for p in parts:
        if p is Ellipsis:
            axis += a.ndim - consuming
        elif p is None:
            pass
        elif isinstance(p, np.ndarray) and p.dtype == bool:
            count("to_host")  # the size of a masked result is read back to the host (a sync)
            axis += p.ndim
        else:
            if isinstance(p, np.ndarray) and p.dtype.kind in "iu" and axis < a.ndim and a.shape[axis]:
                p = p % a.shape[axis]  # CuPy wraps silently where NumPy raises IndexError
            axis += 1
        fixed.append(p)
    return tuple(fixed)


class Device:
    """``cupy.cuda.Device(i)``: a context manager that makes device ``i`` current."""

    def __init__(self, device: int | None = None):
        self.id = current() if device is None else int(device)
        self._previous: list[int] = []

    def _check(self) -> None:
        if not 0 <= self.id < DEVICE_COUNT:
            from .cuda import runtime  # noqa: PLC0415

            raise runtime.CUDARuntimeError("cudaErrorInvalidDevice: invalid device ordinal")

    def use(self) -> None:
        self._check()
        set_current(self.id)

    def __enter__(self) -> Device:
        self._check()
        self._previous.append(current())
        set_current(self.id)
        return self

    def __exit__(self, *exc: Any) -> None:
        set_current(self._previous.pop())

    def synchronize(self) -> None:
        """Nothing to wait for: the fake runs synchronously."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and other.id == self.id

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<CUDA Device {self.id}>"


def _method(name: str) -> Any:
    def m(self: ndarray, *args: Any, **kwargs: Any) -> Any:
        return out(getattr(arg(self), name)(*arg(args), **arg(kwargs)))
    m.__name__ = name
    return m


def _binary(ufunc: np.ufunc, reflected: bool = False) -> Any:
    if reflected:
        return lambda self, other: out(ufunc(arg(other), arg(self)))
    return lambda self, other: out(ufunc(arg(self), arg(other)))


class ndarray:  # noqa: N801  (CuPy's name)
    """A device array: a NumPy array plus the index of the device it was allocated on."""

    __slots__ = ("_a", "_dev", "__weakref__")
    __array_priority__ = 100

    def __init__(self, shape: Any, dtype: Any = float):
        self._a = np.zeros(shape, dtype)
        self._dev = current()
        _live[self._dev][id(self)] = self

    @classmethod
    def _new(cls, a: np.ndarray, dev: int) -> ndarray:
        self = object.__new__(cls)
        self._a, self._dev = a, dev
        _live[dev][id(self)] = self
        return self

    # ---- metadata (no kernel, no transfer) -----------------------------------------------------
    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    nbytes = property(lambda self: self._a.nbytes)
    itemsize = property(lambda self: self._a.itemsize)
    strides = property(lambda self: self._a.strides)
    flags = property(lambda self: self._a.flags)
    device = property(lambda self: Device(self._dev))
    T = property(lambda self: out(arg(self).T))
    real = property(lambda self: out(arg(self).real))
    imag = property(lambda self: out(arg(self).imag))

    def __len__(self) -> int:
        if self._a.ndim == 0:
            raise TypeError("len() of unsized object")
        return len(self._a)

    def __iter__(self):
        if self._a.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(len(self._a)))

    __hash__ = None  # type: ignore[assignment]

    # ---- leaving the device: every one of these is a counted device→host transfer --------------
    def get(self, stream: Any = None, order: str = "C", out: Any = None) -> np.ndarray:
        count("to_host")
        return np.array(self._a, copy=True)

    def item(self) -> Any:
        count("to_host")
        return self._a.item()

    def tolist(self) -> Any:
        count("to_host")
        return self._a.tolist()

    def _scalar(self, kind: type) -> Any:
        if self._a.size != 1:
            if kind is bool:
                raise ValueError("The truth value of an array with more than one element is ambiguous.")
            raise TypeError("only size-1 arrays can be converted to Python scalars")
        count("to_host")
        return kind(self._a.reshape(()).item())

    def __float__(self) -> float: return self._scalar(float)
    def __int__(self) -> int: return self._scalar(int)
    def __bool__(self) -> bool: return self._scalar(bool)
    def __complex__(self) -> complex: return self._scalar(complex)

    def __index__(self) -> int:
        if self._a.dtype.kind not in "iu" or self._a.ndim:
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return self._scalar(int)

    def __repr__(self) -> str:
        count("to_host")
        return repr(self._a)

    def __str__(self) -> str:
        count("to_host")
        return str(self._a)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise TypeError("Implicit conversion to a NumPy array is not allowed. "
                        "Please use `.get()` to construct a NumPy array explicitly.")

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        return out(getattr(ufunc, method)(*arg(inputs), **arg(kwargs)))

    # ---- copies -------------------------------------------------------------------------------
    def copy(self, order: str = "C") -> ndarray:
        """A copy on the *current* device, from any device (as CuPy's ``ndarray.copy`` does)."""
        return ndarray._new(np.array(self._a, order=order, copy=True), current())

    def astype(self, dtype: Any, order: str = "K", casting: Any = None, subok: Any = None,
               copy: bool = True) -> ndarray:
        a = arg(self)
        if not copy and a.dtype == np.dtype(dtype):
            return self
        return out(a.astype(dtype, order=order, copy=True))

    # ---- indexing -----------------------------------------------------------------------------
    def __getitem__(self, key: Any) -> ndarray:
        a = arg(self)
        return out(a[_key(a, key)])

    def __setitem__(self, key: Any, value: Any) -> None:
        a = arg(self)
        if isinstance(value, np.ndarray):
            value = upload(value)
        a[_key(a, key)] = arg(value)

    # ---- operators ----------------------------------------------------------------------------
    __add__, __radd__ = _binary(np.add), _binary(np.add, True)
    __sub__, __rsub__ = _binary(np.subtract), _binary(np.subtract, True)
    __mul__, __rmul__ = _binary(np.multiply), _binary(np.multiply, True)
    __truediv__, __rtruediv__ = _binary(np.true_divide), _binary(np.true_divide, True)
    __floordiv__, __rfloordiv__ = _binary(np.floor_divide), _binary(np.floor_divide, True)
    __mod__, __rmod__ = _binary(np.mod), _binary(np.mod, True)
    __pow__, __rpow__ = _binary(np.power), _binary(np.power, True)
    __matmul__, __rmatmul__ = _binary(np.matmul), _binary(np.matmul, True)
    __and__, __rand__ = _binary(np.bitwise_and), _binary(np.bitwise_and, True)
    __or__, __ror__ = _binary(np.bitwise_or), _binary(np.bitwise_or, True)
    __xor__, __rxor__ = _binary(np.bitwise_xor), _binary(np.bitwise_xor, True)
    __lshift__, __rlshift__ = _binary(np.left_shift), _binary(np.left_shift, True)
    __rshift__, __rrshift__ = _binary(np.right_shift), _binary(np.right_shift, True)
    __eq__, __ne__ = _binary(np.equal), _binary(np.not_equal)  # type: ignore[assignment]
    __lt__, __le__ = _binary(np.less), _binary(np.less_equal)
    __gt__, __ge__ = _binary(np.greater), _binary(np.greater_equal)
    __neg__ = lambda self: out(np.negative(arg(self)))  # noqa: E731
    __pos__ = lambda self: out(np.positive(arg(self)))  # noqa: E731
    __abs__ = lambda self: out(np.abs(arg(self)))  # noqa: E731
    __invert__ = lambda self: out(np.invert(arg(self)))  # noqa: E731

    def __iadd__(self, other: Any) -> ndarray:
        np.add(arg(self), arg(other), out=self._a)
        return self

    def __isub__(self, other: Any) -> ndarray:
        np.subtract(arg(self), arg(other), out=self._a)
        return self

    def __imul__(self, other: Any) -> ndarray:
        np.multiply(arg(self), arg(other), out=self._a)
        return self


for _name in ("all any argmax argmin clip conj cumsum dot fill flatten max mean min nonzero prod ravel "
              "repeat reshape round squeeze std sum swapaxes take trace transpose var view").split():
    setattr(ndarray, _name, _method(_name))
