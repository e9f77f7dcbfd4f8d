"""Where the course (the lesson notebooks and their checks, ``_checks``) lives, and copying it out.

The wheel carries the course inside this package (``gradlab/course/``, see pyproject.toml's hatch
settings); a clone of the repository has it in ``lessons/`` beside this package.

>>> (course_dir() / "_checks" / "__init__.py").is_file()
True
"""

from __future__ import annotations

import shutil
from pathlib import Path

_PACKAGED = Path(__file__).resolve().parent / "course"
_REPOSITORY = Path(__file__).resolve().parent.parent / "lessons"
# What a copy leaves out: caches and checkpoints made by running the lessons.
_NOT_COPIED = shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints")


def course_dir() -> Path:
    """The folder with the lessons (``NN_*.ipynb``) and ``_checks``: the installed copy, else the clone's."""
    for candidate in (_PACKAGED, _REPOSITORY):
        if (candidate / "_checks" / "__init__.py").is_file():
            return candidate
    raise FileNotFoundError(
        f"gradlab: the course is missing (looked in {_PACKAGED} and {_REPOSITORY}); "
        "reinstall the package from its wheel, or run from a clone of the repository")


#: A lesson's file name: its number (two digits, and a letter for a lesson between two: ``06b``), then
#: ``_`` and its title. Sorted by name, ``06_...`` comes before ``06b_...``.
LESSON_PATTERN = "[0-9][0-9]*_*.ipynb"


def lesson_paths(folder: str | Path | None = None) -> list[Path]:
    """The lesson notebooks in ``folder`` (default: the course), in order (``00_start_here.ipynb``,
    ``01_...``, ``06_...``, ``06b_...``)."""
    return sorted(Path(folder or course_dir()).glob(LESSON_PATTERN))


def lesson_number(path: str | Path) -> str:
    """A lesson's number as its checks know it: ``"02"``, ``"06b"``.

    >>> lesson_number("lessons/06b_what_backprop_keeps.ipynb")
    '06b'
    """
    return Path(path).name.split("_")[0]


def copy_course(dest: str | Path, *, overwrite: bool = False) -> list[Path]:
    """Copy the lessons and ``_checks`` into ``dest`` (created if needed); returns the lessons copied.

    A lesson already in ``dest`` is kept (it may hold a learner's work) unless ``overwrite``; the
    checks are always refreshed, so that a copied course judges with this version's checks.
    """
    dest = Path(dest)
    if dest.exists() and not dest.is_dir():
        raise NotADirectoryError(f"gradlab lessons: {dest} is not a folder; give a folder to copy into")
    dest.mkdir(parents=True, exist_ok=True)
    source = course_dir()
    shutil.copytree(source / "_checks", dest / "_checks", ignore=_NOT_COPIED, dirs_exist_ok=True)
    copied = []
    for lesson in lesson_paths():
        target = dest / lesson.name
        if overwrite or not target.exists():
            shutil.copy2(lesson, target)
            copied.append(target)
    return copied
