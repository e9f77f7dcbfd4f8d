"""gradviz keeps no op tables of its own and shows exactly what the engine did: no collection of op
names and no comparison of an op name with a literal anywhere in gradviz; the stepper's steps are the
engine's, with each primitive's own rule; a widget and the engine cannot drift (max ties: 0.5/0.5)."""

from __future__ import annotations

import ast
import html
from pathlib import Path

import numpy as np
import pytest

import engine as eg
import gradviz as gv

GRADVIZ = Path(__file__).resolve().parent.parent / "gradviz"
OP_NAMES = set(eg.primitives)


def _op_tables(source: str) -> list[str]:
    """Op-name tables and op-name comparisons in ``source`` (empty when there are none).

    >>> _op_tables("RULES = {'add': '1', 'multiply': 'b'}")
    ["a collection of op names at line 1: ['add', 'multiply']"]
    >>> _op_tables("if r.op == 'read_variable': pass")
    ["r.op compared with 'read_variable' at line 1"]
    >>> _op_tables("STATS = ('norm', 'mean', 'max', 'update_ratio')")  # statistics, not a table of ops
    []
    """
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.List | ast.Tuple | ast.Set | ast.Dict):
            items = node.keys if isinstance(node, ast.Dict) else node.elts
            strings = [k.value for k in items if isinstance(k, ast.Constant) and isinstance(k.value, str)]
            names = [v for v in strings if v in OP_NAMES]
            if len(names) >= 2 and 2 * len(names) > len(strings):  # mostly op names: a table of ops
                out.append(f"a collection of op names at line {node.lineno}: {names}")
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(isinstance(s, ast.Attribute) and s.attr in {"op", "name"} for s in sides):
                for s in sides:
                    consts = s.elts if isinstance(s, ast.List | ast.Tuple | ast.Set) else [s]
                    for c in consts:
                        if isinstance(c, ast.Constant) and c.value in OP_NAMES:
                            who = next(x for x in sides if isinstance(x, ast.Attribute))
                            out.append(f"{ast.unparse(who)} compared with {c.value!r} at line {node.lineno}")
    return out


def test_gradviz_has_no_op_tables():
    found = {}
    for path in sorted(GRADVIZ.rglob("*.py")):
        bad = _op_tables(path.read_text(encoding="utf-8"))
        if bad:
            found[str(path.relative_to(GRADVIZ))] = bad
    assert not found, f"gradviz keeps its own knowledge of ops: {found}"


def test_gradviz_has_no_backward_walker():
    """No module of gradviz calls a VJP in a loop over reversed records: the steps come from the engine."""
    for path in sorted(GRADVIZ.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        assert "reversed(" not in source or "records" not in source.split("reversed(", 1)[1][:40], path
        assert "input_gradient" not in source, path


def _ties(op):
    a, b = eg.constant([2.0, 1.0]), eg.constant([2.0, 3.0])
    with eg.GradientTape(persistent=True) as tape:
        tape.watch([a, b])
        y = eg.sum(op(a, b))
    return tape, y, a, b


@pytest.mark.parametrize("op", [eg.maximum, eg.minimum])
def test_the_stepper_shows_the_engines_tie_split(op):
    tape, y, a, b = _ties(op)
    bp = gv.backprop(tape, y, [a, b], names={"a": a, "b": b, "y": y})
    engine_steps = list(eg.backward_steps(tape, y, [a, b]))
    assert [s.record for s in bp.steps] == [s.record for s in engine_steps]
    k = next(i for i, s in enumerate(bp.steps) if s.record.primitive is eg.primitives[op.name])
    bp.go(k + 1)
    panel = html.unescape(bp.panel)
    assert eg.primitives[op.name].rule in panel  # the primitive's own rule text, verbatim
    ga, gb = (c.value for c in bp._arrivals[k])
    assert ga[0] == 0.5 and gb[0] == 0.5  # the tied element: split 0.5 / 0.5, as the engine does
    np.testing.assert_array_equal(ga, tape.gradient(y, a).numpy())
    np.testing.assert_array_equal(gb, tape.gradient(y, b).numpy())
    assert "[0.5 " in panel or "0.5" in panel


def test_every_step_shows_its_primitives_rule():
    x = eg.constant([0.5, 2.0])
    w = eg.Variable([1.0, -1.0], name="w")
    with eg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = eg.sum(eg.clip(x * w, -1.0, 1.0) + eg.tanh(x))
    bp = gv.backprop(tape, y, [x, w])
    assert len(bp) == len(bp.steps) + 1 and bp.steps
    for k, step in enumerate(bp.steps, start=1):
        bp.go(k)
        assert step.record.primitive.rule in html.unescape(bp.panel)


def test_graph_labels_are_the_primitives_symbols():
    x = eg.constant(2.0)
    with eg.GradientTape() as tape:
        tape.watch(x)
        y = x * x - eg.exp(x)
    model = gv.build_model(y, tape)
    ops = [n for n in model.nodes.values() if n.kind == "op"]
    assert ops and all(n.label == n.record.primitive.symbol for n in ops)
    assert {n.label for n in ops} == {"×", "exp", "−"}
