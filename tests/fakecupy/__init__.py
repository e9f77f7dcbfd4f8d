"""The fake CuPy package lives in ``tests/fakecupy/cupy`` (+ ``cupyx``); see ``cupy/__init__.py``.

`install()` puts it first on ``sys.path`` so ``import cupy`` finds it in this process only: lesson
kernels and other subprocesses keep the machine's real environment unless a test passes them `env()`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

PATH = str(Path(__file__).resolve().parent)


def install() -> None:
    """Make ``import cupy`` / ``import cupyx`` load the fake, dropping any real CuPy already imported."""
    for name in list(sys.modules):
        if name in ("cupy", "cupyx") or name.startswith(("cupy.", "cupyx.", "cupy_backends")):
            del sys.modules[name]
    if PATH not in sys.path:
        sys.path.insert(0, PATH)


def env() -> dict[str, str]:
    """``os.environ`` plus the ``PYTHONPATH`` that makes a subprocess import the fake CuPy."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (PATH, os.environ.get("PYTHONPATH")) if p)}
