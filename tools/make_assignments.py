"""Make the nbgrader course folder ``assignments/`` from the lessons (``make assignments``).

One assignment per lesson that has exercises: ``assignments/source/psNN/`` holds the lesson (all its
cells, so it reads and runs as the lesson does) in which each exercise became two cells:

* the **answer cell** (nbgrader "autograded answer"): the lesson's template with the course's
  reference solution inside nbgrader's solution region; ``nbgrader generate_assignment`` puts the
  lessons' ``...`` back in its place (``c.ClearSolutions.code_stub``), so a learner sees the lesson's
  template, and the lesson's own ``check(...)`` line still gives feedback while working;
* the **test cell** (locked, "autograder tests", the exercise's points from `_checks.grading.points`):
  ``grade(...)``, the same verdict as the self-check (`_checks.evaluate`), then the hidden cases.

The checks (``_checks``) travel in each assignment folder; nbgrader restores them, and the locked
cells, from the source when it grades. The reference solutions come from the exercise registry
(``EXERCISES[(lesson, name)].reference``): an exercise without one is left out of its assignment with
a message saying so (the lesson's cell then stays as it is, ungraded).

    python tools/make_assignments.py                  # every lesson, into assignments/
    python tools/make_assignments.py 02 --out DIR     # lesson 02 only
"""

from __future__ import annotations

import argparse
import ast
import inspect
import re
import shutil
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import nbformat
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
LESSONS = ROOT / "lessons"
sys.path.insert(0, str(LESSONS))
sys.path.insert(0, str(ROOT / "tools"))
from _checks import EXERCISES  # noqa: E402
from _checks.grading import points  # noqa: E402

import engine as eg  # noqa: E402
from gradlab.course import lesson_number, lesson_paths  # noqa: E402

CHECK_CALL = re.compile(r'^check\("(?P<name>[A-Za-z0-9_]+)",\s*(?P<answer>[^#\n]+)\)\s*(?:#.*)?$',
                        re.MULTILINE)
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
CONFIG = '''\
# nbgrader's settings for the gradlab course (written by tools/make_assignments.py).
c = get_config()  # noqa: F821
c.CourseDirectory.course_id = "gradlab"
c.CourseDirectory.root = __file__.rpartition("/")[0] or "."
# The lessons' convention: a learner replaces `...` (not nbgrader's `raise NotImplementedError()`).
c.ClearSolutions.code_stub = {{"python": "..."}}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"
# A lesson runs top to bottom when graded: give its slowest cell time.
c.Execute.timeout = 600
# Feedback pages load MathJax from the course folder ({mathjax}), not from a CDN: nbgrader's
# feedback template, with the MathJax macro of templates/gradlab_feedback/.
c.HTMLExporter.template_name = "gradlab_feedback"
import os, nbgrader  # noqa: E401,E402
c.HTMLExporter.extra_template_basedirs = [
    os.path.join(c.CourseDirectory.root, "templates"),
    os.path.join(os.path.dirname(nbgrader.__file__), "server_extensions", "formgrader", "templates"),
]
'''
# The MathJax macro nbconvert's templates import ('mathjax.html.j2'); found first in this template's folder.
FEEDBACK_MATHJAX = '''\
{%- macro mathjax(url=None) -%}
{%- if "MATHJAX_URL" %}
<script>
window.MathJax = {tex: {inlineMath: [["$", "$"], ["\\\\(", "\\\\)"]],
                        displayMath: [["$$", "$$"], ["\\\\[", "\\\\]"]],
                        processEscapes: true, processEnvironments: true}};
</script>
<script src="MATHJAX_URL" defer></script>
{%- endif %}
{%- endmacro %}
'''


class NoReference(Exception):
    """An exercise whose reference solution is not in the registry (or cannot be written as code)."""


