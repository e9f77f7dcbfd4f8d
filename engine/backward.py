"""The backward walk: the one place that turns a tape's records into gradients.

Start from the targets with gradient ``g = 1`` (or the given output gradients). Visit the records
last to first; for each record on a path from a source to a target, the gradient of its output is
complete by then (it is the ``upstream``); each input receives ``vjp(upstream)`` (its
``contribution``), summed back to the input's shape where the op broadcast. A tensor's gradient is
the sum of the contributions it receives. `GradientTape.gradient` runs this walk; `backward_steps`
lets you watch it, one `BackwardStep` per visited record.

>>> import engine as eg
>>> x = eg.constant(3.0)
>>> with eg.GradientTape(persistent=True) as tape:
...     tape.watch(x)
...     y = x * x + x
>>> for step in eg.backward_steps(tape, y, x):
...     print(step.record.op, [float(c) for c in step.contributions if c is not None])
add [1.0, 1.0]
multiply [3.0, 3.0]
>>> float(tape.gradient(y, x))          # x receives 1 (from +), 3 and 3 (from ×)
7.0
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from . import listeners as _listeners
from . import nest
from .creation import ones_like
from .primitive import REGISTRY, unbroadcast
from .record import Record
from .tensor import Tensor, _uids, convert_to_tensor

_new = object.__new__

__all__ = ["BackwardStep", "backward_steps"]


class BackwardStep:
    """One record visited by the backward walk.

    - ``record``: the tape's `Record` (``.op``, ``.primitive``, ``.inputs``, ``.outputs``);
    - ``upstream``: the gradient arriving at each output (a tuple, one per output), complete;
    - ``contributions``: what this op adds to each input's gradient (a tuple, one per input; None
      where an input needs none: it leads to no source, or the op passes it no gradient).

    >>> import engine as eg
    >>> a, b = eg.constant(2.0), eg.constant(5.0)
    >>> with eg.GradientTape() as tape:
    ...     tape.watch([a, b])
    ...     y = a * b
    >>> step = next(eg.backward_steps(tape, y, [a, b]))
    >>> step.record.primitive.rule, [float(c) for c in step.contributions]
    ('∂a = g·b, ∂b = g·a', [5.0, 2.0])
    """

    __slots__ = ("record", "upstream", "contributions")

    def __init__(self, record: Record, upstream: tuple[Tensor, ...],
                 contributions: tuple[Tensor | None, ...]):
        self.record = record
        self.upstream = upstream
        self.contributions = contributions

    def __repr__(self) -> str:
        got = ", ".join("-" if c is None else str(c.shape) for c in self.contributions)
        return f"<BackwardStep {self.record.op}: upstream {self.upstream[0].shape} -> ({got})>"


def backward_steps(tape: Any, target: Any, sources: Any,
                   output_gradients: Any = None) -> Iterator[BackwardStep]:
    """Walk backwards from ``target`` to ``sources`` over what ``tape`` recorded, one step per visited op.

    ``tape``: a `GradientTape` (not consumed: a non-persistent tape may still answer `gradient`
    afterwards), or a list of `Record`s in execution order (e.g. several tapes' records merged).
    ``target``: a tensor or a list of them (their sum); ``sources``: a tensor or a nested structure.
    The steps come in visit order; the gradient of a source is the sum of the contributions it gets.

    >>> import engine as eg
    >>> w = eg.Variable([1.0, 2.0])
    >>> with eg.GradientTape() as tape:
    ...     loss = eg.sum(w * 3.0)
    >>> [s.record.op for s in eg.backward_steps(tape, loss, w)]
    ['sum', 'multiply', 'read_variable']
    """
    if isinstance(tape, list | tuple):
        records = list(tape)
        watched = None
    else:
        if getattr(tape, "_used", False):
            raise RuntimeError("backward_steps: this non-persistent tape has answered its gradient call "
                               "and freed its records. Use eg.GradientTape(persistent=True).")
        records = list(tape._records)
        watched = tape._watched
    flat_sources = check_sources(nest.flatten(sources), "backward_steps")
    ids = [s._uid for s in flat_sources if watched is None or s._uid in watched]
    seeds = seed_gradients(nest.flatten(target), output_gradients, "backward_steps")
    steps: list[BackwardStep] = []
    walk(records, seeds, ids, on_step=steps.append)
    return iter(steps)


def seed_gradients(targets: list[Any], output_gradients: Any,
                   op: str = "GradientTape.gradient") -> list[tuple[Tensor, Tensor]]:
    """(target, its upstream gradient) pairs: ones, or the given ``output_gradients``, checked here
    (count, shape, dtype, device) so that an error names ``op``'s argument, not an op inside the walk.

    >>> import engine as eg
    >>> [float(g) for _, g in seed_gradients([eg.constant(2.0)], None)]
    [1.0]
    """
    for t in targets:
        if not isinstance(t, Tensor):
            raise ValueError(f"{op}: the target must be a Tensor, got {type(t).__name__}.")
    if output_gradients is None:
        return [(t, ones_like(t)) for t in targets]
    given = nest.flatten(output_gradients)
    if len(given) != len(targets):
        raise ValueError(f"{op}: output_gradients has {len(given)} entries for {len(targets)} targets; "
                         "give one per target (None for ones).")
    return [(t, ones_like(t) if g is None else _checked_upstream(g, t, i, len(given), op))
            for i, (t, g) in enumerate(zip(targets, given))]


def _checked_upstream(g: Any, t: Tensor, i: int, n: int, op: str) -> Tensor:
    """The given upstream gradient ``g`` of target ``t`` as a tensor of ``t``'s dtype, shape and device,
    or the error that names ``op``'s ``output_gradients`` argument."""
    what = "output_gradients" if n == 1 else f"output_gradients[{i}]"
    if not isinstance(g, Tensor):
        try:
            g = convert_to_tensor(g, dtype=t.dtype)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"{op}: {what} cannot be converted to its target's dtype {t.dtype}: "
                            f"{exc}") from None
    if g.dtype != t.dtype:
        raise TypeError(f"{op}: {what} has dtype {g.dtype} but its target has dtype {t.dtype}; the "
                        f"upstream gradient must match its target. Convert it: eg.cast(g, '{t.dtype}').")
    if g.shape != t.shape:
        raise ValueError(f"{op}: {what} has shape {g.shape} but its target has shape {t.shape}; the "
                         "upstream gradient must have its target's shape.")
    if g._device is not t._device:
        raise ValueError(f"{op}: {what} is on {g.device} but its target is on {t.device}. Move it "
                         f"first: g.to('{t.device}').")
    return g


