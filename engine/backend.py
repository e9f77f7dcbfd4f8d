"""Devices: where arrays live and which array library computes on them.

``cpu:N`` arrays are NumPy arrays; ``gpu:N`` arrays are CuPy arrays. This is the only module that
knows CuPy exists, and it imports CuPy lazily, the first time a GPU is asked for.

>>> import engine as eg
>>> with eg.device("cpu:0"):
...     x = eg.constant([1.0, 2.0])
>>> x.device
'cpu:0'
"""

from __future__ import annotations

import contextlib
import os
import threading
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

from . import config

__all__ = ["Device", "device", "current_device", "get_device", "list_devices", "gpu_available",
           "memory_info", "to_host"]

# The one install command that keeps the rest of the environment (see Makefile and README).
_GPU_INSTALL_HINT = (
    "To install CuPy, run `make lab GPU=1` in the repository folder (cupy-cuda12x and the CUDA 12 "
    "libraries; `GPU=cuda13` for CUDA 13) on a machine with an NVIDIA GPU and driver; later "
    "`make lab` / `make test` keep it."
)


class Device:
    """A place where arrays live: ``Device("cpu", 0)`` or ``Device("gpu", 0)``.

    ``xp`` is the array module that computes there (``numpy`` or ``cupy``).
    """

    __slots__ = ("kind", "index", "name", "xp")

    def __init__(self, kind: str, index: int, xp: Any):
        self.kind = kind
        self.index = index
        self.name = f"{kind}:{index}"
        self.xp = xp

    def __repr__(self) -> str:
        return f"Device({self.name!r})"

    def __str__(self) -> str:
        return self.name

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            return self.name == "{}:{}".format(*_parse(other))
        return self is other

    __hash__ = object.__hash__

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        # One Device object per place (== is identity): a copy or an unpickled device is that object.
        return get_device, (self.name,)

    def activate(self) -> contextlib.AbstractContextManager:
        """Make this device current for the array library (CuPy needs it for multi-GPU)."""
        if self.kind == "gpu":
            return self.xp.cuda.Device(self.index)
        return contextlib.nullcontext()


CPU = Device("cpu", 0, np)
_devices: dict[str, Device] = {"cpu:0": CPU}
_cupy: Any = None
_gpu_count: int | None = None
_gpu_problem: str | None = None
_warned_fallback = False
_state = threading.local()


def _parse(spec: str) -> tuple[str, int]:
    """Parse "cpu", "gpu:1", "/GPU:0", "/device:GPU:0" or "cuda:0" into (kind, index)."""
    text = spec.strip().lower()
    text = text.removeprefix("/").removeprefix("device:").removeprefix("/device:")
    kind, _, index = text.partition(":")
    kind = {"cuda": "gpu"}.get(kind, kind)
    if kind not in ("cpu", "gpu") or (index and not index.isdigit()):
        raise ValueError(
            f"Unknown device {spec!r}. Use 'cpu:0' or 'gpu:N' (also accepted: '/GPU:0', 'cuda:0')."
        )
    return kind, int(index or 0)


def _probe_gpus() -> int:
    """Import CuPy and count usable CUDA devices, once. Records why there are none."""
    global _cupy, _gpu_count, _gpu_problem
    if _gpu_count is not None:
        return _gpu_count
    _gpu_count = 0
    if os.environ.get("ENGINE_DISABLE_GPU"):
        _gpu_problem = "the GPU was disabled with ENGINE_DISABLE_GPU"
        return 0
    try:
        import cupy  # noqa: PLC0415  (lazy on purpose: `import engine` must not import CuPy)
    except ImportError:
        _gpu_problem = "CuPy is not installed"
        return 0
    try:
        count = cupy.cuda.runtime.getDeviceCount()
        if count:
            cupy.zeros(1).sum()  # the first real operation is what fails without a driver
    except Exception as exc:  # CUDARuntimeError without driver or device
        _gpu_problem = f"CuPy is installed but no CUDA device is usable ({type(exc).__name__}: {exc})"
        return 0
    _cupy, _gpu_count = cupy, count
    if not count:
        _gpu_problem = "CuPy found no CUDA device"
    return count


def gpu_available() -> bool:
    """True when CuPy is installed and at least one CUDA device works.

    >>> isinstance(gpu_available(), bool)
    True
    """
    return _probe_gpus() > 0


def list_devices() -> list[str]:
    """Names of the devices this machine offers, CPU first: ``['cpu:0', 'gpu:0', ...]``.

    >>> import engine as eg
    >>> eg.list_devices()[0]
    'cpu:0'
    """
    return ["cpu:0"] + [f"gpu:{i}" for i in range(_probe_gpus())]


