"""Softmax cross-entropy losses, fused and stable for large logits (like 1e4).

Both return one loss per example (average them yourself, e.g. ``eg.mean``), as TensorFlow's
``softmax_cross_entropy_with_logits`` does. Their gradient with respect to the logits is
``softmax(logits) - labels``.

Labels on the host (NumPy, lists, cpu:0 tensors) are checked there. Labels already on a GPU are not
read back (that would cost a transfer every call): as in TensorFlow on a GPU, an out-of-range label
gives a NaN loss for its example. `eg.training.fit` checks its labels once, where the data enters.

>>> import engine as eg
>>> logits = eg.constant([[2.0, 0.0], [1e4, 0.0]])
>>> eg.nn.sparse_softmax_cross_entropy([0, 1], logits).numpy().round(4)
array([1.269e-01, 1.000e+04], dtype=float32)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import backend
from .. import ops as F
from ..primitive import Primitive
from ..tensor import Tensor, convert_to_tensor, is_floating

__all__ = ["softmax_cross_entropy", "sparse_softmax_cross_entropy"]


def _logits(logits: Any, op: str) -> Tensor:
    logits = logits if isinstance(logits, Tensor) else convert_to_tensor(logits)
    if not is_floating(logits.dtype):
        raise TypeError(f"{op}: logits must be floating point, got {logits.dtype}. Cast them first.")
    if logits.ndim < 1:
        raise ValueError(f"{op}: logits need a class axis (the last one); got a scalar.")
    return logits


def _beside(array: np.ndarray, ref: Tensor) -> Tensor:
    """A host array as a constant tensor on ``ref``'s device."""
    dev = ref._device
    return Tensor._make(backend.transfer(array, dev) if dev.kind == "gpu" else array, dev)


def softmax_cross_entropy(labels: Any, logits: Any, axis: int = -1) -> Tensor:
    """``-sum(labels * log_softmax(logits), axis)`` per example; ``labels`` are probabilities
    (one-hot, or soft labels summing to 1) shaped like ``logits``.

    Gradient with respect to the logits: ``softmax(logits) * sum(labels) - labels`` (that is
    ``softmax - labels`` for labels that sum to 1); the labels get a gradient too.

    A masked class (logit ``-inf``) with label 0 adds nothing (0·log 0 = 0), so the loss is the finite
    one `sparse_softmax_cross_entropy` gives (PyTorch's and TensorFlow's dense forms give NaN there);
    a row with every class masked gives NaN, as they do.

    >>> import engine as eg
    >>> eg.nn.softmax_cross_entropy([[0.0, 1.0]], [[0.0, 0.0]]).numpy()
    array([0.6931472], dtype=float32)
    """
    op = "softmax_cross_entropy"
    logits = _logits(logits, op)
    if isinstance(labels, Tensor):
        if labels.dtype != logits.dtype:
            raise TypeError(f"{op}: labels have dtype {labels.dtype} but logits {logits.dtype}; cast them "
                            f"with eg.cast(labels, '{logits.dtype}'). (For integer class ids use "
                            "sparse_softmax_cross_entropy.)")
    elif backend.is_device_array(labels):  # a raw CuPy array: a tensor on its own GPU
        labels = F.cast(Tensor._make(labels, backend.device_of_array(labels)), logits.dtype)
    else:
        labels = _beside(np.asarray(labels).astype(logits.dtype), logits)
    if labels.shape != logits.shape:
        raise ValueError(f"{op}: labels {labels.shape} and logits {logits.shape} must have the same shape. "
                         "For integer class ids use sparse_softmax_cross_entropy.")
    log_p = F.log_softmax(logits, axis=axis)
    masked = F.logical_and(F.equal(labels, 0), F.equal(log_p, -np.inf))  # 0·log 0 counts as 0, not NaN
    return F.negative(F.sum(labels * F.where(masked, F.zeros_like(log_p), log_p), axis=axis))


def sparse_softmax_cross_entropy(labels: Any, logits: Any) -> Tensor:
    """``logsumexp(logits) - logits[label]`` per example; ``labels`` are integer class ids in
    ``[0, num_classes)`` with the shape of ``logits`` minus its last axis.

    Gradient with respect to the logits: ``softmax(logits) - one_hot(labels)``. Out-of-range labels
    are a ``ValueError`` when they are on the host, a NaN loss for their example on a GPU.

    >>> import engine as eg
    >>> eg.nn.sparse_softmax_cross_entropy([1], [[0.0, 0.0]]).numpy()
    array([0.6931472], dtype=float32)
    """
    op = "sparse_softmax_cross_entropy"
    logits = _logits(logits, op)
    if backend.is_device_array(labels):  # raw CuPy labels: a tensor on their own GPU
        labels = Tensor._make(labels, backend.device_of_array(labels))
    if isinstance(labels, Tensor):
        if labels._is_variable:
            labels = labels.value()
        if labels.dtype.kind not in "iu":
            _raise_not_ids(op, labels.dtype)
        _check_ids_shape(op, labels.shape, logits.shape)
        one_hot = _one_hot(labels, classes=logits.shape[-1], dtype=logits.dtype)  # checks the range
        if one_hot._device is not logits._device:
            one_hot = one_hot.to(logits._device)
        return _sparse_xent(logits, one_hot)
    ids = np.asarray(labels)
    if ids.dtype.kind not in "iu":
        _raise_not_ids(op, ids.dtype)
    _check_ids_shape(op, ids.shape, logits.shape)
    return _sparse_xent(logits, _beside(_one_hot_forward(np, ids, logits.shape[-1], logits.dtype), logits))


