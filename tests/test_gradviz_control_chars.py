"""Every string that reaches SVG, HTML, DOT or a PNG is valid there (issue 24): random Unicode names
(control characters, lone surrogates, U+FFFE, markup) on Variables, layers, ``names=`` labels and
recorded scalars; the SVG parses as XML, the HTML holds no character XML cannot, the PNG is written,
and a control character is shown as its escape (``\\x1b``), not dropped.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engine as eg
import gradviz as gv
from gradviz.render.text import esc, visible

SETTINGS = settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
pytestmark = pytest.mark.filterwarnings("ignore:Glyph .* missing from font")  # drawn as boxes: fine
NAMES = st.text(min_size=1, max_size=8) | st.sampled_from(["\x1b[31mr\x1b[0m", "\x00", "\ud800", "\ufffe<&>"])
NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _valid_svg(svg: str) -> None:
    ET.fromstring(svg[svg.find("<svg"):])  # raises on a character or markup XML cannot hold
    svg.encode("utf-8")  # no lone surrogate


def _valid_html(html: str) -> None:
    assert not NOT_XML.search(html), repr(NOT_XML.search(html).group())
    html.encode("utf-8")


@SETTINGS
@given(name=NAMES, other=NAMES)
def test_graph_tape_and_backprop_draw_any_name(name, other, tmp_path_factory):
    x = eg.Variable([1.0, 2.0], name=name)
    with eg.GradientTape(persistent=True) as tape:
        y = eg.sum(x * x)
    graph = gv.graph(y, tape, names={other: y})
    _valid_svg(graph.to_svg())
    _valid_html(graph.to_html())
    _valid_html(gv.tape(tape, names={other: y}).to_html())
    steps = gv.backprop(tape, y, [x])
    _valid_svg(steps.to_svg())
    _valid_html(steps.to_html())
    assert graph.save(tmp_path_factory.mktemp("g") / "g.png").read_bytes()[:4] == b"\x89PNG"


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=NAMES)
def test_flow_and_clipping_draw_any_layer_name(name, tmp_path_factory):
    model = eg.layers.Sequential([eg.layers.Dense(2, seed=0, name=name)])
    rec = gv.Recorder()
    opt = eg.optimizers.SGD(0.1)
    for step in range(2):
        with eg.GradientTape() as tape:
            loss = eg.mean(model(np.ones((2, 3), np.float32)) ** 2)
        pairs = opt.compute_gradients(loss, tape=tape)
        opt.apply_gradients(pairs)
        rec.record(step, loss=loss, grads_and_vars=pairs, **{name: float(step)})
    flow = gv.flow(rec)
    _valid_svg(flow.to_svg())
    _valid_html(flow.to_html())
    lab = gv.clipping([eg.constant([3.0, 4.0])], names=[name])
    _valid_svg(lab.to_svg())
    _valid_html(lab.to_html())
    folder = tmp_path_factory.mktemp("f")
    assert flow.save(folder / "f.png").read_bytes()[:4] == b"\x89PNG"
    assert lab.save(folder / "c.png").read_bytes()[:4] == b"\x89PNG"


@settings(max_examples=200, deadline=None)
@given(text=st.text())
def test_visible_makes_any_text_xml_safe_and_shows_what_it_hid(text):
    shown = esc(text)
    ET.fromstring(f"<t a=\"{shown}\">{shown}</t>")
    assert visible(visible(text)) == visible(text)  # applying it twice changes nothing more
    for ch in set(text):
        if NOT_XML.match(ch) or "\x7f" <= ch <= "\x9f":
            assert f"\\x{ord(ch):02x}" in shown or f"\\u{ord(ch):04x}" in shown


def test_an_ansi_colour_code_in_a_layer_name_is_shown_as_an_escape():
    """The issue's example, kept as a plain regression test."""
    x = eg.Variable([1.0], name="\x1b[31mw\x1b[0m")
    with eg.GradientTape() as tape:
        y = eg.sum(x * 2.0)
    svg = gv.graph(y, tape).to_svg()
    _valid_svg(svg)
    assert "\\x1b[31mw\\x1b[0m" in svg
