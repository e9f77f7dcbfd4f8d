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
A persistent tape's records keep everything (every input and output) until the tape is deleted; a
non-persistent tape's one `gradient` call lets go of each record (and so of its arrays) as soon as the
walk has passed it.

>>> r.kept                     # x, 3.0, and the output y
(True, True, False)
"""

from __future__ import annotations

import itertools
import weakref
from typing import Any

Tensor = Any  # an engine.Tensor (engine.tensor imports engine.listeners, which imports this module)
_tensor_type: Any = None  # engine.tensor.Tensor, set by engine.tensor when it is imported
_new = object.__new__

__all__ = ["NotKept", "Record", "is_kept", "not_kept", "op_ids"]

# Op ids: one per recorded execution of an op, shared by every tape that records it (`Record.op_id`).
op_ids = itertools.count(1)


class NotKept(weakref.ref):
    """What a stand-in holds instead of an array its VJP does not need: a weak reference to the tensor
    it stands for (calling it gives that tensor while anything else keeps it alive, else None) and that
    tensor's shape and dtype. No values: reading them is a clear error (nothing computes with it by
    accident).

    >>> import engine as eg
    >>> x = eg.ones((2, 3))
    >>> spec = not_kept(x)._data
    >>> spec.shape, spec.size, spec.nbytes, spec() is x
    ((2, 3), 6, 0, True)
    """

    __slots__ = ("shape", "dtype")
    __array_ufunc__ = None  # ndarray ⊕ NotKept is a TypeError, never an object array
    nbytes = 0  # it holds no array

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        self._refuse()

    def __add__(self, other: Any) -> Any:  # (refused with the clear message, as every value read)
        self._refuse()

    __radd__ = __mul__ = __rmul__ = __add__

    def get(self) -> Any:  # what .numpy() calls on a GPU array
        self._refuse()

    def _refuse(self) -> Any:
        raise ValueError(f"This value (shape {self.shape}, {self.dtype}) was not kept by the tape: the "
                         "gradient of the op that recorded it does not need it (Primitive.needs). Keep a "
                         "reference to the tensor itself to read it.")

    def __repr__(self) -> str:
        return f"NotKept(shape={self.shape}, dtype={self.dtype})"


def not_kept(t: Tensor) -> Tensor:
    """A stand-in for ``t``: its id, name, shape, dtype and device, without its array (Variables, whose
    values live anyway, are themselves)."""
    return _stand_in(t)


_stand_ins: dict[int, Tensor] = {}  # tensor id → its stand-in, for the tensors dropped lately


def _stand_in(t: Tensor) -> Tensor:
    """``t``'s stand-in, made once and shared by the records that drop ``t`` (an op's output is the next
    op's input; a leaf is an input of many ops); a Variable or a stand-in is itself. Ids are never
    reused; the table is emptied when it grows. (Hot path: recording an op calls it.)"""
    s = _stand_ins.get(t._uid)
    if s is None:
        if t._is_variable or type(t._data) is NotKept:
            return t
        s = _new_stand_in(t)
    return s


def _new_stand_in(t: Tensor) -> Tensor:
    """A new stand-in for ``t``, remembered for the next records that drop ``t``. A record calls this
    directly for an op's output, which is new: there is no stand-in to look up yet."""
    if len(_stand_ins) >= 512:
        _stand_ins.clear()
    data = t._data
    spec = NotKept(t)
    spec.shape, spec.dtype = data.shape, data.dtype
    s = _new(_tensor_type)
    s._data, s._device, s._uid, s.name = spec, t._device, t._uid, t.name
    _stand_ins[t._uid] = s
    return s


def _alive(t: Tensor) -> Tensor:
    """The tensor a stand-in stands for while it is alive anywhere, else ``t`` itself."""
    data = t._data
    if type(data) is NotKept and (alive := data()) is not None:
        return alive
    return t


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

    __slots__ = ("op_id", "prim", "saved_inputs", "saved_output", "params")

    def __init__(self, op_id: int, prim: Any, inputs: tuple[Tensor, ...], output: Tensor, params: dict,
                 keep_all: bool = False):
        self.op_id = op_id
        self.prim = prim
        self.params = params
        keep = prim.keep  # (one flag per input, whether the output is kept), from Primitive.needs
        if keep is None or keep_all:
            self.saved_inputs, self.saved_output = inputs, output
            return
        # Keep what the VJPs read; a stand-in for the rest (``saved_*``: what the VJPs receive).
        # This runs for every recorded op, so ops of one and two inputs are spelled out.
        flags, keep_y = keep
        n = len(inputs)
        if n == 2:
            a, b = inputs
            self.saved_inputs = (a if flags[0] else _stand_in(a), b if flags[1] else _stand_in(b))
        elif n == 1:
            self.saved_inputs = inputs if flags[0] else (_stand_in(inputs[0]),)
        else:  # variadic (concat): the last input's flag holds for the rest
            flags += flags[-1:] * (n - len(flags))
            self.saved_inputs = tuple([t if k else _stand_in(t) for t, k in zip(inputs, flags)])
        self.saved_output = output if keep_y else _new_stand_in(output)

    @property
    def inputs(self) -> tuple[Tensor, ...]:
        """The input tensors: the same objects the op took while they are alive anywhere, else their
        stand-ins (same id, shape, dtype and device; values not kept)."""
        return tuple(_alive(t) for t in self.saved_inputs)

    @property
    def output(self) -> Tensor:
        """The output tensor (the object itself while it is alive anywhere, else its stand-in)."""
        return _alive(self.saved_output)

    def keep_all(self, inputs: tuple[Tensor, ...], output: Tensor) -> None:
        """Keep every array (a persistent tape records this op too: it keeps everything until deleted)."""
        self.saved_inputs, self.saved_output = tuple(inputs), output

    @property
    def kept(self) -> tuple[bool, ...]:
        """For each input, then the output: whether the record keeps its values (`is_kept`)."""
        return tuple(type(t._data) is not NotKept for t in (*self.saved_inputs, self.saved_output))

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
