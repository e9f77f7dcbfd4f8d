"""The graphs and recorders the widget benchmarks draw (bench/widgets_bench.py), sized like the
lessons' or larger; tests/test_gradviz_fold.py checks box counts on the same models.

>>> tape, loss = long_chain(10)
>>> loss.shape
()
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import numpy as np


def layered_graph(n_nodes: int, seed: int = 0) -> tuple[Any, Any, dict]:
    """A tape whose graph has about ``n_nodes`` nodes: layers of tanh(h * w + b) with named Variables."""
    import engine as eg  # noqa: PLC0415

    rng = np.random.default_rng(seed)
    layers = max(1, (n_nodes - 4) // 8)  # per layer: 2 Variables, 3 ops, 3 outputs
    x = eg.constant(rng.normal(size=3).astype(np.float32))
    ws = [eg.Variable(rng.normal(size=3).astype(np.float32), name=f"layer_{k}/w") for k in range(layers)]
    bs = [eg.Variable(rng.normal(size=3).astype(np.float32), name=f"layer_{k}/b") for k in range(layers)]
    with eg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        h = x
        for w, b in zip(ws, bs):
            h = eg.tanh(h * w + b)
        loss = eg.sum(h)
    return tape, loss, {"x": x, "loss": loss}


def small_expression() -> tuple[Any, Any, dict]:
    """A lesson-sized graph: f(x, y) = x² − 2xy + 3y (lesson 02)."""
    import engine as eg  # noqa: PLC0415

    x, y = eg.constant(2.0), eg.constant(1.0)
    with eg.GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        f = x * x - 2.0 * x * y + 3.0 * y
    return tape, f, {"x": x, "y": y, "f": f}


def long_chain(n_ops: int) -> tuple[Any, Any]:
    """An unscoped chain of ``n_ops`` ops: h = tanh(h * 1.01) (a constant read by every multiply)."""
    import engine as eg  # noqa: PLC0415

    x = eg.constant(0.5)
    with eg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        h = x
        for _ in range(n_ops // 2):
            h = eg.tanh(h * 1.01)
    return tape, h


def deep_mlp(layers: int, seed: int = 0) -> tuple[Any, Any]:
    """An MLP's loss, ``layers`` dense ReLU layers of width 4 (Variables dense_k/kernel, dense_k/bias)."""
    import engine as eg  # noqa: PLC0415

    rng = np.random.default_rng(seed)
    x = eg.constant(rng.normal(size=(8, 4)).astype(np.float32))
    params = [
        (
            eg.Variable((rng.normal(size=(4, 4)) / 2).astype(np.float32), name=f"dense_{k}/kernel"),
            eg.Variable(np.zeros(4, np.float32), name=f"dense_{k}/bias"),
        )
        for k in range(layers)
    ]
    with eg.GradientTape(persistent=True) as tape:
        h = x
        for w, b in params:
            h = eg.relu(h @ w + b)
        loss = eg.mean(h**2)
    return tape, loss


def valley(v: Any) -> Any:
    """Lesson 04's 2-D loss."""
    return 0.1 * v[0] ** 2 + 2.0 * v[1] ** 2


def recorded_mlp(steps: int = 200) -> Any:
    """A recorder filled by training a small 3-layer MLP (lesson 07-sized statistics)."""
    import engine as eg  # noqa: PLC0415
    import gradviz as gv  # noqa: PLC0415

    rng = np.random.default_rng(0)
    shapes = [("dense_1", 8, 32), ("dense_2", 32, 32), ("dense_3", 32, 1)]
    vs = []
    for name, i, o in shapes:
        kernel = (rng.normal(size=(i, o)) / np.sqrt(i)).astype(np.float32)
        vs.append(eg.Variable(kernel, name=f"{name}/kernel"))
        vs.append(eg.Variable(np.zeros(o, np.float32), name=f"{name}/bias"))
    x = eg.constant(rng.normal(size=(64, 8)).astype(np.float32))
    y = eg.constant(rng.normal(size=(64, 1)).astype(np.float32))

    def loss() -> Any:
        h = x
        for k in range(0, len(vs), 2):
            h = h @ vs[k] + vs[k + 1]
            if k < len(vs) - 2:
                h = eg.tanh(h)
        return eg.mean((h - y) ** 2)

    opt = eg.optimizers.Adam(0.01)
    rec = gv.Recorder()
    record_times = []
    for step in range(steps):
        pairs = opt.compute_gradients(loss, vs)
        opt.apply_gradients(pairs)
        t0 = time.perf_counter()
        rec.record(step, loss=loss(), grads_and_vars=pairs)
        record_times.append(time.perf_counter() - t0)
    return rec, statistics.median(record_times)


