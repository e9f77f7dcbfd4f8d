"""W6 widgets: how long gradviz takes to draw, how big its state is, and how fast each widget answers.

Prints one table: graph render time for 50 / 200 / 500-node graphs (the renderer chain, cache
cleared), big graphs folded (boxes, SVG size), per widget the creation time (every frame a
kernel-free widget's controls explore is computed then), its state and notebook output size, and a
control move timed in headless Chromium (`widget_browser.browser_moves`: no kernel round trip).
Targets: a 500-node graph under 1 s, a control move under 50 ms.

Cases live in a registry: add one with ``@case("group", "name")`` on a function returning a list of
``(label, seconds, note)`` rows. Run: ``uv run python bench/widgets_bench.py [substring ...]``.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from widget_browser import browser_moves  # noqa: E402
from widget_models import (  # noqa: E402
    deep_mlp,
    layered_graph,
    lesson_recorder,
    long_chain,
    recorded_mlp,
    small_expression,
    valley,
)

Row = tuple[str, float, str]


@dataclass
class Case:
    group: str
    name: str
    run: Callable[[], list[Row]]
    target_s: float | None = None


CASES: list[Case] = []


def case(group: str, name: str, target_s: float | None = None) -> Callable:
    """Register a benchmark case: ``fn() -> [(label, seconds, note), ...]``."""

    def register(fn: Callable[[], list[Row]]) -> Callable[[], list[Row]]:
        CASES.append(Case(group, name, fn, target_s))
        return fn

    return register


def timed(fn: Callable[[], Any], repeats: int = 5, before: Callable[[], Any] | None = None) -> float:
    """Median wall time of ``fn`` over ``repeats`` runs (``before`` runs untimed before each)."""
    times = []
    for _ in range(repeats):
        if before is not None:
            before()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


# ---- cases ------------------------------------------------------------------------------------------


@case("render", "graph render (model + DOT + layout + SVG styling), cache cleared", target_s=1.0)
def render_sizes() -> list[Row]:
    from gradviz.model.graph_model import build_model  # noqa: PLC0415
    from gradviz.render import graphviz as render  # noqa: PLC0415
    from gradviz.widgets.graph_view import GraphView  # noqa: PLC0415

    render.render_svg("digraph { a -> b }")  # load the renderer once (not part of a graph's time)
    rows = []
    for n in (50, 200, 500):
        tape, loss, names = layered_graph(n)

        def draw(tape=tape, loss=loss, names=names) -> str:
            return GraphView(build_model(loss, tape, names=names), collapse=False, theme="light").to_svg()

        nodes = len(build_model(loss, tape, grads=False))
        t = timed(draw, repeats=3, before=render.clear_cache)
        rows.append((f"{nodes} nodes, uncollapsed ({render.renderer_name()})", t, ""))
    tape, loss, names = layered_graph(500)
    t = timed(
        lambda: GraphView(build_model(loss, tape, names=names), theme="light").to_svg(),
        repeats=3,
        before=render.clear_cache,
    )
    rows.append(("500 nodes, collapsed by scope (default)", t, ""))
    return rows


@case("render", "save PNG (matplotlib rasteriser), 50 nodes")
def png_time() -> list[Row]:
    from gradviz.model.graph_model import build_model  # noqa: PLC0415
    from gradviz.widgets.graph_view import GraphView  # noqa: PLC0415

    tape, loss, names = layered_graph(50)
    view = GraphView(build_model(loss, tape, names=names), theme="light")
    view.to_png()
    return [("to_png()", timed(view.to_png, repeats=3), "")]


@case("widgets", "gv.graph: create; click a node", target_s=0.1)
def graph_widget() -> list[Row]:
    import gradviz as gv  # noqa: PLC0415

    tape, f, names = small_expression()
    create = timed(lambda: gv.graph(f, tape, names=names).widget, repeats=3)
    view = gv.graph(f, tape, names=names)
    w = view.widget
    ids = list(w.info)
    k = [0]

    def click() -> None:
        k[0] += 1
        w.selected = ids[k[0] % len(ids)]

    return [
        ("create (lesson-sized graph)", create, "target < 1 s"),
        ("click → highlight + details", timed(click, 20), ""),
    ]


@case("widgets", "gv.graph on a 500-node graph: click a group (expand)", target_s=None)
def graph_expand() -> list[Row]:
    import gradviz as gv  # noqa: PLC0415

    tape, loss, names = layered_graph(500)
    view = gv.graph(loss, tape, names=names)
    w = view.widget
    groups = [
        sid
        for key, sid in view.drawing.ids.items()
        if view.model.nodes.get(key) is not None and view.model.nodes[key].kind == "group"
    ]
    t0 = time.perf_counter()
    w.selected = groups[len(groups) // 2]
    t = time.perf_counter() - t0
    return [("expand one group (re-layout)", t, "a layout, not a slider move")]


def _output_bytes(view: Any) -> tuple[int, int]:
    """The bytes a notebook stores for a widget's output: the output's mime bundle (its text/html
    fallback and the widget view) and the widget's state (saved in the notebook's metadata)."""
    import json  # noqa: PLC0415

    bundle = view._repr_mimebundle_()
    state = view.widget.get_state()
    return len(json.dumps(bundle).encode()), len(json.dumps(state, default=str).encode())


def _output_note(view: Any) -> str:
    bundle, state = _output_bytes(view)
    return (f"output {(bundle + state) / 1e6:.3f} MB (fallback {bundle / 1e6:.3f} + state "
            f"{state / 1e6:.3f}), {_svg_count(view)} picture(s)")


def _svg_count(view: Any) -> int:
    import json  # noqa: PLC0415

    state = {k: v for k, v in view.widget.get_state().items() if k != "_esm"}  # code, not a picture
    return (json.dumps(view._repr_mimebundle_()) + json.dumps(state)).count("<svg")


@case("big graphs", "gv.graph: default (folded) view; build + fold + layout + SVG", target_s=1.0)
def big_graphs() -> list[Row]:
    import gradviz as gv  # noqa: PLC0415
    from gradviz.render import graphviz as render  # noqa: PLC0415

    render.render_svg("digraph { a -> b }")  # load the renderer once
    rows = []
    for label, (tape, y) in (
        ("2,000-op chain (unscoped)", long_chain(2000)),
        ("MLP loss, 250 dense layers", deep_mlp(250)),
    ):
        t = timed(lambda tape=tape, y=y: gv.graph(y, tape).to_svg(), repeats=3, before=render.clear_cache)
        view = gv.graph(y, tape)
        svg = view.to_svg()
        boxes = svg.count('class="node"')
        note = (f"{len(view.full_model):,} nodes → {boxes} boxes, {len(svg) / 1e6:.3f} MB SVG, "
                f"{_output_note(view)}")
        rows.append((label, t, note))
    tape, y = long_chain(2000)
    view = gv.graph(y, tape)
    top = next(n for n in view.model.nodes.values() if n.kind == "group")
    t0 = time.perf_counter()
    view.select(top.id)
    svg = view.to_svg()
    rows.append(("2,000-op chain: open one group", time.perf_counter() - t0,
                 f"{svg.count('class=' + chr(34) + 'node' + chr(34))} boxes"))
    return rows


@case("big graphs", "gv.graph on a 20,000-op chain (50,001 nodes): folded, or a clear message")
def huge_graph() -> list[Row]:
    import gradviz as gv  # noqa: PLC0415

    tape, y = long_chain(20000)
    rows = []
    view = gv.graph(y, tape)
    t = timed(lambda: gv.graph(y, tape).to_svg(), repeats=3)
    svg = view.to_svg()
    rows.append(("default view", t, f"{svg.count(chr(34).join(['class=', 'node', '']))} boxes, "
                 f"{len(svg) / 1e6:.3f} MB SVG"))
    t0 = time.perf_counter()
    try:
        gv.graph(y, tape, collapse=False).to_svg()
        note = "drawn"
    except ValueError as exc:
        note = f"clear message: {str(exc)[:40]}…"
    rows.append(("20,000-op chain, collapse=False", time.perf_counter() - t0, note))
    return rows


# ---- kernel-free widgets: every frame computed at creation, a control move is a browser look-up ------

def _state_mb(widget: Any) -> float:
    import json  # noqa: PLC0415

    return len(json.dumps(widget.get_state(), default=str).encode()) / 1e6


def kernel_free_rows(label: str, make: Callable[[], Any]) -> list[Row]:
    """Create (every frame computed), the state's size, and a control move in the browser."""
    create = timed(lambda: make().widget, repeats=3)
    view = make()
    widget = view.widget
    median, slowest, count = browser_moves(widget)
    return [
        (f"{label}: create (computes every frame)", create, f"state {_state_mb(widget):.3f} MB; "
         f"{_output_note(view)}"),
        (f"{label}: a control move in the browser (median of {count})", median,
         f"slowest {slowest * 1000:.1f} ms; no kernel round trip"),
    ]


