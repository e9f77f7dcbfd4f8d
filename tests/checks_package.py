"""The lessons' self-checks (``lessons/_checks``) loaded once for the tests, as ``lesson_checks``.

Its own module so that test helpers (tests/lesson10_variants.py) can use the checks without importing
tests/test_lessons_exercises.py, which imports every ``test_lessons_exercises_*`` module (a cycle when
pytest's doctest collection imports a helper first).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

LESSONS = Path(__file__).resolve().parent.parent / "lessons"


def _load_checks():
    """The lessons' ``_checks`` package, loaded as ``lesson_checks`` (lessons/ stays off sys.path)."""
    package = LESSONS / "_checks"
    spec = importlib.util.spec_from_file_location("lesson_checks", package / "__init__.py",
                                                  submodule_search_locations=[str(package)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


checks = _load_checks()