def literal(value: Any) -> str:
    """Python source for a reference value (numbers, text, tuples, sets, arrays, engine tensors).

    >>> literal((6.0, -3.0)), literal({"b", "a"}), literal(np.array([1, 2], dtype=np.int64))
    ('(6.0, -3.0)', "{'a', 'b'}", 'np.array([1, 2], dtype=np.int64)')
    """
    if isinstance(value, bool | int | float | str | type(None)):
        return repr(value)
    if isinstance(value, tuple | list):
        parts = ", ".join(literal(v) for v in value)
        return f"({parts},)" if isinstance(value, tuple) and len(value) == 1 else \
            (f"({parts})" if isinstance(value, tuple) else f"[{parts}]")
    if isinstance(value, set | frozenset):
        return "{" + ", ".join(literal(v) for v in sorted(value, key=repr)) + "}"
    if isinstance(value, np.ndarray | np.generic):
        return f"np.array({np.asarray(value).tolist()!r}, dtype=np.{np.asarray(value).dtype})"
    if isinstance(value, eg.Tensor):
        return f"eg.constant({literal(value.numpy())})"
    raise NoReference(f"its reference value {type(value).__name__} cannot be written as code")


def _body_source(defined: Any) -> tuple[list[str], set[str]]:
    """The statements of a reference function's body (dedented) and the modules it uses by name."""
    source = textwrap.dedent(inspect.getsource(defined))
    node = ast.parse(source).body[0]
    lines = source.splitlines()
    first = node.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and len(node.body) > 1:
        first = node.body[1]  # the reference's docstring stays out of the learner's answer
    body = textwrap.dedent("\n".join(lines[first.lineno - 1: node.body[-1].end_lineno])).splitlines()
    modules = {name for name in getattr(defined, "__code__", None) and defined.__code__.co_names or ()
               if inspect.ismodule(getattr(inspect.getmodule(defined), name, None))}
    return body, modules


def _lambda_source(fn: Any) -> str:
    """The source of a lambda: the one on its first line of its module's source."""
    module_source = inspect.getsource(inspect.getmodule(fn))
    on_line = [node for node in ast.walk(ast.parse(module_source))
               if isinstance(node, ast.Lambda) and node.lineno == fn.__code__.co_firstlineno]
    if len(on_line) != 1:
        line = fn.__code__.co_firstlineno
        raise NoReference(f"its reference uses a lambda that cannot be told apart from others on line {line}")
    return ast.get_source_segment(module_source, on_line[0])


def _value_source(value: Any) -> str:
    """Python source giving ``value`` in a lesson: a literal, an engine function, or a lambda's text."""
    engine_names = [name for name, obj in vars(eg).items() if obj is value]
    if engine_names and callable(value):
        return f"eg.{engine_names[0]}"
    if inspect.isfunction(value) and value.__name__ == "<lambda>" and not value.__code__.co_freevars:
        return _lambda_source(value)
    return literal(value)


def closure_bindings(fn: Any) -> list[str]:
    """``name = value`` lines for the variables a reference closes over (the course builds several
    answers from one maker: its answer is the maker's defaults), so that its body runs in a notebook."""
    code = getattr(fn, "__code__", None)
    if code is None or not code.co_freevars:
        return []
    return [f"{name} = {_value_source(cell.cell_contents)}"
            for name, cell in zip(code.co_freevars, fn.__closure__, strict=True)]


def _region(lines: list[str], indent: str) -> list[str]:
    return [indent + BEGIN, *(indent + line if line else "" for line in lines), indent + END]


def _only_ellipsis(body: list[ast.stmt]) -> bool:
    return len(body) == 1 and isinstance(body[0], ast.Expr) and body[0].value.value is Ellipsis \
        if isinstance(body[0].value, ast.Constant) else False


def solved_function(template: str, reference: Any, imports: str) -> str:
    """The template's definition with each ``...`` body replaced by the reference's body (per method for
    a class); when the template's outline does not match the reference, the whole body is replaced."""
    tree = ast.parse(template)
    lines = template.splitlines()
    defined = next(n for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef))
    targets: list[tuple[ast.AST, Any]] = []
    if isinstance(defined, ast.ClassDef) and inspect.isclass(reference):
        for method in defined.body:
            if isinstance(method, ast.FunctionDef) and _only_ellipsis(method.body):
                targets.append((method, getattr(reference, method.name)))
    elif isinstance(defined, ast.FunctionDef):
        targets.append((defined, reference))
    else:
        raise NoReference("the template and the reference are not both a function or both a class")
    for node, ref in sorted(targets, key=lambda t: -t[0].lineno):
        body, modules = _body_source(ref)
        indent = " " * node.body[0].col_offset
        needed = [f"import {m}" for m in sorted(modules) if f"import {m}" not in imports
                  and f"as {m}" not in imports]
        first, last = node.body[0].lineno - 1, node.body[-1].end_lineno
        kept_comments = [line for line in lines[first:last] if "#" in line and line.strip().startswith("...")]
        comments = [indent + line.strip().lstrip(". ").strip() for line in kept_comments]
        lines[first:last] = comments + _region(needed + closure_bindings(ref) + body, indent)
    return "\n".join(lines)


