"""The wheel carries the course: built with uv, installed into a fresh venv outside the repository (from
uv's cache, offline, at uv.lock's versions), ``gradlab lessons DEST`` copies the course, and lesson 02 runs
top to bottom in a kernel started in DEST."""

from __future__ import annotations

import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from gradlab.course import lesson_paths

REPO = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow

# Run by the fresh venv's Python: lesson 02 in a kernel of that venv, working folder DEST.
RUN_LESSON = """
import sys, nbformat
from nbclient import NotebookClient
path = sys.argv[1]
nb = nbformat.read(path, as_version=4)
client = NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": sys.argv[2]}})
client.execute()
outputs = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
print("NOT ANSWERED:", outputs.count("not answered yet"))
"""


def _uv() -> str:
    found = shutil.which("uv") or (str(REPO / ".tools/bin/uv") if (REPO / ".tools/bin/uv").exists() else None)
    if found is None:
        pytest.skip("uv is not installed (`make test` installs it into .tools/)")
    return found


def _run(*args, **kwargs) -> subprocess.CompletedProcess:
    env = {**os.environ, "UV_PYTHON_DOWNLOADS": "never"}
    env.pop("VIRTUAL_ENV", None)
    env.pop("JPY_SESSION_NAME", None)
    proc = subprocess.run(args, capture_output=True, text=True, env=env, **kwargs)
    command = " ".join(map(str, args))
    assert proc.returncode == 0, f"{command} failed:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}"
    return proc


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    _run(_uv(), "build", "--wheel", "--offline", "-o", str(out), cwd=REPO)
    (built,) = out.glob("gradlab_course-*.whl")
    return built


def test_wheel_carries_the_course(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    lessons = [p.name for p in lesson_paths(REPO / "lessons")]
    assert "06b_what_backprop_keeps.ipynb" in lessons
    assert {f"gradlab/course/{n}" for n in lessons} <= names
    checks = {f"gradlab/course/_checks/{p.name}" for p in (REPO / "lessons/_checks").glob("*.py")}
    assert checks <= names
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    entry_points = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("entry_points.txt")))
    assert b"gradlab = gradlab.cli:main" in entry_points


def test_installed_wheel_runs_lesson_02_in_a_copied_course(wheel, tmp_path):
    uv, venv, dest = _uv(), tmp_path / "venv", tmp_path / "my course"
    # uv.lock's lesson dependencies as a pylock.toml: it names each wheel's URL, which uv's cache (filled
    # by `make test`'s sync) answers with no network; then the wheel itself, its dependencies being there.
    requirements = tmp_path / "pylock.toml"
    _run(uv, "export", "--frozen", "--no-dev", "--extra", "lessons", "--no-emit-project",
         "--format", "pylock.toml", "-o", str(requirements), cwd=REPO)
    _run(uv, "venv", "--offline", str(venv), cwd=tmp_path)
    python = venv / "bin" / "python"
    _run(uv, "pip", "install", "--offline", "--python", str(python), "-r", str(requirements), cwd=tmp_path)
    _run(uv, "pip", "install", "--offline", "--no-deps", "--python", str(python), str(wheel), cwd=tmp_path)
    out = _run(str(venv / "bin" / "gradlab"), "lessons", str(dest), cwd=tmp_path).stdout
    assert "lessons and their checks copied" in out
    lesson = dest / "02_gradients_of_functions.ipynb"
    ran = _run(str(python), "-c", RUN_LESSON, str(lesson), str(dest), cwd=tmp_path).stdout
    # the lesson's own cells ran in DEST with the installed engine (not the repository's) and its checks
    where = _run(str(python), "-c", "import engine, gradlab.checks, _checks; print(engine.__file__); "
                 "print(_checks.__file__)", cwd=dest).stdout.splitlines()
    assert where[0].startswith(str(venv)) and where[1] == str(dest / "_checks" / "__init__.py")
    # the learner's cells are still `...`: each of the lesson's checks ran and said so
    assert int(ran.split("NOT ANSWERED:")[1]) >= 4
