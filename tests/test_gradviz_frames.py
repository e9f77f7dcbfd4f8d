"""gradviz.widgets.frames: controls over grids, layers computed for every combination, matplotlib pictures as
vector SVG in the theme's CSS variables, and the moving artists of each frame in the same coordinates."""

from __future__ import annotations

import re

import numpy as np
import pytest
import traitlets

from gradviz.render.plot import new_figure, plot_colors, style_axes, svg_text
from gradviz.render.theme import LIGHT
from gradviz.widgets.frames import (
    Frames,
    artists_svg,
    plot_frames,
    svg_points,
    svg_with_layers,
    themed_svg,
)
from gradviz.widgets.view import Control, View


def test_layers_are_computed_for_every_combination_of_their_controls():
    f = Frames("demo")
    f.slider("a", ["1", "2", "3"], index=2)
    f.dropdown("b", ["x", "y"])
    f.checkbox("c", False)
    calls = []

    def content(a: int, b: int) -> str:
        calls.append((a, b))
        return f"{a}{b}"

    f.layer("panel", "html", ["a", "b"], content)
    assert sorted(calls) == [(a, b) for a in range(3) for b in range(2)]
    assert f.lookup("panel") == "20" and f.lookup("panel", b=1, a=0) == "01"
    state = f.state()
    assert state["index"] == {"a": 2, "b": 0, "c": 0}
    assert [c["kind"] for c in state["controls"]] == ["slider", "dropdown", "checkbox"]
    assert f.size_bytes() > 0


def test_bad_specs_are_clear_errors():
    f = Frames("demo")
    f.slider("a", ["1", "2"])
    with pytest.raises(ValueError, match="exists already"):
        f.dropdown("a", ["x"])
    with pytest.raises(ValueError, match="starts at 5"):
        f.slider("b", ["1"], index=5)
    with pytest.raises(ValueError, match="no positions"):
        f.dropdown("c", [])
    with pytest.raises(KeyError, match="no control 'zz'"):
        f.layer("l", "html", ["zz"], lambda k: "")
    with pytest.raises(ValueError, match="type must be"):
        f.layer("l", "png", ["a"], lambda k: "")
    big = Frames("big")
    big.slider("x", [str(k) for k in range(200)])
    big.slider("y", [str(k) for k in range(200)])
    with pytest.raises(ValueError, match="40,000 combinations"):
        big.layer("l", "svg", ["x", "y"], lambda i, j: "")
    with pytest.raises(ValueError, match="layer names"):
        svg_with_layers("<svg></svg>", ['a"><script>'])


def test_palette_colours_become_the_one_set_of_css_variables_graphs_use():
    for theme in ("light", "dark"):
        colors = plot_colors(theme)
        svg = (
            f'<svg><path style="fill: {colors["text"]}; stroke: {colors["grid"]}"/>'
            f'<path style="fill: {colors["muted"]}"/><path style="fill: #0072b2"/></svg>'
        )
        out = themed_svg(svg, colors)
        assert "fill: var(--gv-text)" in out and "fill: var(--gv-muted)" in out
        assert "fill: #0072b2" in out  # a plot-only colour stays
        # the document carries the definitions: JupyterLab's variable with the colour as fallback
        assert out.startswith('<svg class="gv-themed"')
        assert f"--gv-text: var(--jp-ui-font-color1, {LIGHT.text})" in out
        fragment = themed_svg(f'<path style="stroke: {colors["text"]}"/>', colors)
        assert fragment == '<path style="stroke: var(--gv-text)"/>'  # a fragment: only the colours


def test_svg_points_and_artist_fragments_land_where_the_figure_draws_them():
    fig = new_figure((4, 3), theme="light")
    ax = fig.add_subplot()
    style_axes(ax, "light")
    (line,) = ax.plot([0, 1, 2], [0, 1, 4], gid="moving_line")
    whole = svg_text(fig)
    drawn = re.search(r'<g id="moving_line">\s*<path d="M ([\d.]+) ([\d.]+)', whole)
    fragment = artists_svg(fig, [line])
    alone = re.search(r'<path d="M ([\d.]+) ([\d.]+)', fragment)
    (point,) = svg_points(ax, [0.0], [0.0])
    for got in (alone, point):
        x, y = (float(v) for v in (got.groups() if hasattr(got, "groups") else got))
        assert abs(x - float(drawn.group(1))) < 0.15 and abs(y - float(drawn.group(2))) < 0.15
    assert "<svg" not in fragment and "metadata" not in fragment


def test_artist_fragments_draw_dollar_signs_as_written():
    # artists_svg turns math text off for the artists it draws (not by walking the whole figure)
    fig = new_figure((3, 2), theme="light")
    label = fig.text(0.1, 0.5, "cost $w$ and a_b^{c}")
    fragment = artists_svg(fig, [label])
    assert "cost $w$ and a_b^{c}" in fragment and not label.get_parse_math()


class Dial(View):
    """A tiny matplotlib view with the protocol plot_frames reads: a needle at an angle, a label."""

    theme = "light"
    angle = traitlets.Float(0.0)
    colour = traitlets.Unicode("#0072b2")

    def _make_figure(self):
        fig = new_figure((3, 3), theme=self.theme)
        ax = fig.add_subplot()
        ax.set_xlim(-1, 1)
        ax.set_ylim(-1, 1)
        (needle,) = ax.plot([0, 1], [0, 0], lw=2)
        text = ax.text(0, -0.8, "")
        return fig, {"needle": needle, "text": text}

    def _update(self, art) -> None:
        art["needle"].set_data([0, np.cos(self.angle)], [0, np.sin(self.angle)])
        art["needle"].set_color(self.colour)
        art["text"].set_text(f"angle {self.angle:.2f}")

    @staticmethod
    def _moving(art):
        return [art["needle"], art["text"]]

    def _panel(self) -> str:
        return f"<p>angle {self.angle:.2f}, colour {self.colour}</p>"


def test_plot_frames_draws_the_moving_artists_of_every_combination_consistently():
    view = Dial(angle=0.5)
    angles = [0.0, 0.5, 1.0, 1.5]
    colours = ["#0072b2", "#d55e00"]
    f = plot_frames(view, "dial", [
        Control("angle", "slider", angles, note="grid: 4 angles"),
        Control("colour", "dropdown", colours, ["blue", "orange"]),
    ])
    assert view.angle == 0.5 and view.colour == colours[0]  # each frame drawn by a snapshot: never moved
    assert f.index == {"angle": 1, "colour": 0}  # the controls start where the view is
    assert 'data-gv-layer="moving"' in f.picture and "angle 0.50" not in f.picture  # moving parts apart
    moving = {layer["name"]: layer for layer in f.layers}["moving"]["frames"]
    panel = {layer["name"]: layer for layer in f.layers}["panel"]["frames"]
    assert len(moving) == len(panel) == 8
    for k, a in enumerate(angles):
        for j, c in enumerate(colours):
            # the picture and the panel of one frame describe the same state (never contradict)
            key = f"{k},{j}"
            assert f"angle {a:.2f}" in moving[key] and f"angle {a:.2f}, colour {c}" in panel[key]
            assert c in moving[f"{k},{j}"]
    assert len({moving[key] for key in moving}) == 8
