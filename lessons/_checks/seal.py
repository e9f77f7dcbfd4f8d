"""Sealing: the entry points put every name of the package's modules (and of NumPy), and the exercises,
back first, and an answer that changes any of them while it is checked gets "Not yet"."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any

#: What `evaluate` returns for an answer that re-wired the checks (or NumPy) while it ran.
TAMPERED = (False, "Not yet: while it was checked, your answer replaced a function of the checks or of "
                   "NumPy (it was put back): a check judges what your code computes, so write the answer "
                   "itself.")


def seal(modules: Iterable[ModuleType], registry: dict[Any, Any], entry_points: tuple[str, ...],
         home: ModuleType, verdict: str = "evaluate") -> None:
    """Wrap the entry points (``home``'s functions of these names, wherever a module binds them) so
    that each first restores every module's names, the exercises registered so far and each of their
    fields (``object.__setattr__`` on the frozen record included; a field that is itself a record, such
    as an answer's computation, field by field too) from a snapshot held only in their
    closures (see "cannot be re-wired" in the package docstring). When anything had to be put back
    *after* the ``verdict`` entry point ran (the answer changed it while it was checked), its result
    is `TAMPERED`. Later registrations (a lesson author's experiments, the tests' demo exercises) are
    left alone."""
    modules = list(modules)
    snapshots: list[tuple[dict[str, Any], dict[str, Any]]] = []
    exercises = dict(registry)
    fields = {key: {f.name: getattr(exercise, f.name) for f in dataclasses.fields(exercise)}
              for key, exercise in exercises.items()}
    # A field that is itself a record (an answer's computation, answers.py) has its fields kept too.
    inner = {id(value): (value, {f.name: getattr(value, f.name) for f in dataclasses.fields(value)})
             for names in fields.values() for value in names.values()
             if dataclasses.is_dataclass(value) and not isinstance(value, type)}
    missing = object()
    set_field = object.__setattr__

    def restore() -> bool:
        """Put everything back; True when something had changed."""
        changed = False
        for namespace, names in snapshots:
            for name, value in names.items():
                if namespace.get(name, missing) is not value:
                    namespace[name] = value
                    changed = True
        for key, exercise in exercises.items():
            if registry.get(key, missing) is not exercise:
                registry[key] = exercise
                changed = True
            for name, value in fields[key].items():
                if getattr(exercise, name) is not value:
                    set_field(exercise, name, value)
                    changed = True
        for record, names in inner.values():
            for name, value in names.items():
                if getattr(record, name) is not value:
                    set_field(record, name, value)
                    changed = True
        return changed

    def guarded(function: Callable[..., Any]) -> Callable[..., Any]:
        judging = function.__name__ == verdict

        @functools.wraps(function)
        def entry(*args: Any, **kwargs: Any) -> Any:
            restore()
            try:
                result = function(*args, **kwargs)
            finally:
                rewired = restore()
            return TAMPERED if judging and rewired else result

        return entry

    originals = {name: getattr(home, name) for name in entry_points}
    guards = {name: guarded(function) for name, function in originals.items()}
    for module in modules:
        namespace = vars(module)
        for name, function in originals.items():
            if namespace.get(name, missing) is function:
                namespace[name] = guards[name]
    for module in modules:
        namespace = vars(module)
        snapshots.append((namespace, {k: v for k, v in namespace.items()
                                      if not (k.startswith("__") and k.endswith("__"))}))
