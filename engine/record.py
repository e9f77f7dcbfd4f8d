"""`Record`: one operation as a tape saw it. ``tape.records`` is a list of these.

>>> import engine as eg
>>> x = eg.constant([1.0, 2.0])
>>> with eg.GradientTape() as tape:
...     tape.watch(x)
...     y = x * 3.0
>>> r = tape.records[0]
>>> r.op, r.primitive.symbol, [t.id for t in r.inputs][0] == x.id, r.outputs[0] is y
('multiply', '×', True, True)
"""

from __future__ import annotations

from typing import Any

Tensor = Any  # an engine.Tensor (engine.tensor imports engine.recording, which imports this module)

__all__ = ["Record"]


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

    __slots__ = ("op_id", "prim", "inputs", "output", "params")

    def __init__(self, op_id: int, prim: Any, inputs: tuple[Tensor, ...], output: Tensor, params: dict):
        self.op_id = op_id
        self.prim = prim
        self.inputs = inputs
        self.output = output
        self.params = params

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
        return tuple(t._uid for t in self.inputs)

    @property
    def output_ids(self) -> tuple[int, ...]:
        return (self.output._uid,)

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
