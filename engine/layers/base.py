"""The `Layer` base class: a callable with named variables, built lazily on its first call.

A layer knows its input size only when it first sees data, so ``Dense(10)`` creates its kernel
in the first ``__call__``. Variables are named ``<layer name>/<variable>``, e.g. ``dense_1/kernel``;
layer names count per class (``dense_1``, ``dense_2``, ...) until `reset_names`.

>>> import engine as eg
>>> eg.layers.reset_names()
>>> layer = eg.layers.Dense(3)
>>> y = layer(eg.ones((2, 4)))
>>> [v.name for v in layer.trainable_variables], y.shape
(['dense_1/kernel', 'dense_1/bias'], (2, 3))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import backend
from .. import ops as F
from ..listeners import init_scope, name_scope
from ..tensor import Tensor, convert_to_tensor, is_floating
from ..variable import Variable

__all__ = ["Layer", "reset_names", "get_activation"]

_counters: dict[str, int] = {}


def _unique_name(prefix: str) -> str:
    _counters[prefix] = _counters.get(prefix, 0) + 1
    return f"{prefix}_{_counters[prefix]}"


def reset_names() -> None:
    """Start the per-class name counters again (the next Dense is ``dense_1``).

    >>> import engine as eg
    >>> eg.layers.reset_names()
    >>> eg.layers.Dense(1).name
    'dense_1'
    """
    _counters.clear()


_ACTIVATIONS: dict[str, Callable[[Tensor], Tensor]] = {
    "relu": F.relu,
    "tanh": F.tanh,
    "sigmoid": F.sigmoid,
    "softmax": F.softmax,
}


def get_activation(activation: str | Callable[[Tensor], Tensor] | None) -> Callable[[Tensor], Tensor] | None:
    """None (or ``"linear"``) for no activation, a name from ``relu tanh sigmoid softmax``, or a callable.

    >>> import engine as eg
    >>> eg.layers.get_activation("relu")(eg.constant([-1.0, 2.0])).numpy()
    array([0., 2.], dtype=float32)
    """
    if activation is None or activation == "linear":
        return None
    if callable(activation):
        return activation
    if isinstance(activation, str) and activation in _ACTIVATIONS:
        return _ACTIVATIONS[activation]
    raise ValueError(f"Unknown activation {activation!r}; use one of {sorted(_ACTIVATIONS)}, 'linear', None, "
                     "or a function of one tensor.")


class Layer:
    """Base class: subclasses write `build` (create variables) and `call` (the computation).

    ``__call__(x, training=False)`` converts ``x`` to a tensor, builds on the first call (variables
    get the input's floating dtype, ``dtype``, and its device), runs `call` and remembers the input
    and output shapes (for `Sequential.summary`).

    >>> import engine as eg
    >>> eg.layers.reset_names()
    >>> layer = eg.layers.Dense(2)
    >>> _ = layer(eg.ones((1, 3)))
    >>> [v.name for v in layer.trainable_variables]
    ['dense_1/kernel', 'dense_1/bias']
    """

    #: The start of automatic names: ``dense`` gives ``dense_1``, ``dense_2``, ...
    name_prefix = "layer"

    def __init__(self, name: str | None = None):
        self.name = name if name is not None else _unique_name(self.name_prefix)
        self.built = False
        self.input_shape: tuple[int, ...] | None = None
        self.output_shape: tuple[int, ...] | None = None
        self.dtype: Any = None
        self._variables: list[Variable] = []

    # ---- for subclasses ---------------------------------------------------------------------------
    def build(self, input_shape: tuple[int, ...]) -> None:
        """Create the variables, now that the input shape is known (default: none)."""

    def call(self, x: Tensor, training: bool = False) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} must define call(x, training=False).")

    def add_variable(self, name: str, initial_value: Any, trainable: bool = True) -> Variable:
        """A new Variable named ``<layer name>/<name>``, tracked by this layer."""
        var = Variable(initial_value, name=f"{self.name}/{name}", trainable=trainable)
        self._variables.append(var)
        return var

    # ---- public -----------------------------------------------------------------------------------
    def __call__(self, x: Any, training: bool = False) -> Tensor:
        x = x if isinstance(x, Tensor) else convert_to_tensor(x)
        if not self.built:
            self.dtype = x.dtype if is_floating(x.dtype) else np.dtype("float32")
            with backend.device(x.device), init_scope():  # initial weights: not ops of a graph
                self.build(x.shape)
            self.built = True
        with name_scope(self.name):  # a traced graph's nodes (and memory_profile's scopes): dense_1/...
            y = self.call(x, training=training)
        self.input_shape, self.output_shape = x.shape, y.shape
        return y

    @property
    def variables(self) -> list[Variable]:
        """Every variable of the layer (empty until it is built)."""
        return list(self._variables)

    @property
    def trainable_variables(self) -> list[Variable]:
        """The variables an optimizer should update."""
        return [v for v in self.variables if v.trainable]

    def count_params(self) -> int:
        return sum(v.size for v in self.variables)

    def __repr__(self) -> str:
        state = f"output_shape={self.output_shape}" if self.built else "not built"
        return f"<{type(self).__name__} {self.name!r} {state}>"


def float_input(x: Tensor) -> Tensor:
    """Integer inputs (e.g. raw pixels) become float32; floating inputs stay as they are."""
    return x if is_floating(x.dtype) else F.cast(x, "float32")
