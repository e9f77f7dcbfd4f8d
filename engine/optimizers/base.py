"""The optimizer base class: ``compute_gradients`` → (transform) → ``apply_gradients``.

``minimize`` is exactly those two calls. Between them the ``(gradient, variable)`` pairs are plain
data: clip them, average them, send them elsewhere, then apply. Each optimizer only writes its
update rule (`Optimizer._update`) on raw arrays; its state per variable lives in *slots*
(Adam's ``m`` and ``v``), readable with `get_slot` / `slots`.

>>> import engine as eg
>>> x = eg.Variable(10.0, name="x")
>>> opt = eg.optimizers.SGD(learning_rate=0.1)
>>> pairs = opt.compute_gradients(lambda: 0.5 * (x - 1.0) ** 2)   # [(9.0, x)]
>>> opt.apply_gradients(pairs)
>>> float(x), opt.iterations
(9.100000381469727, 1)
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from .. import backend, checks
from ..dtypes import weak_array
from ..listeners import init_scope, name_scope
from ..primitive import Primitive, apply_unchecked
from ..tape import GradientTape
from ..tensor import Tensor
from ..variable import Variable

__all__ = ["Optimizer", "as_gradient_array", "check_trainable_dtype"]

LearningRate = float | Tensor | Callable[[int], Any]


def _label(var: Variable) -> str:
    return repr(var.name) if var.name is not None else f"(unnamed, shape {var.shape})"


def as_gradient_array(g: Any, var: Variable, op: str) -> Any:
    """The raw array of gradient ``g`` for ``var``, checked: same shape, dtype and device.

    Tensors must match exactly. Python numbers and lists take the variable's dtype; NumPy arrays keep
    theirs (as everywhere in the engine), so a float64 array for a float32 variable is an error.
    """
    if backend.is_device_array(g):  # a raw CuPy gradient: checked like a tensor
        g = Tensor._make(g, backend.device_of_array(g))
    if isinstance(g, Tensor):
        if g._is_variable:
            g = g.value()
        if g._device is not var._device:
            raise ValueError(
                f"{op}: the gradient for variable {_label(var)} is on {g.device} but the variable is on "
                f"{var.device}. Move it first: g.to('{var.device}')."
            )
        data = g._data
    else:
        # The engine's one rule for values beside a tensor (engine.dtypes.weak_array), as in `x + g`
        data = weak_array(g, var.dtype, f"{op} (the gradient for variable {_label(var)})")
        if var._device.kind == "gpu":
            data = backend.transfer(data, var._device)
    if tuple(data.shape) != var.shape:
        raise ValueError(
            f"{op}: the gradient for variable {_label(var)} has shape {tuple(data.shape)} but the variable "
            f"has shape {var.shape}. Pair each gradient with its own variable (zip(grads, variables))."
        )
    if data.dtype != var.dtype:  # a TypeError, as for the two tensors of `var + g`
        raise TypeError(
            f"{op}: the gradient for variable {_label(var)} has dtype {data.dtype} but the variable has "
            f"dtype {var.dtype}. Convert it first: eg.cast(g, '{var.dtype}')."
        )
    return data


def check_trainable_dtype(var: Variable, op: str) -> None:
    """A gradient update needs a floating-point variable: ``w - lr*g`` truncated into an int variable
    would be silently wrong (``SGD(0.1)`` on ``[1, 2]`` with gradient ``[1, 1]`` would give ``[0, 1]``)."""
    if var.dtype.kind not in "fc":
        raise TypeError(
            f"{op}: variable {_label(var)} has dtype {var.dtype}; gradient updates need a floating-point "
            f"variable (an {var.dtype} one would silently truncate every update). Create it as float, "
            f"e.g. eg.Variable(value, dtype='float32'), or leave it out of the updated variables "
            f"(trainable=False)."
        )


def _pairs(grads_and_vars: Iterable[Any], op: str) -> list[tuple[Any, Variable]]:
    """``grads_and_vars`` as a list of (gradient, Variable), each variable at most once."""
    if isinstance(grads_and_vars, Tensor) or isinstance(grads_and_vars, dict):
        raise TypeError(f"{op}: expected a list of (gradient, variable) pairs, got "
                        f"{type(grads_and_vars).__name__}.")
    pairs = []
    seen: set[int] = set()
    for item in grads_and_vars:
        if not isinstance(item, list | tuple) or len(item) != 2:
            raise TypeError(f"{op}: expected (gradient, variable) pairs, got {item!r:.80}. Build them with "
                            "list(zip(gradients, variables)).")
        g, v = item
        if not isinstance(v, Variable):
            raise TypeError(f"{op}: the second element of each pair must be an eg.Variable, got "
                            f"{type(v).__name__}. Pairs are (gradient, variable), in that order.")
        if v._uid in seen:
            raise ValueError(f"{op}: variable {_label(v)} appears twice; add its gradients first.")
        seen.add(v._uid)
        pairs.append((g, v))
    return pairs


class Optimizer:
    """Base class. Subclasses set ``slot_names`` and write `_initial_slots` and `_update`.

    ``learning_rate`` is a number (Python or NumPy), a 0-d float Tensor or Variable, or a callable
    ``f(step) -> number or 0-d tensor`` called with the number of updates applied so far (0 for the
    first), like a Keras schedule. A Variable or a schedule is read each time a step runs, eagerly and
    in an ``eg.function`` graph alike (assigning the Variable changes the next step's rate).

    >>> import engine as eg
    >>> isinstance(eg.optimizers.Adam(), eg.optimizers.Optimizer)
    True
    """

    slot_names: tuple[str, ...] = ()

    def __init__(self, learning_rate: LearningRate = 0.01, name: str | None = None):
        if not callable(learning_rate):
            learning_rate = checks.live_number(learning_rate, "learning_rate", type(self).__name__)
        self.learning_rate = learning_rate
        self.name = name or type(self).__name__
        # The number of updates applied, a Variable (as TensorFlow's): a traced step counts by assigning.
        with backend.device("cpu:0"):
            self._count = Variable(np.int64(0), name=f"{self.name}/iterations", trainable=False)
        self._one = Tensor._make(np.array(1, dtype=np.int64), backend.CPU)  # what a step adds to the count
        self._slots: dict[int, dict[str, Variable]] = {}

    # ---- state ----------------------------------------------------------------------------------
    @property
    def iterations(self) -> int:
        """How many times `apply_gradients` has updated the variables."""
        return int(self._count._data)

    def current_learning_rate(self, step: int | None = None) -> float:
        """The learning rate used at ``step`` (default: the next update): a Variable's value now, a
        schedule's value for that step. Read outside any graph being traced (`init_scope`): a traced
        step reads it when its step op runs, not once when traced."""
        lr = self.learning_rate
        with init_scope():
            if callable(lr):
                lr = lr(self.iterations if step is None else step)
            if isinstance(lr, Tensor) and lr.size == 1:
                lr = backend.to_host(lr._data).item()  # (not .item(): no tape host-read warning)
        if isinstance(lr, bool) or not isinstance(lr, int | float | np.number):
            raise TypeError(f"{self.name}: the learning rate is {type(lr).__name__} {lr!r:.60}; it must "
                            "be a number (a schedule must return a number for each step).")
        value = float(lr)
        if not math.isfinite(value):
            raise ValueError(f"{self.name}: the learning rate is {value}; it must be a finite number.")
        return value

    def get_slot_names(self) -> list[str]:
        """The names of the per-variable state this optimizer keeps (e.g. ``['m', 'v']``)."""
        return list(self.slot_names)

    def get_slot(self, var: Variable, name: str) -> Variable | None:
        """The slot ``name`` of ``var`` (a non-trainable Variable), or None before its first update."""
        if name not in self.slot_names:
            have = ", ".join(map(repr, self.slot_names)) or "none"
            raise KeyError(f"{self.name} has no slot {name!r}; its slots are: {have}.")
        return self._slots.get(var._uid, {}).get(name)

    def slots(self, var: Variable) -> dict[str, Variable]:
        """All slots of ``var`` by name (empty before its first update)."""
        return dict(self._slots.get(var._uid, {}))

    def variables(self) -> list[Variable]:
        """Every slot variable this optimizer has made."""
        return [s for slots in self._slots.values() for s in slots.values()]

    # ---- the three steps --------------------------------------------------------------------------
    def compute_gradients(self, loss: Callable[[], Tensor] | Tensor,
                          var_list: Sequence[Variable] | None = None,
                          tape: GradientTape | None = None) -> list[tuple[Tensor | None, Variable]]:
        """``[(d loss / d var, var), ...]``.

        ``loss`` is a zero-argument function returning the loss (it runs under a new tape), or a
        loss tensor together with the ``tape`` that recorded it. ``var_list=None`` means every
        trainable Variable the loss read. A variable the loss does not depend on gets ``None``.
        """
        return self._value_and_gradients(loss, var_list, tape)[1]

    def apply_gradients(self, grads_and_vars: Iterable[tuple[Any, Variable]]) -> None:
        """Update each variable with its gradient; ``None`` gradients are skipped.

        Gradients must have their variable's shape, dtype and device (a clear ``ValueError``
        otherwise). Increments `iterations` once.

        The update is ops and assignments, like any code (so an `eg.function` graph takes the step on
        every call): an op gives the learning rate and number of this step, one op per variable its
        new value and slots' values by the optimizer's rule (`_update`; it takes the variable and its
        slots themselves and reads them when it runs, as TensorFlow's ``ResourceApply`` ops do), then
        assignments write them and count the step. All or nothing: every new value is computed before
        anything is written, so an error part-way (a failing update rule, memory) leaves variables,
        slots and iterations as they were.
        """
        op = f"{self.name}.apply_gradients"
        given = [(g, v) for g, v in _pairs(grads_and_vars, op) if g is not None]
        for _, v in given:
            check_trainable_dtype(v, op)
        checked = [(_gradient_tensor(g, v, op), v) for g, v in given]
        if not checked:
            raise ValueError(
                f"{op}: no gradients provided for any variable (all were None). A None gradient means "
                "the loss does not depend on that variable: check that the loss reads it."
            )
        with name_scope(self.name):
            step = apply_unchecked(_next_step, backend.CPU, optimizer=self)
            updates = [self._new_values(var, g, step) for g, var in checked]
            self._count.assign_add(self._one)
            for var, value, slots, new_slots, fresh in updates:
                with name_scope(_update_scope(var)):
                    var.assign(value)
                    for name, s in new_slots.items():
                        slots[name].assign(s)
                if fresh:  # the first update of var: its slots are kept from now on
                    self._register_slots(var, slots)

    def _new_values(self, var: Variable, g: Tensor, step: Tensor) -> tuple[Variable, Tensor, dict, dict,
                                                                          bool]:
        """``var``'s new value and its slots' new values (tensors; nothing written yet): ``(var, new
        value, its slot Variables, {slot name: new value}, whether the slots are new)``. On var's first
        update its slots are made here, with their initial values, and kept only if all goes well."""
        slots = self._slots.get(var._uid)
        fresh = slots is None
        if fresh:
            with var._device.activate():  # new slots beside their variable
                slots = {name: _slot_variable(value, var, self._slot_name(var, name))
                         for name, value in self._initial_slots(var).items()}
        if not slots:  # (plain SGD: one op)
            return var, apply_unchecked(_update_op, var._device, g, step, optimizer=self, var=var,
                                        slots=slots, outputs=None), slots, {}, fresh
        outputs = _SlotValues()
        value = apply_unchecked(_update_op, var._device, g, step, optimizer=self, var=var, slots=slots,
                                outputs=outputs)
        new_slots = {name: apply_unchecked(_slot_op, var._device, value, outputs=outputs, name=name)
                     for name in slots}
        return var, value, slots, new_slots, fresh

    def minimize(self, loss: Callable[[], Tensor] | Tensor, var_list: Sequence[Variable] | None = None,
                 tape: GradientTape | None = None) -> Tensor:
        """`compute_gradients` then `apply_gradients`; returns the loss value (before the update)."""
        value, pairs = self._value_and_gradients(loss, var_list, tape)
        self.apply_gradients(pairs)
        return value

    # ---- for subclasses -------------------------------------------------------------------------
    def _initial_slots(self, var: Variable) -> dict[str, Any]:
        """Initial arrays of ``var``'s slots (default: zeros for each name in ``slot_names``).

        Called with ``var``'s device current, so new arrays land beside the variable.
        """
        xp = var._device.xp
        return {name: xp.zeros_like(var._data) for name in self.slot_names}

    def _update(self, xp: Any, w: Any, g: Any, slots: dict[str, Any], lr: float,
                step: int) -> tuple[Any, dict[str, Any]]:
        """One update on raw arrays: returns ``(new w, new slots)``; ``step`` counts from 1."""
        raise NotImplementedError

    # ---- internals ------------------------------------------------------------------------------
    def _slot_name(self, var: Variable, name: str) -> str:
        return f"{var.name if var.name is not None else 'variable'}/{self.name}/{name}"

    def _register_slots(self, var: Variable, slots: dict[str, Variable]) -> None:
        """Keep ``var``'s slots for as long as ``var`` lives, and no longer.

        Keyed by ``var._uid`` (unique for the process, never reused, unlike ``id()``; a Variable's
        ``==`` is elementwise, so the Variable itself cannot be a dict key by value). A finalizer
        drops the entry when the Variable is garbage-collected; it holds only a weak reference to
        the optimizer, so neither keeps the other alive.
        """
        self._slots[var._uid] = slots
        finalizer = weakref.finalize(var, _forget_slots, weakref.ref(self), var._uid)
        finalizer.atexit = False

    def _value_and_gradients(self, loss: Any, var_list: Any, tape: GradientTape | None):
        op = f"{self.name}.compute_gradients"
        if var_list is not None:
            var_list = list(var_list)
            for v in var_list:
                if not isinstance(v, Variable):
                    raise TypeError(f"{op}: var_list must hold eg.Variables, got {type(v).__name__}.")
        if isinstance(loss, Tensor):
            if tape is None:
                raise TypeError(
                    f"{op}: the loss is a Tensor, so pass the GradientTape that recorded it "
                    "(compute_gradients(loss, tape=tape)), or pass a zero-argument function: "
                    "compute_gradients(lambda: loss_fn())."
                )
            value = loss
        elif callable(loss):
            if tape is not None:
                raise ValueError(f"{op}: give either a loss function or a loss tensor with its tape, "
                                 "not a function and a tape.")
            with GradientTape() as tape:
                if var_list is not None:
                    tape.watch(var_list)
                value = loss()
            if not isinstance(value, Tensor):
                raise TypeError(f"{op}: the loss function returned {type(value).__name__}, not a Tensor.")
        else:
            raise TypeError(f"{op}: loss must be a zero-argument function or a Tensor, got "
                            f"{type(loss).__name__}.")
        if var_list is None:
            var_list = [v for v in tape.watched_variables() if v.trainable]
        if not var_list:
            raise ValueError(
                f"{op}: no variables to optimize: the loss read no trainable eg.Variable. Make the "
                "parameters Variables, or pass var_list."
            )
        grads = tape.gradient(value, var_list)
        return value, list(zip(grads, var_list))

    def _hyper(self) -> str:
        lr = self.learning_rate
        return f"learning_rate={getattr(lr, '__name__', lr) if callable(lr) else lr}"

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._hyper()} iterations={self.iterations}>"


def _update_scope(var: Variable) -> str:
    """The name scope of ``var``'s assignments (TensorFlow's: ``Adam/update_dense_1/kernel/...``)."""
    return f"update_{var.name or 'variable'}"


def _gradient_tensor(g: Any, var: Variable, op: str) -> Tensor:
    """Gradient ``g`` for ``var`` as a tensor (itself when it is one), checked (`as_gradient_array`)."""
    data = as_gradient_array(g, var, op)
    if isinstance(g, Tensor) and not g._is_variable and g._data is data:
        return g
    return Tensor._make(data, var._device)


def _next_step_forward(xp: Any, *, optimizer: Optimizer) -> Any:
    """``[learning rate, step number]`` of ``optimizer``'s next update (float64, on the host): its
    step count, and a schedule or a learning-rate Variable, are read when the op runs."""
    done = int(optimizer._count._data)
    return np.array([optimizer.current_learning_rate(done), done + 1], dtype=np.float64)


class _SlotValues:
    """Where one variable's update leaves its slots' new values for the `_slot_op`s that hand them on
    (an op has one output: the variable's new value). Kept by the ops' parameters, so a traced graph's
    update and slot ops share one, as the eager ones do."""

    __slots__ = ("values",)

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}


def _update_forward(xp: Any, g: Any, step: Any, *, optimizer: Optimizer, var: Variable,
                    slots: dict[str, Variable], outputs: _SlotValues | None) -> Any:
    """``var``'s new value by ``optimizer``'s rule (`Optimizer._update`) from gradient ``g``, ``var``
    and its ``slots`` as they are now; the slots' new values go to ``outputs``, where `_slot_forward`
    takes them."""
    w = var._data
    lr, number = step.tolist()
    current = {name: slot._data for name, slot in slots.items()} if slots else {}
    new_w, new_slots = optimizer._update(xp, w, g, current, lr, int(number))
    if new_slots:
        outputs.values = {k: v.astype(w.dtype, copy=False) for k, v in new_slots.items()}
    return new_w.astype(w.dtype, copy=False)


def _slot_forward(xp: Any, new_w: Any, *, outputs: _SlotValues, name: str) -> Any:
    """Slot ``name``'s new value, computed by the update whose output is ``new_w`` (its input: so it
    runs after that update)."""
    return outputs.values[name]


_next_step = Primitive("optimizer_step", _next_step_forward, inputs=(), same_dtype=False,
                       rule="not differentiable: an optimizer's learning rate and step number (no inputs)",
                       doc=_next_step_forward.__doc__)
_update_op = Primitive("apply_gradient", _update_forward, inputs=("g", "step"), same_dtype=False,
                       rule="not differentiable: a variable's new value from its gradient g and the step",
                       doc=_update_forward.__doc__)
_slot_op = Primitive("updated_slot", _slot_forward, inputs=("new_w",), same_dtype=False,
                     rule="not differentiable: a slot's new value, made with the variable's new_w",
                     doc=_slot_forward.__doc__)


def _forget_slots(optimizer_ref: weakref.ref, uid: int) -> None:
    optimizer = optimizer_ref()
    if optimizer is not None:
        optimizer._slots.pop(uid, None)


def _slot_variable(value: Any, var: Variable, name: str) -> Variable:
    slot = Variable(Tensor._make(value.astype(var.dtype, copy=False), var._device), name=name,
                    trainable=False)
    return slot


def _check_number(value: Any, name: str, owner: str, low: float | None = None, high: float | None = None,
                  high_inclusive: bool = False) -> float:
    """A hyperparameter as a float (`engine.checks.number`), or a clear error naming ``owner``."""
    return checks.number(value, name, owner, low=low, high=high, high_open=not high_inclusive)
