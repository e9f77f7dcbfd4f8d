"""Every public function and class of engine and gradviz has a tiny example in its docstring, and
``pytest --doctest-modules`` (part of the suite: see pyproject.toml) runs them all."""

from __future__ import annotations

import inspect

import pytest

import engine as eg
import gradviz as gv

SUBMODULES = ("nn", "optimizers", "layers", "data", "random")


def _public() -> dict[str, object]:
    out: dict[str, object] = {}
    for name in eg.__all__:
        obj = getattr(eg, name)
        if callable(obj) and not inspect.ismodule(obj) and not isinstance(obj, type(eg.float32)):
            out[f"eg.{name}"] = obj
    for sub in SUBMODULES:
        module = getattr(eg, sub)
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if callable(obj) and not inspect.ismodule(obj):
                out[f"eg.{sub}.{name}"] = obj
    for name in gv.__all__:
        out[f"gv.{name}"] = getattr(gv, name)
    return out


PUBLIC = _public()


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_every_public_function_has_an_example(name):
    doc = inspect.getdoc(PUBLIC[name]) or ""
    assert ">>>" in doc, f"{name}: its docstring has no example (a `>>>` line that the doctests run)"


def test_the_primitives_examples_are_collected():
    """A Primitive is an object, not a function: engine.ops lists their docstrings in __test__, so
    --doctest-modules runs their examples too."""
    import engine.ops

    public = {n for n in engine.ops.__all__ if isinstance(getattr(engine.ops, n), eg.Primitive)}
    assert public and public <= set(engine.ops.__test__)
