"""A smoke alarm, not a target: no module of the engine, of gradviz, of the lessons' self-checks
(lessons/_checks/), of the benchmarks or of the tools grows past 600 lines. Modules are split by idea
(docs/ARCHITECTURE.md, "When a module grows"), never to fit a number; a module that trips this alarm
holds more than one idea."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 600
MODULES = sorted(
    p
    for pkg in ("engine", "gradviz", "lessons", "bench", "tools")
    for ext in ("*.py", "*.js")
    for p in (ROOT / pkg).rglob(ext)
    if not any(part.startswith(".") for part in p.relative_to(ROOT).parts)  # .ipynb_checkpoints
)


def test_the_packages_have_modules():
    assert len(MODULES) > 40
    assert any(p.parent.name == "_checks" for p in MODULES), "the lessons' self-checks are not covered"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_module_under_the_size_alarm(path: Path):
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= LIMIT, (f"{path.relative_to(ROOT)} has {lines} lines (alarm at {LIMIT}): it holds more "
                            "than one idea; split it by idea (docs/ARCHITECTURE.md, 'When a module grows').")