def check_sources(sources: list[Any], where: str) -> list[Tensor]:
    """``sources`` checked: each a Tensor or Variable, else a ValueError that says what to do.

    >>> check_sources([3.0], "gradient")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: gradient: sources must be Tensors or Variables, got float. Convert with ...
    """
    for s in sources:
        if not isinstance(s, Tensor):
            raise ValueError(
                f"{where}: sources must be Tensors or Variables, got {type(s).__name__}. "
                "Convert with eg.constant and watch it inside the tape."
            )
    return sources


def input_gradient(record: Record, index: int, g: Tensor) -> Tensor | None:
    """What input ``index`` of ``record`` receives from upstream gradient ``g``: the primitive's VJP,
    summed back to the input's shape where the op broadcast it.

    >>> import engine as eg
    >>> x = eg.constant([1.0, 2.0])
    >>> with eg.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = x * 10.0
    >>> input_gradient(tape.records[0], 1, eg.ones(2)).numpy()   # 10.0 was broadcast: summed back
    array(3., dtype=float32)
    """
    x = record.saved_inputs[index]
    if x._data.dtype.kind == "c" and not (record.prim.complex_grad and
                                          record.saved_output._data.dtype.kind == "c"):
        _refuse_complex(record, index)
    prim = record.prim
    if prim.vjp_per_input and not record.params:  # (hot path: `Primitive.vjp`'s common case, inlined)
        gi = prim.vjps[index](g, record.saved_output, *record.saved_inputs)
    else:
        gi = prim.vjp(index, g, record.saved_output, record.saved_inputs, record.params)
    if gi is None:
        return None
    data = gi._data
    if data.shape != x._data.shape:
        gi = unbroadcast(gi, x._data.shape)
        data = gi._data
    if data.dtype is not x._data.dtype and data.dtype != x._data.dtype:  # (same object: no compare)
        raise TypeError(
            f"Internal error in the gradient of {record.op}: input {index} has dtype {x.dtype} but its "
            f"gradient has dtype {gi.dtype}. Please report this."
        )
    return gi


