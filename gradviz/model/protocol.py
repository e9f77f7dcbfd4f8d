"""The tape protocol (API.md, "Drawing an engine you wrote"): one reader for every engine's tape.

gradviz draws any reverse-mode engine whose tape has ``tape.records``: records ``r`` in the order
the ops ran, each with ``r.op`` (a str), ``r.inputs`` and ``r.outputs`` (sequences of values).
Values are matched by identity (``is``); a value's array is ``v.value`` (called when it is a method,
as ``eg.Variable.value()`` is) if it has one, else ``v.data``, else ``v`` itself; ``v.name`` and
``v.grad`` are shown when present. Backward steps have ``.record``, ``.upstream`` and
``.contributions`` (one per input, None where no gradient flows), as ``eg.BackwardStep`` has.

This engine's tape is one implementation of the protocol and is read by the same code: `Reader`
turns records into `Op` views and values into `Value` views, and every picture is built from
those. Bad input is refused with a `ProtocolError` that names the record and what is missing.

>>> import numpy as np
>>> class V:                                    # a learner's value: an array and a name
...     def __init__(self, a, name=None): self.value, self.name = np.asarray(a, float), name
>>> class R:                                    # a learner's record
...     def __init__(self, op, inputs, outputs): self.op, self.inputs, self.outputs = op, inputs, outputs
>>> x = V(2.0, "x"); y = V(4.0, "y")
>>> op, = read_records([R("multiply", [x, x], [y])])
>>> op.op, op.primitive.symbol, [v.name for v in op.inputs], float(op.output.numpy())
('multiply', '×', ['x', 'x'], 4.0)
>>> try:
...     read_records([R("multiply", [x, "oops"], [y])])
... except ProtocolError as e:
...     print(str(e).split(". ")[0])
gv.graph: record 0 (op 'multiply'): input 1 is str 'oops', not an array
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from engine import GradientTape, Tensor, Variable, primitives
from gradviz.model import tapeinfo
from gradviz.model.checks import describe

__all__ = ["ProtocolError", "Value", "Op", "Step", "Reader", "read_records", "array_of", "host_array",
           "is_engine_tape", "shown_id"]


class ProtocolError(TypeError):
    """A tape, record or step that does not follow the tape protocol; the message says which and what."""


class Value:
    """A value on a tape as gradviz reads it: ``id`` (its key: an engine tensor's id, > 0; any other
    object, a key < 0 of its own, so that no two objects drawn together share one), ``name``,
    ``shape``, ``dtype``, ``device``, ``grad`` (a NumPy array or None), ``numpy()``."""

    __slots__ = ("obj", "id", "name", "shape", "dtype", "device", "variable", "grad", "kept", "_array",
                 "_lazy")

    def __init__(self, obj: Any, key: int, array: Any, lazy: Any, grad: np.ndarray | None, variable: bool):
        self.obj = obj
        self.id = key
        name = getattr(obj, "name", None)
        self.name = name if isinstance(name, str) and name else None
        self._array, self._lazy = array, lazy
        src = lazy if lazy is not None else array
        self.shape = tuple(src.shape)
        self.dtype = np.dtype(src.dtype)  # (an engine tensor's dtype is NumPy's; anything else was read)
        device = getattr(obj, "device", "")
        self.device = device if isinstance(device, str) else ""
        self.grad = grad
        self.variable = variable
        self.kept = getattr(obj, "kept", True) is not False  # False: the engine's tape let go of the values

    def numpy(self) -> np.ndarray:
        """The value as a host NumPy array (read once); check ``kept`` first (a tape's stand-in has none)."""
        if self._array is None:
            self._array = self._lazy.numpy()
        return self._array

    def __repr__(self) -> str:
        return f"<Value {shown_id(self.id)} {self.name or ''} {self.shape}>"


class Stand:
    """What gradviz says about an op the engine does not know: its name is its symbol; no rule text."""

    def __init__(self, name: str, n_inputs: int):
        self.name = self.symbol = name
        self.rule = ""
        self.inputs = tuple(f"x{i}" for i in range(n_inputs)) or ("x",)
        self.elementwise = False
        self.differentiable = True


class Op:
    """A record as gradviz reads it: ``op``, ``inputs``, ``outputs`` and ``output`` (`Value`s),
    ``primitive`` (``eg.primitives[op]`` when that name exists), ``params``, ``source`` (the record),
    ``key`` (its identity: the record object's, never shared with another record), ``order`` (when it
    ran), ``op_id`` (only shown: the record's own ``op_id``, else its place on the tape) and ``repeats``
    (how many times the tape lists this very record: drawn once)."""

    __slots__ = ("op", "op_id", "key", "order", "repeats", "inputs", "outputs", "primitive", "params",
                 "is_variable_read", "source")

    def __init__(self, source: Any, op: str, op_id: int, inputs: tuple[Value, ...],
                 outputs: tuple[Value, ...],
                 primitive: Any, params: dict, key: int | None = None, order: int | None = None):
        self.source, self.op, self.op_id = source, op, op_id
        self.key = op_id if key is None else key
        self.order = op_id if order is None else order
        self.repeats = 1
        self.inputs, self.outputs = inputs, outputs
        self.primitive, self.params = primitive, params
        self.is_variable_read = getattr(source, "is_variable_read", False) is True

    @property
    def output(self) -> Value:
        """The first output (what a graph draws the op's arrow to)."""
        return self.outputs[0]

    def __repr__(self) -> str:
        return f"<Op #{self.op_id} {self.op}>"


class Step:
    """A backward step as gradviz reads it: ``record`` (an `Op`), ``upstream`` and ``contributions``
    (NumPy arrays, None where no gradient flows), ``source`` (the step itself)."""

    __slots__ = ("record", "upstream", "contributions", "source")

    def __init__(self, source: Any, record: Op, upstream: tuple, contributions: tuple):
        self.source, self.record, self.upstream, self.contributions = source, record, upstream, contributions


def array_of(obj: Any) -> Any:
    """The object holding ``obj``'s array, by the protocol: ``.value`` (called when a method), else
    ``.data``, else ``obj`` (a NumPy array is itself, whatever its ``.data`` holds).

    >>> array_of(np.ones(2)).shape, array_of(type("V", (), {"data": [1.0, 2.0]})())
    ((2,), [1.0, 2.0])
    """
    if isinstance(obj, np.ndarray):
        return obj
    value = getattr(obj, "value", None)
    if callable(value) and not hasattr(value, "shape"):
        value = value()  # eg.Variable.value()
    if value is None:
        value = getattr(obj, "data", None)
    return obj if value is None else value


def host_array(held: Any) -> np.ndarray | None:
    """``held`` as a host NumPy array, or None when it is no array: ``numpy.asarray`` (NumPy arrays,
    lists, anything with ``__array__``: a PyTorch tensor), else ``.get()`` (a CuPy array), else
    ``.detach().cpu().numpy()`` or ``.numpy()`` (a tensor that needs it); an engine tensor through
    ``.numpy()``. The dtype is read from the array, whatever type the object's ``.dtype`` is.

    >>> host_array([1.0, 2.0]).dtype, host_array("x").dtype.kind, host_array(object()).dtype.kind
    (dtype('float64'), 'U', 'O')
    """
    if isinstance(held, np.ndarray):
        return held
    if isinstance(held, _engine_types()[0]):
        return held.numpy()
    try:
        return np.asarray(held)
    except Exception:  # noqa: BLE001  (e.g. CuPy refuses the implicit copy: ask it explicitly)
        pass
    ways = (lambda h: h.get(), lambda h: h.detach().cpu().numpy(), lambda h: h.numpy())
    for way in ways:
        try:
            return np.asarray(way(held))
        except Exception:  # noqa: BLE001  (not this kind of array: try the next way)
            continue
    return None


def _one_upstream(upstream: Any, shape: tuple) -> Any:
    """A single-output record's upstream as a 1-tuple: the bare array (``g``) or ``(g,)``/``[g]``.

    >>> [np.shape(u) for u in _one_upstream(np.ones(3), (3,))], _one_upstream((2.0,), ())
    ([(3,)], (2.0,))
    """
    if upstream is None or isinstance(upstream, str | bytes):
        return upstream
    if isinstance(upstream, tuple | list):
        if len(upstream) == 1:
            return (upstream[0],)
        if not upstream:
            return ()
    return (upstream,)


def shown_id(key: int) -> str:
    """How a value's key is written for a reader: ``#7`` for the engine's tensor 7, ``v3`` for the
    third value of another engine that was read (its key is -3).

    >>> shown_id(7), shown_id(-3)
    ('#7', 'v3')
    """
    return f"#{key}" if key >= 0 else f"v{-key}"


def _engine_types() -> tuple[type, type, type]:
    return Tensor, Variable, GradientTape


def is_engine_tape(tape: Any) -> bool:
    """Whether ``tape`` is this engine's `GradientTape` (or a non-empty list of them).

    >>> import engine as eg
    >>> is_engine_tape(eg.GradientTape()), is_engine_tape(object())
    (True, False)
    """
    cls = _engine_types()[2]
    items = list(tape) if isinstance(tape, list | tuple) else [tape]
    return bool(items) and all(isinstance(t, cls) for t in items)


def _what(position: int, r: Any, noun: str = "record") -> str:
    op = getattr(r, "op", None)
    return f"{noun} {position}" + (f" (op {op!r})" if isinstance(op, str) else "")


class Reader:
    """Reads records, values and steps of any engine into `Op`, `Value` and `Step` views, matching
    values by identity (the same object is one `Value`, one node)."""

    def __init__(self, where: str = "gradviz"):
        self.where = where
        self.values: dict[int, Value] = {}  # id(obj) → its view
        self._ops: dict[int, Op] = {}  # id(record) → its view
        self._keep: list[Any] = []  # the objects read, kept alive so that id() stays theirs
        self._next = 1  # the next key < 0 of an object that is no engine tensor is -_next
        self._next_op = 1  # ... and of a record that is no engine tape's

    def _fail(self, where: str, what: str) -> ProtocolError:
        return ProtocolError(f"{self.where}: {where}: {what}")

    def key(self, obj: Any) -> int | None:
        """The `Value` id of ``obj`` when it was read (matched by identity), else None."""
        v = self.values.get(id(obj))
        return v.id if v is not None and v.obj is obj else None

    def key_of_op(self, record: Any) -> int | None:
        """The key of ``record``'s `Op` view when it was read (matched by identity), else None."""
        view = self._ops.get(id(record))
        return view.key if view is not None and view.source is record else None

    def value(self, obj: Any, where: str = "the value") -> Value:
        """The view of one value (the same view for the same object)."""
        known = self.values.get(id(obj))
        if known is not None and known.obj is obj:
            return known
        tensor, variable, _ = _engine_types()
        held = array_of(obj)
        lazy = held if isinstance(held, tensor) else None  # an engine tensor: read from its device once
        array = None
        if lazy is None:
            array = host_array(held)
            if array is None or array.dtype.kind not in "biufc":
                raise ProtocolError(f"{self.where}: {where} is {describe(obj)}, not an array. A value "
                                    "must be an array, or have .value or .data holding one (anything "
                                    "numpy.asarray takes).")
        grad = getattr(obj, "grad", None)
        if grad is not None:
            grad = host_array(array_of(grad))
            if grad is not None and grad.dtype.kind not in "biufc":
                grad = None
        if isinstance(obj, tensor):
            key = obj.id  # the engine's own id (> 0)
        else:
            key, self._next = -self._next, self._next + 1  # a key of its own, never an engine id
        view = Value(obj, key, array, lazy, grad, isinstance(obj, variable))
        self.values[id(obj)] = view
        self._keep.append(obj)
        return view

    def record(self, r: Any, position: int, engine: bool = False) -> Op:
        """The view of one record (``position``: its place on the tape, for messages and shown as its
        op id when it has none; ``engine``: a record of this engine's tapes, whose ``op_id`` is its
        identity across tapes). The same record object is the same view."""
        known = self._ops.get(id(r))
        if known is not None and known.source is r:
            return known
        op = getattr(r, "op", None)
        here = _what(position, r)
        if not isinstance(op, str):
            got = "no .op" if op is None else f".op = {op!r}, not a str"
            raise self._fail(here, f"{type(r).__name__} has {got}. Give each record the op's name as a "
                             "str (r.op = 'multiply'), and its .inputs and .outputs.")
        seqs = []
        for field in ("inputs", "outputs"):
            seq = getattr(r, field, None)
            if not isinstance(seq, Sequence) or isinstance(seq, str | bytes) or hasattr(seq, "shape"):
                got = "none" if seq is None else f"a {type(seq).__name__}"
                raise self._fail(here, f"has {got} for .{field}: it must be a list or tuple of values "
                                 f"(r.{field} = [a, b]), even when there is only one.")
            seqs.append(seq)
        if not seqs[1]:
            raise self._fail(here, "has no outputs: r.outputs must hold the value the op made.")
        ins = tuple(self.value(x, f"{here}: input {i}") for i, x in enumerate(seqs[0]))
        outs = tuple(self.value(x, f"{here}: output {i}") for i, x in enumerate(seqs[1]))

        prim = primitives.get(op) or Stand(op, len(ins))
        params = getattr(r, "params", None)
        op_id = getattr(r, "op_id", None)
        op_id = op_id if isinstance(op_id, int) and not isinstance(op_id, bool) else position
        key = order = None  # an engine record: its op_id
        if not engine:  # any other record: a key < 0 of its own (two records may share an op_id)
            key, order, self._next_op = -self._next_op, self._next_op, self._next_op + 1
        view = Op(r, op, op_id, ins, outs, prim, dict(params) if isinstance(params, dict) else {},
                  key=key, order=order)
        self._ops[id(r)] = view
        self._keep.append(r)
        return view

    def step(self, s: Any, position: int) -> Step:
        """The view of one backward step, checked against its record (one contribution per input)."""
        here = f"step {position}"
        r = getattr(s, "record", None)
        if r is None:
            raise self._fail(here, f"{type(s).__name__} has no .record: a step needs .record (the record "
                             "it visits), .upstream and .contributions.")
        op = self.record(r, self._ops[id(r)].op_id if id(r) in self._ops else position)
        here = f"step {position} (op {op.op!r})"
        upstream = getattr(s, "upstream", None)
        if len(op.outputs) == 1:  # one output: the bare array, or a 1-tuple of it
            upstream = _one_upstream(upstream, op.outputs[0].shape)
        for field, seq in (("upstream", upstream), ("contributions", getattr(s, "contributions", None))):
            if not isinstance(seq, Sequence) or isinstance(seq, str | bytes):
                per = "output of the record" if field == "upstream" else (
                    "input of the record, None where no gradient flows")
                raise self._fail(here, f"has no .{field} tuple: give one per {per}.")
        contribs = tuple(s.contributions)
        if len(contribs) != len(op.inputs):
            raise self._fail(here, f"has {len(contribs)} contribution(s) for {len(op.inputs)} input(s) of "
                             "its record: give one per input, in the record's order, None where no "
                             "gradient flows.")
        arrays = []
        for i, c in enumerate(contribs):
            if c is None:
                arrays.append(None)
                continue
            a = self._array(c, f"{here}: contribution {i}")
            if a.shape != op.inputs[i].shape:
                raise self._fail(here, f"contribution {i} has shape {a.shape} but input {i} has shape "
                                 f"{op.inputs[i].shape}: a gradient has its input's shape (sum it over the "
                                 "axes the op broadcast).")
            arrays.append(a)
        upstream = tuple(self._array(u, f"{here}: upstream {i}") for i, u in enumerate(upstream))
        if not upstream:
            raise self._fail(here, "has an empty .upstream: give the gradient arriving at the record's "
                             "output.")
        return Step(s, op, upstream, tuple(arrays))

    def _array(self, obj: Any, where: str) -> np.ndarray:
        a = host_array(array_of(obj))
        if a is None or a.dtype.kind not in "biufc":
            raise ProtocolError(f"{self.where}: {where} is {describe(obj)}, not an array of numbers.")
        return a


def read_records(records: Iterable[Any], where: str = "gv.graph", reader: Reader | None = None) -> list[Op]:
    """The `Op` view of every record, in order (``reader``: share value identities with other reads).

    >>> import engine as eg
    >>> x = eg.constant(3.0)
    >>> with eg.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = x * x
    >>> [(o.op, o.output.id == y.id, o.inputs[0].id == x.id) for o in read_records(tape.records)]
    [('multiply', True, True)]
    """
    reader = reader or Reader(where)
    if isinstance(records, str | bytes) or not isinstance(records, Iterable):
        raise ProtocolError(f"{where}: tape.records must be a list of records in the order the ops ran, "
                            f"got {type(records).__name__}.")
    ops: list[Op] = []
    listed: dict[int, int] = {}  # id(view) → how many times the tape lists its record
    for k, r in enumerate(records):
        op = reader.record(r, k)
        if id(op) in listed:  # the very same record again: drawn once, with a note
            listed[id(op)] += 1
            continue
        listed[id(op)] = 1
        ops.append(op)
    repeated = [op for op in ops if listed[id(op)] > 1]
    for op in ops:
        op.repeats = listed[id(op)]
    if repeated:
        first = repeated[0]
        warnings.warn(f"{where}: tape.records lists the same record more than once (record {first.op_id}, "
                      f"op {first.op!r}: {first.repeats} times; {len(repeated)} record(s) in all); each is "
                      "drawn once. Append a record once, when its op runs: a backward walk over this tape "
                      "would visit it again.", stacklevel=3)
    return ops


class Reading:
    """A tape read through the protocol: ``rows`` (each `Op` with the indices of the engine tapes that
    recorded it), ``tapes`` (this engine's tapes; empty for another engine's tape), the `Reader`."""

    def __init__(self, rows: list[tuple[Op, list[int]]], tapes: list[Any], reader: Reader):
        self.rows, self.tapes, self.reader = rows, tapes, reader

    @property
    def ops(self) -> list[Op]:
        return [op for op, _ in self.rows]

    @property
    def engine(self) -> bool:
        """Whether these are this engine's tapes (watched tensors, tape state and its walk available)."""
        return bool(self.tapes)


def read_tape(tape: Any, where: str = "gv.graph", reader: Reader | None = None) -> Reading:
    """Read ``tape``: this engine's tape (or a list of them, their records merged by ``op_id``) or any
    object with ``.records`` (the protocol); either way each record goes through the same `Reader`.

    >>> import numpy as np
    >>> class Tape:
    ...     records = [type("R", (), {"op": "exp", "inputs": [np.zeros(2)], "outputs": [np.ones(2)]})()]
    >>> reading = read_tape(Tape())
    >>> [o.op for o in reading.ops], reading.engine
    (['exp'], False)
    >>> try:
    ...     read_tape(3.0)
    ... except ProtocolError as e:
    ...     print(str(e)[:58])
    gv.graph: the tape must be an eg.GradientTape (or a list o
    """
    reader = reader or Reader(where)
    if is_engine_tape(tape):
        tapes = tapeinfo.as_tapes(tape, where)
        merged = tapeinfo.merged_records(tapes)
        rows = [(reader.record(r, r.op_id, engine=True), which) for r, which in merged]
        return Reading(rows, tapes, reader)
    records = getattr(tape, "records", None)
    if records is None:
        raise ProtocolError(f"{where}: the tape must be an eg.GradientTape (or a list of them) or your "
                            "own engine's tape with .records (the ops in the order they ran), got "
                            f"{describe(tape)}.")
    return Reading([(op, [0]) for op in read_records(records, where, reader)], [], reader)
