"""Matrix multiplication.

>>> import engine as eg
>>> a = eg.constant([[1.0, 2.0], [3.0, 4.0]])
>>> (a @ a).numpy()
array([[ 7., 10.],
       [15., 22.]], dtype=float32)
"""

from __future__ import annotations

from typing import Any

from ..primitive import Primitive
from ..tensor import Tensor, convert_to_tensor
from ..threads import matmul as _blas_matmul
from .shape import _transpose, expand_dims, squeeze


def _swap_last(t: Tensor) -> Tensor:
    n = t._data.ndim
    perm = (1, 0) if n == 2 else (*range(n - 2), n - 1, n - 2)
    return _transpose(t, perm=perm)  # the primitive itself: this perm needs no checking


def _matmul_forward(xp, a, b):
    if a.ndim < 2 or b.ndim < 2:
        raise ValueError("both inputs need at least 2 dimensions")
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(
            f"inner dimensions differ: {tuple(a.shape)} @ {tuple(b.shape)}: the last axis of the first "
            f"({a.shape[-1]}) must equal the second-to-last axis of the second ({b.shape[-2]})"
        )
    return _blas_matmul(xp, a, b)  # small products on one BLAS thread (engine/threads.py)


_matmul = Primitive(
    "matmul", _matmul_forward,
    vjps=[lambda g, y, a, b: _matmul(g, _swap_last(b)),    # dL/dA = G Bᵀ
          lambda g, y, a, b: _matmul(_swap_last(a), g)],   # dL/dB = Aᵀ G
    needs=("a", "b"), inputs=("a", "b"), rule="∂a = g @ bᵀ, ∂b = aᵀ @ g", symbol="@", numeric=True,
    doc="Matrix product of the last two axes; leading (batch) axes broadcast.",
    op_type="MatMul",
)


def matmul(a: Any, b: Any) -> Tensor:
    """Matrix product ``a @ b``; leading axes broadcast (batched). 1-D inputs act as a row / column
    vector, and that axis is dropped from the result, as in NumPy.

    >>> matmul([[1.0, 2.0]], [[3.0], [4.0]]).numpy()
    array([[11.]], dtype=float32)
    """
    a = a if isinstance(a, Tensor) else convert_to_tensor(a)
    b = b if isinstance(b, Tensor) else convert_to_tensor(b)
    if a.ndim >= 2 and b.ndim >= 2:
        return _matmul(a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"matmul: scalars cannot be matrix-multiplied (shapes {a.shape} and {b.shape}); "
                         "use * for scaling.")
    inner_b = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if a.shape[-1] != inner_b:
        which = "only" if b.ndim == 1 else "second-to-last"
        raise ValueError(f"matmul: inner dimensions differ: {a.shape} @ {b.shape}: the last axis of the "
                         f"first ({a.shape[-1]}) must equal the {which} axis of the second ({inner_b}).")
    a2 = expand_dims(a, 0) if a.ndim == 1 else a
    b2 = expand_dims(b, -1) if b.ndim == 1 else b
    out = _matmul(a2, b2)
    if b.ndim == 1:
        out = squeeze(out, -1)
    if a.ndim == 1:
        out = squeeze(out, -1 if b.ndim == 1 else -2)
    return out
