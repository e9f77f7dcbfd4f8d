"""`Tensor`: an immutable N-d value on a device, with a unique id that gradient tapes record.

>>> import engine as eg
>>> x = eg.constant([1.0, 2.0])
>>> x * 2
<Tensor shape=(2,) dtype=float32 device=cpu:0 [2. 4.]>
"""

from __future__ import annotations

import copy
import itertools
from typing import Any

import numpy as np

from . import backend
from . import listeners as _listeners
from . import record as _record
from .backend import Device
from .dtypes import as_dtype, check_castable, is_floating, to_array

__all__ = ["Tensor", "constant", "convert_to_tensor", "as_dtype", "is_floating"]

_uids = itertools.count(1)  # every tensor gets a unique id: tapes refer to tensors by it
_ops: Any = None  # engine.ops, which sets this when it is imported (it imports Tensor from here)
_interop: Any = None  # engine.interop (NumPy's protocols), which sets this when it is imported


class Tensor:
    """An immutable N-d array on a device, with a unique id that gradient tapes record.

    Make one with `eg.constant`; ops and operators return new tensors.

    >>> t = constant([[1, 2], [3, 4]])
    >>> t.shape, t.dtype, t.device
    ((2, 2), dtype('int32'), 'cpu:0')
    """

    __slots__ = ("_data", "_device", "_uid", "name", "__weakref__")
    __array_priority__ = 1000  # NumPy defers to Tensor's reflected operators: ndarray + Tensor → Tensor
    _is_variable = False

    def __init__(self, data: Any, device: Device | str | None = None, name: str | None = None):
        here = backend.device_of_array(data)
        dev = here if device is None else backend.get_device(device)
        if dev is not here:  # never a label without the move: a NumPy array is copied to the GPU
            data = backend.transfer(data, dev)
        self._data = data
        self._device = dev
        self._uid = next(_uids)
        self.name = name

    @classmethod
    def _make(cls, data: Any, device: Device) -> Tensor:
        # Hot path: every op creates one of these, so skip __init__'s checks.
        t = object.__new__(cls)
        t._data = data
        t._device = device
        t._uid = next(_uids)
        t.name = None
        return t

    def __deepcopy__(self, memo: dict[int, Any]) -> Tensor:
        """``copy.deepcopy``: a new tensor (its own id) holding a copy of the values, on the same device
        (a Variable's copy is a new Variable, as in TensorFlow; an optimizer copies with its state).

        >>> import copy
        >>> t = Tensor(np.array([1.0, 2.0]), name="t")
        >>> c = copy.deepcopy(t)
        >>> c.id != t.id, c.numpy().tolist(), c.name, c.device is t.device
        (True, [1.0, 2.0], 't', True)
        """
        new = copy.copy(self)  # every slot (a Variable's too); the device stays the same object
        new._data = self._data.copy()
        new._uid = next(_uids)
        memo[id(self)] = new
        return new

    # ---- properties -------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._data.shape)

    @property
    def dtype(self) -> np.dtype:
        return self._data.dtype

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def size(self) -> int:
        return int(self._data.size)

    @property
    def device(self) -> str:
        return self._device.name

    @property
    def kept(self) -> bool:
        """False for a tape record's stand-in whose values were not kept (its op's gradient does not
        need them: `Primitive.needs`); True for every other tensor."""
        return type(self._data) is not _record.NotKept

    @property
    def id(self) -> int:
        """The unique id tapes use for this tensor (what `GradientTape.records` refers to)."""
        return self._uid

    # ---- leaving the engine -----------------------------------------------------------------
    def numpy(self) -> np.ndarray:
        """A host NumPy copy of the value, whatever the device."""
        if _listeners.listening:  # a value leaves the engine: tapes note it, a trace refuses
            _listeners.note_host_read(self, ".numpy()")
        return np.array(backend.to_host(self._data), copy=True)

    def item(self) -> Any:
        """The value of a one-element tensor as a Python number."""
        if self.size != 1:
            raise ValueError(f"item() needs a tensor with one element, got shape {self.shape}.")
        if _listeners.listening:
            _listeners.note_host_read(self, ".item()")
        return backend.to_host(self._data).item()

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        # np.asarray(t): a host array; inside a recording tape that watches t, a TapeEscapeWarning
        if _listeners.listening:
            _listeners.note_host_read(self, "np.asarray()")
        return _interop.array(self, dtype, copy)

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        # np.sin(t) runs eg.sin(t) (recorded by tapes, on t's device); see engine/interop.py
        return _interop.array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Any, types: Any, args: tuple, kwargs: dict) -> Any:
        # np.sum(t, axis=0) runs eg.sum(t, axis=0); see engine/interop.py
        return _interop.array_function(func, args, kwargs)

    # ---- devices ----------------------------------------------------------------------------
    def to(self, device: str | Device) -> Tensor:
        """This value on another device (a copy; the same tensor when it is already there).

        The copy is differentiable: gradients flow back to the original device.
        """
        return _ops.copy_to_device(self, device=backend.get_device(device))

    def cpu(self) -> Tensor:
        """This value on ``cpu:0``."""
        return self.to("cpu:0")

    def gpu(self, index: int = 0) -> Tensor:
        """This value on ``gpu:index`` (soft placement: cpu:0 with a warning when there is no GPU)."""
        return self.to(f"gpu:{index}")

    # ---- Python protocol ----------------------------------------------------------------------
    def __repr__(self) -> str:
        if _listeners.listening and (symbolic := _listeners.symbolic_repr(self)):
            return symbolic
        head = f"<{type(self).__name__}"
        if self.name is not None:
            head += f" {self.name!r}"
        if type(self._data) is _record.NotKept:  # a record's stand-in (engine/record.py)
            return f"{head} shape={self.shape} dtype={self.dtype} device={self.device} (not kept)>"
        body = np.array2string(backend.to_host(self._data), threshold=20, edgeitems=3,
                               separator=" ", max_line_width=200).replace("\n", "")
        return f"{head} shape={self.shape} dtype={self.dtype} device={self.device} {body}>"

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor (a scalar) is undefined.")
        return self.shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("Cannot iterate over a 0-d tensor (a scalar).")
        for i in range(self.shape[0]):
            yield self[i]

    def __bool__(self) -> bool:
        if _listeners.listening:  # (tapes note the .item() below)
            _listeners.note_host_read(self, "bool()", tapes=False)
        if self.size != 1:
            raise ValueError(
                f"The truth value of a tensor with {self.size} elements is ambiguous; "
                "use eg.reduce_any-style reductions: bool(eg.max(t)) or compare a scalar."
            )
        return bool(self.item())

    def __format__(self, spec: str) -> str:
        # f"{np.sum(t):.3f}" (np.sum now returns a tensor): a one-element tensor formats as its number
        if spec and self.size == 1:
            return format(self.item(), spec)
        return super().__format__(spec)

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self.dtype.kind not in "iu":
            raise TypeError(f"Only integer tensors can be used as an index, not {self.dtype}.")
        return int(self.item())

    __hash__ = object.__hash__  # by identity, so tensors and variables can key dicts

    def __setitem__(self, key: Any, value: Any) -> None:
        raise TypeError(
            "Tensors are immutable. Build a new one (eg.where, eg.concat), or keep the value in an "
            "eg.Variable and call .assign(...)."
        )

    # ---- operators: each calls the differentiable op of the same meaning ------------------------
    def __add__(self, other): return _ops.add(self, other)
    def __radd__(self, other): return _ops.add(other, self)
    def __sub__(self, other): return _ops.subtract(self, other)
    def __rsub__(self, other): return _ops.subtract(other, self)
    def __mul__(self, other): return _ops.multiply(self, other)
    def __rmul__(self, other): return _ops.multiply(other, self)
    def __truediv__(self, other): return _ops.divide(self, other)
    def __rtruediv__(self, other): return _ops.divide(other, self)
    def __floordiv__(self, other): return _ops.floordiv(self, other)
    def __rfloordiv__(self, other): return _ops.floordiv(other, self)
    def __mod__(self, other): return _ops.mod(self, other)
    def __rmod__(self, other): return _ops.mod(other, self)
    def __pow__(self, other): return _ops.pow(self, other)
    def __rpow__(self, other): return _ops.pow(other, self)
    def __matmul__(self, other): return _ops.matmul(self, other)
    def __rmatmul__(self, other): return _ops.matmul(other, self)
    def __neg__(self): return _ops.negative(self)
    def __pos__(self): return self
    def __abs__(self): return _ops.abs(self)
    def __eq__(self, other): return _ops.equal(self, other)  # type: ignore[override]
    def __ne__(self, other): return _ops.not_equal(self, other)  # type: ignore[override]
    def __lt__(self, other): return _ops.less(self, other)
    def __le__(self, other): return _ops.less_equal(self, other)
    def __gt__(self, other): return _ops.greater(self, other)
    def __ge__(self, other): return _ops.greater_equal(self, other)
    def __and__(self, other): return _ops.logical_and(self, other)
    def __rand__(self, other): return _ops.logical_and(other, self)
    def __or__(self, other): return _ops.logical_or(self, other)
    def __ror__(self, other): return _ops.logical_or(other, self)
    def __xor__(self, other): return _ops.logical_xor(self, other)
    def __rxor__(self, other): return _ops.logical_xor(other, self)
    def __invert__(self): return _ops.logical_not(self)
    def __getitem__(self, key): return _ops.getitem(self, key)


