"""What the memory widget draws: the numbers of one or more memory profiles, read once, no drawing.

A profile is what ``eg.memory_profile`` returns (any object shaped like ``eg.MemoryProfile``:
``.peak_bytes``, ``.saved_peak_bytes``, ``.timeline`` of events with ``.phase`` "forward" or
"backward", ``.op``, ``.scope``, ``.alive_bytes``, ``.saved_bytes``, and optionally ``.kind``, "op"
or "step", and ``.saved_by_scope``). `read_profile` checks it and
keeps its numbers as arrays (`MemoryRun`); gradviz measures nothing itself.

The stacked area splits each event's ``saved_bytes`` by layer (name scope): as the engine reports it
(each event's ``saved_by_scope``, by the scope of the op that keeps each array) or, for a profile that
does not report it, from the timeline: what an event adds to the bytes kept for backward belongs to
its scope; what a backward step lets go is taken from its own scope first, then from the scopes that
grew last (the walk frees in the reverse order of the forward). Each row of ``saved_by_scope`` sums to
the profile's ``saved_bytes`` at that event, exactly.

>>> from types import SimpleNamespace as E
>>> events = [E(phase="forward", op="MatMul", scope="dense", alive_bytes=300, saved_bytes=100),
...           E(phase="forward", op="Tanh", scope="act", alive_bytes=400, saved_bytes=150),
...           E(phase="backward", op="Tanh", scope="act", alive_bytes=350, saved_bytes=100),
...           E(phase="backward", op="MatMul", scope="dense", alive_bytes=200, saved_bytes=0)]
>>> run = read_profile(E(peak_bytes=400, saved_peak_bytes=150, timeline=events, by_scope={}), "step")
>>> run.scopes, run.saved_by_scope.tolist(), run.kept.tolist(), run.first_backward
(('dense', 'act'), [[100, 0], [100, 50], [100, 0], [0, 0]], [100, 50, -50, -100], 2)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from gradviz.model.checks import describe

__all__ = ["MemoryRun", "read_profile", "read_profiles", "fold_scopes", "cursor_grid", "NO_SCOPE",
           "MAX_SCOPES", "MAX_PROFILES", "CURSOR_POSITIONS"]

NO_SCOPE = "(no scope)"  # the stacked area's name for the ops outside every name scope
MAX_SCOPES = 7  # scopes drawn apart; the smaller ones share one band, "other scopes"
OTHER = "other scopes"
MAX_PROFILES = 6  # profiles side by side, at most (each a panel of the picture)
CURSOR_POSITIONS = 401  # the cursor slider's positions at most; beyond, evenly spaced events
PHASES = ("forward", "backward")
KINDS = ("op", "step")
PROFILE = ("an eg.MemoryProfile (what eg.memory_profile(fn, *args) returns): .peak_bytes, "
           ".saved_peak_bytes and a .timeline of events with .phase, .op, .scope, .alive_bytes, "
           ".saved_bytes")


@dataclass(frozen=True)
class MemoryRun:
    """One profile's numbers, one entry per event of its timeline."""

    label: str
    phases: tuple[str, ...]  # "forward" / "backward"
    kinds: tuple[str, ...]  # "op" (an op ran) / "step" (a backward step: an op's VJP)
    ops: tuple[str, ...]
    event_scopes: tuple[str, ...]  # each event's scope (`NO_SCOPE` for none)
    alive: np.ndarray  # bytes alive after each event (int64)
    saved: np.ndarray  # bytes tapes keep for backward after each event (int64)
    scopes: tuple[str, ...]  # the stacked area's bands, in the order they first grew
    saved_by_scope: np.ndarray  # events × scopes; each row sums to ``saved``
    peak_bytes: int
    saved_peak_bytes: int

    @property
    def events(self) -> int:
        return len(self.ops)

    @property
    def kept(self) -> np.ndarray:
        """What each event changed in the bytes kept for backward: > 0 an op kept arrays, < 0 a
        backward step let them go."""
        return np.diff(self.saved, prepend=0)

    @property
    def first_backward(self) -> int | None:
        """The index of the first backward event (None: the profile ran no backward pass)."""
        return next((k for k, p in enumerate(self.phases) if p == "backward"), None)

    @property
    def counts(self) -> dict[str, int]:
        """How many ops ran (``"op"``: forward ops, and in the backward pass the VJPs' ops and any
        recomputation) and how many backward steps the walk took (``"step"``)."""
        return {k: self.kinds.count(k) for k in KINDS}

    def event(self, k: int) -> dict[str, Any]:
        """Event ``k`` as the cursor shows it: phase, op, scope, bytes alive and kept, what it changed,
        the kept bytes by scope (the non-zero ones)."""
        return {"index": k, "phase": self.phases[k], "kind": self.kinds[k], "op": self.ops[k],
                "scope": self.event_scopes[k],
                "alive_bytes": int(self.alive[k]), "saved_bytes": int(self.saved[k]),
                "kept": int(self.kept[k]),
                "by_scope": {s: int(b) for s, b in zip(self.scopes, self.saved_by_scope[k]) if b}}


