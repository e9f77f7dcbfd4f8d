"""Gradient accumulation: several small batches, one update (a big batch that does not fit at once).

For a loss that is a mean over the batch, the mean of the gradients of k equal-size micro-batches
*is* the gradient of the whole batch, so the update is the same.

- `Accumulator`: add ``(gradient, variable)`` pairs, read their sum or mean, reset. Plain data.
- `MultiSteps`: wraps an optimizer; ``apply_gradients`` only accumulates, and every ``every_k``-th
  call applies the mean (or sum) with the wrapped optimizer.

>>> import engine as eg
>>> w = eg.Variable(0.0)
>>> opt = eg.optimizers.MultiSteps(eg.optimizers.SGD(1.0), every_k=2)
>>> opt.apply_gradients([(eg.constant(1.0), w)]), float(w)     # accumulated, not applied
(False, 0.0)
>>> opt.apply_gradients([(eg.constant(3.0), w)]), float(w)     # applied: the mean, 2
(True, -2.0)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .. import checks
from .. import listeners as _listeners
from ..tape import GradientTape
from ..tensor import Tensor
from ..variable import Variable
from .base import Optimizer, _pairs, as_gradient_array, check_trainable_dtype

__all__ = ["Accumulator", "MultiSteps"]


class Accumulator:
    """Sum gradients over micro-batches; read them back summed or averaged.

    ``count`` is the number of `add` calls; the mean divides by it (a ``None`` gradient counts as
    zero for that micro-batch).

    >>> import engine as eg
    >>> w = eg.Variable([0.0, 0.0])
    >>> acc = Accumulator()
    >>> acc.add([(eg.constant([1.0, 2.0]), w)]); acc.add([(eg.constant([3.0, 4.0]), w)])
    >>> [g.numpy() for g, v in acc.grads_and_vars()]
    [array([2., 3.], dtype=float32)]
    """

    def __init__(self, average: bool = True):
        self.average = bool(average)
        self.reset()

    def reset(self) -> None:
        """Forget everything accumulated."""
        self.count = 0
        self._sums: dict[int, Any] = {}
        self._vars: dict[int, Variable] = {}

    def add(self, grads_and_vars: Iterable[tuple[Any, Variable]]) -> None:
        """Add one micro-batch's ``(gradient, variable)`` pairs.

        All or nothing: every pair is checked before anything is added, so a bad pair (wrong shape,
        dtype or device, an integer variable) leaves the accumulator as it was.
        """
        _listeners.note_python_state("Accumulator.add (and MultiSteps)", "Trace the step that computes "
                                     "the gradients and accumulate its results outside the traced function.")
        op = "Accumulator.add"
        pairs = _pairs(grads_and_vars, op)
        for _, v in pairs:
            check_trainable_dtype(v, op)  # an int mean would be truncated
        checked = [(None if g is None else as_gradient_array(g, v, op), v) for g, v in pairs]
        sums = dict(self._sums)
        for data, v in checked:
            if data is None:
                continue
            total = sums.get(v._uid)
            with v._device.activate():  # the sum stays on the variable's device
                sums[v._uid] = data.copy() if total is None else total + data
        for _, v in checked:  # nothing above changed the accumulator: now commit
            self._vars.setdefault(v._uid, v)
        self._sums = sums
        self.count += 1

    def _state(self) -> tuple[int, dict[int, Any], dict[int, Variable]]:
        """A snapshot for `_restore` (the sums are never changed in place, so copying the dicts is enough)."""
        return self.count, dict(self._sums), dict(self._vars)

    def _restore(self, state: tuple[int, dict[int, Any], dict[int, Variable]]) -> None:
        self.count, self._sums, self._vars = state[0], dict(state[1]), dict(state[2])

    def gradient(self, var: Variable) -> Tensor | None:
        """The accumulated (summed or averaged) gradient of ``var``, or None if it has none."""
        total = self._sums.get(var._uid)
        if total is None:
            return None
        with var._device.activate():
            if self.average and self.count:
                total = total / var.dtype.type(self.count)
            total = total.astype(var.dtype, copy=False)
        return Tensor._make(total, var._device)

    def grads_and_vars(self) -> list[tuple[Tensor | None, Variable]]:
        """``[(accumulated gradient, variable), ...]`` in the order the variables first came."""
        return [(self.gradient(v), v) for v in self._vars.values()]

    def __repr__(self) -> str:
        return f"<Accumulator average={self.average} count={self.count} variables={len(self._vars)}>"


class MultiSteps:
    """Apply ``optimizer`` once every ``every_k`` calls of `apply_gradients`, with the mean (or sum,
    ``average=False``) of the gradients given since the last update.

    `iterations` counts real updates (the wrapped optimizer's); `micro_steps` counts calls since the
    last one. Slots are the wrapped optimizer's, plus ``accumulated`` (the running sum).

    >>> import engine as eg
    >>> w = eg.Variable(1.0)
    >>> opt = eg.optimizers.MultiSteps(eg.optimizers.SGD(0.1), every_k=2)
    >>> _ = opt.minimize(lambda: w * w)
    >>> float(w)
    1.0
    """

    def __init__(self, optimizer: Optimizer, every_k: int, average: bool = True):
        if not hasattr(optimizer, "apply_gradients"):
            raise TypeError(f"MultiSteps: expected an optimizer, got {type(optimizer).__name__}.")
        self.optimizer = optimizer
        self.every_k = checks.count(every_k, "every_k", "MultiSteps", minimum=1)
        self.accumulator = Accumulator(average=average)
        self.name = f"MultiSteps({optimizer.name})"

    @property
    def average(self) -> bool:
        return self.accumulator.average

    @property
    def micro_steps(self) -> int:
        """Calls of `apply_gradients` since the last real update (0 .. every_k - 1)."""
        return self.accumulator.count

    @property
    def iterations(self) -> int:
        return self.optimizer.iterations

    @property
    def learning_rate(self) -> Any:
        return self.optimizer.learning_rate

    @property
    def slot_names(self) -> tuple[str, ...]:
        return tuple(self.optimizer.slot_names) + ("accumulated",)

    def compute_gradients(self, loss: Callable[[], Tensor] | Tensor,
                          var_list: Sequence[Variable] | None = None,
                          tape: GradientTape | None = None) -> list[tuple[Tensor | None, Variable]]:
        """The wrapped optimizer's `Optimizer.compute_gradients`."""
        return self.optimizer.compute_gradients(loss, var_list, tape=tape)

    def apply_gradients(self, grads_and_vars: Iterable[tuple[Any, Variable]]) -> bool:
        """Accumulate; on every ``every_k``-th call apply and reset. Returns whether it applied.

        All or nothing: if the wrapped optimizer's update fails (a bad learning rate, an error in its
        rule), this call's gradients are taken back out and the accumulated ones are kept, so fixing
        the cause and calling again loses nothing.
        """
        op = f"{self.name}.apply_gradients"
        pairs = _pairs(grads_and_vars, op)
        for g, v in pairs:  # refused now, not k calls later when the update runs
            if g is not None:
                check_trainable_dtype(v, op)
        before = self.accumulator._state()
        self.accumulator.add(pairs)
        if self.accumulator.count < self.every_k:
            return False
        try:
            self.optimizer.apply_gradients(self.accumulator.grads_and_vars())
        except BaseException:
            self.accumulator._restore(before)
            raise
        self.accumulator.reset()
        return True

    def minimize(self, loss: Callable[[], Tensor] | Tensor, var_list: Sequence[Variable] | None = None,
                 tape: GradientTape | None = None) -> Tensor:
        """`compute_gradients` then `apply_gradients`; returns the loss value."""
        value, pairs = self.optimizer._value_and_gradients(loss, var_list, tape)
        self.apply_gradients(pairs)
        return value

    def get_slot_names(self) -> list[str]:
        return list(self.slot_names)

    def get_slot(self, var: Variable, name: str) -> Variable | Tensor | None:
        if name == "accumulated":
            total = self.accumulator._sums.get(var._uid)
            if total is None:
                return None
            with var._device.activate():
                return Tensor._make(total.copy(), var._device)
        return self.optimizer.get_slot(var, name)

    def slots(self, var: Variable) -> dict[str, Any]:
        out: dict[str, Any] = dict(self.optimizer.slots(var))
        accumulated = self.get_slot(var, "accumulated")
        if accumulated is not None:
            out["accumulated"] = accumulated
        return out

    def __repr__(self) -> str:
        return (f"<MultiSteps every_k={self.every_k} average={self.average} micro_steps={self.micro_steps} "
                f"optimizer={self.optimizer!r}>")