def solved_value(template: str, variable: str, reference: Any) -> str:
    """The template with ``variable = ...`` answered by the reference value inside the solution region,
    kept inside the expression so that the learner's version reads ``variable = (...)``."""
    pattern = re.compile(rf"^{re.escape(variable)} = \.\.\.(?P<comment>\s*#.*)?$", re.MULTILINE)
    match = pattern.search(template)
    if match is None:
        raise NoReference(f"no `{variable} = ...` line in the lesson's cell")
    comment = (match.group("comment") or "").strip()
    solved = f"{variable} = (  {comment}\n    {BEGIN}\n    {literal(reference)}\n    {END}\n)"
    return template[: match.start()] + solved.replace("(  \n", "(\n") + template[match.end():]


def _points_text(lesson: str, name: str) -> str:
    worth = points(lesson, name)
    return f"{worth} point" + ("" if worth == 1 else "s")


def solved_cell(template: str, reference: str) -> str:
    """A whole cell answered by the reference's source text (lesson 10: each part of the learner's
    engine is a cell of its own, its check in the next cell). The template's outline stays as comments
    above the solution region, which nbgrader replaces by ``...`` for the learner."""
    outline = [f"# {line}" if line else "#" for line in template.splitlines()]
    return "\n".join(["# The lesson's outline; write yours in place of the `...` below:", *outline,
                      BEGIN, reference.rstrip("\n"), END])


def exercise_cells(lesson: str, source: str, imports: str,
                   previous: str = "") -> tuple[list[nbformat.NotebookNode], str, bool]:
    """The answer and test cells for the lesson cell ``source`` (one that ends with ``check(...)``).

    Returns (cells, exercise name, whether the cells replace ``previous``): a check alone in its cell
    answers the code cell before it (``previous``), and then the first cell returned takes that cell's
    place and the second is the check cell itself."""
    call = list(CHECK_CALL.finditer(source))[-1]
    name, answer = call.group("name"), call.group("answer").strip()
    exercise = EXERCISES.get((lesson, name))
    if exercise is None:
        raise NoReference(f"exercise {name!r} is not registered")
    if exercise.reference is None:
        raise NoReference("no reference solution in the registry yet")
    template = source[: call.start()].rstrip("\n")
    if isinstance(exercise.reference, str) and exercise.function:  # the source text of a whole cell
        if template or not previous:
            raise NoReference("its reference is a cell's source, but the check is not alone in its cell "
                              "after the template cell")
        answer_cell = _answer_cell(solved_cell(previous, exercise.reference), name)
        return [answer_cell, nbformat.v4.new_code_cell(source), _test_cell(lesson, name, answer)], name, True
    if callable(exercise.reference) and not isinstance(exercise.reference, eg.Tensor):
        solved = solved_function(template, exercise.reference, imports)
    elif re.fullmatch(r"\((\w+(, )?)+\)", answer) and isinstance(exercise.reference, tuple):
        names = [n.strip() for n in answer.strip("()").split(",") if n.strip()]  # check("x", (a, b))
        if len(names) != len(exercise.reference):
            raise NoReference(f"{answer} has {len(names)} parts, the reference {len(exercise.reference)}")
        solved = template
        for part, value in zip(names, exercise.reference):
            solved = solved_value(solved, part, value)
    else:
        solved = solved_value(template, answer, exercise.reference)
    return [_answer_cell(f"{solved}\n\n{call.group(0)}", name), _test_cell(lesson, name, answer)], name, False


def _answer_cell(source: str, name: str) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["nbgrader"] = {"grade": False, "solution": True, "locked": False, "task": False,
                                 "grade_id": name, "schema_version": 3}
    return cell


def _test_cell(lesson: str, name: str, answer: str) -> nbformat.NotebookNode:
    test_cell = nbformat.v4.new_code_cell(
        f"# Graded: the same check as above, then hidden cases ({_points_text(lesson, name)}).\n"
        f"from _checks.grading import grade\n\n"
        f'grade("{lesson}", "{name}", {answer})\n'
        f"### BEGIN HIDDEN TESTS\n"
        f'grade("{lesson}", "{name}", {answer}, hidden=True)\n'
        f"### END HIDDEN TESTS")
    test_cell.metadata["nbgrader"] = {"grade": True, "solution": False, "locked": True, "task": False,
                                      "points": points(lesson, name), "grade_id": f"test_{name}",
                                      "schema_version": 3}
    return test_cell


