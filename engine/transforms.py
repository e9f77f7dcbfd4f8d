"""Gradients of functions: transforms built on `GradientTape`.

TensorFlow's eager API (``gradients_function``, ``implicit_gradients``) and JAX's (``grad``,
``value_and_grad``). Each returned function may itself be differentiated: ``grad(grad(f))``.

>>> import engine as eg
>>> f = lambda x, y: x * x - 2 * x * y + 3 * y
>>> [float(g) for g in eg.gradients_function(f)(2.0, 1.0)]
[2.0, -1.0]
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .tape import GradientTape
from .tensor import Tensor, convert_to_tensor
from .variable import Variable

__all__ = ["gradients_function", "value_and_gradients_function", "implicit_gradients",
           "implicit_value_and_gradients", "grad", "value_and_grad"]


def _as_tensors(args: Sequence[Any]) -> list[Tensor]:
    return [a if isinstance(a, Tensor) else convert_to_tensor(a) for a in args]


def _differentiable(f: Callable, args: Sequence[Any], xs: Sequence[Any], nums: Sequence[int],
                    op: str) -> None:
    """TypeError when an argument to differentiate is not floating: ``eg.grad(f)(1)`` has no gradient
    (TensorFlow would quietly give None; JAX refuses too), so say which argument and how to fix it."""
    for i in nums:
        x = xs[i]
        if isinstance(x, Tensor) and x.dtype.kind not in "fc":
            try:
                names = list(inspect.signature(f).parameters)
            except (TypeError, ValueError):
                names = []
            arg = f"argument {i}" + (f" ({names[i]!r})" if i < len(names) else "")
            given = args[i]
            if isinstance(given, bool | int):
                fix = f"pass {float(given)!r} instead of {given!r}"
                what = f"the {type(given).__name__} {given!r}"
            else:
                fix = "pass floats (e.g. [1.0, 2.0]) or convert with eg.cast(x, 'float32')"
                what = f"a {x.dtype} value of shape {x.shape}"
            raise TypeError(f"{op}: {arg} is {what}: only floating-point inputs have gradients; {fix}.")


def _scalar(value: Any, where: str) -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(f"{where}: the function must return a Tensor, got {type(value).__name__}.")
    return value


def value_and_gradients_function(f: Callable[..., Tensor]) -> Callable[..., tuple[Tensor, tuple]]:
    """``g(*args)`` → ``(f(*args), (df/darg0, df/darg1, …))``; floats and arrays are accepted.

    >>> import engine as eg
    >>> v, (g,) = eg.value_and_gradients_function(lambda x: x ** 3)(2.0)
    >>> float(v), float(g)
    (8.0, 12.0)
    """
    return _value_and_gradients(f, "value_and_gradients_function")


def _value_and_gradients(f: Callable[..., Tensor], op: str) -> Callable[..., tuple[Tensor, tuple]]:
    @functools.wraps(f)
    def value_and_grads(*args: Any) -> tuple[Tensor, tuple]:
        xs = _as_tensors(args)
        _differentiable(f, args, xs, range(len(xs)), op)
        with GradientTape() as tape:
            tape.watch(xs)
            value = _scalar(f(*xs), "gradients_function")
        return value, tuple(tape.gradient(value, xs))

    return value_and_grads


def gradients_function(f: Callable[..., Tensor]) -> Callable[..., tuple]:
    """``g(*args)`` → a tuple with d f / d arg for each positional argument.

    >>> import engine as eg
    >>> float(gradients_function(lambda x: x ** 3)(2.0)[0])
    12.0
    """
    value_and_grads = _value_and_gradients(f, "gradients_function")

    @functools.wraps(f)
    def grads(*args: Any) -> tuple:
        return value_and_grads(*args)[1]

    return grads


def implicit_value_and_gradients(f: Callable[..., Tensor]) -> Callable[..., tuple[Tensor, list]]:
    """``g(*args)`` → ``(f(*args), [(gradient, variable), …])`` for every trainable Variable f read,
    in the order f first read them.

    >>> import engine as eg
    >>> w = eg.Variable(2.0)
    >>> v, [(g, var)] = eg.implicit_value_and_gradients(lambda: w * w)()
    >>> float(v), float(g), var is w
    (4.0, 4.0, True)
    """

    @functools.wraps(f)
    def value_and_pairs(*args: Any, **kwargs: Any) -> tuple[Tensor, list[tuple[Tensor | None, Variable]]]:
        with GradientTape() as tape:
            value = _scalar(f(*args, **kwargs), "implicit_gradients")
        variables = list(tape.watched_variables())
        if not variables:
            raise ValueError(
                "implicit_gradients: the function read no trainable Variable, so there is nothing to "
                "differentiate with respect to. Use eg.Variable for parameters (or gradients_function)."
            )
        return value, list(zip(tape.gradient(value, variables), variables))

    return value_and_pairs


def implicit_gradients(f: Callable[..., Tensor]) -> Callable[..., list]:
    """``g(*args)`` → ``[(gradient, variable), …]`` for every trainable Variable f read.

    >>> import engine as eg
    >>> w = eg.Variable(3.0)
    >>> [(float(g), v is w) for g, v in implicit_gradients(lambda: w * w)()]
    [(6.0, True)]
    """
    value_and_pairs = implicit_value_and_gradients(f)

    @functools.wraps(f)
    def pairs(*args: Any, **kwargs: Any) -> list:
        return value_and_pairs(*args, **kwargs)[1]

    return pairs


def value_and_grad(f: Callable[..., Tensor], argnums: int | Sequence[int] = 0) -> Callable[..., tuple]:
    """JAX-style: ``g(*args)`` → ``(f(*args), gradient)``; with a tuple ``argnums``, a tuple of them.

    >>> import engine as eg
    >>> [float(t) for t in eg.value_and_grad(lambda x: x * x)(3.0)]
    [9.0, 6.0]
    """
    return _value_and_grad(f, argnums, "value_and_grad")


def _value_and_grad(f: Callable[..., Tensor], argnums: int | Sequence[int], op: str) -> Callable[..., tuple]:
    many = not isinstance(argnums, int)
    nums = tuple(argnums) if many else (argnums,)

    @functools.wraps(f)
    def value_and_gradient(*args: Any) -> tuple:
        # numbers and arrays become tensors (all of them, so f computes with tensors throughout)
        xs = [convert_to_tensor(a) if isinstance(a, int | float | list | np.ndarray | np.generic) else a
              for a in args]
        for i in nums:
            if i >= len(xs) or not isinstance(xs[i], Tensor):
                raise ValueError(f"{op}: argument {i} (argnums) must exist and be a number, array or Tensor.")
        _differentiable(f, args, xs, nums, op)
        with GradientTape() as tape:
            tape.watch([xs[i] for i in nums])
            value = _scalar(f(*xs), "grad")
        grads = tape.gradient(value, [xs[i] for i in nums], unconnected_gradients="zero")
        return value, (tuple(grads) if many else grads[0])

    return value_and_gradient


def grad(f: Callable[..., Tensor], argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
    """JAX-style: the function ``x ↦ df/dx`` (for argument ``argnums``). Composes: ``grad(grad(f))``.

    >>> import engine as eg
    >>> float(grad(grad(lambda x: x ** 3))(2.0))
    12.0
    """
    value_and_gradient = _value_and_grad(f, argnums, "grad")

    @functools.wraps(f)
    def gradient(*args: Any) -> Any:
        return value_and_gradient(*args)[1]

    return gradient
