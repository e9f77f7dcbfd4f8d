"""gradviz's layers (docs/ARCHITECTURE.md): the model (data built from tapes and optimizers) imports
neither rendering nor widgets, anywhere in its modules (also inside functions); rendering imports no
widget; a widget holds its drawing, it does not inherit it (no widget class has a base from render/)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = {"model": ("gradviz.render", "gradviz.widgets"), "render": ("gradviz.widgets",)}


def _imports(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
    return names


MODULES = sorted(p for layer in FORBIDDEN for p in (ROOT / "gradviz" / layer).glob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_layer_imports_nothing_above_it(path):
    bad = [m for m in _imports(path) if m.startswith(FORBIDDEN[path.parent.name])]
    assert not bad, f"gradviz/{path.parent.name}/{path.name} imports {bad}: above its layer"


def _render_names(tree: ast.AST) -> set[str]:
    """The names a module imports from gradviz.render (``from gradviz.render.x import Name``)."""
    return {a.asname or a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
            and (node.module or "").startswith("gradviz.render") for a in node.names}


WIDGETS = sorted((ROOT / "gradviz" / "widgets").glob("*.py"))


@pytest.mark.parametrize("path", WIDGETS, ids=lambda p: f"widgets/{p.name}")
def test_a_widget_holds_its_drawing_rather_than_inheriting_it(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    from_render = _render_names(tree)
    bad = [(node.name, base.id) for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
           for base in node.bases if isinstance(base, ast.Name) and base.id in from_render]
    assert not bad, f"gradviz/widgets/{path.name}: {bad} inherit from gradviz.render (hold an instance)"


RENDER = sorted((ROOT / "gradviz" / "render").glob("*.py"))
WALKS = {"gradviz.model.tapeinfo": "walk", "engine": "backward_steps", "engine.backward": "backward_steps"}


@pytest.mark.parametrize("path", RENDER, ids=lambda p: f"render/{p.name}")
def test_render_draws_what_the_model_computed_and_walks_nothing(path):
    """The model computes what render draws (issue 29): no render module takes the engine's backward
    walk (``tapeinfo.walk``, ``eg.backward_steps``) or the module that offers it."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bad = [f"{node.module}.{a.name}" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
           for a in node.names if WALKS.get(node.module or "") == a.name
           or f"{node.module}.{a.name}" == "gradviz.model.tapeinfo"]
    bad += [a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names
            if a.name == "gradviz.model.tapeinfo"]
    bad += [node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)
            and node.attr == "backward_steps"]
    assert not bad, f"gradviz/render/{path.name} walks the backward pass ({bad}): compute it in gradviz/model"


MARKUP = re.compile(r"<(div|span|table|tr|td|th|svg|g|b|p|ul|li|pre|code|style|image|br|h\d|path|polyline)\b")
MARKUP_LIMIT = 10  # issue 29: markup is built in gradviz/render, as functions of plain data


def _code_lines(path: Path) -> list[tuple[int, str]]:
    """The lines of ``path`` that are code: not a docstring, not a comment."""
    source = path.read_text(encoding="utf-8")
    docs: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            docs.update(range(body[0].lineno, body[0].end_lineno + 1))
    return [(k, line) for k, line in enumerate(source.splitlines(), 1)
            if k not in docs and not line.lstrip().startswith("#")]


def test_widgets_build_almost_no_markup():
    """HTML and SVG strings are built in gradviz/render; a widget passes them plain data."""
    found = [f"widgets/{p.name}:{k}: {line.strip()}" for p in WIDGETS for k, line in _code_lines(p)
             if MARKUP.search(line)]
    where = "\n".join(found)
    assert len(found) <= MARKUP_LIMIT, f"markup in gradviz/widgets (move it to gradviz/render):\n{where}"


def test_the_markup_count_sees_markup():
    """The count above finds a tag in code and skips one in a docstring (so it can fail)."""
    import tempfile  # noqa: PLC0415

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "w.py"
        path.write_text('"""A <b>docstring</b>."""\nx = "<div>"\n# <span>\n', encoding="utf-8")
        assert [k for k, line in _code_lines(path) if MARKUP.search(line)] == [2]


def _model_names(tree: ast.AST) -> set[str]:
    """The names a module imports from gradviz.model."""
    return {a.asname or a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
            and (node.module or "").startswith("gradviz.model") for a in node.names}


@pytest.mark.parametrize("path", RENDER + WIDGETS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_drawing_holds_its_model_rather_than_inheriting_it(path):
    """gv.Recorder is the recorded numbers with a drawing: it holds a `RecordedSteps` (issue 29), and so
    does every class above the model: none inherits a model class."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    from_model = _model_names(tree)
    bad = [(node.name, base.id) for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
           for base in node.bases if isinstance(base, ast.Name) and base.id in from_model]
    where = f"gradviz/{path.parent.name}/{path.name}"
    assert not bad, f"{where}: {bad} inherit from gradviz.model (hold an instance)"


def test_recorder_holds_the_recorded_steps():
    import gradviz as gv  # noqa: PLC0415
    from gradviz.model.recorder import RecordedSteps  # noqa: PLC0415

    rec = gv.Recorder()
    rec.record(0, loss=1.0)
    assert not isinstance(rec, RecordedSteps) and isinstance(rec.recorded, RecordedSteps)
    assert rec.recorded.scalar("loss") == rec.scalar("loss") == ([0], [1.0])
