"""Every op a tape can record is a `Primitive` in `eg.primitives` that explains itself truthfully:
symbol, rule text naming every input, elementwise, differentiable. The rule texts that state numbers
(ties, bounds) are checked against what the VJP really does."""

from __future__ import annotations

import re

import numpy as np
import pytest

import engine as eg


def test_primitives_is_a_read_only_mapping_of_primitives():
    assert all(isinstance(p, eg.Primitive) and p.name == name for name, p in eg.primitives.items())
    with pytest.raises(TypeError):
        eg.primitives["add"] = eg.primitives["multiply"]  # type: ignore[index]
    with pytest.raises(ValueError, match="exists already"):
        eg.Primitive("add", lambda xp, a, b: a + b, vjps=[lambda g, y, a, b: g] * 2, inputs=("a", "b"),
                     rule="∂a = g, ∂b = g")


@pytest.mark.parametrize("name", sorted(eg.primitives))
def test_every_primitive_explains_itself(name):
    p = eg.primitives[name]
    assert isinstance(p.symbol, str) and p.symbol.strip()
    assert isinstance(p.rule, str) and p.rule.strip()
    assert isinstance(p.elementwise, bool) and isinstance(p.differentiable, bool)
    # an op without tensor inputs (a random draw, an optimizer's step number) says so in its rule
    assert (p.inputs or "no inputs" in p.rule) and all(isinstance(n, str) and n for n in p.inputs)
    for inp in p.inputs:
        if p.differentiable:  # "∂a = ...": the rule says what each input receives
            assert re.search(rf"∂{re.escape(inp)}\b", p.rule), f"{name}: rule {p.rule!r} never names ∂{inp}"
        else:
            assert re.search(rf"\b{re.escape(inp)}\b", p.rule), f"{name}: rule {p.rule!r} never names {inp}"


def test_a_differentiable_primitive_needs_a_rule():
    with pytest.raises(ValueError, match="rule text"):
        eg.Primitive("test_no_rule", lambda xp, x: x, vjps=[lambda g, y, x: g])


def test_the_read_of_a_variable_is_a_primitive():
    v = eg.Variable([1.0, 2.0])
    with eg.GradientTape() as tape:
        y = v * 2.0
    read = tape.records[0]
    assert read.primitive is eg.primitives["read_variable"] and read.is_variable_read
    assert read.inputs == (v,) and read.primitive.rule == "∂v = g (the value read is the Variable's value)"
    assert not tape.records[1].is_variable_read
    assert np.array_equal(tape.gradient(y, v).numpy(), [2.0, 2.0])


def _grads(f, *values):
    xs = [eg.constant(np.asarray(v, dtype=np.float32)) for v in values]
    with eg.GradientTape() as tape:
        tape.watch(xs)
        y = f(*xs)
    return [g.numpy() for g in tape.gradient(y, xs)]


@pytest.mark.parametrize("name, op", [("maximum", eg.maximum), ("minimum", eg.minimum)])
def test_maximum_and_minimum_rules_split_ties_as_the_vjp_does(name, op):
    rule = eg.primitives[name].rule
    assert "g/2 where a = b" in rule and "0.5/0.5" in rule
    ga, gb = _grads(op, [1.0, 2.0, 3.0], [1.0, 1.0, 5.0])
    win = [0.5, 1.0, 0.0] if name == "maximum" else [0.5, 0.0, 1.0]
    np.testing.assert_array_equal(ga, win)
    np.testing.assert_array_equal(gb, [0.5, 1 - win[1], 1 - win[2]])


@pytest.mark.parametrize("name", ["max", "min"])
def test_reduce_max_and_min_rules_split_ties_as_the_vjp_does(name):
    assert "ties split equally" in eg.primitives[name].rule
    (g,) = _grads(getattr(eg, name), [2.0, 2.0, 2.0, 1.0 if name == "max" else 3.0])
    np.testing.assert_allclose(g, [1 / 3, 1 / 3, 1 / 3, 0.0], rtol=1e-6)


def test_clip_rule_states_its_bounds_as_the_vjp_uses_them():
    rule = eg.primitives["clip"].rule
    for part in ("∂x = g where lo ≤ x ≤ hi", "∂lo = g where x < lo", "∂hi = g where x > hi"):
        assert part in rule
    x, lo, hi = [-2.0, -1.0, 0.0, 1.0, 2.0], [-1.0] * 5, [1.0] * 5
    gx, glo, ghi = _grads(eg.clip, x, lo, hi)
    np.testing.assert_array_equal(gx, [0, 1, 1, 1, 0])     # inclusive bounds
    np.testing.assert_array_equal(glo, [1, 0, 0, 0, 0])    # strictly below
    np.testing.assert_array_equal(ghi, [0, 0, 0, 0, 1])    # strictly above


def test_elementwise_flags_match_the_shapes():
    """An elementwise op keeps its input's shape, and so does each input's gradient; a reduction or a
    matmul does not claim to be elementwise."""
    x = eg.constant([0.3, 0.7, 1.1])
    cases = {"exp": [x], "tanh": [x], "multiply": [x, x * 2.0], "maximum": [x, x * 2.0],
             "clip": [x, eg.fill([3], 0.5), eg.fill([3], 0.9)], "where": [x > 0.5, x, x * 2.0]}
    for name, args in cases.items():
        p = eg.primitives[name]
        with eg.GradientTape() as tape:
            tape.watch(x)
            y = p(*args)
        assert p.elementwise and y.shape == x.shape
        assert tape.gradient(y, x).shape == x.shape
    assert not eg.primitives["matmul"].elementwise and not eg.primitives["sum"].elementwise