@case("kernel-free", "gv.tape, gv.backprop: create; a control move in Chromium", target_s=0.05)
def tape_and_backprop() -> list[Row]:
    import gradviz as gv  # noqa: PLC0415

    tape, f, names = small_expression()
    sources = [names["x"], names["y"]]
    rows = kernel_free_rows("gv.tape (lesson 03-sized)",
                            lambda: gv.tape(tape, names=names, target=f, sources=sources))
    rows += kernel_free_rows("gv.backprop (lesson 02-sized)",
                             lambda: gv.backprop(tape, f, [names["x"], names["y"]], names=names))
    big_tape, loss, big_names = layered_graph(200)
    rows += kernel_free_rows("gv.backprop, 200-node graph",
                             lambda: gv.backprop(big_tape, loss, names=big_names))
    return rows


# ---- widgets-B: recorder, flow, clipping, descent, gradient check (matplotlib pictures) -------------


@case("kernel-free", "gv.clipping: create; a control move in Chromium", target_s=0.05)
def clipping_widget() -> list[Row]:
    import engine as eg  # noqa: PLC0415
    import gradviz as gv  # noqa: PLC0415

    grads = [eg.constant([3.0, 4.0]), eg.constant([0.5, -2.0])]
    rows = kernel_free_rows("lesson 05: two 2-D gradients",
                            lambda: gv.clipping(grads, threshold=2.0, method="global norm"))
    rng = np.random.default_rng(0)
    many = [eg.constant(rng.normal(size=(16, 16)).astype(np.float32)) for _ in range(10)]
    rows += kernel_free_rows("bars: ten 16×16 gradients", lambda: gv.clipping(many))
    return rows


