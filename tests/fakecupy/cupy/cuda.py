"""``cupy.cuda`` of the fake: devices, the runtime's device count, and per-device memory pools."""

from __future__ import annotations

from types import SimpleNamespace

from . import _array
from ._array import Device

__all__ = ["Device", "runtime", "get_device_id", "MemoryPool", "get_default_memory_pool"]


class CUDARuntimeError(RuntimeError):
    """What CuPy raises for CUDA runtime failures (here: a device index that does not exist)."""


runtime = SimpleNamespace(getDeviceCount=lambda: _array.DEVICE_COUNT, CUDARuntimeError=CUDARuntimeError)


def get_device_id() -> int:
    return _array.current()


class MemoryPool:
    """CuPy's default pool, per device: it keeps freed blocks, so ``used_bytes <= total_bytes``."""

    def used_bytes(self) -> int:
        return _array.used_bytes(_array.current())

    def total_bytes(self) -> int:
        return _array.held_bytes(_array.current())

    def free_all_blocks(self) -> None:
        _array.free_all_blocks(_array.current())


_POOL = MemoryPool()


def get_default_memory_pool() -> MemoryPool:
    return _POOL