def _field(where: str, event: Any, k: int, name: str) -> Any:
    try:
        return getattr(event, name)
    except AttributeError:
        raise TypeError(f"{where}: event {k} of the timeline has no .{name}; expected {PROFILE}, "
                        f"got an event {describe(event)}.") from None


def _bytes(where: str, what: str, value: Any) -> int:
    """A count of bytes: a whole number >= 0 (a float with no fraction is taken)."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise TypeError(f"{where}: {what} must be a whole number of bytes, got {describe(value)}.")
    if not math.isfinite(value) or value < 0 or value != int(value):
        raise ValueError(f"{where}: {what} must be a whole number of bytes >= 0, got {value!r}.")
    return int(value)


def read_profile(profile: Any, label: str, where: str = "gv.memory", fold: bool = True) -> MemoryRun:
    """The `MemoryRun` of ``profile`` (an ``eg.MemoryProfile``, or any object shaped like one), or a
    `TypeError` / `ValueError` naming what is missing or wrong. ``fold``: at most `MAX_SCOPES` bands
    (`fold_scopes`; `read_profiles` folds several runs together instead)."""
    missing = [a for a in ("timeline", "peak_bytes", "saved_peak_bytes") if not hasattr(profile, a)]
    if missing:
        raise TypeError(f"{where}: the profile must be {PROFILE}, or a function to profile; got "
                        f"{describe(profile)} (it has no .{', .'.join(missing)}).")
    timeline = list(profile.timeline)
    if not timeline:
        raise ValueError(f"{where}: the profile {label!r} has no events (did the function run any op "
                         "under a GradientTape?).")
    phases, kinds, ops, scopes, alive, saved = [], [], [], [], [], []
    for k, e in enumerate(timeline):
        phase = _field(where, e, k, "phase")
        if phase not in PHASES:
            raise ValueError(f"{where}: event {k}'s .phase must be 'forward' or 'backward', got {phase!r}.")
        phases.append(phase)
        # an event's kind: "op" or "step" (a profile without kinds: forward events are ops, backward steps)
        kind = getattr(e, "kind", "op" if phase == "forward" else "step")
        if kind not in KINDS:
            raise ValueError(f"{where}: event {k}'s .kind must be 'op' or 'step', got {kind!r}.")
        kinds.append(kind)
        ops.append(str(_field(where, e, k, "op")))
        scope = _field(where, e, k, "scope")
        scopes.append(_scope_name(scope))
        alive.append(_bytes(where, f"event {k}'s .alive_bytes", _field(where, e, k, "alive_bytes")))
        saved.append(_bytes(where, f"event {k}'s .saved_bytes", _field(where, e, k, "saved_bytes")))
    saved_a = np.asarray(saved, np.int64)
    reported = [getattr(e, "saved_by_scope", None) for e in timeline]
    if all(isinstance(r, Mapping) for r in reported):  # the engine says which scope keeps each array
        names, by_scope = _reported_by_scope(where, reported, saved_a)
    else:
        names, by_scope = _split_by_scope(scopes, saved_a)
    run = MemoryRun(str(label), tuple(phases), tuple(kinds), tuple(ops), tuple(scopes),
                    np.asarray(alive, np.int64), saved_a, names, by_scope,
                    _bytes(where, ".peak_bytes", profile.peak_bytes),
                    _bytes(where, ".saved_peak_bytes", profile.saved_peak_bytes))
    return fold_scopes([run])[0] if fold else run


def _scope_name(scope: Any) -> str:
    return str(scope).strip("/") if scope else NO_SCOPE


def _reported_by_scope(where: str, reported: Sequence[Mapping[Any, Any]],
                       saved: np.ndarray) -> tuple[tuple[str, ...], np.ndarray]:
    """The bands of the stacked area from each event's ``saved_by_scope`` (scope → bytes)."""
    order: list[str] = []
    for r in reported:
        order += [_scope_name(s) for s, b in r.items() if b and _scope_name(s) not in order]
    where_of = {s: j for j, s in enumerate(order)}
    rows = np.zeros((len(reported), len(order)), np.int64)
    for k, r in enumerate(reported):
        for s, b in r.items():
            rows[k, where_of[_scope_name(s)]] += _bytes(where, f"event {k}'s .saved_by_scope[{s!r}]", b) \
                if b else 0
        if rows[k].sum() != saved[k]:
            raise ValueError(f"{where}: event {k}'s .saved_by_scope adds up to {int(rows[k].sum()):,} bytes, "
                             f"its .saved_bytes is {int(saved[k]):,}: the profile contradicts itself.")
    return tuple(order), rows