@case("kernel-free", "gv.descent: create (every optimizer × rate × step); a control move in Chromium",
      target_s=0.05)
def descent_widget() -> list[Row]:
    import gradviz as gv  # noqa: PLC0415

    def half_square(x: Any) -> Any:
        return 0.5 * (x - 1.0) ** 2

    names = ("SGD", "Momentum", "Adagrad", "Adam")
    rows = kernel_free_rows(
        "lesson 04, 1-D: seed 002 trace, 10 steps × 12 rates × 5 optimizers",
        lambda: gv.descent(half_square, 10.0, optimizers=("SGD",), learning_rate=0.1, steps=10),
    )
    rows += kernel_free_rows(
        "lesson 04, 2-D race: 60 steps × 12 rates × 5 optimizers",
        lambda: gv.descent(valley, [-4.0, 1.0], optimizers=names, learning_rate=0.1, steps=60),
    )
    rows += kernel_free_rows(
        "1,000 steps (the cap; 101 on the slider) × 12 rates × 5 optimizers",
        lambda: gv.descent(valley, [-4.0, 1.0], optimizers=names, learning_rate=0.1, steps=1000),
    )
    return rows


@case("kernel-free", "gv.Recorder and gv.flow: record; create; a control move in Chromium", target_s=0.05)
def flow_widget() -> list[Row]:
    import gradviz as gv  # noqa: PLC0415

    rec, per_record = recorded_mlp(200)
    rows = [("rec.record(step, loss, 6 (grad, var) pairs)", per_record, "per training step")]
    rows += kernel_free_rows("gv.flow, 3 layers × 200 steps", lambda: gv.flow(rec))
    small, _ = recorded_mlp(20)
    rows += kernel_free_rows("gv.flow, 3 layers × 20 steps", lambda: gv.flow(small))
    lesson_06 = lesson_recorder({"W1": (4, 8), "b1": (8,), "W2": (8, 1), "b2": (1,)}, 60)
    rows += kernel_free_rows("gv.flow, lesson 06: 4 variables × 60 steps", lambda: gv.flow(lesson_06))
    lesson_07 = lesson_recorder({  # lesson 07's CNN (dense_1's kernel 256 × 1024: statistics only)
        "conv2d_1/kernel": (5, 5, 1, 32), "conv2d_1/bias": (32,), "conv2d_2/kernel": (5, 5, 32, 64),
        "conv2d_2/bias": (64,), "dense_1/kernel": (256, 1024), "dense_1/bias": (1024,),
        "dense_2/kernel": (1024, 10), "dense_2/bias": (10,)}, 232)
    rows += kernel_free_rows("gv.flow, lesson 07: 8 variables × 232 steps", lambda: gv.flow(lesson_07))
    return rows