def constant(value: Any, dtype: Any = None, name: str | None = None) -> Tensor:
    """A tensor holding ``value`` on the current device.

    Python floats become float32 and ints int32 (as in TensorFlow); NumPy arrays keep their dtype.
    A raw CuPy array stays on its own GPU (inside a ``with eg.device(...)`` scope it goes there).
    The tensor holds a copy: changing ``value`` afterwards changes nothing. With ``dtype``, values that
    do not fit (``2**40`` into int32, ``-1`` into uint8, ``1.5`` into int32) are an error, never wrapped
    (`engine.dtypes` has the rules).

    >>> constant(1.5).dtype, constant(2).dtype, constant(np.ones(2)).dtype
    (dtype('float32'), dtype('int32'), dtype('float64'))
    """
    dev = backend.current_device()
    if backend.is_device_array(value) and backend.scoped_device() is None:
        dev = backend.device_of_array(value)
    target = None if dtype is None else as_dtype(dtype, "constant")
    if isinstance(value, Tensor):
        if value._is_variable and _listeners.listening:
            value = _listeners.read_constant(value)  # a trace records a read: a replay reads the value then
        t = value.to(dev) if value._device is not dev else value
        data = t._data
        if target is not None and data.dtype != target:
            check_castable(data, target, "constant")
            # by ops (not astype), so that a graph being traced casts this call's value
            data = _ops.cast(_ops.stop_gradient(t), target)._data
    else:
        data = to_array(value, "constant", target)  # a copy: never the caller's array
    if dev.kind == "gpu":
        data = backend.transfer(data, dev)
    elif not isinstance(data, np.ndarray | np.generic):
        data = backend.to_host(data)
    return Tensor(data, dev, name=name)


_record._tensor_type = Tensor  # (records make stand-ins of tensors: engine/record.py)


def convert_to_tensor(value: Any, dtype: Any = None) -> Tensor:
    """``value`` itself when it is already a Tensor (dtype checked), else `constant(value, dtype)`.

    >>> t = constant(1.0)
    >>> convert_to_tensor(t) is t
    True
    """
    if isinstance(value, Tensor):
        if dtype is not None and as_dtype(dtype) != value.dtype:
            raise TypeError(
                f"convert_to_tensor: the tensor has dtype {value.dtype}, not the requested "
                f"{as_dtype(dtype)}; use eg.cast(x, '{as_dtype(dtype)}') to change it."
            )
        return value
    return constant(value, dtype=dtype)
