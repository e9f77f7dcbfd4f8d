"""W3 matmul-bound: y = ((x @ a) @ b) @ c with 1024×1024 float32 matrices, forward and backward.

The upstream gradient of y is a given matrix, so the whole step is exactly nine matrix products
(three forward, two per product backward): hand-written NumPy doing those nine is the limit.
"""

from __future__ import annotations

import numpy as np

from bench.common import Run, Workload, need

NAMES = ("x", "a", "b", "c")


def make_data(n: int = 1024, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    data = {k: (rng.normal(size=(n, n)) / np.sqrt(n)).astype(np.float32) for k in NAMES}
    data["g"] = rng.normal(size=(n, n)).astype(np.float32)
    return data


def engine(data: dict) -> Run:
    import engine as eg  # noqa: PLC0415

    x, a, b, c = (eg.constant(data[k]) for k in NAMES)
    g = eg.constant(data["g"])
    out: list = []

    def step():
        with eg.GradientTape() as tape:
            tape.watch([x, a, b, c])
            y = x @ a @ b @ c
        out[:] = tape.gradient(y, [x, a, b, c], output_gradients=g)

    return Run(step, lambda: [t.numpy() for t in out])


def numpy(data: dict) -> Run:
    x, a, b, c, g = (data[k] for k in (*NAMES, "g"))
    out: list = []

    def step():
        h1 = x @ a
        h2 = h1 @ b
        _ = h2 @ c
        gc = h2.T @ g
        g2 = g @ c.T
        gb = h1.T @ g2
        g1 = g2 @ b.T
        ga = x.T @ g1
        gx = g1 @ a.T
        out[:] = [gx, ga, gb, gc]

    return Run(step, lambda: list(out))


def torch(data: dict) -> Run:
    torch = need("torch")
    dev = data.get("torch_device", "cpu")
    x, a, b, c = (torch.tensor(data[k], device=dev, requires_grad=True) for k in NAMES)
    g = torch.tensor(data["g"], device=dev)
    out: list = []

    def step():
        y = x @ a @ b @ c
        out[:] = torch.autograd.grad(y, [x, a, b, c], grad_outputs=g)

    return Run(step, lambda: [t.cpu().numpy() for t in out])


def autograd(data: dict) -> Run:
    ag = need("autograd")
    g = data["g"]
    vjp_maker = ag.make_vjp(lambda ps: ps[0] @ ps[1] @ ps[2] @ ps[3])
    params = tuple(data[k] for k in NAMES)
    out: list = []

    def step():
        vjp, _ = vjp_maker(params)
        out[:] = vjp(g)

    return Run(step, lambda: [np.asarray(t) for t in out])


def mygrad(data: dict) -> Run:
    mg = need("mygrad")
    x, a, b, c = (mg.tensor(data[k]) for k in NAMES)
    g = data["g"]

    def step():
        (x @ a @ b @ c).backward(g)

    return Run(step, lambda: [np.asarray(t.grad) for t in (x, a, b, c)])


def dezero(data: dict) -> Run:
    dz = need("dezero")
    F = need("dezero.functions")
    x, a, b, c = (dz.Variable(data[k].copy()) for k in NAMES)
    g = data["g"]

    def step():
        for v in (x, a, b, c):
            v.cleargrad()
        y = F.matmul(F.matmul(F.matmul(x, a), b), c)
        y.grad = dz.Variable(g)
        y.backward()

    return Run(step, lambda: [np.asarray(t.grad.data) for t in (x, a, b, c)])


WORKLOAD = Workload(
    name="W3",
    title="matmul-bound: three chained 1024x1024 float32 matmuls, forward + backward",
    builders={
        "engine": engine,
        "numpy": numpy,
        "torch": torch,
        "autograd": autograd,
        "mygrad": mygrad,
        "dezero": dezero,
    },
    make_data=make_data,
    targets={"numpy": 1.03},
)