def get_device(spec: str | Device | None = None) -> Device:
    """The `Device` for a name such as ``"gpu:0"``; None means the current device.

    A missing GPU falls back to the CPU with a warning (once) when ``config.soft_placement`` is on,
    and raises ``RuntimeError`` when it is off.
    """
    global _warned_fallback
    if spec is None:
        return current_device()
    if isinstance(spec, Device):
        return spec
    known = _devices.get(spec)
    if known is not None:
        return known
    kind, index = _parse(spec)
    name = f"{kind}:{index}"
    if name in _devices:
        return _devices[name]
    if kind == "cpu":
        if index != 0:
            raise ValueError(f"Unknown device {spec!r}: this engine has a single CPU device, 'cpu:0'.")
        return CPU
    count = _probe_gpus()
    if index < count:
        dev = _devices[name] = Device("gpu", index, _cupy)
        return dev
    problem = _gpu_problem if count == 0 else f"only {count} GPU(s) exist (gpu:0 .. gpu:{count - 1})"
    if config.soft_placement:
        if not _warned_fallback:
            warnings.warn(
                f"Device {name!r} was requested but {problem}; using cpu:0 instead "
                f"(soft placement). {_GPU_INSTALL_HINT} "
                "Set engine.config.soft_placement = False to make this an error.",
                RuntimeWarning,
                stacklevel=_user_stacklevel(),
            )
            _warned_fallback = True
        return CPU
    raise RuntimeError(f"Device {name!r} is not available: {problem}. {_GPU_INSTALL_HINT}")


def _user_stacklevel() -> int:
    """The stacklevel that points a warning at the user's line, past engine and contextlib frames."""
    import sys  # noqa: PLC0415

    engine_dir = os.path.dirname(__file__)
    frame, level = sys._getframe(1), 1
    while frame is not None and (frame.f_code.co_filename.startswith(engine_dir)
                                 or frame.f_code.co_filename == contextlib.__file__):
        frame, level = frame.f_back, level + 1
    return level


def current_device() -> Device:
    """The device new tensors are placed on (innermost ``with device(...)``, else cpu:0)."""
    stack = getattr(_state, "stack", None)
    return stack[-1] if stack else CPU


@contextlib.contextmanager
def device(spec: str) -> Iterator[Device]:
    """Place new tensors (constants, creation functions, converted values) on ``spec``.

    Ops run on the device of their tensor inputs; inputs on two different devices are an error.

    >>> with device("cpu:0") as d:
    ...     print(d)
    cpu:0
    """
    dev = get_device(spec)
    stack = _state.__dict__.setdefault("stack", [])
    stack.append(dev)
    try:
        with dev.activate():
            yield dev
    finally:
        stack.pop()


def is_device_array(value: Any) -> bool:
    """True for a CuPy array (CuPy is imported only when such an array is seen)."""
    if _cupy is None:
        if not type(value).__module__.startswith("cupy"):
            return False
        _probe_gpus()
    return _cupy is not None and isinstance(value, _cupy.ndarray)


def scoped_device() -> Device | None:
    """The device of the innermost ``with device(...)``, or None outside any scope."""
    stack = getattr(_state, "stack", None)
    return stack[-1] if stack else None


def device_of_array(array: Any) -> Device:
    """The device an array lives on (NumPy → cpu:0, CuPy → gpu:N)."""
    if isinstance(array, np.ndarray | np.generic):
        return CPU
    if is_device_array(array):
        return get_device(f"gpu:{array.device.id}")
    raise TypeError(f"Not an array this engine can hold: {type(array).__name__}")


def to_host(array: Any) -> np.ndarray:
    """A NumPy copy of ``array`` on the host (a no-op view for NumPy arrays)."""
    if isinstance(array, np.ndarray | np.generic):
        return np.asarray(array)
    return array.get()  # CuPy copies from the array's own GPU, whatever the current device


def transfer(array: Any, dest: Device) -> Any:
    """Copy ``array`` to ``dest``; returns the same array when it is already there."""
    if dest is CPU:
        return to_host(array)
    with dest.activate():
        if isinstance(array, dest.xp.ndarray):  # CuPy's asarray would leave it on its own GPU
            return array if array.device.id == dest.index else array.copy()
        return dest.xp.asarray(array)


def memory_info(spec: str | Device | None = None) -> dict[str, Any]:
    """Bytes in use and held on a device.

    On a GPU these come from CuPy's memory pool, which grows on demand and keeps freed blocks for
    reuse (what TensorFlow's ``allow_growth`` does): ``used_bytes`` ≤ ``held_bytes``. NumPy has no
    pool, so for the CPU both numbers are the process's resident memory.

    >>> sorted(memory_info("cpu:0"))
    ['device', 'held_bytes', 'pooled', 'used_bytes']
    """
    dev = get_device(spec)
    if dev.kind == "gpu":
        with dev.activate():
            pool = dev.xp.get_default_memory_pool()
            return {"device": dev.name, "used_bytes": int(pool.used_bytes()),
                    "held_bytes": int(pool.total_bytes()), "pooled": True}
    rss = _resident_bytes()
    return {"device": dev.name, "used_bytes": rss, "held_bytes": rss, "pooled": False}


def _resident_bytes() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):  # not Linux
        import resource  # noqa: PLC0415

        return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024