def _refuse_complex(record: Record, index: int) -> None:
    """A gradient through a complex input is computed only by ops whose VJP holds for complex numbers
    (``Primitive.complex_grad``: holomorphic or linear ops, gradient g·f'(z), the transpose convention
    of JAX; TensorFlow returns its conjugate). Any other op (abs, sign, maximum, a complex-to-real cast,
    ...) is a clear error here, never a wrong number."""
    names = record.prim.inputs
    name = names[index] if index < len(names) else f"input {index}"
    raise TypeError(
        f"gradient of {record.op}: its input {name} is complex ({record.inputs[index].dtype}), and "
        f"{record.op} has no complex gradient (it is not holomorphic, or not written for complex "
        "numbers; the ops that have one are those with Primitive.complex_grad). Differentiate real "
        "quantities: keep real and imaginary parts as two float tensors, or wrap the complex part in "
        "eg.stop_gradient."
    )


def walk(records: Sequence[Record], seeds: list[tuple[Tensor, Tensor]], source_ids: list[int],
         on_step: Callable[[BackwardStep], Any] | None = None, release: bool = False) -> dict[int, Tensor]:
    """The backward walk over ``records`` (execution order), iterative: the gradient of each source
    (tensor id → gradient; a source that received nothing is absent). ``on_step`` is called with a
    `BackwardStep` per visited record (`backward_steps` passes one; `GradientTape.gradient` does not).
    ``release``: pop each record off ``records`` (then the non-persistent tape's own list) as the walk
    passes it, so that its arrays go unless another tape holds the record (as TensorFlow's
    non-persistent tape lets go during its one gradient call).

    >>> import engine as eg
    >>> x = eg.constant(2.0)
    >>> with eg.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = x * x
    >>> float(walk(tape.records, [(y, eg.constant(1.0))], [x.id])[x.id])
    4.0
    """
    add = REGISTRY["add"]
    # 1. Which tensors depend on a source? (a forward sweep; everything else needs no gradient)
    depends = set(source_ids)
    for r in records:
        for t in r.saved_inputs:
            if t._uid in depends:
                depends.add(r.saved_output._uid)
                break

    # 2. Seed the targets, then walk the records backwards, accumulating input gradients.
    grads: dict[int, Tensor] = {}
    for target, seed in seeds:
        uid = target._uid
        grads[uid] = add(grads[uid], seed) if uid in grads else seed
    keep = set(source_ids)
    # While nothing records the walk (no tape, no eg.function trace), sums of gradients need not be
    # differentiable: add the arrays directly.
    sums_are_ops = _listeners.walk_is_recorded()
    # Listeners hear each step (a trace names its ops gradients/<op>_grad/..., a memory profile measures)
    listeners = _listeners.active()
    # The records left to visit, last first. A non-persistent tape's walk pops the tape's own list: the
    # tape lets go of each record (and so of the arrays it keeps) once the walk has passed it.
    pending = records if release else list(records)
    while pending:
        r = pending.pop()
        out_id = r.saved_output._uid
        if out_id not in depends:
            continue
        g = grads.get(out_id) if out_id in keep else grads.pop(out_id, None)
        if g is None:
            continue
        for listener in listeners:
            listener.step_begin(r)
        given = _step(r, g, grads, depends, sums_are_ops)
        if on_step is not None:
            on_step(BackwardStep(r, (g,), tuple(given)))
        if listeners:
            op, op_id = r.prim.name, r.op_id
            del r  # (a popped record's arrays go before a memory profile measures)
            for listener in reversed(listeners):
                listener.step_end(op, op_id)
    return {i: grads[i] for i in keep if i in grads}


def _step(r: Record, g: Tensor, grads: dict[int, Tensor], depends: set[int],
          sums_are_ops: bool) -> list[Tensor | None]:
    """Visit ``r`` with its upstream gradient ``g``: each input that leads to a source receives its
    contribution, added to that input's gradient in ``grads`` (a tensor's gradient is the sum of the
    contributions it receives). Returns the contributions, one per input (None where none flows)."""
    given = []
    for i, x in enumerate(r.saved_inputs):
        uid = x._uid
        gi = input_gradient(r, i, g) if uid in depends else None
        given.append(gi)
        if gi is None:
            continue
        prev = grads.get(uid)
        if prev is None:
            grads[uid] = gi
        elif sums_are_ops or prev._device.kind == "gpu":  # (GPUs: let `add` make the device current)
            grads[uid] = REGISTRY["add"](prev, gi)
        else:  # nothing records this walk: add the arrays, no op needed (`Tensor._make`, inlined)
            total = grads[uid] = _new(Tensor)
            total._data, total._device, total._uid, total.name = (prev._data + gi._data, prev._device,
                                                                  next(_uids), None)
    return given
