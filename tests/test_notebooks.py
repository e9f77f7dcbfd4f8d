"""Every lesson in lessons/ is committed without outputs and runs top to bottom in a fresh kernel.

A lesson that takes more than a minute declares it in its notebook metadata, which marks its
execution test ``slow`` (``make test-fast`` leaves it out)::

    "metadata": {"gradlab": {"slow": true}, ...}
"""

from __future__ import annotations

import re
import subprocess
import sys
import warnings
from pathlib import Path

import nbformat
import pytest

LESSONS_DIR = Path(__file__).resolve().parent.parent / "lessons"
LESSONS = sorted(LESSONS_DIR.glob("*.ipynb"))
SLOW_AFTER_S = 60
STRIP_HINT = "strip it with: uv run nbstripout --keep-id lessons/*.ipynb"


def _read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def _is_slow(path: Path) -> bool:
    return bool(_read(path).metadata.get("gradlab", {}).get("slow", False))


def _lesson_params(with_slow_mark: bool = False) -> list:
    return [
        pytest.param(
            path, id=path.name, marks=[pytest.mark.slow] if with_slow_mark and _is_slow(path) else []
        )
        for path in LESSONS
    ]


@pytest.fixture(scope="module")
def nbstripout_verify() -> str:
    """What ``nbstripout --verify`` says about all lessons (one process: it starts slowly)."""
    proc = subprocess.run(
        [sys.executable, "-m", "nbstripout", "--verify", "--keep-id", *map(str, LESSONS)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode in (0, 1), f"nbstripout failed:\n{proc.stdout}{proc.stderr}"
    return proc.stdout


@pytest.mark.parametrize("path", _lesson_params())
def test_committed_without_outputs(path: Path, nbstripout_verify: str):
    nb = _read(path)
    nbformat.validate(nb)
    dirty = [
        f"cell {i}: {len(cell.outputs)} output(s), execution_count {cell.execution_count}"
        for i, cell in enumerate(nb.cells)
        if cell.cell_type == "code" and (cell.outputs or cell.execution_count is not None)
    ]
    assert not dirty, f"{path.name} has outputs ({STRIP_HINT}):\n" + "\n".join(dirty)
    assert "widgets" not in nb.metadata, f"{path.name} has saved widget state ({STRIP_HINT})"
    # nbstripout's own check also covers volatile metadata; authors may choose their cell ids.
    assert str(path) not in nbstripout_verify, f"{path.name} is not stripped ({STRIP_HINT})"


@pytest.mark.parametrize("path", _lesson_params(with_slow_mark=True))
def test_runs_top_to_bottom(path: Path, lesson):
    run = lesson(path.name)  # fails the test with the cell's traceback if a cell raises
    not_run = [
        i
        for i, cell in enumerate(run.nb.cells)
        if cell.cell_type == "code" and cell.source.strip() and cell.execution_count is None
    ]
    assert not not_run, f"code cells {not_run} of {path.name} did not run"
    escaped = [  # np.asarray of a tensor a tape watches: only where a cell shows it on purpose
        i
        for i, cell in enumerate(run.nb.cells)
        if cell.cell_type == "code" and "TapeEscapeWarning" in str(cell.get("outputs", ""))
        and "TapeEscapeWarning" not in cell.source
    ]
    assert not escaped, f"code cells {escaped} of {path.name} warn with eg.TapeEscapeWarning"
    if run.seconds > SLOW_AFTER_S and not _is_slow(path):
        warnings.warn(
            f"{path.name} took {run.seconds:.0f} s: set metadata.gradlab.slow = true in the notebook",
            stacklevel=1,
        )


LINK = re.compile(r"\]\(([^)\s]+?\.ipynb)(?:#[^)\s]*)?\)")


@pytest.mark.parametrize("path", _lesson_params())
def test_links_to_lessons_resolve(path: Path):
    """Links between notebooks point at real files; links to lessons not written yet are skipped."""
    missing, not_written = [], []
    for cell in _read(path).cells:
        if cell.cell_type != "markdown":
            continue
        for target in LINK.findall(cell.source):
            if "://" in target or (path.parent / target).exists():
                continue
            number = Path(target).name[:3]  # "03_" of "03_gradient_tape.ipynb"
            if re.fullmatch(r"\d\d_", number) and not list(LESSONS_DIR.glob(f"{number}*.ipynb")):
                not_written.append(target)
            else:
                missing.append(target)
    assert not missing, f"{path.name} links to notebooks that do not exist: {missing}"
    if not_written:
        pytest.skip(f"{path.name} links to lessons not written yet: {', '.join(sorted(set(not_written)))}")
