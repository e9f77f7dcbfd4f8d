"""W5 second order: the Hessian-vector product H·v of a small tanh MLP's loss (8-32-32-1, batch 32,
mean squared error), by differentiating the gradient's dot product with v (reverse over reverse).

The NumPy limit is Pearlmutter's R-operator written out by hand (forward and backward pass, each
with its directional derivative along v): exact, not finite differences.
"""

from __future__ import annotations

import operator

import numpy as np

from bench.common import Run, Skip, Workload, need

SIZES = (8, 32, 32, 1)


def make_data(sizes: tuple[int, ...] = SIZES, batch: int = 32, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    params, vector = [], []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        params.append((rng.normal(size=(n_in, n_out)) / np.sqrt(n_in)).astype(np.float32))
        params.append((rng.normal(size=n_out) * 0.1).astype(np.float32))
        vector.append(rng.normal(size=(n_in, n_out)).astype(np.float32))
        vector.append(rng.normal(size=n_out).astype(np.float32))
    return {
        "params": params,
        "v": vector,
        "x": rng.normal(size=(batch, sizes[0])).astype(np.float32),
        "t": rng.normal(size=(batch, sizes[-1])).astype(np.float32),
    }


def _mlp(params, x, t, tanh, mean, matmul=operator.matmul):
    h = x
    for i in range(0, len(params) - 2, 2):
        h = tanh(matmul(h, params[i]) + params[i + 1])
    d = matmul(h, params[-2]) + params[-1] - t
    return mean(d * d)


def engine(data: dict) -> Run:
    import engine as eg  # noqa: PLC0415

    params = [eg.constant(p) for p in data["params"]]
    v = [eg.constant(p) for p in data["v"]]
    x, t = eg.constant(data["x"]), eg.constant(data["t"])
    out: list = []

    def step():
        with eg.GradientTape() as outer:
            outer.watch(params)
            with eg.GradientTape() as inner:
                inner.watch(params)
                loss = _mlp(params, x, t, eg.tanh, eg.mean)
            grads = inner.gradient(loss, params)
            dot = sum(eg.sum(g * u) for g, u in zip(grads, v))
        out[:] = outer.gradient(dot, params)

    return Run(step, lambda: [h.numpy() for h in out])


def numpy(data: dict) -> Run:
    """Pearlmutter's R-operator for the two-hidden-layer tanh MLP, by hand."""
    (w1, b1, w2, b2, w3, b3), (v1, c1, v2, c2, v3, c3) = data["params"], data["v"]
    x, t = data["x"], data["t"]
    scale = np.float32(2.0 / t.size)
    out: list = []

    def step():
        h1 = np.tanh(x @ w1 + b1)
        rh1 = (1 - h1 * h1) * (x @ v1 + c1)
        h2 = np.tanh(h1 @ w2 + b2)
        rh2 = (1 - h2 * h2) * (rh1 @ w2 + h1 @ v2 + c2)
        g3 = scale * (h2 @ w3 + b3 - t)  # d loss / d output
        rg3 = scale * (rh2 @ w3 + h2 @ v3 + c3)  # its directional derivative
        gh2 = g3 @ w3.T
        rgh2 = rg3 @ w3.T + g3 @ v3.T
        gz2 = gh2 * (1 - h2 * h2)
        rgz2 = rgh2 * (1 - h2 * h2) - 2 * gh2 * h2 * rh2
        gh1 = gz2 @ w2.T
        rgh1 = rgz2 @ w2.T + gz2 @ v2.T
        rgz1 = rgh1 * (1 - h1 * h1) - 2 * gh1 * h1 * rh1
        out[:] = [
            x.T @ rgz1,
            rgz1.sum(0),
            rh1.T @ gz2 + h1.T @ rgz2,
            rgz2.sum(0),
            rh2.T @ g3 + h2.T @ rg3,
            rg3.sum(0),
        ]

    return Run(step, lambda: list(out))


def torch(data: dict) -> Run:
    torch = need("torch")
    params = [torch.tensor(p, requires_grad=True) for p in data["params"]]
    v = [torch.tensor(p) for p in data["v"]]
    x, t = torch.tensor(data["x"]), torch.tensor(data["t"])
    out: list = []

    def step():
        loss = _mlp(params, x, t, torch.tanh, torch.mean)
        grads = torch.autograd.grad(loss, params, create_graph=True)
        dot = sum((g * u).sum() for g, u in zip(grads, v))
        out[:] = torch.autograd.grad(dot, params)

    return Run(step, lambda: [h.numpy() for h in out])


def autograd(data: dict) -> Run:
    ag = need("autograd")
    anp = need("autograd.numpy")
    x, t = data["x"], data["t"]
    params, v = tuple(data["params"]), tuple(data["v"])
    gradient = ag.grad(lambda ps: _mlp(ps, x, t, anp.tanh, anp.mean))
    hvp = ag.grad(lambda ps: sum(anp.sum(g * u) for g, u in zip(gradient(ps), v)))
    out: list = []

    def step():
        out[:] = hvp(params)

    return Run(step, lambda: [np.asarray(h) for h in out])


def mygrad(data: dict) -> Run:
    need("mygrad")
    raise Skip("MyGrad computes first derivatives only (no gradient of a gradient)")


def dezero(data: dict) -> Run:
    dz = need("dezero")
    F = need("dezero.functions")
    params = [dz.Variable(p.copy()) for p in data["params"]]
    v = [dz.Variable(p) for p in data["v"]]
    x, t = data["x"], data["t"]

    def mean(z):
        return F.sum(z) / z.size

    def step():
        for p in params:
            p.cleargrad()
        loss = _mlp(params, x, t, F.tanh, mean, F.matmul)
        loss.backward(create_graph=True)
        grads = [p.grad for p in params]
        for p in params:
            p.cleargrad()
        dot = sum(F.sum(g * u) for g, u in zip(grads, v))
        dot.backward()

    return Run(step, lambda: [np.asarray(p.grad.data) for p in params])


WORKLOAD = Workload(
    name="W5",
    title="second order: Hessian-vector product of an 8-32-32-1 tanh MLP's loss (batch 32)",
    builders={
        "engine": engine,
        "numpy": numpy,
        "torch": torch,
        "autograd": autograd,
        "mygrad": mygrad,
        "dezero": dezero,
    },
    make_data=make_data,
    targets={"torch": 1.5},
)
