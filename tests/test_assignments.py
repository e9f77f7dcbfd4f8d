"""`make assignments` (tools/make_assignments.py) and nbgrader, offline: lesson 02 made into an
assignment, released, three submissions autograded (right: full marks, untouched: 0, a tamperer who
replaced the test cells and the checks: 0), feedback built with MathJax from the course folder, grades
exported."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import make_assignments  # noqa: E402

pytest.importorskip("nbgrader", reason="nbgrader is in the `grading` extra (make test installs it)")
pytestmark = pytest.mark.slow

LESSON = "02_gradients_of_functions.ipynb"


def nbgrader(course: Path, *args: str) -> str:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("JPY_SESSION_NAME", None)
    proc = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, env=env,
                          capture_output=True, text=True, timeout=900)
    command = " ".join(args)
    assert proc.returncode == 0, f"nbgrader {command} failed:\n{proc.stdout[-4000:]}{proc.stderr[-4000:]}"
    return proc.stdout + proc.stderr


def graded_cells(nb: nbformat.NotebookNode, kind: str) -> list[nbformat.NotebookNode]:
    flag = "solution" if kind == "answer" else "grade"
    return [c for c in nb.cells if c.get("metadata", {}).get("nbgrader", {}).get(flag)]


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("course")
    assert make_assignments.main(["02", "--out", str(folder)]) == 0
    nbgrader(folder, "generate_assignment", "ps02", "--force")
    return folder


def test_the_source_has_each_exercise_as_an_answer_and_a_locked_test(course):
    from _checks import EXERCISES
    from _checks.grading import points

    source = nbformat.read(course / "source/ps02" / LESSON, as_version=4)
    names = sorted(name for lesson, name in EXERCISES if lesson == "02")
    answers, tests = graded_cells(source, "answer"), graded_cells(source, "test")
    assert sorted(c.metadata.nbgrader.grade_id for c in answers) == names
    assert sorted(c.metadata.nbgrader.grade_id for c in tests) == [f"test_{n}" for n in names]
    for cell in tests:
        name = cell.metadata.nbgrader.grade_id.removeprefix("test_")
        assert cell.metadata.nbgrader.locked and cell.metadata.nbgrader.points == points("02", name)
        assert f'grade("02", "{name}",' in cell.source and "### BEGIN HIDDEN TESTS" in cell.source
    assert (course / "source/ps02/_checks/registry.py").is_file()
    config = (course / "nbgrader_config.py").read_text()
    assert 'code_stub = {"python": "..."}' in config


def test_the_release_shows_the_lessons_template(course):
    release = nbformat.read(course / "release/ps02" / LESSON, as_version=4)
    for cell in graded_cells(release, "answer"):
        assert "BEGIN SOLUTION" not in cell.source and "..." in cell.source, cell.source
    for cell in graded_cells(release, "test"):
        assert "HIDDEN" not in cell.source and "hidden=True" not in cell.source
    assert (course / "release/ps02/_checks/__init__.py").is_file()
    lesson = nbformat.read(ROOT / "lessons" / LESSON, as_version=4)
    # the learner's version of "def sgd_step..." is the lesson's template
    template = next(c.source for c in lesson.cells if 'check("sgd_step"' in c.source)
    released = next(c.source for c in graded_cells(release, "answer")
                    if c.metadata.nbgrader.grade_id == "sgd_step")
    assert released == template


def test_every_assignments_solution_passes_its_own_test_cell(tmp_path, monkeypatch):
    """For every lesson: each answer cell of the source (the registry's reference, written as code in
    the lesson's template) passes its locked test cell, run after the lesson's first cell and the answer
    cells before it, in one namespace (lesson 10's parts build on each other, as its cells do)."""
    import io
    from contextlib import redirect_stdout

    assert make_assignments.main(["--out", str(tmp_path)]) == 0
    monkeypatch.chdir(ROOT / "lessons")
    failed, graded = [], 0
    for path in sorted(tmp_path.glob("source/ps*/*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        first = next(c.source for c in nb.cells if c.cell_type == "code")
        answers, tests = graded_cells(nb, "answer"), graded_cells(nb, "test")
        assert [t.metadata.nbgrader.grade_id for t in tests] == [f"test_{a.metadata.nbgrader.grade_id}"
                                                                for a in answers]
        namespace = {"__name__": "__main__"}
        with redirect_stdout(io.StringIO()):
            exec(compile(first, path.name, "exec"), namespace)  # noqa: S102
        for answer, test in zip(answers, tests, strict=True):
            try:
                with redirect_stdout(io.StringIO()):
                    for source in (answer.source, test.source):
                        exec(compile(source, path.name, "exec"), namespace)  # noqa: S102
                graded += 1
            except Exception as error:  # noqa: BLE001 (collected, reported together)
                failed.append(f"{path.parent.name} {answer.metadata.nbgrader.grade_id}: {error!r}"[:300])
    assert not failed, failed
    assert graded >= 45  # lessons 01-09: 37, 06b: 1, 10: 11


def submit(course: Path, student: str, nb: nbformat.NotebookNode) -> Path:
    folder = course / "submitted" / student / "ps02"
    shutil.copytree(course / "release/ps02", folder)
    nbformat.write(nb, folder / LESSON)
    (folder / "timestamp.txt").write_text("2026-11-29 10:00:00.000000 UTC")
    return folder


def test_right_untouched_and_tampered_submissions_are_graded(course):
    source = nbformat.read(course / "source/ps02" / LESSON, as_version=4)
    solutions = {c.metadata.nbgrader.grade_id: c.source for c in graded_cells(source, "answer")}
    release = course / "release/ps02" / LESSON

    right = nbformat.read(release, as_version=4)
    for cell in graded_cells(right, "answer"):  # a learner's own answers: the source's, no markers
        cell.source = re.sub(r"\n\s*### (BEGIN|END) SOLUTION", "", solutions[cell.metadata.nbgrader.grade_id])
    submit(course, "right", right)

    submit(course, "untouched", nbformat.read(release, as_version=4))

    tampered = nbformat.read(release, as_version=4)
    for cell in graded_cells(tampered, "test"):
        cell.source = "pass  # no test here"
    folder = submit(course, "tampered", tampered)
    (folder / "_checks" / "grading.py").write_text("def grade(*args, **kwargs):\n    print('Right!')\n")

    nbgrader(course, "autograde", "ps02", "--create", "--force")
    nbgrader(course, "generate_feedback", "ps02", "--force")
    nbgrader(course, "export", "--to", str(course / "grades.csv"))
    with open(course / "grades.csv", newline="") as f:
        rows = {row["student_id"]: row for row in csv.DictReader(f)}
    full = sum(c.metadata.nbgrader.points for c in graded_cells(source, "test"))
    scores = {s: (float(rows[s]["score"]), float(rows[s]["max_score"])) for s in rows}
    assert scores == {"right": (full, full), "untouched": (0.0, full), "tampered": (0.0, full)}, scores

    # nbgrader put the checks and the locked cells back for the tamperer
    graded = course / "autograded/tampered/ps02"
    assert "print('Right!')" not in (graded / "_checks/grading.py").read_text()
    tests = graded_cells(nbformat.read(graded / LESSON, as_version=4), "test")
    assert tests and all("grade(" in c.source for c in tests)

    # feedback pages: MathJax (if any) from the course folder, nothing from the network
    feedback = course / "feedback/right/ps02" / LESSON.replace(".ipynb", ".html")
    page = feedback.read_text()
    scripts = re.findall(r'<script[^>]+src="([^"]+)"', page)
    assert not [s for s in scripts if s.startswith(("http:", "https:", "//"))], scripts
    mathjax = [s for s in scripts if "mathjax" in s.lower()]
    assert all((feedback.parent / s).resolve().is_file() for s in mathjax), mathjax
    assert json.dumps(scores)  # (the scores, for the log)
