"""An error names the function the user called and the argument that is wrong, never an op the user did
not write (issue 24): ``output_gradients`` of another dtype, shape or count, and ``gv.backprop`` with a
target its tape did not record.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engine as eg
import gradviz as gv

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
DTYPES = ["float16", "float32", "float64", "complex64", "int32", "int64", "bool"]


@st.composite
def wrong_upstream(draw):
    """(target dtype, target shape, output_gradients that do not fit, what is wrong)."""
    dtype = draw(st.sampled_from(["float16", "float32", "float64"]))
    shape = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    wrong = draw(st.sampled_from(["dtype", "shape", "count"]))
    if wrong == "dtype":
        other = draw(st.sampled_from([d for d in DTYPES if d != dtype]))
        upstream = eg.cast(eg.ones(shape), other) if other != "bool" else eg.ones(shape) > 0
    elif wrong == "shape":
        upstream = eg.ones(shape + (2,), dtype=dtype)
    else:
        upstream = [eg.ones(shape, dtype=dtype)] * 2
    return dtype, shape, upstream, wrong


@SETTINGS
@given(case=wrong_upstream(), persistent=st.booleans())
def test_output_gradients_that_do_not_fit_are_refused_naming_gradient_and_the_argument(case, persistent):
    dtype, shape, upstream, wrong = case
    x = eg.Variable(np.ones(shape, dtype=dtype))
    with eg.GradientTape(persistent=persistent) as tape:
        y = x * x
    with pytest.raises((TypeError, ValueError)) as info:
        tape.gradient(y, x, output_gradients=upstream)
    message = str(info.value)
    assert message.startswith("GradientTape.gradient: output_gradients"), message
    if wrong == "dtype":
        assert info.type is TypeError and dtype in message and "eg.cast" in message, message
    if wrong == "shape":
        assert str(shape) in message, message


def test_backward_steps_names_itself():
    x = eg.Variable([1.0, 2.0])
    with eg.GradientTape() as tape:
        y = x * 2.0
    with pytest.raises(TypeError, match=r"^backward_steps: output_gradients has dtype float64"):
        list(eg.backward_steps(tape, y, x, output_gradients=eg.constant([1.0, 1.0], dtype="float64")))


def test_a_python_upstream_still_adapts_to_the_target():
    x = eg.Variable(1.0)
    with eg.GradientTape() as tape:
        y = x * 3.0
    assert float(tape.gradient(y, x, output_gradients=2.0)) == 6.0


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(where=st.sampled_from(["other tape", "outside the tape", "a constant"]))
def test_gv_backprop_with_a_target_its_tape_did_not_record_names_gv_backprop(where):
    x = eg.Variable(2.0)
    with eg.GradientTape(persistent=True) as tape:
        y = x * x
    if where == "other tape":
        with eg.GradientTape() as other:
            target = x * 3.0
        del other
    elif where == "outside the tape":
        target = y * 2.0
    else:
        target = eg.constant(1.0)
    with pytest.raises(ValueError, match=r"^gv\.backprop: the target .* was not computed on this tape"):
        gv.backprop(tape, target, [x])
    assert gv.backprop(tape, y, [x]).steps  # the recorded target still works


def test_gv_backprop_position_out_of_range_names_gv_backprop():
    x = eg.Variable(2.0)
    with eg.GradientTape(persistent=True) as tape:
        y = x * x
    view = gv.backprop(tape, y, [x])
    with pytest.raises(IndexError, match=r"^gv\.backprop: position 99"):
        view.position = 99
