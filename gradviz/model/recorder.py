"""`RecordedSteps`: scalars and per-variable gradient statistics, step by step.

What TensorBoard's scalar summaries did in the seeds (``x`` and ``dydx`` written every epoch), kept
in memory. `gv.Recorder` (`gradviz.render.recorder_plot`) is these numbers with their picture,
``rec.plot()``; ``gv.flow(rec)`` draws the gradients.

>>> import engine as eg, gradviz as gv
>>> w = eg.Variable([3.0, 4.0], name="w")
>>> rec = gv.Recorder()
>>> for step in range(3):
...     with eg.GradientTape() as tape:
...         loss = eg.sum(w * w)
...     g = tape.gradient(loss, w)
...     rec.record(step, loss=loss, grads_and_vars=[(g, w)], lr=0.1)
...     _ = w.assign_sub(0.1 * g)
>>> [round(v, 2) for v in rec.scalar("loss")[1]]
[25.0, 16.0, 10.24]
>>> round(rec.gradient_stats("w")["norm"][0], 3)
10.0

Statistics per variable and step (computed in float64 on the gradient's device; one call brings
back one small vector per device, nothing else):
``norm`` (L2 norm of the gradient), ``mean`` (mean of the gradient), ``max`` (largest absolute
entry), ``update_ratio`` (‖w_now − w_prev‖ / ‖w_prev‖ between this record and the previous one
of the same variable: how much the optimizer moved the weights, relative to their size; NaN at the
first record). A ``None`` gradient (the variable did not affect the loss) is recorded as NaN, as are
NaN/inf gradients themselves: nothing is turned into a number it is not.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

import engine as eg
from engine.interop import to_numpy
from gradviz.model.checks import expect_collection, expect_integer

__all__ = ["RecordedSteps", "GRADIENT_STATS"]

#: The statistics kept for every variable at every step.
GRADIENT_STATS = ("norm", "mean", "max", "update_ratio")
#: Kept too, so that layers (groups of variables) can be summarised exactly.
_EXTRA = ("weight_norm", "update_norm", "size")


class _Fetch:
    """Numbers to bring back from the devices: tensors are stacked and copied once per device."""

    def __init__(self) -> None:
        self._items: list[Any] = []

    def add(self, value: Any) -> int:
        """Queue a one-element tensor (fetched later) or a Python float; returns its slot."""
        self._items.append(value)
        return len(self._items) - 1

    def run(self) -> list[float]:
        out: list[Any] = list(self._items)
        groups: dict[str, list[int]] = {}
        for i, v in enumerate(out):
            if _is_tensor(v):
                groups.setdefault(v.device, []).append(i)
        for device, slots in groups.items():
            with eg.device(device):
                values = eg.stack([eg.reshape(eg.cast(out[i], "float64"), ()) for i in slots]).numpy()
            for i, v in zip(slots, values.tolist()):
                out[i] = float(v)
        return [float(v) for v in out]


def _is_tensor(value: Any) -> bool:
    module = type(value).__module__
    return module.startswith("engine") and hasattr(value, "device") and hasattr(value, "numpy")


def _on_device(value: Any) -> Any:
    """A float64 engine tensor for ``value`` on its own device, read without any tape seeing it
    (a new constant is watched by no tape, so the ops computing statistics from it are not recorded)."""
    with eg.device(value.device):
        return eg.cast(eg.constant(value), "float64")  # constant(): a plain tensor, no Variable read


def _scalar_tensor(value: Any, name: str) -> Any:
    if value.size != 1:
        raise ValueError(
            f"Recorder.record: the scalar {name!r} has shape {value.shape}; only one-element values "
            f"can be recorded as scalars (e.g. eg.mean(t) or t.item())."
        )
    if value.dtype.kind not in "biuf":
        raise TypeError(f"Recorder.record: the scalar {name!r} is {value.dtype}, not a number.")
    return value


def _as_float(value: Any, name: str) -> float:
    """A recorded scalar as a Python float (a one-element tensor/array, or a number)."""
    array = to_numpy(value)
    if array.size != 1:
        raise ValueError(
            f"Recorder.record: the scalar {name!r} has shape {array.shape}; only one-element values "
            f"can be recorded as scalars (e.g. eg.mean(t) or t.item())."
        )
    if array.dtype.kind not in "biuf":
        raise TypeError(f"Recorder.record: the scalar {name!r} is {array.dtype}, not a number.")
    return float(array.reshape(()))


def _host(t: Any) -> np.ndarray:
    """A host float64 copy of a tensor / array (reading a Variable this way records nothing)."""
    return np.array(to_numpy(t), dtype=np.float64, copy=True)


def _variable_name(var: Any, index: int) -> str:
    name = getattr(var, "name", None)
    return str(name) if name else f"variable_{index}"


def layer_of(name: str) -> str:
    """The layer (name scope) a variable belongs to: ``"dense_1/kernel"`` → ``"dense_1"``."""
    return name.rsplit("/", 1)[0] if "/" in name else name


class RecordedSteps:
    """Keeps scalars and gradient statistics per step; what TensorBoard summaries did.

    ``record(step, loss=None, grads_and_vars=None, **scalars)``: call it once per step (before or
    after ``apply_gradients``, but always at the same point of the loop).

    >>> import engine as eg
    >>> import gradviz as gv
    >>> rec = gv.Recorder()
    >>> rec.record(0, loss=2.0)
    >>> rec.record(1, loss=1.5)
    >>> rec.steps, rec.scalar("loss")
    ([0, 1], ([0, 1], [2.0, 1.5]))
    """

    def __init__(self) -> None:
        self._scalars: dict[str, tuple[list[int], list[float]]] = {}
        self._grads: dict[str, dict[str, list[float]]] = {}
        # a variable's identity → its unique name in this recorder. A tensor's identity is its `id`,
        # a serial number never reused (id() is: a rebuilt model's variables would inherit the names
        # and history of dead ones); a host array is held here, so its id() cannot be reused either.
        self._var_names: dict[tuple[str, int], str] = {}
        self._held: list[Any] = []
        self._last: dict[str, np.ndarray] = {}  # the variable's value at its previous record
        self._steps: list[int] = []

    # ---- recording ----------------------------------------------------------------------------
    def record(self, step: int, loss: Any = None, grads_and_vars: Iterable[tuple[Any, Any]] | None = None,
               **scalars: Any) -> None:
        """Keep ``loss``, the other ``scalars`` and the statistics of each ``(gradient, variable)``.

        >>> rec = RecordedSteps()
        >>> rec.record(0, loss=1.5, accuracy=0.25)
        >>> rec.scalar_names
        ['loss', 'accuracy']
        """
        step = expect_integer("Recorder.record", "step", step, "an integer (the training step)")
        if not self._steps or self._steps[-1] != step:
            self._steps.append(step)
        if loss is not None:
            scalars = {"loss": loss, **scalars}
        fetch = _Fetch()
        queued = []
        for name, value in scalars.items():
            if value is None:
                continue
            value = _on_device(_scalar_tensor(value, name)) if _is_tensor(value) else _as_float(value, name)
            queued.append((name, fetch.add(value)))
        finish = self._record_gradients(step, grads_and_vars, fetch) if grads_and_vars is not None else None
        numbers = fetch.run()  # the call's one transfer per device
        for name, slot in queued:
            steps, values = self._scalars.setdefault(name, ([], []))
            steps.append(step)
            values.append(numbers[slot])
        if finish is not None:
            finish(numbers)

    def _record_gradients(self, step: int, grads_and_vars: Iterable[tuple[Any, Any]], fetch: _Fetch):
        """Queue each pair's statistics on ``fetch``; returns what stores them once fetched."""
        pairs = expect_collection("Recorder.record", "grads_and_vars", grads_and_vars,
                                  "a list of (gradient, variable) pairs, as opt.compute_gradients returns")
        rows = []
        for index, pair in enumerate(pairs):
            try:
                grad, var = pair
            except (TypeError, ValueError):
                raise TypeError(
                    "Recorder.record: grads_and_vars must be a list of (gradient, variable) pairs, as "
                    f"opt.compute_gradients returns; item {index} is {type(pair).__name__}."
                ) from None
            name = self._name_for(var, index)
            rows.append((name, self._queue_stats(name, grad, var, fetch)))

        def store(numbers: list[float]) -> None:
            for name, slots in rows:
                stats = self._grads.setdefault(name, {"step": [], **{s: [] for s in GRADIENT_STATS + _EXTRA}})
                got = {k: numbers[v] if isinstance(v, int) and not isinstance(v, bool) else v[0]
                       for k, v in slots.items()}
                moved, base = got["update_norm"], got.pop("base")
                ratio = math.nan if math.isnan(base) and math.isnan(moved) else \
                    moved / base if base > 0 else (0.0 if moved == 0 else math.inf)
                stats["step"].append(step)
                stats["update_ratio"].append(ratio)
                for k in ("norm", "mean", "max", "weight_norm", "update_norm", "size"):
                    stats[k].append(got[k])

        return store

    def _queue_stats(self, name: str, grad: Any, var: Any, fetch: _Fetch) -> dict[str, Any]:
        """Slots on ``fetch`` (or ``(value,)`` constants) for one pair's statistics."""
        nan = (math.nan,)
        slots: dict[str, Any] = {}
        if grad is None:
            slots.update(norm=nan, mean=nan, max=nan)
        elif _is_tensor(grad):
            g = _on_device(grad)
            if g.size:
                slots["norm"] = fetch.add(eg.sqrt(eg.sum(g * g)))
                slots["mean"] = fetch.add(eg.mean(g))
                slots["max"] = fetch.add(eg.max(eg.abs(g)))
            else:
                slots.update(norm=(0.0,), mean=nan, max=(0.0,))
        else:
            g = _host(grad)
            slots["norm"] = (float(np.sqrt(np.sum(g * g))) if g.size else 0.0,)
            slots["mean"] = (float(np.mean(g)) if g.size else math.nan,)
            slots["max"] = (float(np.max(np.abs(g))) if g.size else 0.0,)
        value = _on_device(var) if _is_tensor(var) else _host(var)
        sq = (lambda a: eg.sum(a * a)) if _is_tensor(var) else (lambda a: np.sum(a * a))
        root = eg.sqrt if _is_tensor(var) else np.sqrt
        add = fetch.add if _is_tensor(var) else (lambda v: (float(v),))
        slots["weight_norm"] = add(root(sq(value)))
        slots["size"] = (float(value.size),)
        previous = self._last.get(name)
        if previous is None or tuple(previous.shape) != tuple(value.shape) or \
                _is_tensor(previous) != _is_tensor(value) or \
                (_is_tensor(value) and previous.device != value.device):
            slots["update_norm"] = slots["base"] = nan
        else:
            slots["base"] = add(root(sq(previous)))
            slots["update_norm"] = add(root(sq(value - previous)))
        self._last[name] = value
        return slots

    def _name_for(self, var: Any, index: int) -> str:
        if _is_tensor(var):
            key = ("tensor", var.id)
        else:
            key = ("object", id(var))
            if key not in self._var_names:
                self._held.append(var)
        if key in self._var_names:
            return self._var_names[key]
        base = _variable_name(var, index)
        name, k = base, 1
        while name in self._var_names.values():  # two variables with one name: keep both apart
            k += 1
            name = f"{base}_{k}"
        self._var_names[key] = name
        return name

    # ---- reading ------------------------------------------------------------------------------
    @property
    def steps(self) -> list[int]:
        """Every step recorded so far, in order."""
        return list(self._steps)

    @property
    def scalar_names(self) -> list[str]:
        return list(self._scalars)

    @property
    def variable_names(self) -> list[str]:
        """The variables with gradient statistics, in the order they were first recorded."""
        return list(self._grads)

    def layers(self) -> dict[str, list[str]]:
        """Variable names grouped by layer (name scope), in order: ``{"dense_1": ["dense_1/kernel", …]}``."""
        groups: dict[str, list[str]] = {}
        for name in self._grads:
            groups.setdefault(layer_of(name), []).append(name)
        return groups

    def scalar(self, name: str) -> tuple[list[int], list[float]]:
        """``(steps, values)`` of one scalar."""
        if name not in self._scalars:
            raise KeyError(f"No scalar {name!r} was recorded; recorded: {self.scalar_names}.")
        steps, values = self._scalars[name]
        return list(steps), list(values)

    def gradient_stats(self, variable: str) -> dict[str, list[float]]:
        """``{"step": [...], "norm": [...], "mean": [...], "max": [...], "update_ratio": [...]}``
        (plus ``weight_norm``, ``update_norm`` = ‖w − w_prev‖ and ``size``, for summaries by layer)."""
        if variable not in self._grads:
            raise KeyError(f"No gradients were recorded for {variable!r}; recorded: {self.variable_names}.")
        return {k: list(v) for k, v in self._grads[variable].items()}

    def to_dict(self) -> dict[str, Any]:
        """Everything recorded, as plain lists (JSON-ready; NaN stays NaN)."""
        return {
            "steps": self.steps,
            "scalars": {n: {"step": list(s), "value": list(v)} for n, (s, v) in self._scalars.items()},
            "gradients": {n: {k: list(v) for k, v in st.items()} for n, st in self._grads.items()},
        }

    @property
    def history(self) -> dict[str, Any]:
        """The same as `to_dict()`."""
        return self.to_dict()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RecordedSteps:
        """A recorder holding what `to_dict()` returned (e.g. loaded from JSON)."""
        rec = cls()
        rec._steps = [int(s) for s in data.get("steps", [])]
        for name, series in data.get("scalars", {}).items():
            rec._scalars[name] = ([int(s) for s in series["step"]], [float(v) for v in series["value"]])
        for name, stats in data.get("gradients", {}).items():
            rec._grads[name] = {"step": [int(s) for s in stats["step"]],
                                **{s: [float(v) for v in stats[s]] for s in GRADIENT_STATS + _EXTRA
                                   if s in stats}}
        return rec

    def __len__(self) -> int:
        return len(self._steps)

    def __repr__(self) -> str:
        return (f"<Recorder {len(self._steps)} steps, scalars {self.scalar_names}, "
                f"{len(self._grads)} variables with gradient statistics>")
