"""`Sequential`: layers applied one after the other; itself a layer.

>>> import engine as eg
>>> eg.layers.reset_names()
>>> model = eg.layers.Sequential([eg.layers.Flatten(), eg.layers.Dense(3)])
>>> model(eg.ones((2, 4, 4, 1))).shape
(2, 3)
>>> print(model.summary())
Model: "sequential_1"
Layer (type)         Output shape  Params
=========================================
flatten_1 (Flatten)  (None, 16)         0
dense_1 (Dense)      (None, 3)         51
=========================================
Total params: 51
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .. import creation
from ..tensor import Tensor
from ..variable import Variable
from .base import Layer

__all__ = ["Sequential"]


class Sequential(Layer):
    """``Sequential([layer1, layer2, ...])``: ``model(x)`` is ``layer2(layer1(x))``...

    ``training`` is passed to every layer (it switches dropout on). ``layers``, ``variables`` and
    ``trainable_variables`` list what the layers hold, in order.

    >>> import engine as eg
    >>> model = eg.layers.Sequential([eg.layers.Dense(4, activation="relu"), eg.layers.Dense(1)])
    >>> model(eg.ones((2, 3))).shape
    (2, 1)
    """

    name_prefix = "sequential"

    def __init__(self, layers: Iterable[Any] | None = None, name: str | None = None):
        super().__init__(name)
        self.layers: list[Any] = []
        for layer in layers or []:
            self.add(layer)

    def add(self, layer: Any) -> None:
        """Append a layer (anything callable as ``layer(x, training=...)``)."""
        if not callable(layer):
            raise TypeError(f"Sequential: {layer!r} is not a layer (not callable).")
        self.layers.append(layer)

    def call(self, x: Tensor, training: bool = False) -> Tensor:
        for layer in self.layers:
            x = layer(x, training=training) if isinstance(layer, Layer) else layer(x)
        return x

    def build_for(self, input_shape: tuple[int | None, ...]) -> None:
        """Build every layer by running zeros of ``input_shape`` (batch size None → 1) through it."""
        shape = tuple(1 if n is None else int(n) for n in input_shape)
        self(creation.zeros(shape))

    @property
    def variables(self) -> list[Variable]:
        return [v for layer in self.layers for v in getattr(layer, "variables", [])]

    @property
    def trainable_variables(self) -> list[Variable]:
        return [v for layer in self.layers for v in getattr(layer, "trainable_variables", [])]

    def summary(self) -> str:
        """A table of the layers: name (type), output shape (batch axis as None) and parameter count."""
        rows = []
        for layer in self.layers:
            name = getattr(layer, "name", getattr(layer, "__name__", "function"))
            shape = getattr(layer, "output_shape", None)
            shape_text = "?" if shape is None else str((None,) + tuple(shape[1:]))
            params = layer.count_params() if hasattr(layer, "count_params") else 0
            rows.append((f"{name} ({type(layer).__name__})", shape_text, str(params)))
        head = ("Layer (type)", "Output shape", "Params")
        widths = [max(len(r[i]) for r in [head, *rows]) for i in range(3)]

        def line(r):
            return f"{r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]:>{widths[2]}}"

        rule = "=" * (sum(widths) + 4)
        out = [f'Model: "{self.name}"', line(head), rule, *(line(r) for r in rows), rule,
               f"Total params: {self.count_params()}"]
        if any(r[1] == "?" for r in rows):
            out.append("(? = not built yet: call the model once, or model.build_for(input_shape))")
        return "\n".join(out)

    def count_params(self) -> int:
        return sum(v.size for v in self.variables)
