"""Every differentiable op, by name. Each module holds a family, forward beside gradient."""

import sys

from .. import tensor as _tensor
from ..creation import arange, eye, fill, linspace, ones, ones_like, zeros, zeros_like
from ..primitive import REGISTRY as _REGISTRY
from ..primitive import Primitive as _Primitive
from .arithmetic import add, divide, floordiv, maximum, minimum, mod, multiply, pow, subtract
from .devices import copy_to_device
from .elementwise import (
    abs,
    cos,
    exp,
    log,
    log1p,
    negative,
    relu,
    sigmoid,
    sign,
    sin,
    softplus,
    sqrt,
    square,
    tan,
    tanh,
)
from .indexing import getitem
from .linalg import matmul
from .logic import (
    equal,
    greater,
    greater_equal,
    less,
    less_equal,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    not_equal,
    stop_gradient,
)
from .reduction import argmax, argmin, max, mean, min, prod, sum
from .selection import clip, where
from .shape import broadcast_to, cast, concat, expand_dims, reshape, squeeze, stack, transpose
from .special import log_softmax, logsumexp, softmax

# Ops whose VJPs are right for complex inputs (holomorphic or linear: gradient g·f'(z), JAX's transpose
# convention, no conjugate). A gradient through a complex input of any other op is a clear TypeError.
for _name in ("add", "subtract", "multiply", "divide", "negative", "square", "pow", "exp", "log", "log1p",
              "sqrt", "sin", "cos", "tan", "tanh", "tanh_grad", "sigmoid_grad", "matmul", "sum", "mean",
              "prod", "getitem", "scatter_add", "reshape", "transpose", "concat", "expand_dims", "squeeze",
              "broadcast_to", "copy_to_device", "where", "cast"):  # (and read_variable, in variable.py)
    _REGISTRY[_name].complex_grad = True
_tensor._ops = sys.modules[__name__]  # Tensor's operators (x + y, x[i], ...) call the ops defined here
from .. import interop as _interop  # noqa: E402, F401  (NumPy's protocols on tensors: np.sin(t) → eg.sin(t))

# A Primitive is an object, not a function, so doctest would skip its docstring: list the examples of
# the public ones here (--doctest-modules runs them with the suite).
__test__ = {name: op.__doc__ for name, op in list(globals().items())
            if isinstance(op, _Primitive) and ">>>" in (op.__doc__ or "")}

__all__ = [
    "abs", "add", "arange", "argmax", "argmin", "broadcast_to", "cast", "clip", "concat",
    "copy_to_device", "cos", "divide", "equal", "exp", "expand_dims", "eye", "fill", "floordiv",
    "getitem", "greater", "greater_equal", "less", "less_equal", "linspace", "log", "log1p",
    "log_softmax", "logical_and", "logical_not", "logical_or", "logical_xor", "logsumexp", "matmul",
    "max", "maximum", "mean", "min", "minimum", "mod", "multiply", "negative", "not_equal", "ones",
    "ones_like", "pow", "prod", "relu", "reshape", "sigmoid", "sign", "sin", "softmax", "softplus",
    "sqrt", "square", "squeeze", "stack", "stop_gradient", "subtract", "sum", "tan", "tanh",
    "transpose", "where", "zeros", "zeros_like",
]
