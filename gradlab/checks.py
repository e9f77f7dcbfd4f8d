"""Make a lesson's checks (the ``_checks`` package) importable, wherever the notebook runs.

A lesson's first cell imports this module, then ``from _checks import checker``. It finds ``_checks``:

1. beside the running notebook (JupyterLab and Jupyter Server name it in ``JPY_SESSION_NAME``,
   VS Code in ``__vsc_ipynb_file__``), so that a single lesson opened with its checks beside it works
   even when the kernel started in another folder;
2. in the kernel's working folder (the repository's ``lessons/``, a course copied with
   ``gradlab lessons DEST``);
3. else in the course installed with this package (`gradlab.course.course_dir`).

The first folder found goes to the front of ``sys.path``. Nothing happens when ``_checks`` is already
imported (running the first cell twice keeps the same checks).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from .course import course_dir


def _notebook_folder() -> Path | None:
    """The running notebook's folder when the front end says which notebook it is, else None."""
    main = sys.modules.get("__main__")
    named = getattr(main, "__vsc_ipynb_file__", None) or os.environ.get("JPY_SESSION_NAME")
    if not named:
        return None
    path = Path(named)
    return path.parent if path.suffix == ".ipynb" and path.is_absolute() else None


def checks_folder() -> Path:
    """The folder whose ``_checks`` a lesson uses (see the module's docstring for the order)."""
    for folder in (_notebook_folder(), Path.cwd()):
        if folder is not None and (folder / "_checks" / "__init__.py").is_file():
            return folder
    return course_dir()


def put_checks_on_path() -> Path:
    """Put `checks_folder` first on ``sys.path`` (unless ``_checks`` is imported already); returns it."""
    if "_checks" in sys.modules:
        return Path(sys.modules["_checks"].__file__).parent.parent
    folder = checks_folder()
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    return folder


put_checks_on_path()
