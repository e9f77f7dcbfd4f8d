"""Moving a tensor between devices, differentiably: the gradient moves back.

>>> import engine as eg
>>> eg.constant([1.0]).to("cpu:0").device
'cpu:0'
"""

from __future__ import annotations

from .. import backend
from .. import listeners as _listeners
from ..primitive import Primitive
from ..tensor import Tensor

_copy = Primitive(
    "copy_to_device", lambda xp, x, device: backend.transfer(x, device),
    vjps=[lambda g, y, x, device: copy_to_device(g, device=x._device)],
    needs=(), rule="∂x = g copied back to x's device", elementwise=True, same_dtype=False,
    op_type="Identity",
)


def copy_to_device(x: Tensor, device: backend.Device) -> Tensor:
    """``x`` on ``device``; recorded on active tapes so the gradient flows back to x's device.

    >>> import engine as eg
    >>> eg.copy_to_device(eg.constant([1.0]), eg.backend.get_device('cpu:0')).device
    'cpu:0'
    """
    if x._is_variable:
        x = x._read()
    if x._device is device:
        return x
    y = Tensor._make(backend.transfer(x._data, device), device)
    if _listeners.listening:
        _listeners.record(_copy, (x,), y, {"device": device})
    return y