def _split_by_scope(scopes: Sequence[str], saved: np.ndarray) -> tuple[tuple[str, ...], np.ndarray]:
    """The bands of the stacked area (see the module's docstring) and their bytes after each event."""
    order: list[str] = []
    for s, d in zip(scopes, np.diff(saved, prepend=0)):
        if d > 0 and s not in order:
            order.append(s)
    where = {s: j for j, s in enumerate(order)}
    now = np.zeros(len(order), np.int64)
    grew: list[int] = []  # bands, most recently grown last
    rows = np.zeros((len(scopes), len(order)), np.int64)
    for k, (s, d) in enumerate(zip(scopes, np.diff(saved, prepend=0))):
        if d > 0:
            j = where[s]
            now[j] += d
            if j in grew:
                grew.remove(j)
            grew.append(j)
        elif d < 0:
            free = -int(d)
            for j in ([where[s]] if s in where else []) + grew[::-1]:
                take = min(free, int(now[j]))
                now[j] -= take
                free -= take
                if not free:
                    break
        rows[k] = now
    return tuple(order), rows


def fold_scopes(runs: Sequence[MemoryRun], most: int = MAX_SCOPES) -> list[MemoryRun]:
    """``runs`` with at most ``most`` bands in all: the layers that keep the most bytes in any run keep
    their band (the same in every run, so a layer has one colour everywhere), the others share one,
    `OTHER`. Each row still sums to the run's kept bytes."""
    peak: dict[str, int] = {}
    for run in runs:
        for j, s in enumerate(run.scopes):
            peak[s] = max(peak.get(s, 0), int(run.saved_by_scope[:, j].max(initial=0)))
    if len(peak) <= most:
        return list(runs)
    kept = set(sorted(peak, key=lambda s: -peak[s])[: most - 1])
    out = []
    for run in runs:
        keep = [j for j, s in enumerate(run.scopes) if s in kept]
        rest = [j for j, s in enumerate(run.scopes) if s not in kept]
        rows = np.column_stack([run.saved_by_scope[:, keep], run.saved_by_scope[:, rest].sum(axis=1)]) \
            if rest else run.saved_by_scope
        names = tuple(run.scopes[j] for j in keep) + ((OTHER,) if rest else ())
        out.append(replace(run, scopes=names, saved_by_scope=rows))
    return out


def read_profiles(given: Any, labels: Sequence[str] | None = None,
                  where: str = "gv.memory") -> list[MemoryRun]:
    """The runs of ``given``: one profile, a list of them, or a mapping label → profile. ``labels``
    name the profiles of a list (default: "profile 1", "profile 2", ...)."""
    if isinstance(given, Mapping):
        if labels is not None:
            raise TypeError(f"{where}: labels= is for a list of profiles; a dict's keys are its labels.")
        pairs = [(str(k), v) for k, v in given.items()]
    elif isinstance(given, list | tuple):
        if labels is None:
            labels = [f"profile {i + 1}" for i in range(len(given))]
        if isinstance(labels, str) or len(labels) != len(given):
            raise ValueError(f"{where}: labels must be one text per profile ({len(given)}), got "
                             f"{describe(labels)}.")
        pairs = [(str(n), p) for n, p in zip(labels, given)]
    else:
        label = "profile" if labels is None else (labels if isinstance(labels, str) else str(list(labels)[0]))
        pairs = [(label, given)]
    if not pairs:
        raise ValueError(f"{where}: no profile given; pass {PROFILE}, or a list or dict of them.")
    if len(pairs) > MAX_PROFILES:
        raise ValueError(f"{where}: {len(pairs)} profiles side by side is too many to read; at most "
                         f"{MAX_PROFILES}.")
    if len({n for n, _ in pairs}) != len(pairs):
        raise ValueError(f"{where}: two profiles have the same label; labels: {[n for n, _ in pairs]}.")
    return fold_scopes([read_profile(p, n, where, fold=False) for n, p in pairs])


def cursor_grid(events: int, peak: int | None = None) -> list[int]:
    """The events the cursor slider offers: all of them up to `CURSOR_POSITIONS`, else evenly spaced
    ones (and ``peak``, the event where the kept bytes peak).

    >>> cursor_grid(4), len(cursor_grid(10_000)), cursor_grid(10_000, peak=7)[:3]
    ([0, 1, 2, 3], 401, [0, 7, 25])
    """
    if events <= CURSOR_POSITIONS:
        return list(range(events))
    last = CURSOR_POSITIONS - 1
    grid = {round((events - 1) * k / last) for k in range(CURSOR_POSITIONS)}
    return sorted(grid | ({int(peak)} if peak is not None else set()))