def lesson_recorder(shapes: dict[str, tuple[int, ...]], steps: int) -> Any:
    """A recorder with the statistics a lesson's run leaves: ``shapes`` (variable name → shape),
    ``steps`` steps of random gradients and updates (what gv.flow draws, without the training)."""
    import engine as eg  # noqa: PLC0415
    import gradviz as gv  # noqa: PLC0415

    rng = np.random.default_rng(0)
    vs = [eg.Variable(rng.normal(size=s).astype(np.float32), name=n) for n, s in shapes.items()]
    rec = gv.Recorder()
    for step in range(steps):
        grads = [(0.01 * rng.standard_normal(size=v.shape)).astype(np.float32) for v in vs]
        for g, v in zip(grads, vs):
            v.assign_sub(g)
        rec.record(step, loss=float(rng.random()), grads_and_vars=list(zip(grads, vs)))
    return rec


def _per_sample_data(samples: int, seed: int) -> tuple[np.ndarray, np.ndarray, list[Any]]:
    """``samples`` 2-feature points (each its own batch of one), labels ±1, and three Dense layers."""
    import engine as eg  # noqa: PLC0415

    rng = np.random.default_rng(seed)
    xs = rng.normal(size=(samples, 1, 2)).astype(np.float32)
    ys = np.where(rng.random(samples) < 0.5, -1.0, 1.0).astype(np.float32)
    layers = [eg.layers.Dense(16, activation="relu", seed=seed, name="dense_1"),
              eg.layers.Dense(16, activation="relu", seed=seed + 1, name="dense_2"),
              eg.layers.Dense(1, seed=seed + 2, name="dense_3")]
    return xs, ys, layers


def per_sample_mlp(samples: int = 72, seed: int = 0) -> tuple[Any, Any]:
    """One training step's loss of a small MLP written per sample, micrograd style: each of ``samples``
    2-feature points goes alone through three Dense layers (16, 16, 1), a hinge loss per sample summed
    with Python's ``sum``, plus an L2 term on every Variable (about 2,000 graph nodes for 72 samples)."""
    import engine as eg  # noqa: PLC0415

    xs, ys, layers = _per_sample_data(samples, seed)
    with eg.GradientTape(persistent=True) as tape:
        losses = []
        for x, y in zip(xs, ys):
            h = eg.constant(x)
            for layer in layers:
                h = layer(h)
            losses.append(eg.relu(1.0 - y * h))
        data_loss = sum(losses) * (1.0 / samples)
        reg_loss = 1e-4 * sum(eg.sum(v * v) for layer in layers for v in layer.trainable_variables)
        loss = eg.sum(data_loss + reg_loss)
    return tape, loss


def chain3(repeats: int = 666) -> tuple[Any, Any]:
    """An unscoped chain of ``repeats`` × (multiply, add, tanh): h = tanh(h * 0.9 + 0.1)."""
    import engine as eg  # noqa: PLC0415

    x = eg.constant(0.5)
    with eg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        h = x
        for _ in range(repeats):
            h = eg.tanh(h * 0.9 + 0.1)
    return tape, h


def traced_chain3(repeats: int = 666) -> Any:
    """``chain3`` traced by ``eg.function``: the ``eg.Graph`` of tanh(h * 0.9 + 0.1), ``repeats`` times."""
    import engine as eg  # noqa: PLC0415

    @eg.function
    def chain(x: Any) -> Any:
        h = x
        for _ in range(repeats):
            h = eg.tanh(h * 0.9 + 0.1)
        return h

    return chain.get_graph(eg.constant(0.5))


def traced_per_sample_step(samples: int = 72, seed: int = 0) -> Any:
    """``per_sample_mlp``'s loss as a traced training step (gradients and SGD updates included): the
    ``eg.Graph`` ``gv.graph`` draws for it (about 6,000 nodes for 72 samples)."""
    import engine as eg  # noqa: PLC0415

    xs, ys, layers = _per_sample_data(samples, seed)
    opt = eg.optimizers.SGD(0.05)

    @eg.function
    def step(xs: Any, ys: Any) -> Any:
        with eg.GradientTape() as tape:
            losses = [eg.relu(1.0 - ys[k] * _through(layers, xs[k])) for k in range(samples)]
            variables = [v for layer in layers for v in layer.trainable_variables]
            loss = eg.sum(sum(losses) * (1.0 / samples) + 1e-4 * sum(eg.sum(v * v) for v in variables))
        opt.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss

    return step.get_graph(eg.constant(xs), eg.constant(ys))


def _through(layers: list, h: Any) -> Any:
    for layer in layers:
        h = layer(h)
    return h
