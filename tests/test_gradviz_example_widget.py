"""The widget guide's example (docs/WIDGETS.md, gradviz/widgets/tangent_view.py) on the one widget base:
its frames are pure functions of the slider's position and agree with the static page, and the live
widget and the trait are one state, both ways (gradviz.widgets.view)."""

from __future__ import annotations

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

import engine as eg
from gradviz.render.tangent_svg import tangent_panel
from gradviz.widgets.tangent_view import TangentView, tangent

FUNCTIONS = {"square": lambda x: x * x, "tanh": eg.tanh, "cubic": lambda x: x * x * x - 2.0 * x}


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(sorted(FUNCTIONS)), lo=st.floats(-3, -0.5), width=st.floats(1, 5),
       points=st.integers(2, 9), k=st.integers(0, 8))
def test_every_frame_is_the_static_view_at_its_position(name, lo, width, points, k):
    """The exported page (the frames) shows at each position what the view set there shows (its static
    HTML), and making the frames leaves the view where it was."""
    f = FUNCTIONS[name]
    view = tangent(f, x=lo, lo=lo, hi=lo + width, points=points)
    frames = view.frames()
    k = min(k, points - 1)
    x = view.grid[k]
    assert view.x == lo  # frames are made from snapshots: the view never moved
    panel = frames.lookup("panel", x=k)
    assert panel == tangent_panel(view.at({"x": x})._at(x))
    view.x = x
    assert panel in view.to_html()
    h = 1e-5  # the slope shown is the tape's: a central difference agrees
    below, above = np.asarray(f(eg.constant(np.array([x - h, x + h]))).numpy())
    assert view.slope == pytest.approx((above - below) / (2 * h), rel=1e-4, abs=1e-4)


def test_the_slider_and_the_trait_are_one_state():
    view = tangent(lambda x: x * x, x=0.0, lo=-2.0, hi=2.0, points=5)
    widget = view.widget
    assert widget.index == {"x": 2}
    widget.index = {"x": 4}  # the browser moves the slider: the trait follows
    assert view.x == 2.0
    view.x = -1.0  # code moves the state: the slider follows
    assert widget.index == {"x": 1}
    view.controls["x"].value = 1.0  # as a user sets an ipywidgets control
    assert widget.index == {"x": 3} and view.x == 1.0


def test_a_value_off_the_grid_gets_new_frames():
    view = tangent(lambda x: x * x, x=0.0, lo=-2.0, hi=2.0, points=5)
    widget = view.widget
    view.x = 0.5  # between two positions: new frames, with 0.5 on the grid
    labels = widget.controls[0]["labels"]
    assert len(labels) == 6 and labels[widget.index["x"]] == "0.5"
    assert "slope 1" in view.frames().lookup("panel", x=widget.index["x"])


def test_bad_input_is_refused_with_the_call_named():
    with pytest.raises(ValueError, match="tangent: lo must be below hi"):
        tangent(eg.tanh, lo=1.0, hi=0.0)
    view = tangent(eg.tanh)
    with pytest.raises(Exception, match="tangent"):
        view.x = "left"
    assert isinstance(view, TangentView) and view.x == 0.0
