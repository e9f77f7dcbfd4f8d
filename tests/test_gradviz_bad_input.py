"""gradviz under bad input (issue 13): no hang, clear errors, no state inherited from dead objects.

The clipping lab's pictures must stay sane whatever the gradients (zeros, tiny, huge, inf/NaN): the view
always holds the threshold circle and the arrows, and no drawn path runs far outside the figure (a dashed
circle 1e12 times larger than the axes is what hung the kernel). ``method="thread"``: a hang in
matplotlib's C code ignores signals, so only the thread method turns it into a failure.
"""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest

import engine as eg
import gradviz as gv

HANG = pytest.mark.timeout(30, method="thread")

CLIP_INPUTS = {
    "zeros": ([[0.0, 0.0]], {}),
    "zeros threshold 1": ([[0.0, 0.0]], {"threshold": 1.0}),
    "tiny, threshold 1": ([[1e-7, 1e-7]], {"threshold": 1.0}),
    "tiny float64": ([np.array([1e-300, 0.0])], {}),
    "huge 1e30": ([[1e30, 1e30]], {}),
    "huge float64": ([np.array([1e300, -1e300])], {}),
    "threshold far above the gradients": ([[3.0, 4.0]], {"threshold": 1e6}),
    "threshold far below the gradients": ([[3.0, 4.0]], {"threshold": 1e-9}),
    "nan entry": ([[math.nan, 1.0]], {}),
    "inf entry": ([[math.inf, 1.0], [0.5, 0.5]], {}),
    "one element": ([[2.0]], {}),
    "3-D vectors": ([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]], {}),
    "a None gradient alone": ([None], {}),
    "an empty gradient": ([np.zeros((0,), np.float32)], {}),
    "zeros, bars": ([[0.0, 0.0, 0.0]], {"view": "bars"}),
}


def _lab(case: str):
    grads, kwargs = CLIP_INPUTS[case]
    tensors = [None if g is None else eg.constant(g) for g in grads]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the engine's own overflow warnings (1e30²)
        return gv.clipping(tensors, **kwargs)


@HANG
@pytest.mark.parametrize("case", list(CLIP_INPUTS))
def test_clipping_pictures_finish_and_hold_the_threshold(case):
    lab = _lab(case)
    assert lab.threshold > 0 and math.isfinite(lab.threshold)
    fig, art = lab._make_figure()
    if lab.view == "arrows":
        lo, lim = fig.axes[0].get_xlim()
        assert lo == -lim and math.isfinite(lim)
        assert lim >= lab.threshold  # the threshold circle is inside the view
        drawn = [np.hypot(*v) for v in np.array([a for a in lab._arrays if a is not None], float)
                 if np.isfinite(np.hypot(*v))]
        # and the view is not far larger than both (but matplotlib draws no view narrower than ±0.05)
        assert lim <= max(1.2 * max([lab.threshold, *drawn]), 0.05)
    else:
        assert fig.axes[0].get_xlim()[1] >= lab.threshold
    for method in ("value", "global norm"):
        lab.method = method
        for threshold in (lab.threshold, lab._slider_max):
            lab.threshold = threshold
            assert lab.png()[:4] == b"\x89PNG"  # the live widget's picture
            lab._png = None
    assert "<svg" in lab.to_svg() and "<svg" in lab.to_html()


