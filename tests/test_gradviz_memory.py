"""gv.memory: what it draws per event equals the profile's numbers; the stacked area by layer sums to
the bytes kept at every event (Hypothesis over random timelines); every cursor position is a frame
whose row names the event's op and bytes; the static forms; bad input named."""

from __future__ import annotations

import re
from types import SimpleNamespace as E

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradviz as gv
from gradviz.model.memory_runs import MAX_SCOPES, read_profile, read_profiles
from gradviz.render.memory_plots import byte_text
from gradviz.render.theme import DARK


def profile(events):
    """A MemoryProfile-shaped object of ``events`` (phase, op, scope, alive, saved) tuples."""
    timeline = [E(phase=p, op=o, scope=s, alive_bytes=a, saved_bytes=b) for p, o, s, a, b in events]
    return E(timeline=timeline, peak_bytes=max(a for *_, a, _ in events),
             saved_peak_bytes=max(b for *_, b in events), by_scope={}, result=None)


MLP = profile([
    ("forward", "MatMul", "dense", 5000, 800), ("forward", "Tanh", "dense", 6000, 1200),
    ("forward", "MatMul", "dense_1", 6500, 1600), ("forward", "Mean", "", 6600, 1600),
    ("backward", "Mean", "", 6600, 1600), ("backward", "MatMul", "dense_1", 6200, 1200),
    ("backward", "Tanh", "dense", 5800, 800), ("backward", "MatMul", "dense", 5000, 0),
])


def test_the_run_holds_the_profiles_numbers_event_by_event():
    run = read_profile(MLP, "mlp")
    for k, e in enumerate(MLP.timeline):
        shown = run.event(k)
        assert (shown["phase"], shown["op"], shown["alive_bytes"], shown["saved_bytes"]) == \
            (e.phase, e.op, e.alive_bytes, e.saved_bytes)
        assert sum(shown["by_scope"].values()) == e.saved_bytes
    assert run.scopes == ("dense", "dense_1")
    assert run.kept.tolist() == [800, 400, 400, 0, 0, -400, -400, -800]
    assert run.first_backward == 4 and run.counts == {"op": 4, "step": 4}
    assert (run.peak_bytes, run.saved_peak_bytes) == (6600, 1600)


@st.composite
def timelines(draw):
    """A forward pass that keeps bytes in random scopes, then a backward walk that lets them go (in
    any order: a step may free bytes a later scope kept), alive >= kept."""
    n = draw(st.integers(1, 25))
    scopes = st.sampled_from(["", "a", "b", "c/d", "e", "f", "g", "h", "i", "j"])
    events, saved = [], 0
    for k in range(n):
        saved += draw(st.integers(0, 10_000))
        events.append(("forward", f"op{k}", draw(scopes), saved + draw(st.integers(0, 500)), saved))
    for k in range(n):
        saved -= draw(st.integers(0, saved)) if k < n - 1 else saved
        events.append(("backward", f"op{n - 1 - k}", draw(scopes), saved + draw(st.integers(0, 500)), saved))
    return events


@settings(max_examples=60, deadline=None)
@given(timelines())
def test_the_stacked_area_sums_to_the_kept_bytes_at_every_event(events):
    run = read_profile(profile(events), "p")
    assert run.saved_by_scope.shape == (len(events), len(run.scopes)) and len(run.scopes) <= MAX_SCOPES
    assert (run.saved_by_scope >= 0).all()
    assert run.saved_by_scope.sum(axis=1).tolist() == [e[4] for e in events]
    assert run.alive.tolist() == [e[3] for e in events]


