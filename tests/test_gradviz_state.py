"""Widget state is declared once, as traits: a bad value is a clear ValueError naming the widget (not a
stack trace from deep inside), and a control and its trait are one state, whichever side moves."""

from __future__ import annotations

import math

import pytest
import traitlets

import engine as eg
import gradviz as gv
from gradviz.render.html import panel_html


def _views():
    x = eg.constant(2.0)
    with eg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x + eg.sin(x)
    rec = gv.Recorder()
    w = eg.Variable([1.0, 2.0], name="dense_1/kernel")
    for step in range(3):
        with eg.GradientTape() as t:
            loss = eg.sum(w * w) * (step + 1)
        rec.record(step, loss=loss, grads_and_vars=[(t.gradient(loss, w), w)])
    return {
        "clipping": gv.clipping([eg.constant([3.0, 4.0])], threshold=2.0),
        "flow": gv.flow(rec),
        "descent": gv.descent(lambda v: v * v, 2.0, optimizers=("SGD", "Adam"), steps=5),
        "check_gradients": gv.check_gradients(lambda a, b: a * b, 1.5, 2.0),
        "backprop": gv.backprop(tape, y, [x]),
    }


BAD = [  # (widget, trait, bad value, words of the message)
    ("clipping", "threshold", 0.0, "threshold must be > 0"),
    ("clipping", "threshold", math.nan, "threshold must be > 0"),
    ("clipping", "method", "magic", "unknown method 'magic'"),
    ("flow", "step", 99, "step 99 was not recorded"),
    ("flow", "stat", "median", "stat must be one of"),
    ("flow", "by", "neuron", "by must be 'layer' or 'variable'"),
    ("descent", "step", 6, "step must be in 0..5"),
    ("descent", "learning_rate", -1.0, "learning_rate must be a positive number"),
    ("descent", "selected", ["Nope"], "no optimizer 'Nope'"),
    ("check_gradients", "input", "c", "no input 'c'"),
]


@pytest.mark.parametrize("kind, name, value, message", BAD)
def test_bad_state_is_a_clear_error_and_changes_nothing(kind, name, value, message):
    view = _views()[kind]
    assert view.has_trait(name)
    before = getattr(view, name)
    with pytest.raises(ValueError, match=message):
        setattr(view, name, value)
    assert getattr(view, name) == before


def test_the_steppers_position_is_checked():
    bp = _views()["backprop"]
    with pytest.raises(IndexError, match="out of range"):
        bp.position = len(bp)
    bp.position = 1
    assert bp.op is not None and "Step 1" in bp.panel


@pytest.mark.parametrize("kind, name, first, second", [
    ("clipping", "threshold", 1.5, 3.0), ("clipping", "method", "value", "norm"),
    ("flow", "by", "variable", "layer"), ("flow", "log", False, True),
    ("descent", "step", 3, 1), ("descent", "learning_rate", 0.05, 0.2),
    ("check_gradients", "failures_only", True, False),
])
def test_a_control_and_its_trait_are_one_state(kind, name, first, second):
    view = _views()[kind]
    control = view.controls[name]
    setattr(view, name, first)  # code moves: the control follows, the picture is redrawn
    assert control.value == pytest.approx(first)
    panel = _panel(view)
    control.value = second  # the user moves the control: the state follows
    assert getattr(view, name) == pytest.approx(second)
    assert _panel(view) != panel or kind == "flow"


def _panel(view):
    """The panel the widget shows now (kernel-free widgets: the frame its controls select)."""
    return view.shown("panel")


def test_a_checkbox_and_the_selected_optimizers_are_one_state():
    view = _views()["descent"]
    boxes = view.controls
    boxes["show Adam"].value = False
    assert view.selected == ("SGD",)
    view.selected = ("Momentum", "SGD")
    assert boxes["show Momentum"].value and boxes["show SGD"].value and not boxes["show Adam"].value
    assert view.selected == ("SGD", "Momentum")  # in the widget's order


def test_state_traits_are_traitlets():
    for view in _views().values():
        assert isinstance(view, traitlets.HasTraits)


@pytest.mark.parametrize("kind", ["clipping", "flow", "descent", "check_gradients", "backprop"])
def test_frames_come_from_snapshots_and_agree_with_the_view_set_there(kind):
    """One lifecycle (gradviz.widgets.view): building the live widget computes every frame from snapshots
    of the view (`View.at`), so the view's state is where it was; and at every position of every control
    (the others where they start), the panel the browser shows is the panel of the view set there."""
    view = _views()[kind]
    controls = view._frame_controls()
    before = {c.name: c.get(view) for c in controls}
    widget = view.widget
    assert {c.name: c.get(view) for c in controls} == before
    start = dict(widget.index)
    for c in controls:
        for k in range(len(c.values)):
            widget.index = {**start, c.name: k}  # the browser moves one control: the state follows
            assert c.get(view) == c.values[k]
            frame = panel_html({"layers": widget.layers, "index": widget.index})  # as the browser joins it
            here = view._panel() if hasattr(view, "_panel") else view.panel
            snap = view.at(view.snapshot(controls, widget.index))
            there = snap._panel() if hasattr(snap, "_panel") else snap.panel
            assert frame == here == there
        widget.index = start



def test_a_snapshot_leaves_the_view_and_its_picture_as_they_were():
    """`View.at` copies the state it changes: the stepper at another step draws that step's highlights,
    and the view it came from still draws its own."""
    bp = _views()["backprop"]
    svg = bp.to_svg()
    snap = bp.at({"step": len(bp) - 1})
    assert snap.position == len(bp) - 1 and bp.position == 0
    assert snap.to_svg() != svg and bp.to_svg() == svg
