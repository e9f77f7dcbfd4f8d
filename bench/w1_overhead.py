"""W1 overhead: 300 tiny ops on a 16-vector, forward and backward.

``h = x; 100 times: h = tanh(h * w + b)``; loss = sum(h); gradients for x, w and b. The arrays are
so small that the time is the framework's own bookkeeping per op, not arithmetic.
"""

from __future__ import annotations

import numpy as np

from bench.common import Run, Workload, need

STEPS = 100


def make_data(n: int = 16, steps: int = STEPS, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    return {
        "x": rng.normal(size=n).astype(np.float32),
        "w": rng.uniform(0.5, 1.0, size=n).astype(np.float32),
        "b": rng.normal(scale=0.1, size=n).astype(np.float32),
        "steps": steps,
    }


def engine(data: dict) -> Run:
    import engine as eg  # noqa: PLC0415

    x, w, b = (eg.constant(data[k]) for k in "xwb")
    steps = data["steps"]
    out: list = []

    def step():
        with eg.GradientTape() as tape:
            tape.watch([x, w, b])
            h = x
            for _ in range(steps):
                h = eg.tanh(h * w + b)
            loss = eg.sum(h)
        out[:] = tape.gradient(loss, [x, w, b])

    return Run(step, lambda: [g.numpy() for g in out])


def traced(data: dict) -> Run:
    """The engine's step inside ``eg.function``: traced once, then replayed on raw arrays."""
    import engine as eg  # noqa: PLC0415

    x, w, b = (eg.constant(data[k]) for k in "xwb")
    steps = data["steps"]
    out: list = []

    @eg.function
    def gradients(x, w, b):
        with eg.GradientTape() as tape:
            tape.watch([x, w, b])
            h = x
            for _ in range(steps):
                h = eg.tanh(h * w + b)
            loss = eg.sum(h)
        return tape.gradient(loss, [x, w, b])

    def step():
        out[:] = gradients(x, w, b)

    return Run(step, lambda: [g.numpy() for g in out])


def numpy(data: dict) -> Run:
    x, w, b, steps = data["x"], data["w"], data["b"], data["steps"]
    out: list = []

    def step():
        hs = [x]
        h = x
        for _ in range(steps):
            h = np.tanh(h * w + b)
            hs.append(h)
        g = np.ones_like(h)
        gw = np.zeros_like(w)
        gb = np.zeros_like(b)
        for i in range(steps, 0, -1):
            y = hs[i]
            gz = g * (1 - y * y)
            gw += gz * hs[i - 1]
            gb += gz
            g = gz * w
        out[:] = [g, gw, gb]

    return Run(step, lambda: list(out))


def torch(data: dict) -> Run:
    torch = need("torch")
    x, w, b = (torch.tensor(data[k], requires_grad=True) for k in "xwb")
    steps = data["steps"]
    out: list = []

    def step():
        h = x
        for _ in range(steps):
            h = torch.tanh(h * w + b)
        out[:] = torch.autograd.grad(h.sum(), [x, w, b])

    return Run(step, lambda: [g.numpy() for g in out])


def autograd(data: dict) -> Run:
    ag = need("autograd")
    anp = need("autograd.numpy")
    steps = data["steps"]

    def loss(params):
        x, w, b = params
        h = x
        for _ in range(steps):
            h = anp.tanh(h * w + b)
        return anp.sum(h)

    gradient = ag.grad(loss)
    params = (data["x"], data["w"], data["b"])
    out: list = []

    def step():
        out[:] = gradient(params)

    return Run(step, lambda: [np.asarray(g) for g in out])


def mygrad(data: dict) -> Run:
    mg = need("mygrad")
    x, w, b = (mg.tensor(data[k]) for k in "xwb")
    steps = data["steps"]

    def step():
        h = x
        for _ in range(steps):
            h = mg.tanh(h * w + b)
        mg.sum(h).backward()

    return Run(step, lambda: [np.asarray(t.grad) for t in (x, w, b)])


def dezero(data: dict) -> Run:
    dz = need("dezero")
    F = need("dezero.functions")
    x, w, b = (dz.Variable(data[k].copy()) for k in "xwb")
    steps = data["steps"]

    def step():
        for v in (x, w, b):
            v.cleargrad()
        h = x
        for _ in range(steps):
            h = F.tanh(h * w + b)
        F.sum(h).backward()

    return Run(step, lambda: [np.asarray(t.grad.data) for t in (x, w, b)])


def micrograd(data: dict) -> Run:
    """micrograd works on Python scalars: 16 chains of 300 scalar ops. Its 0.1.0 release has no
    tanh, so the bench adds one the way micrograd's own ops are written (a node with a closure)."""
    Value = need("micrograd.engine").Value
    import math  # noqa: PLC0415

    def tanh(v):
        t = math.tanh(v.data)
        out = Value(t, (v,), "tanh")

        def _backward():
            v.grad += (1 - t * t) * out.grad

        out._backward = _backward
        return out

    leaves = [[Value(float(s)) for s in data[k]] for k in "xwb"]
    steps = data["steps"]

    def step():
        for group in leaves:
            for v in group:
                v.grad = 0
        xs, ws, bs = leaves
        total = Value(0.0)
        for h, w, b in zip(xs, ws, bs):
            for _ in range(steps):
                h = tanh(h * w + b)
            total = total + h
        total.backward()

    return Run(step, lambda: [np.array([v.grad for v in g], dtype=np.float32) for g in leaves])


WORKLOAD = Workload(
    name="W1",
    title="overhead: 100 x (multiply, add, tanh) on a 16-vector, forward + backward",
    builders={
        "engine": engine,
        "traced": traced,
        "numpy": numpy,
        "torch": torch,
        "autograd": autograd,
        "mygrad": mygrad,
        "dezero": dezero,
        "micrograd": micrograd,
    },
    make_data=make_data,
    targets={"torch": 0.5, "numpy": 2.0},
    traced_targets={"numpy": 1.5},
)
