"""`Record`: one operation as a tape saw it. ``tape.records`` is a list of these.

>>> import engine as eg
>>> x = eg.constant([1.0, 2.0])
>>> with eg.GradientTape() as tape:
...     tape.watch(x)
...     y = x * 3.0
>>> r = tape.records[0]
>>> r.op, r.primitive.symbol, [t.id for t in r.inputs][0] == x.id, r.outputs[0].id == y.id
('multiply', '×', True, True)

A record keeps the arrays its VJP needs (``Primitive.needs``: multiply's gradient reads both inputs,
not its output) and, for the others, a stand-in with the same id, shape, dtype and device whose value
is not kept (`is_kept`). What the records keep is what reverse mode costs in memory (`eg.memory_profile`).

>>> r.kept                     # x, 3.0, and the output y
(True, True, False)
"""

from __future__ import annotations

import weakref
from typing import Any

Tensor = Any  # an engine.Tensor (engine.tensor imports engine.recording, which imports this module)
_tensor_type: Any = None  # engine.tensor.Tensor, set by engine.tensor when it is imported
_new = object.__new__
_ref = weakref.ref

__all__ = ["NotKept", "Record", "is_kept", "not_kept"]


class NotKept(tuple):
    """What a record holds instead of an array its VJP does not need: the shape and dtype, no values.

    Reading the values is a clear error (nothing can compute with it by accident).

    >>> import numpy as np
    >>> spec = NotKept(((2, 3), np.dtype("float32")))
    >>> spec.shape, spec.size, spec.nbytes
    ((2, 3), 6, 0)
    """

    __slots__ = ()
    __array_ufunc__ = None  # ndarray ⊕ NotKept is a TypeError, never an object array

    shape = property(lambda self: self[0])
    dtype = property(lambda self: self[1])
    ndim = property(lambda self: len(self[0]))
    nbytes = 0  # it holds no array

    @property
    def size(self) -> int:
        n = 1
        for d in self[0]:
            n *= d
        return n

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        self._refuse()

    def __add__(self, other: Any) -> Any:  # (a tuple would concatenate or repeat: refuse instead)
        self._refuse()

    __radd__ = __mul__ = __rmul__ = __add__

    def get(self) -> Any:  # what .numpy() calls on a GPU array
        self._refuse()

    def _refuse(self) -> Any:
        raise ValueError(f"This value (shape {self[0]}, {self[1]}) was not kept by the tape: the gradient "
                         "of the op that recorded it does not need it (Primitive.needs). Keep a reference "
                         "to the tensor itself to read it.")

    def __repr__(self) -> str:
        return f"NotKept(shape={self[0]}, dtype={self[1]})"


def not_kept(t: Tensor) -> Tensor:
    """A stand-in for ``t``: its id, name, shape, dtype and device, without its array (Variables, whose
    values live anyway, are themselves)."""
    if t._is_variable or type(t._data) is NotKept:
        return t
    return _stand_in(t)


_stand_ins: dict[int, Tensor] = {}  # tensor id → its stand-in, for the records made lately


def _stand_in(t: Tensor) -> Tensor:
    """``t``'s stand-in, shared by the records that drop ``t`` (an op's output is the next op's input;
    a leaf is an input of many ops). Ids are never reused; the table is emptied when it grows."""
    uid = t._uid
    s = _stand_ins.get(uid)
    if s is None:
        if len(_stand_ins) >= 512:
            _stand_ins.clear()
        s = _new(_tensor_type)
        data = t._data
        s._data = NotKept((data.shape, data.dtype))
        s._device, s._uid, s.name = t._device, uid, t.name
        _stand_ins[uid] = s
    return s


def is_kept(t: Tensor) -> bool:
    """Whether ``t`` (from a record's ``inputs`` or ``outputs``) holds its values.

    >>> import engine as eg
    >>> is_kept(eg.constant(1.0)), is_kept(not_kept(eg.constant(1.0)))
    (True, False)
    """
    return type(t._data) is not NotKept