def two():
    small = profile([(p, o, s, a // 4, b // 4) for p, o, s, a, b in
                     [(e.phase, e.op, e.scope, e.alive_bytes, e.saved_bytes) for e in MLP.timeline]] * 1)
    return {"batch 128": MLP, "4 × 32": small}


def test_every_cursor_frame_shows_its_events_op_and_bytes():
    view = gv.memory(two(), theme="light")
    widget = view.widget
    assert [c["name"] for c in widget.controls] == ["cursor 1", "cursor 2"]
    assert [c["interval_ms"] for c in widget.controls] == [400, 400]  # 8 events: ▶ at its usual pace
    layers = {spec["name"]: spec for spec in widget.layers}
    for i, prof in enumerate(two().values()):
        assert len(layers[f"cursor{i}"]["frames"]) == len(prof.timeline)
        for k, e in enumerate(prof.timeline):
            row = layers[f"row{i}"]["frames"][str(k)]
            assert f"<b>{e.op}</b>" in row and f"<td>{byte_text(e.saved_bytes)}</td>" in row
            assert f"<td>{byte_text(e.alive_bytes)}</td>" in row and f"{k + 1} of {len(prof.timeline)}" in row
            assert "<circle" in layers[f"cursor{i}"]["frames"][str(k)]
    # the cursors start where each profile keeps the most; a control moves the state and the panel
    assert view.cursor == (2, 2)
    view.controls["cursor 2"].value = 7
    assert view.current()["4 × 32"]["op"] == "MatMul" and view.current()["4 × 32"]["saved_bytes"] == 0
    assert widget.index == {"cursor 1": 2, "cursor 2": 7}
    assert "lets go 200 B" in view.shown()


def test_the_picture_follows_the_theme_through_css_variables():
    view = gv.memory(two(), theme="dark")
    picture = view.widget.picture
    assert "var(--gv-text)" in picture and "var(--gv-muted)" in picture and "var(--gv-background)" in picture
    for role in ("text", "muted", "highlight", "background"):  # no palette colour drawn as a literal
        colour = getattr(DARK, role)
        assert not re.search(rf"(fill|stroke)(:\s*|=\"){colour}", picture), role
    cursor = {spec["name"]: spec for spec in view.widget.layers}["cursor0"]["frames"]["0"]
    assert 'stroke="var(--gv-highlight)"' in cursor and "var(--jp-layout-color0" in cursor


def test_static_forms(tmp_path):
    view = gv.memory([MLP, MLP], labels=["a", "b"], theme="light")
    html = view._repr_html_()
    assert html.count("<svg") == 1 and "MatMul" in html and "var(--gv-" in html
    for suffix in ("png", "svg", "html"):
        assert view.save(tmp_path / f"m.{suffix}").stat().st_size > 1000
    assert view.png()[:4] == b"\x89PNG"


@pytest.mark.parametrize("bad, kind, words", [
    (3.0, TypeError, "eg.MemoryProfile"),
    (E(timeline=[], peak_bytes=0, saved_peak_bytes=0), ValueError, "no events"),
    (E(timeline=[E(phase="forward", op="A", scope="")], peak_bytes=0, saved_peak_bytes=0), TypeError,
     "no .alive_bytes"),
    (profile([("sideways", "A", "", 1, 1)]), ValueError, "'forward' or 'backward'"),
    (profile([("forward", "A", "", -1, 0)]), ValueError, "whole number of bytes >= 0"),
    (profile([("forward", "A", "", "1", 0)]), TypeError, "whole number of bytes"),
    ([], ValueError, "no profile"),
    ([MLP] * 7, ValueError, "at most 6"),
])
def test_bad_profiles_are_refused_by_name(bad, kind, words):
    with pytest.raises(kind, match="gv.memory") as info:
        gv.memory(bad)
    assert words in str(info.value)


def test_bad_keywords_and_cursors():
    with pytest.raises(ValueError, match="one text per profile"):
        read_profiles([MLP, MLP], labels=["only one"])
    with pytest.raises(ValueError, match="same label"):
        gv.memory([MLP, MLP], labels=["x", "x"])
    with pytest.raises(TypeError, match="only labels= and theme="):
        gv.memory(MLP, batch=3)
    with pytest.raises(TypeError, match="extra positional"):
        gv.memory(MLP, 3)
    view = gv.memory(MLP)
    with pytest.raises(ValueError, match=r"event index in 0..7"):
        view.cursor = (8,)
    with pytest.raises(ValueError, match="one event index per profile"):
        view.cursor = (1, 2)
    assert np.array_equal(view.runs[0].saved, [e.saved_bytes for e in MLP.timeline])


# ---- real profiles (eg.memory_profile) ---------------------------------------------------------------

def _mlp_profiles():
    """An MLP step at batch 64 and as 4 accumulated micro-batches of 16, profiled by the engine."""
    import engine as eg

    rng = np.random.default_rng(0)
    model = eg.layers.Sequential([eg.layers.Dense(32, activation="tanh", seed=1),
                                  eg.layers.Dense(10, seed=2)])
    x = eg.constant(rng.random((64, 20), dtype=np.float32))
    y = eg.constant(rng.integers(0, 10, 64))
    model(x[:1])

    def step(x, y):
        with eg.GradientTape() as tape:
            loss = eg.mean(eg.nn.sparse_softmax_cross_entropy(labels=y, logits=model(x)))
        return tape.gradient(loss, model.trainable_variables)

    def accumulated(x, y):
        return [step(x[16 * j:16 * (j + 1)], y[16 * j:16 * (j + 1)]) for j in range(4)]

    return {"batch 64": eg.memory_profile(step, x, y), "4 × 16": eg.memory_profile(accumulated, x, y)}


def test_a_real_profile_is_drawn_event_by_event():
    profiles = _mlp_profiles()
    view = gv.memory(profiles, theme="light")
    assert all(c["interval_ms"] * len(c["labels"]) <= 10_000 for c in view.widget.controls)  # ▶: ≤ 10 s
    for run, prof in zip(view.runs, profiles.values()):
        assert run.events == len(prof.timeline) and (run.peak_bytes, run.saved_peak_bytes) == \
            (prof.peak_bytes, prof.saved_peak_bytes)
        assert run.alive.tolist() == [e.alive_bytes for e in prof.timeline]
        assert run.saved.tolist() == [e.saved_bytes for e in prof.timeline]
        assert list(run.phases) == [e.phase for e in prof.timeline]
        assert list(run.ops) == [e.op for e in prof.timeline]
        assert list(run.kinds) == [e.kind for e in prof.timeline]
        assert run.saved_by_scope.sum(axis=1).tolist() == run.saved.tolist()
        assert int(run.saved.max()) == prof.saved_peak_bytes
    layers = {spec["name"]: spec for spec in view.widget.layers}
    for i, prof in enumerate(profiles.values()):
        for k, e in enumerate(prof.timeline):
            row = layers[f"row{i}"]["frames"][str(k)]
            assert f"<b>{e.op}</b>" in row and f"<td>{byte_text(e.saved_bytes)}</td>" in row


def test_the_cursor_dots_sit_on_the_profiles_bytes():
    """The kept-bytes dot of every cursor frame: its height is one straight function of the profile's
    saved_bytes (the panel's byte axis), the same in both panels (one axis for all profiles)."""
    profiles = _mlp_profiles()
    view = gv.memory(profiles, theme="light")
    layers = {spec["name"]: spec for spec in view.widget.layers}
    heights, saved = [], []
    for i, prof in enumerate(profiles.values()):
        for k, e in enumerate(prof.timeline):
            frame = layers[f"cursor{i}"]["frames"][str(k)]
            circles = re.findall(r'<circle cx="([\d.]+)" cy="([\d.]+)"', frame)
            heights.append(float(circles[1][1]))  # the second dot: the kept bytes
            saved.append(e.saved_bytes)
    slope, intercept = np.polyfit(saved, heights, 1)
    assert slope < 0  # more bytes, higher up (SVG's y grows downwards)
    assert np.max(np.abs(np.polyval([slope, intercept], saved) - heights)) < 0.2  # 0.1 pt rounding


def _named(mapping):
    return {(str(s).strip("/") or "(no scope)"): int(b) for s, b in mapping.items() if b}


def test_the_split_by_layer_is_the_engines_and_the_timelines_agrees_with_it():
    """Drawn by layer as the engine reports it at every event; and the split read off the timeline
    alone (for a profile without saved_by_scope) gives the same bands at the peak (by_scope)."""
    prof = _mlp_profiles()["batch 64"]
    run = gv.memory(prof).runs[0]
    for k, e in enumerate(prof.timeline):
        assert {s: int(b) for s, b in zip(run.scopes, run.saved_by_scope[k]) if b} == _named(e.saved_by_scope)
    bare = profile([(e.phase, e.op, e.scope, e.alive_bytes, e.saved_bytes) for e in prof.timeline])
    derived = read_profile(bare, "timeline only")
    peak = int(np.argmax(derived.saved))
    assert {s: int(b) for s, b in zip(derived.scopes, derived.saved_by_scope[peak]) if b} == \
        _named(prof.by_scope)


def test_a_profile_that_contradicts_itself_is_refused():
    bad = profile([("forward", "A", "x", 10, 8)])
    bad.timeline[0].saved_by_scope = {"x": 5}
    with pytest.raises(ValueError, match="contradicts itself"):
        gv.memory(bad)


def test_a_function_is_profiled_with_its_arguments():
    import engine as eg

    w = eg.Variable(np.ones((3, 2), np.float32), name="w")

    def step(x, scale=1.0):
        with eg.GradientTape() as tape:
            loss = eg.sum(eg.tanh(x @ w) * scale)
        return tape.gradient(loss, w)

    view = gv.memory(step, eg.ones([4, 3]), scale=2.0)
    direct = eg.memory_profile(step, eg.ones([4, 3]), scale=2.0)
    assert [e.op for e in direct.timeline] == list(view.runs[0].ops)
    assert view.runs[0].saved_peak_bytes == direct.saved_peak_bytes > 0
    assert view.labels == ["step"]


def test_profiles_side_by_side_share_their_bands_and_colours():
    """Many layers over two profiles: at most MAX_SCOPES bands in all, the same in both (one colour per
    layer everywhere), each row still the profile's kept bytes."""
    from gradviz.render.memory_plots import scope_colors

    first = profile([("forward", f"op{k}", f"a{k}", 10_000, 100 * (k + 1) ** 2) for k in range(9)])
    second = profile([("forward", f"op{k}", f"b{k}", 10_000, 50 * (k + 1)) for k in range(6)])
    runs = read_profiles([first, second])
    names = {s for run in runs for s in run.scopes}
    assert len(names) <= MAX_SCOPES and "other scopes" in names
    colours = scope_colors(runs, "light")
    assert len(set(colours.values())) == len(colours)
    for run, prof in zip(runs, (first, second)):
        assert run.saved_by_scope.sum(axis=1).tolist() == [e.saved_bytes for e in prof.timeline]
        assert len(set(run.scopes)) == len(run.scopes)