def _path_numbers(svg: str) -> list[float]:
    out: list[float] = []
    for d in re.findall(r'\sd="([^"]*)"', svg):
        out += [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?", d)]
    return out


@HANG
@pytest.mark.parametrize("case", ["zeros", "tiny, threshold 1", "threshold far above the gradients",
                                  "huge 1e30", "inf entry"])
def test_clipping_frames_paths_stay_in_the_figure(case):
    """The kernel-free lab: every frame's moving artists (arrows, circle, box) as SVG paths whose
    coordinates stay near the figure (605 × 245 pt), for every threshold of the slider."""
    lab = _lab(case)
    frames = lab._frames_now()
    moving = next(spec for spec in frames.layers if spec["name"] == "moving")
    assert moving["frames"]
    numbers = [x for svg in moving["frames"].values() for x in _path_numbers(svg)]
    assert numbers and max(abs(x) for x in numbers) < 5_000
    assert max(abs(x) for x in _path_numbers(frames.picture)) < 5_000


def test_clipping_names_inf_and_nan_gradients_in_the_panel():
    lab = _lab("inf entry")
    assert "inf/NaN entries in g0" in lab._panel()
    legend = lab._make_figure()[0].axes[0].get_legend()
    assert "g0 (inf/NaN: not drawn)" in [t.get_text() for t in legend.texts]
    assert "inf/NaN" not in _lab("zeros")._panel()


@pytest.mark.parametrize("grads", [eg.constant([1.0, 2.0]), np.array([1.0, 2.0])])
def test_clipping_refuses_a_lone_gradient_by_the_shared_message(grads):
    with pytest.raises(TypeError, match=r"^gv.clipping: the gradients must be .* single tensor, not a list"):
        gv.clipping(grads)


# ---- gv.Recorder: a rebuilt model's variables start afresh (item 9) ---------------------------------


def test_recorder_rebuilt_variables_inherit_nothing():
    """Variables deleted and rebuilt (CPython reuses their id() at once): each new one is a new series
    with one step, never the continuation of a dead one's history."""
    rec = gv.Recorder()
    for trial in range(200):
        w = eg.Variable(np.full(3, trial, np.float32), name="w")
        rec.record(trial, grads_and_vars=[(eg.constant([1.0, 1.0, 1.0]), w)])
        del w
    names = rec.variable_names
    assert len(names) == 200 and len(set(names)) == 200 and names[:3] == ["w", "w_2", "w_3"]
    for name in names:
        stats = rec.gradient_stats(name)
        assert len(stats["step"]) == 1
        assert math.isnan(stats["update_ratio"][0])  # no previous value: nothing to compare with
    # and one living variable stays one series
    rec = gv.Recorder()
    w = eg.Variable([1.0, 2.0], name="w")
    for step in range(3):
        rec.record(step, grads_and_vars=[(eg.constant([1.0, 1.0]), w)])
        w.assign_sub([0.5, 0.5])
    assert rec.variable_names == ["w"] and rec.gradient_stats("w")["step"] == [0, 1, 2]


# ---- wrong types at every public entry point (item 10) ------------------------------------------------


@pytest.fixture(scope="module")
def recorded():
    x = eg.Variable([1.0, 2.0], name="x")
    with eg.GradientTape(persistent=True) as tape:
        y = eg.sum(x * x)
    return tape, y, x


def _sq(v):
    return eg.sum(v * v)


ENTRY_POINTS = {
    "gv.graph(target)": (lambda t, y, x, bad: gv.graph(bad), "gv.graph: the target"),
    "gv.graph(y, tape)": (lambda t, y, x, bad: gv.graph(y, bad), "gv.graph: the tape"),
    "gv.tape(tape)": (lambda t, y, x, bad: gv.tape(bad), "gv.tape: the tape"),
    "gv.explain_none(tape, ...)": (lambda t, y, x, bad: gv.explain_none(bad, y, x),
                                   "gv.explain_none: the tape"),
    "gv.explain_none(.., target, ..)": (lambda t, y, x, bad: gv.explain_none(t, bad, x),
                                        "gv.explain_none: the target"),
    "gv.explain_none(.., source)": (lambda t, y, x, bad: gv.explain_none(t, y, bad),
                                    "gv.explain_none: the source"),
    "gv.backprop(tape, ..)": (lambda t, y, x, bad: gv.backprop(bad, y, x), "gv.backprop: the tape"),
    "gv.backprop(.., target, ..)": (lambda t, y, x, bad: gv.backprop(t, bad, x), "gv.backprop: the target"),
    "gv.backprop(.., sources)": (lambda t, y, x, bad: gv.backprop(t, y, bad), "gv.backprop: the sources"),
    "gv.clipping(grads)": (lambda t, y, x, bad: gv.clipping(bad), "gv.clipping: the gradient"),
    "gv.clipping([grad])": (lambda t, y, x, bad: gv.clipping([[1.0, 2.0], bad]),
                            "gv.clipping: the gradient 'g1'"),
    "gv.descent(f, start)": (lambda t, y, x, bad: gv.descent(_sq, bad), "gv.descent: start"),
    "gv.check_gradients(f, arg)": (lambda t, y, x, bad: gv.check_gradients(_sq, bad),
                                   "gv.check_gradients: the input 'v'"),
    "Recorder.record(grads_and_vars)": (lambda t, y, x, bad: gv.Recorder().record(0, grads_and_vars=bad),
                                        "Recorder.record: grads_and_vars"),
    "gv.build_model(target, tape)": (lambda t, y, x, bad: gv.build_model(y, bad), "gv.graph: the tape"),
    "gv.to_dot(model)": (lambda t, y, x, bad: gv.to_dot(bad), "gv.to_dot: the model"),
    "gv.render_svg(source)": (lambda t, y, x, bad: gv.render_svg(bad), "gv.render_svg: the source"),
    "GraphView.select(node)": (lambda t, y, x, bad: gv.graph(y, t).select(bad), "GraphView.select: the node"),
    "gv.memory(profile)": (lambda t, y, x, bad: gv.memory(bad), "gv.memory: the profile"),
}
BAD = {"None": None, "3.0": 3.0, "a function": print, "a dict of text": {"a": "b"}}
# what is a valid value for some entry points, not a wrong type
VALID = {("gv.backprop(.., sources)", "None"),  # every watched source
         ("gv.clipping([grad])", "None"), ("gv.clipping([grad])", "3.0"),  # no gradient; a 0-d one
         ("gv.descent(f, start)", "3.0"), ("gv.check_gradients(f, arg)", "3.0"),  # a scalar point
         ("Recorder.record(grads_and_vars)", "None"),  # no gradients this step
         ("gv.graph(y, tape)", "None"),  # find the tape
         ("GraphView.select(node)", "None"),  # no selection
         ("gv.memory(profile)", "a function")}  # profiled when called
STRINGS_ARE_VALID = {"gv.render_svg(source)", "GraphView.select(node)"}  # DOT text / a node id


@pytest.mark.parametrize("entry, bad", [(e, b) for e in ENTRY_POINTS for b in BAD if (e, b) not in VALID])
def test_wrong_types_get_a_type_error_naming_the_call(recorded, entry, bad):
    call, prefix = ENTRY_POINTS[entry]
    with pytest.raises(TypeError) as err:
        call(*recorded, BAD[bad])
    message = str(err.value)
    assert message.startswith(prefix) and "must be" in message, message
    assert "got " in message


@pytest.mark.parametrize("entry", sorted(set(ENTRY_POINTS) - STRINGS_ARE_VALID - {"gv.clipping([grad])"}))
@pytest.mark.parametrize("bad", ["loss", np.array([1.0, 2.0])])
def test_text_and_arrays_where_tensors_or_tapes_are_expected(recorded, entry, bad):
    call, prefix = ENTRY_POINTS[entry]
    numbers_ok = entry in {"gv.descent(f, start)", "gv.check_gradients(f, arg)"}
    if numbers_ok and isinstance(bad, np.ndarray):
        return  # an array is a fine point to start from / check at
    with pytest.raises(TypeError, match=re.escape(prefix)):
        call(*recorded, bad)


SECONDARY = {  # keyword arguments of the same entry points: wrong types named the same way
    "gv.graph(names=3.0)": (lambda t, y, x: gv.graph(y, t, names=3.0), "gv.graph: names"),
    "gv.graph(names=[x])": (lambda t, y, x: gv.graph(y, t, names=[x]), "gv.graph: names"),
    "gv.tape(names=3.0)": (lambda t, y, x: gv.tape(t, names=3.0), "gv.tape: names"),
    "gv.backprop(names=3.0)": (lambda t, y, x: gv.backprop(t, y, x, names=3.0), "gv.backprop: names"),
    "gv.graph(show=3)": (lambda t, y, x: gv.graph(y, t, show=3), "gv.graph: show"),
    "gv.graph(show='value')": (lambda t, y, x: gv.graph(y, t, show="value"), "gv.graph: show"),
    "gv.to_dot(show=3)": (lambda t, y, x: gv.to_dot(gv.build_model(y, t), show=3), "gv.to_dot: show"),
    "gv.clipping(names=3)": (lambda t, y, x: gv.clipping([[1.0, 2.0]], names=3), "gv.clipping: names"),
    "Recorder.record(step='a')": (lambda t, y, x: gv.Recorder().record("a", loss=1.0),
                                  "Recorder.record: step"),
    "Recorder.record(step=None)": (lambda t, y, x: gv.Recorder().record(None, loss=1.0),
                                   "Recorder.record: step"),
}


@pytest.mark.parametrize("entry", list(SECONDARY))
def test_wrong_keyword_arguments_get_a_type_error_naming_them(recorded, entry):
    call, prefix = SECONDARY[entry]
    with pytest.raises(TypeError, match="^" + re.escape(prefix) + " must be .*, got "):
        call(*recorded)


@pytest.mark.parametrize("target", [None, 3.0, np.zeros(2)])
def test_graph_says_what_it_expects(target):
    with pytest.raises(TypeError, match="gv.graph: the target must be a Tensor computed under a Gradient"):
        gv.graph(target)


def test_graph_view_select_by_tensor(recorded):
    tape, y, x = recorded
    view = gv.graph(y, tape, names={"x": x, "y": y})
    view.select(y)
    assert view.selected == view.model.node_for(y).id and "<b>y</b>" in view.details
    view.select(x)  # a Variable: the node of the Variable (its reads are drawn as it)
    assert "<b>x</b>" in view.details
    view.select(None)
    assert view.selected is None and view.details == ""
    with pytest.raises(KeyError, match="not in this graph"):
        view.select(eg.constant(1.0))


# ---- gv.explain_none: a value read through .numpy() inside the tape (item 14) -----------------------


def test_explain_none_names_a_numpy_read_inside_the_tape():
    v = eg.Variable([1.0, 2.0], name="v")
    with eg.GradientTape(persistent=True) as tape:
        y = eg.sum(eg.constant(np.sin(v.numpy())))
    assert tape.gradient(y, v) is None
    why = gv.explain_none(tape, y, v)
    assert why.startswith("not watched") and "through .numpy()" in why and "not read inside" not in why
    x = eg.constant([0.5])
    with eg.GradientTape() as tape2:
        tape2.watch(x)
        with pytest.warns(eg.TapeEscapeWarning):  # the engine warns; explain_none says it afterwards
            z = eg.constant(np.asarray(x) * 3.0)
    assert "through np.asarray()" in gv.explain_none(tape2, z, x).split(":", 1)[1]
    # read outside any tape: the old reason stands
    w = eg.Variable([1.0, 2.0], name="w")
    _ = w.numpy()
    with eg.GradientTape() as tape3:
        u = eg.constant(3.0) * 2.0
    assert "it was not read inside the tape's `with` block" in gv.explain_none(tape3, u, w)
