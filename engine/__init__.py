"""engine: a small autodiff engine with TensorFlow 2's GradientTape, on NumPy (CPU) or CuPy (GPU).

>>> import engine as eg
>>> x = eg.constant(3.0)
>>> with eg.GradientTape() as tape:
...     tape.watch(x)
...     y = x * x
>>> tape.gradient(y, x).numpy()
array(6., dtype=float32)

Training: ``eg.training.fit(model, x, y, optimizer, epochs=...)`` is the loop (progress bar, live
loss plot in notebooks); `engine/training.py` spells it out.

Layers: `backend` (devices) → `tensor` → `listeners` (each thread's active tapes and listeners) →
`primitive` + `ops` (forward and gradient side by side) → `backward` (the one backward walk) → `tape`
(`GradientTape`) → `transforms` (grad of a function); `function` (graph mode: trace once, replay
fast; it listens at `listeners`). docs/ARCHITECTURE.md reads them in order.
"""

import numpy as _np

from . import config, data, layers, nest, nn, optimizers, random, training
from .backend import device, gpu_available, list_devices, memory_info
from .backward import BackwardStep, backward_steps
from .clipping import clip_by_global_norm, clip_by_norm, clip_by_value, global_norm, norm
from .function import RETRACE_WARNING, Function, RetracingWarning, function
from .graph import Graph, GraphTensor
from .interop import TapeEscapeWarning
from .listeners import TracingError, active_tapes, name_scope
from .memory import MemoryEvent, MemoryProfile, memory_profile
from .ops import *  # noqa: F403  (the op names are the public API)
from .ops import __all__ as _op_names
from .primitive import Primitive, primitives
from .recompute import recompute_grad
from .tape import GradientTape, Record
from .tensor import Tensor, as_dtype, constant, convert_to_tensor
from .transforms import (
    grad,
    gradients_function,
    implicit_gradients,
    implicit_value_and_gradients,
    value_and_grad,
    value_and_gradients_function,
)
from .variable import Variable

float16, float32, float64 = _np.dtype("float16"), _np.dtype("float32"), _np.dtype("float64")
int32, int64, bool_ = _np.dtype("int32"), _np.dtype("int64"), _np.dtype("bool")

__version__ = "0.1.0"
__all__ = [
    "Function", "Graph", "GraphTensor", "RETRACE_WARNING", "RetracingWarning", "TracingError", "function",
    "name_scope",
    "BackwardStep", "GradientTape", "Primitive", "Record", "Tensor", "TapeEscapeWarning", "active_tapes",
    "backward_steps", "MemoryEvent", "MemoryProfile", "memory_profile", "recompute_grad",
    "Variable", "as_dtype", "config", "constant",
    "convert_to_tensor", "device", "gpu_available", "grad", "gradients_function", "implicit_gradients",
    "implicit_value_and_gradients", "list_devices", "memory_info", "nest", "primitives", "random",
    "value_and_grad", "value_and_gradients_function",
    "data", "layers", "nn", "optimizers", "training",
    "clip_by_value", "clip_by_norm", "global_norm", "clip_by_global_norm", "norm",
    "float16", "float32", "float64", "int32", "int64", "bool_", *_op_names,
]
