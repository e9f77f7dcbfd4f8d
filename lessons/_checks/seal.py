"""Sealing: the entry points put every name of the package's modules, and the exercises, back first."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any


def seal(modules: Iterable[ModuleType], registry: dict[Any, Any], entry_points: tuple[str, ...],
         home: ModuleType) -> None:
    """Wrap the entry points (``home``'s functions of these names, wherever a module binds them) so
    that each first restores every module's names and the exercises registered so far from a
    snapshot held only in their closures (see "cannot be re-wired" in the package docstring).
    Later registrations (a lesson author's experiments, the tests' demo exercises) are left alone."""
    modules = list(modules)
    snapshots: list[tuple[dict[str, Any], dict[str, Any]]] = []
    exercises = dict(registry)
    missing = object()

    def restore() -> None:
        for namespace, names in snapshots:
            for name, value in names.items():
                if namespace.get(name, missing) is not value:
                    namespace[name] = value
        for key, exercise in exercises.items():
            if registry.get(key, missing) is not exercise:
                registry[key] = exercise

    def guarded(function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        def entry(*args: Any, **kwargs: Any) -> Any:
            restore()
            return function(*args, **kwargs)

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
