"""Random tensors, reproducible with seeds.

``set_seed(s)`` fixes the global sequence; an op's ``seed=`` gives the same values on every call
(combined with the global seed when one is set). Numbers are drawn on the host with NumPy and moved
to the device, so a seed gives the same values on the CPU and the GPU.

>>> import engine as eg
>>> eg.random.set_seed(0)
>>> a = eg.random.normal((2,), seed=1); b = eg.random.normal((2,), seed=1)
>>> bool(eg.max(eg.abs(a - b)) == 0)
True
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from . import backend, checks
from . import listeners as _listeners
from .creation import _shape, numeric_dtype
from .primitive import Primitive, apply_unchecked
from .tensor import Tensor

__all__ = ["set_seed", "normal", "uniform", "truncated_normal", "generator", "stream", "hashed_uniform"]

_global_seed: int | None = None
_rng = np.random.default_rng()


def set_seed(seed: int | None) -> None:
    """Make every later random op reproducible (TensorFlow's ``tf.random.set_seed``).

    >>> import engine as eg
    >>> eg.random.set_seed(7)
    >>> a = eg.random.normal((3,)).numpy()
    >>> eg.random.set_seed(7)
    >>> bool((a == eg.random.normal((3,)).numpy()).all())
    True
    """
    global _global_seed, _rng
    _global_seed = seed
    _rng = np.random.default_rng(seed)


@contextlib.contextmanager
def _seed_kept() -> Iterator[None]:
    """Undo a ``set_seed`` made inside the block (what `Function.get_graph` promises); draws from the
    generator, such as a layer's initial weights, stay drawn."""
    seed, rng = _global_seed, _rng
    try:
        yield
    finally:
        _restore_generator(seed, rng)


def _restore_generator(seed: int | None, rng: np.random.Generator) -> None:
    global _global_seed, _rng
    _global_seed, _rng = seed, rng


def _get_state() -> tuple[Any, ...]:
    """The global random state (seed, generator and its position), for `_set_state` to put back."""
    return (_global_seed, _rng, _rng.bit_generator.state)


def _set_state(state: tuple[Any, ...]) -> None:
    """Put back what `_get_state` returned: later draws are as if nothing had been drawn since."""
    global _global_seed, _rng
    _global_seed, _rng, position = state
    _rng.bit_generator.state = position


def generator(seed: int | None = None) -> np.random.Generator:
    """The NumPy generator an op with this ``seed`` draws from.

    >>> import engine as eg
    >>> int(eg.random.generator(0).integers(10)) == int(eg.random.generator(0).integers(10))
    True
    """
    if seed is None:
        return stream(_rng)
    return np.random.default_rng(seed if _global_seed is None else (_global_seed, seed))


def stream(rng: np.random.Generator) -> np.random.Generator:
    """The generator a draw from ``rng`` takes its numbers from: ``rng``, unless a listener hands over
    a copy (`eg.function`'s ``get_graph`` does: asking for a graph draws nothing from any generator, so
    later random numbers are as if it had not been asked).

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> stream(rng) is rng
    True
    """
    return _listeners.generator_for(rng)


def _check(op: str, dtype: Any, seed: Any, **numbers: Any) -> tuple[np.dtype, tuple[float, ...]]:
    """The arguments every sampler shares, checked so that errors name ``op`` (not NumPy's sampler)."""
    dt = numeric_dtype(dtype, op)
    if dt.kind != "f":
        raise TypeError(f"{op}: dtype must be floating (float16/32/64), got {dt}. Sample floats, then "
                        f"convert: eg.cast(eg.random.{op}(...), '{dt}').")
    checks.seed(seed, op)
    for name, value in numbers.items():
        numbers[name] = checks.number(value, name, op, low=0 if name == "stddev" else None)
    return dt, tuple(numbers.values())


def _drawn(xp: Any, *, draw: Any) -> Any:
    """What ``draw()`` samples now (on the host, then moved to the op's device)."""
    return draw()


# A draw is an op with no tensor inputs and no gradient, so a traced graph draws again on every call
# (it is not frozen into a constant): one primitive per sampler, named as TensorFlow names it.
_RULE = "not differentiable: a random draw (no inputs)"
_normal = Primitive("random_normal", _drawn, op_type="RandomStandardNormal", inputs=(), rule=_RULE,
                    doc="Samples from a normal distribution, drawn anew each time the op runs.")
_uniform = Primitive("random_uniform", _drawn, op_type="RandomUniform", inputs=(), rule=_RULE,
                     doc="Samples from a uniform distribution, drawn anew each time the op runs.")
_truncated = Primitive("truncated_normal", _drawn, op_type="TruncatedNormal", inputs=(), rule=_RULE,
                       doc="Normal samples within two standard deviations, drawn anew each time the op runs.")


def _draw(prim: Primitive, sample: Any, dt: np.dtype) -> Tensor:
    """A tensor of ``sample()`` (host values) on the current device: the op ``prim``."""
    dev = backend.current_device()

    def draw() -> Any:
        data = sample().astype(dt)
        return backend.transfer(data, dev) if dev.kind == "gpu" else data

    return apply_unchecked(prim, dev, draw=draw)


def normal(shape: int | Sequence[int], mean: float = 0.0, stddev: float = 1.0, dtype: Any = "float32",
           seed: int | None = None) -> Tensor:
    """Samples from N(mean, stddev²).

    >>> import engine as eg
    >>> eg.random.normal((2, 3), seed=0).shape
    (2, 3)
    """
    shape = _shape(shape, "normal")
    dt, (mean, stddev) = _check("normal", dtype, seed, mean=mean, stddev=stddev)
    return _draw(_normal, lambda: generator(seed).normal(mean, stddev, shape), dt)


def uniform(shape: int | Sequence[int], minval: float = 0.0, maxval: float = 1.0, dtype: Any = "float32",
            seed: int | None = None) -> Tensor:
    """Samples from the uniform distribution on [minval, maxval): never ``maxval`` itself, in any dtype.

    Drawn in float64 and rounded to ``dtype``; a value that rounds up to ``maxval`` (or beyond) is drawn
    again (float16 has few values: about 1 draw in 3,000 on [0, 1) would round to 1.0).

    >>> import engine as eg
    >>> u = eg.random.uniform((1000,), seed=0).numpy()
    >>> bool(u.min() >= 0.0 and u.max() < 1.0)
    True
    """
    shape = _shape(shape, "uniform")
    dt, (minval, maxval) = _check("uniform", dtype, seed, minval=minval, maxval=maxval)
    if minval > maxval:
        raise ValueError(f"uniform: minval ({minval}) must not be greater than maxval ({maxval}).")
    return _draw(_uniform, lambda: _below(generator(seed), minval, maxval, shape, dt), dt)


def _below(rng: np.random.Generator, low: float, high: float, shape: tuple[int, ...], dt: np.dtype) -> Any:
    """Uniform ``dt`` samples in [low, high): the draws that round up to ``high`` are drawn again (a few
    rounds; then any left become the largest ``dt`` value below ``high``)."""
    values = rng.uniform(low, high, shape).astype(dt)
    if low == high:  # an empty interval: TensorFlow gives minval
        return values
    for _ in range(8):
        bad = values.astype(np.float64) >= high
        if not bad.any():
            return values
        values[bad] = rng.uniform(low, high, int(bad.sum())).astype(dt)
    top = np.asarray(high, dtype=dt)
    while float(top) >= high:
        top = np.nextafter(top, dt.type(-np.inf))
    return np.where(values.astype(np.float64) >= high, top, values)


def truncated_normal(shape: int | Sequence[int], mean: float = 0.0, stddev: float = 1.0,
                     dtype: Any = "float32", seed: int | None = None) -> Tensor:
    """Normal samples, redrawn until each lies within two standard deviations of the mean.

    >>> import engine as eg
    >>> bool(eg.abs(eg.random.truncated_normal((1000,), seed=0)).numpy().max() <= 2.0)
    True
    """
    shape = _shape(shape, "truncated_normal")
    dt, (mean, stddev) = _check("truncated_normal", dtype, seed, mean=mean, stddev=stddev)

    def sample() -> np.ndarray:
        rng = generator(seed)
        values = rng.standard_normal(shape)
        bad = np.abs(values) > 2
        while bad.any():
            values[bad] = rng.standard_normal(int(bad.sum()))
            bad = np.abs(values) > 2
        return mean + stddev * values

    return _draw(_truncated, sample, dt)


# SplitMix64's constants (Steele, Lea & Flood, 2014)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1, _MIX2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)


def hashed_uniform(xp: Any, key: int, shape: Sequence[int]) -> Any:
    """float32 numbers in [0, 1), computed where ``xp`` computes (NumPy or CuPy) from an integer key.

    Element ``i`` is the SplitMix64 hash of ``key + i·γ``, cut to 24 bits: integer arithmetic that
    every device does identically, so a key gives the same numbers, bit for bit, on the CPU and on a
    GPU, and nothing is drawn on the host or uploaded. (Dropout masks are made this way.)

    >>> hashed_uniform(np, 7, (3,)).tolist() == hashed_uniform(np, 7, (3,)).tolist()
    True
    """
    n = 1
    for d in shape:
        n *= int(d)
    z = xp.arange(n, dtype=np.uint64) * _GOLDEN + np.uint64(key % 2**64)
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    z = z ^ (z >> np.uint64(31))
    return ((z >> np.uint64(40)).astype(np.float32) * np.float32(2.0 ** -24)).reshape(tuple(shape))