def make_assignment(lesson_path: Path, source_dir: Path, log=print) -> tuple[str, int] | None:
    """Write ``source_dir/psNN/`` from one lesson; returns (assignment, number of exercises) or None."""
    lesson = lesson_number(lesson_path)
    nb = nbformat.read(lesson_path, as_version=4)
    imports = next((c.source for c in nb.cells if c.cell_type == "code"), "")
    cells, graded, graded_names, skipped = [], 0, set(), set()
    for cell in nb.cells:
        if cell.cell_type == "code" and CHECK_CALL.search(cell.source) and "checker(" not in cell.source:
            previous = cells[-1] if cells and cells[-1].cell_type == "code" else None
            try:
                new, name, replaces_previous = exercise_cells(lesson, cell.source, imports,
                                                              previous.source if previous else "")
                if replaces_previous:  # lesson 10: the answer cell takes the template cell's place
                    cells.pop()
            except NoReference as why:
                found = CHECK_CALL.findall(cell.source)
                skipped.add(found[-1][0] if found else "?")
                log(f"  lesson {lesson}: exercise {found[-1][0] if found else '?'} left ungraded: {why}")
                cells.append(cell)
                continue
            cells.extend(new)
            graded += 1
            graded_names.add(name)
        else:
            cells.append(cell)
    for (of, name), exercise in sorted(EXERCISES.items()):
        if of == lesson and name not in graded_names and name not in skipped:
            why = ("no reference solution in the registry yet" if exercise.reference is None
                   else "the lesson has no check(...) cell for it")
            log(f"  lesson {lesson}: exercise {name} left ungraded: {why}")
    if not graded:
        log(f"  lesson {lesson}: no graded exercise, no assignment")
        return None
    name = f"ps{lesson}"
    folder = source_dir / name
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    nb.cells = cells
    for k, cell in enumerate(nb.cells):
        cell.id = f"{name}-{k}"
    nbformat.write(nb, folder / lesson_path.name)
    shutil.copytree(LESSONS / "_checks", folder / "_checks",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return name, graded


def write_config(out: Path) -> None:
    """nbgrader_config.py, and MathJax for the feedback pages (in ``feedback/_static``) when available."""
    from page_assets import install_mathjax, unavailable  # (beside this script, in tools/)

    mathjax = ""
    if unavailable() is None:
        # feedback/<student>/<assignment>/<notebook>.html -> feedback/_static/mathjax/...
        mathjax = "../../" + install_mathjax(out / "feedback")
    where = "feedback/_static, MathJax 3" if mathjax else "none here: math stays as TeX"
    (out / "nbgrader_config.py").write_text(CONFIG.format(mathjax=where), encoding="utf-8")
    template = out / "templates" / "gradlab_feedback"
    template.mkdir(parents=True, exist_ok=True)
    (template / "conf.json").write_text('{"base_template": "feedback", "mimetypes": {"text/html": true}}\n')
    macro = FEEDBACK_MATHJAX.replace("MATHJAX_URL", mathjax)
    (template / "mathjax.html.j2").write_text(macro, encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lessons", nargs="*",
                        help="lesson numbers as in their file names: 02, 06b (default: every lesson)")
    parser.add_argument("--out", default=str(ROOT / "assignments"), help="the course folder")
    args = parser.parse_args(argv)
    out = Path(args.out)
    paths = lesson_paths(LESSONS)
    if args.lessons:
        paths = [p for p in paths if lesson_number(p) in args.lessons]
        if not paths:
            parser.error(f"no lesson numbered {', '.join(args.lessons)}")
    out.mkdir(parents=True, exist_ok=True)
    write_config(out)
    made = []
    for path in paths:
        result = make_assignment(path, out / "source")
        if result:
            made.append(result)
            print(f"{out / 'source' / result[0]}: {result[1]} graded exercise{'s' if result[1] != 1 else ''}")
    print(f"{len(made)} assignments in {out}; next: cd {out} && nbgrader generate_assignment {made[0][0]}"
          if made else "no assignment made")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