class Record:
    """One op as a tape saw it: its `Primitive`, its input tensors, its output tensor, its parameters.

    ``op_id`` is shared by every tape that recorded the same execution of the op, so a viewer can
    tell which tapes saw which ops.

    >>> import engine as eg
    >>> x = eg.constant(2.0)
    >>> with eg.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = x * x
    ...
    >>> r = tape.records[0]
    >>> r.op, r.inputs == (x, x), r.outputs == (y,)
    ('multiply', True, True)
    """

    __slots__ = ("op_id", "prim", "saved_inputs", "saved_output", "params", "holders", "_refs")

    def __init__(self, op_id: int, prim: Any, inputs: tuple[Tensor, ...], output: Tensor, params: dict,
                 keep_all: bool = False):
        self.op_id = op_id
        self.prim = prim
        self.params = params
        self.holders = 0  # the tapes that hold this record (the walk may free it when only one does)
        keep = prim.keep
        if keep is None or keep_all:
            self._refs: tuple | None = None  # weak references to the tensors not kept (None: all kept)
            self.saved_inputs, self.saved_output = inputs, output
            return
        # keep what the VJPs read (Primitive.needs); the others become stand-ins, weakly referenced
        flags, keep_y = keep
        last = len(flags) - 1
        refs, saved = [], []
        for i, t in enumerate(inputs):
            if flags[i if i < last else last] or t._is_variable:
                refs.append(None)
                saved.append(t)
            else:
                refs.append(_ref(t))
                saved.append(_stand_in(t))
        if keep_y:
            refs.append(None)
        else:
            refs.append(_ref(output))
            output = _stand_in(output)
        self._refs = tuple(refs)
        self.saved_inputs = tuple(saved)  # what the VJPs receive: the tensors kept, stand-ins for the rest
        self.saved_output = output

    @property
    def inputs(self) -> tuple[Tensor, ...]:
        """The input tensors: the same objects the op took while they are alive anywhere, else their
        stand-ins (same id, shape, dtype and device; values not kept)."""
        refs = self._refs
        if refs is None:
            return self.saved_inputs
        return tuple(s if r is None or (t := r()) is None else t
                     for s, r in zip(self.saved_inputs, refs))

    @property
    def output(self) -> Tensor:
        """The output tensor (the object itself while it is alive anywhere, else its stand-in)."""
        refs = self._refs
        r = None if refs is None else refs[-1]
        return self.saved_output if r is None or (t := r()) is None else t

    def keep_all(self, inputs: tuple[Tensor, ...], output: Tensor) -> None:
        """Keep every array (a persistent tape records this op too: it keeps everything until deleted)."""
        self.saved_inputs, self.saved_output, self._refs = tuple(inputs), output, None

    @property
    def kept(self) -> tuple[bool, ...]:
        """For each input, then the output: whether the record keeps its values (`is_kept`)."""
        return tuple(type(t._data) is not NotKept for t in (*self.saved_inputs, self.saved_output))

    def release(self) -> None:
        """Let go of every array (the walk has used them; only shapes, dtypes and devices remain)."""
        old = self._refs
        refs, saved = [], []
        for i, t in enumerate(self.saved_inputs):
            if t._is_variable or type(t._data) is NotKept:
                refs.append(None if old is None else old[i])
                saved.append(t)
            else:
                refs.append(_ref(t))
                saved.append(_stand_in(t))
        out = self.saved_output
        if type(out._data) is NotKept:
            refs.append(None if old is None else old[-1])
        else:
            refs.append(_ref(out))
            out = _stand_in(out)
        self._refs, self.saved_inputs, self.saved_output = tuple(refs), tuple(saved), out

    @property
    def op(self) -> str:
        """The op's name (its key in `eg.primitives`)."""
        return self.prim.name

    @property
    def primitive(self) -> Any:
        """The `Primitive` that ran: its name, symbol, gradient rule, whether it is elementwise."""
        return self.prim

    @property
    def outputs(self) -> tuple[Tensor, ...]:
        return (self.output,)

    @property
    def input_ids(self) -> tuple[int, ...]:
        return tuple(t._uid for t in self.saved_inputs)

    @property
    def output_ids(self) -> tuple[int, ...]:
        return (self.saved_output._uid,)

    @property
    def is_variable_read(self) -> bool:
        """True for the read of a Variable: the input is the Variable, the output the value read."""
        return self.prim.name == "read_variable"

    def to_dict(self) -> dict[str, Any]:
        """Plain data for viewers: names, ids, shapes, dtypes, devices, parameters."""
        def describe(t: Tensor) -> dict[str, Any]:
            return {"id": t._uid, "name": t.name, "shape": t.shape, "dtype": str(t.dtype),
                    "device": t.device, "variable": t._is_variable}
        return {"op_id": self.op_id, "op": self.op, "inputs": [describe(t) for t in self.inputs],
                "outputs": [describe(self.output)], "params": dict(self.params)}

    def __repr__(self) -> str:
        ins = ", ".join(f"#{t._uid}{t.shape}" for t in self.inputs)
        return f"<Record {self.op}({ins}) -> #{self.output._uid}{self.output.shape}>"