def _raise_not_ids(op: str, dtype: Any) -> None:
    raise TypeError(f"{op}: labels must be integer class ids, got dtype {dtype}. For one-hot or "
                    "soft labels use softmax_cross_entropy.")


def _check_ids_shape(op: str, shape: tuple[int, ...], logits_shape: tuple[int, ...]) -> None:
    if tuple(shape) != logits_shape[:-1]:
        raise ValueError(f"{op}: labels of shape {tuple(shape)} need the shape of the logits without their "
                         f"last (class) axis: {logits_shape[:-1]}.")


def _one_hot_forward(xp: Any, ids: Any, classes: int, dtype: Any) -> Any:
    """One-hot rows for integer ``ids``. An id outside ``[0, classes)`` is a ValueError for host
    labels; on a GPU its row is NaN instead (TensorFlow's GPU behaviour: checking would cost a
    device-to-host copy on every step), so the loss shows it."""
    hot = (ids[..., None] == xp.arange(classes)).astype(dtype)
    if xp is np:
        if ids.size and (ids.min() < 0 or ids.max() >= classes):
            bad = ids[(ids < 0) | (ids >= classes)].ravel()[0]
            raise ValueError(f"sparse_softmax_cross_entropy: label {int(bad)} is out of range for {classes} "
                             f"classes (valid: 0 .. {classes - 1}).")
        return hot
    valid = ((ids >= 0) & (ids < classes))[..., None]
    return xp.where(valid, hot, float("nan"))


# The labels' one-hot form is an op (without a gradient) so that a traced graph computes it from each
# call's labels instead of freezing the first call's.
_one_hot = Primitive("one_hot", _one_hot_forward, vjps=None, same_dtype=False,
                     doc="Integer class ids as one-hot rows (the labels of sparse softmax cross-entropy).")


# ---- the sparse loss fused into one primitive (its composite form, above, is ~10 recorded ops and
# ~15 VJP ops; this is one of each). tests/test_fused_losses.py checks it against the composite. -----

def _shifted(xp: Any, logits: Any) -> Any:
    """logits - max(logits) along the last axis, as PyTorch and TensorFlow shift: a row whose max is
    -inf (every class masked), +inf or NaN becomes NaN, and so does its loss and its gradient."""
    return logits - logits.max(axis=-1, keepdims=True)


def _xent_forward(xp: Any, logits: Any, one_hot: Any) -> Any:
    """logsumexp(z) - z[label], z = logits - max. A masked (-inf) class that is not the label adds
    nothing (0·(-inf) would be NaN); a masked label gives +inf, as in PyTorch."""
    z = _shifted(xp, logits)
    picked = (one_hot * xp.where(one_hot == 0, 0, z)).sum(axis=-1)
    return (xp.log(xp.exp(z).sum(axis=-1)) - picked).astype(logits.dtype, copy=False)


def _xent_grad_forward(xp: Any, logits: Any, one_hot: Any) -> Any:
    e = xp.exp(_shifted(xp, logits))
    return e / e.sum(axis=-1, keepdims=True) - one_hot


def _softmax_vjp(h: Tensor, logits: Tensor) -> Tensor:
    """hᵀ·∂softmax/∂logits = s ⊙ (h − Σ h ⊙ s), with s = softmax(logits) in engine ops (any order)."""
    s = F.softmax(logits, axis=-1)
    return s * (h - F.sum(h * s, axis=-1, keepdims=True))


_sparse_xent_grad = Primitive(
    "sparse_softmax_cross_entropy_grad", _xent_grad_forward,
    vjps=[lambda h, y, logits, one_hot: _softmax_vjp(h, logits),
          lambda h, y, logits, one_hot: F.negative(h)],
    needs=("logits",), inputs=("logits", "labels"),
    rule="∂logits = s·(g − Σ g·s) with s = softmax(logits), ∂labels = −g",
    doc="softmax(logits) - one_hot: the gradient of sparse softmax cross-entropy.",
)
_sparse_xent = Primitive(
    "sparse_softmax_cross_entropy", _xent_forward,
    vjps=[lambda g, y, logits, one_hot: F.expand_dims(g, -1) * _sparse_xent_grad(logits, one_hot),
          lambda g, y, logits, one_hot: None],  # the one-hot labels are data: no gradient
    needs=("logits", "labels"), inputs=("logits", "labels"),
    rule="∂logits = g·(softmax(logits) − labels), ∂labels = none (labels are data)",
    doc="logsumexp(logits) - sum(one_hot * logits) along the last axis.",
    op_type="SparseSoftmaxCrossEntropyWithLogits",
)
