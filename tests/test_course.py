"""The course inside the package: `gradlab.course` finds it, ``gradlab lessons DEST`` copies it, and
``import gradlab.checks`` (a lesson's first cell) finds the lesson's checks however it was opened."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import gradlab.checks
from gradlab import cli, course

REPO = Path(__file__).resolve().parent.parent


def test_course_in_a_clone_is_lessons():
    assert course.course_dir() == REPO / "lessons"
    names = [p.name for p in course.lesson_paths()]
    assert names[0] == "00_start_here.ipynb" and len(names) >= 11


def test_every_lesson_that_checks_imports_gradlab_checks_first():
    """The import that finds the checks comes before the first use of ``_checks`` in each lesson."""
    import nbformat

    for path in course.lesson_paths():
        sources = [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
        uses = [i for i, s in enumerate(sources) if "_checks" in s]
        if uses:
            first = sources[uses[0]]
            assert "import gradlab.checks" in first, path.name
            assert first.index("import gradlab.checks") < first.index("from _checks"), path.name


def test_copy_course_keeps_work_unless_overwrite(tmp_path, capsys):
    assert cli.main(["lessons", str(tmp_path / "course")]) == 0
    dest = tmp_path / "course"
    lessons = sorted(p.name for p in dest.glob("*.ipynb"))
    assert lessons == [p.name for p in course.lesson_paths()]
    registry = "_checks/registry.py"
    assert (dest / registry).read_bytes() == (REPO / "lessons" / registry).read_bytes()
    assert not list(dest.rglob("__pycache__"))
    (dest / "02_gradients_of_functions.ipynb").write_text("my work")
    assert cli.main(["lessons", str(dest)]) == 0
    assert "kept" in capsys.readouterr().out
    assert (dest / "02_gradients_of_functions.ipynb").read_text() == "my work"
    cli.main(["lessons", str(dest), "--overwrite"])
    assert (dest / "02_gradients_of_functions.ipynb").read_text() != "my work"


def test_copy_course_into_a_file_says_so(tmp_path):
    target = tmp_path / "a_file"
    target.write_text("")
    with pytest.raises(NotADirectoryError, match="not a folder"):
        course.copy_course(target)


def _fake_checks(folder: Path) -> Path:
    (folder / "_checks").mkdir(parents=True)
    (folder / "_checks" / "__init__.py").write_text("")
    return folder


def test_checks_beside_the_named_notebook_win(tmp_path, monkeypatch):
    """A single lesson whose folder has the checks, run by a kernel started elsewhere (Jupyter names the
    notebook in JPY_SESSION_NAME)."""
    notebook_folder = _fake_checks(tmp_path / "one_lesson")
    elsewhere = _fake_checks(tmp_path / "elsewhere")
    monkeypatch.chdir(elsewhere)
    monkeypatch.setenv("JPY_SESSION_NAME", str(notebook_folder / "02_gradients_of_functions.ipynb"))
    assert gradlab.checks.checks_folder() == notebook_folder
    monkeypatch.delenv("JPY_SESSION_NAME")
    assert gradlab.checks.checks_folder() == elsewhere  # the kernel's folder (a copied course)
    monkeypatch.chdir(tmp_path)
    assert gradlab.checks.checks_folder() == course.course_dir()  # else the installed course


def test_vscode_names_the_notebook_too(tmp_path, monkeypatch):
    notebook_folder = _fake_checks(tmp_path / "nb")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    monkeypatch.setattr(sys.modules["__main__"], "__vsc_ipynb_file__", str(notebook_folder / "x.ipynb"),
                        raising=False)
    assert gradlab.checks.checks_folder() == notebook_folder


def test_a_fresh_interpreter_elsewhere_imports_the_checks(tmp_path):
    """``import gradlab.checks`` then ``from _checks import evaluate`` from an unrelated folder."""
    code = ("import gradlab.checks, _checks; print(_checks.__file__); "
            "print(_checks.evaluate('02', 'partials', ...)[0])")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                         check=True)
    file, verdict = out.stdout.split()
    assert Path(file) == REPO / "lessons" / "_checks" / "__init__.py" and verdict == "False"


def test_reimport_keeps_the_imported_checks(monkeypatch, tmp_path):
    import _checks

    monkeypatch.chdir(_fake_checks(tmp_path / "other"))
    assert gradlab.checks.put_checks_on_path() == Path(_checks.__file__).parent.parent
