"""What gradviz reads from tapes, through the engine's public API: records, names, tape state.

Also a registry of the tapes gradviz has been shown (weak references, so it keeps none alive),
used to say "recorded by another tape" and to list every tape that saw an op.

>>> import engine as eg
>>> x = eg.constant(2.0)
>>> with eg.GradientTape() as t:
...     t.watch(x)
...     y = x * x
>>> names_by_id({"x": x, "y": y, "_": y}) == {x.id: "x", y.id: "y"}
True
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from engine import GradientTape, Tensor, active_tapes, add, backward_steps, ones_like
from gradviz.model.checks import NAMES, expect_mapping, wrong_type

__all__ = [
    "as_tapes",
    "remember",
    "known_tapes",
    "quiet",
    "is_used",
    "merged_records",
    "names_by_id",
    "tape_labels",
    "no_records_error",
    "walk",
]

_SEEN: weakref.WeakSet = weakref.WeakSet()


def _tape_class() -> type:
    return GradientTape


def as_tapes(tape: Any, where: str = "gradviz") -> list[Any]:
    """``tape`` or a list/tuple of tapes, as a list (checked: ``where`` names the call in the error)."""
    cls = _tape_class()
    tapes = list(tape) if isinstance(tape, list | tuple) else [tape]
    for t in tapes:
        if not isinstance(t, cls):
            hint = "" if t is tape else f"(one item is {type(t).__name__})"
            raise wrong_type(where, "the tape", "an eg.GradientTape (or a list of them)", tape, hint)
    remember(tapes)
    return tapes


def remember(tapes: Iterable[Any]) -> None:
    """Add tapes to the registry of tapes gradviz knows about."""
    for t in tapes:
        _SEEN.add(t)


def known_tapes() -> list[Any]:
    """Every tape gradviz has seen that is still alive, plus the tapes active right now."""
    out = list(_SEEN)
    for t in active_tapes():
        if t not in out:
            out.append(t)
    return out


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Pause every recording tape, so that what gradviz computes is never recorded on a user's tape."""
    with contextlib.ExitStack() as stack:
        for t in active_tapes():
            if t.is_recording:
                stack.enter_context(t.stop_recording())
        yield


def is_used(tape: Any) -> bool:
    """True when a non-persistent tape has answered its one ``gradient`` call (its records are gone).

    Told from public state: such a tape still lists the tensors it watched but watches none of them.
    """
    if tape.persistent:
        return False
    watched = list(tape.watched_variables()) + list(tape.watched_tensors())
    return bool(watched) and not tape.records and not any(tape.is_watching(t) for t in watched)


def merged_records(tapes: list[Any]) -> list[tuple[Any, list[int]]]:
    """Every op recorded by any of ``tapes``, once, in execution order, with the indices of the tapes
    that recorded it (ops are matched by their shared ``op_id``)."""
    by_id: dict[int, tuple[Any, list[int]]] = {}
    for k, t in enumerate(tapes):
        for r in t.records:
            entry = by_id.setdefault(r.op_id, (r, []))
            entry[1].append(k)
    return [by_id[i] for i in sorted(by_id)]


def names_by_id(names: Mapping[str, Any] | None, where: str = "gradviz") -> dict[int, str]:
    """Tensor id → a variable name, from a mapping such as ``locals()`` (``where``: the call, for the
    error when ``names`` is not a mapping).

    Names starting with "_" (IPython's ``_``, ``_1``, ...) are skipped; lists, tuples and dicts of
    tensors one level deep give names like ``grads[0]`` and ``params['w']``.
    """
    expect_mapping(where, "names", names, NAMES)
    if not names:
        return {}

    out: dict[int, str] = {}

    def add(tensor: Tensor, name: str) -> None:
        out.setdefault(tensor.id, name)

    items = list(names.items())
    for name, obj in items:  # plain names first: they win over container entries
        if isinstance(name, str) and not name.startswith("_") and isinstance(obj, Tensor):
            add(obj, name)
    for name, obj in items:
        if not isinstance(name, str) or name.startswith("_"):
            continue
        if isinstance(obj, list | tuple) and len(obj) <= 64:
            for i, item in enumerate(obj):
                if isinstance(item, Tensor):
                    add(item, f"{name}[{i}]")
        elif isinstance(obj, dict) and len(obj) <= 64:
            for key, item in obj.items():
                if isinstance(item, Tensor):
                    add(item, f"{name}[{key!r}]")
    return out


def tape_labels(tapes: list[Any], names: Mapping[str, Any] | None) -> list[str]:
    """A label per tape: its variable name in ``names`` when there is one, else "tape 1", "tape 2"."""
    by_obj = {}
    for name, obj in (names or {}).items():
        if isinstance(name, str) and not name.startswith("_"):
            by_obj.setdefault(id(obj), name)
    return [by_obj.get(id(t), f"tape {k + 1}") for k, t in enumerate(tapes)]


def walk(records: list[Any], targets: list[Any], sources: list[Any]) -> tuple[list[Any], dict[int, Any]]:
    """The engine's backward steps over ``records`` (``eg.backward_steps``), and tensor id → d sum(targets)
    / d tensor for every tensor that received a contribution: the sums of the contributions the steps
    report (nothing is differentiated here). User tapes do not record any of it.

    >>> import engine as eg
    >>> x = eg.constant(3.0)
    >>> with eg.GradientTape() as t:
    ...     t.watch(x)
    ...     y = x * x
    >>> steps, grads = walk(t.records, [y], [x])
    >>> [s.record.op for s in steps], float(grads[x.id])
    (['multiply'], 6.0)
    """
    grads: dict[int, Any] = {}
    with quiet():
        for t in targets:
            grads[t.id] = add(grads[t.id], ones_like(t)) if t.id in grads else ones_like(t)
        steps = list(backward_steps(list(records), targets, sources))
        for step in steps:
            for x, c in zip(step.record.inputs, step.contributions):
                if c is not None:
                    grads[x.id] = add(grads[x.id], c) if x.id in grads else c
    return steps, grads


def no_records_error(where: str, tape: Any) -> ValueError:
    """The error for a tape that has nothing to show, saying why and what to do."""
    if is_used(tape):
        return ValueError(
            f"{where}: this tape is non-persistent and its gradient() has already been called, which "
            "frees its records. Create it with eg.GradientTape(persistent=True), or call "
            f"{where} before tape.gradient(...)."
        )
    return ValueError(
        f"{where}: the tape recorded no operations. Ops are recorded only inside the tape's `with` "
        "block and only on watched tensors: trainable Variables, or tensors passed to tape.watch(x)."
    )