@case("kernel-free", "gv.check_gradients: create; a control move in Chromium", target_s=0.05)
def gradcheck_widget() -> list[Row]:
    import engine as eg  # noqa: PLC0415
    import gradviz as gv  # noqa: PLC0415

    def f(x: Any, y: Any) -> Any:
        return x * x - 2 * x * y + 3 * y

    rng = np.random.default_rng(0)
    w, xs = rng.normal(size=(8, 4)), rng.normal(size=(16, 8))

    def g(w: Any, x: Any) -> Any:
        return eg.sum(eg.tanh(x @ w) ** 2)

    rows = kernel_free_rows("lesson 02: f(x, y) at (2, 1)", lambda: gv.check_gradients(f, 2.0, 1.0))
    rows += kernel_free_rows("tanh(x @ w): 32 + 128 elements", lambda: gv.check_gradients(g, w, xs))
    return rows


@case("widgets", "first widget in a fresh kernel (imports matplotlib + ipywidgets)")
def cold_start() -> list[Row]:
    import subprocess  # noqa: PLC0415

    code = (
        "import time; t = time.perf_counter(); import gradviz as gv; "
        "gv.clipping([[3.0, 4.0], [0.5, -2.0]], threshold=2.0).widget; print(time.perf_counter() - t)"
    )
    times = []
    for _ in range(3):
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
        )
        times.append(float(out.stdout.strip().splitlines()[-1]))
    return [("import gradviz + first gv.clipping(...).widget", statistics.median(times), "once per kernel")]


def main(argv: list[str]) -> None:
    chosen = [c for c in CASES if not argv or any(a in c.group or a in c.name for a in argv)]
    print(f"{'case':<64} {'ms':>9}  note")
    print("-" * 90)
    for c in chosen:
        try:
            rows = c.run()
        except Exception as exc:  # keep going: one broken case should not hide the others
            print(f"{c.name:<64} {'failed':>9}  {type(exc).__name__}: {exc}")
            continue
        print(f"{c.group}: {c.name}")
        for label, seconds, note in rows:
            flag = ""
            if c.target_s is not None and seconds > c.target_s and "create" not in label:
                flag = f"  OVER {c.target_s * 1000:.0f} ms"
            print(f"  {label:<62} {seconds * 1000:9.1f}  {note}{flag}")


if __name__ == "__main__":
    main(sys.argv[1:])
