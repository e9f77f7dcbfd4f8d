"""`Variable`: a mutable tensor, the parameters that optimizers update.

Reading a trainable Variable inside a `GradientTape` makes the tape watch it and record the read.

>>> import engine as eg
>>> v = eg.Variable(3.0, name="v")
>>> v.assign_sub(1.0).numpy()
array(2., dtype=float32)
"""

from __future__ import annotations

from typing import Any

from . import backend
from . import listeners as _listeners
from .dtypes import check_castable, to_array
from .primitive import Primitive
from .tensor import Tensor, convert_to_tensor

__all__ = ["Variable", "read_variable"]

# The op a tape records when it sees a Variable read: input the Variable, output the value read.
# `Variable` makes the snapshot itself (the hot path); calling this primitive does the same read.
read_variable = Primitive(
    "read_variable", lambda xp, v: v,
    vjps=[lambda g, y, v: g],
    needs=("y",), inputs=("v",), symbol="read", rule="∂v = g (the value read is the Variable's value)",
    elementwise=True, same_dtype=False,
    doc="The value of a Variable at the moment it was read: what tapes record for `v.value()`.",
)
read_variable.complex_grad = True  # the identity: right for complex values too


class Variable(Tensor):
    """A mutable tensor: the parameters optimizers update.

    Reading a trainable Variable inside a `GradientTape` makes the tape watch it automatically.

    >>> w = Variable([1.0, 2.0], name="w")
    >>> w.assign([3.0, 4.0]).numpy()
    array([3., 4.], dtype=float32)
    """

    __slots__ = ("_trainable",)
    _is_variable = True

    def __init__(self, initial_value: Any, name: str | None = None, trainable: bool = True,
                 dtype: Any = None):
        if _listeners.listening:
            _listeners.note_new_variable(name)
        if callable(initial_value):
            initial_value = initial_value()
        value = convert_to_tensor(initial_value, dtype=dtype)
        super().__init__(value._data, value._device, name=name)
        self._trainable = bool(trainable)

    @property
    def trainable(self) -> bool:
        return self._trainable

    def value(self) -> Tensor:
        """The current value as an immutable Tensor (recorded as a read by active tapes)."""
        return self._read()

    def read_value(self) -> Tensor:
        return self._read()

    def _read(self) -> Tensor:
        snapshot = Tensor._make(self._data, self._device)
        if _listeners.listening:
            _listeners.record_read(read_variable, self, snapshot)
        return snapshot

    def _new_value(self, v: Any, op: str) -> Any:
        if isinstance(v, Tensor):
            if v._device is not self._device:
                raise ValueError(
                    f"Variable.{op}: {self._label()} is on {self.device} but the value is on "
                    f"{v.device}; move it first with .to('{self.device}')."
                )
            data = v._data
        else:
            data = to_array(v, f"Variable.{op}", self.dtype)  # a checked copy, in the variable's dtype
            here = backend.device_of_array(data)
            if here is not self._device:
                if here.kind == "gpu":  # a raw CuPy array: moved, like a tensor, only when asked
                    raise ValueError(
                        f"Variable.{op}: {self._label()} is on {self.device} but the CuPy array "
                        f"is on {here.name}; move it first: eg.constant(value).to('{self.device}').")
                data = backend.transfer(data, self._device)  # host values go to the variable's device
        if tuple(data.shape) != self.shape:
            raise ValueError(
                f"Variable.{op}: shape {tuple(data.shape)} does not match {self._label()} of shape "
                f"{self.shape}. Variables keep their shape; reshape the value."
            )
        if data.dtype != self.dtype:
            check_castable(data, self.dtype, f"Variable.{op}")
            with self._device.activate():
                data = data.astype(self.dtype)
        return data

    def _label(self) -> str:
        """How messages name this variable: "the Variable 'w'", or "an unnamed Variable"."""
        return f"the Variable {self.name!r}" if self.name is not None else "an unnamed Variable"

    def assign(self, value: Any) -> Variable:
        """Replace the value (same shape); returns the variable."""
        return self._write("assign", self._checked(value, "assign"))

    def assign_add(self, delta: Any) -> Variable:
        """``self += delta``; returns the variable."""
        return self._write("assign_add", self._checked(delta, "assign_add"))

    def assign_sub(self, delta: Any) -> Variable:
        """``self -= delta``; returns the variable."""
        return self._write("assign_sub", self._checked(delta, "assign_sub"))

    def _write(self, op: str, data: Any) -> Variable:
        """Store the checked array ``data`` as ``op`` says ("assign", "assign_add", "assign_sub"): the
        one place a Variable's value changes, eagerly and when a traced graph replays an assignment."""
        if op == "assign":
            self._data = data
        else:
            with self._device.activate():
                self._data = self._data + data if op == "assign_add" else self._data - data
        return self

    def _checked(self, value: Any, op: str) -> Any:
        """The new (or added) value as an array, after telling the listeners (`engine.listeners`)."""
        v = value._read() if isinstance(value, Variable) else value
        data = self._new_value(v, op)
        if _listeners.listening:
            _listeners.record_assign(self, op, v if isinstance(v, Tensor) else data)
        return data
