"""`Record`: one operation as a tape saw it. ``tape.records`` is a list of these."""

from __future__ import annotations

from typing import Any

from .tensor import Tensor

__all__ = ["Record"]


class Record:
    """One op as a tape saw it: the op's name, its input tensors and its output tensor.

    ``op_id`` is shared by every tape that recorded the same execution of the op, so a viewer can
    tell which tapes saw which ops.
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
        return self.prim.name

    @property
    def outputs(self) -> tuple[Tensor, ...]:
        return (self.output,)

    @property
    def input_ids(self) -> tuple[int, ...]:
        return tuple(t._uid for t in self.inputs)

    @property
    def output_ids(self) -> tuple[int, ...]:
        return (self.output._uid,)

    def input_gradient(self, index: int, g: Tensor) -> Tensor | None:
        """The gradient for input ``index`` given the upstream gradient ``g``: the op's VJP, summed back
        to the input's shape where the op broadcast it. The one step of every backward pass (the
        engine's, and gradviz's stepper replaying it)."""
        x = self.inputs[index]
        gi = self.prim.vjp(index, g, self.output, self.inputs, self.params)
        if gi is None:
            return None
        data = gi._data
        if data.shape != x._data.shape:
            from .primitive import unbroadcast  # noqa: PLC0415  (primitive imports the tape, which imports this)

            gi = unbroadcast(gi, x.shape)
            data = gi._data
        if data.dtype != x._data.dtype:
            raise TypeError(
                f"Internal error in the gradient of {self.op}: input {index} has dtype {x.dtype} but its "
                f"gradient has dtype {gi.dtype}. Please report this."
            )
        return gi

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


class _ReadVariable:
    """The pseudo-op a tape records when a watched Variable is read: its VJP is the identity."""

    name = "read_variable"

    def vjp(self, index: int, g: Tensor, y: Tensor, inputs: Any, params: dict) -> Tensor:
        return g


_READ = _ReadVariable()
