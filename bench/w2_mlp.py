"""W2 MLP step: a 64-128-128-10 ReLU MLP, softmax cross-entropy, batch 64, one plain SGD update.

Every implementation starts from the same weights and data; ``fetch`` returns the loss and the
updated weights, so one step of each must agree.
"""

from __future__ import annotations

import numpy as np

from bench.common import Run, Workload, need

SIZES = (64, 128, 128, 10)
LR = 0.1


def make_data(sizes: tuple[int, ...] = SIZES, batch: int = 64, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    params = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        params.append((rng.normal(size=(n_in, n_out)) * np.sqrt(2.0 / n_in)).astype(np.float32))
        params.append(np.full(n_out, 0.01, dtype=np.float32))
    return {
        "params": params,
        "x": rng.normal(size=(batch, sizes[0])).astype(np.float32),
        "y": rng.integers(0, sizes[-1], size=batch).astype(np.int32),
    }


def engine(data: dict) -> Run:
    import engine as eg  # noqa: PLC0415

    params = [eg.Variable(p.copy()) for p in data["params"]]
    x, y = eg.constant(data["x"]), eg.constant(data["y"])
    cross_entropy = _engine_cross_entropy(eg)
    sgd = eg.optimizers.SGD(learning_rate=LR) if hasattr(eg, "optimizers") else None
    loss_box: list = []

    def step():
        with eg.GradientTape() as tape:
            h = x
            for i in range(0, len(params) - 2, 2):
                h = eg.relu(h @ params[i] + params[i + 1])
            logits = h @ params[-2] + params[-1]
            loss = cross_entropy(y, logits)
        grads = tape.gradient(loss, params)
        if sgd is not None:
            sgd.apply_gradients(zip(grads, params))
        else:
            for g, p in zip(grads, params):
                p.assign_sub(g * LR)
        loss_box[:] = [loss]

    return Run(step, lambda: [loss_box[0].numpy(), *(p.numpy() for p in params)])


def traced(data: dict) -> Run:
    """The engine's step (forward, tape.gradient, SGD update) inside ``eg.function``."""
    import engine as eg  # noqa: PLC0415

    params = [eg.Variable(p.copy()) for p in data["params"]]
    x, y = eg.constant(data["x"]), eg.constant(data["y"])
    sgd = eg.optimizers.SGD(learning_rate=LR)
    loss_box: list = []

    @eg.function
    def train_step(x, y):
        with eg.GradientTape() as tape:
            h = x
            for i in range(0, len(params) - 2, 2):
                h = eg.relu(h @ params[i] + params[i + 1])
            loss = eg.mean(eg.nn.sparse_softmax_cross_entropy(y, h @ params[-2] + params[-1]))
        sgd.apply_gradients(zip(tape.gradient(loss, params), params))
        return loss

    def step():
        loss_box[:] = [train_step(x, y)]

    return Run(step, lambda: [loss_box[0].numpy(), *(p.numpy() for p in params)])


def _engine_cross_entropy(eg):
    """Mean sparse softmax cross-entropy: the engine's own when it has one, else composed."""
    nn = getattr(eg, "nn", None)
    if nn is not None and hasattr(nn, "sparse_softmax_cross_entropy"):
        return lambda labels, logits: eg.mean(nn.sparse_softmax_cross_entropy(labels, logits))

    def composite(labels, logits):
        one_hot = eg.constant(np.eye(logits.shape[-1], dtype=np.float32)[labels.numpy()])
        return -eg.sum(eg.log_softmax(logits, axis=-1) * one_hot) / logits.shape[0]

    return composite


def numpy(data: dict) -> Run:
    params = [p.copy() for p in data["params"]]
    x, y = data["x"], data["y"]
    rows = np.arange(len(y))
    loss_box: list = []

    def step():
        acts, pre = [x], []
        h = x
        for i in range(0, len(params) - 2, 2):
            z = h @ params[i] + params[i + 1]
            pre.append(z)
            h = np.maximum(z, 0)
            acts.append(h)
        logits = h @ params[-2] + params[-1]
        shift = logits.max(axis=1, keepdims=True)
        e = np.exp(logits - shift)
        total = e.sum(axis=1, keepdims=True)
        loss = np.mean(np.log(total[:, 0]) + shift[:, 0] - logits[rows, y])
        g = e / total
        g[rows, y] -= 1
        g /= len(y)
        grads = [None] * len(params)
        for layer in range(len(params) // 2 - 1, -1, -1):
            grads[2 * layer] = acts[layer].T @ g
            grads[2 * layer + 1] = g.sum(axis=0)
            if layer:
                g = (g @ params[2 * layer].T) * (pre[layer - 1] > 0)
        for p, gp in zip(params, grads):
            p -= LR * gp
        loss_box[:] = [loss]

    return Run(step, lambda: [np.asarray(loss_box[0]), *(p.copy() for p in params)])


def torch(data: dict) -> Run:
    torch = need("torch")
    F = torch.nn.functional
    dev = data.get("torch_device", "cpu")
    params = [torch.tensor(p, device=dev, requires_grad=True) for p in data["params"]]
    x, y = torch.tensor(data["x"], device=dev), torch.tensor(data["y"], dtype=torch.long, device=dev)
    sgd = torch.optim.SGD(params, lr=LR)
    loss_box: list = []

    def step():
        h = x
        for i in range(0, len(params) - 2, 2):
            h = torch.relu(h @ params[i] + params[i + 1])
        loss = F.cross_entropy(h @ params[-2] + params[-1], y)
        sgd.zero_grad(set_to_none=True)
        loss.backward()
        sgd.step()
        loss_box[:] = [loss]

    return Run(step, lambda: [t.detach().cpu().numpy() for t in (loss_box[0], *params)])


def autograd(data: dict) -> Run:
    ag = need("autograd")
    anp = need("autograd.numpy")
    lse = need("autograd.scipy.special").logsumexp
    x, y = data["x"], data["y"]
    one_hot = np.eye(SIZES[-1], dtype=np.float32)[y]
    state = {"params": [p.copy() for p in data["params"]], "loss": None}

    def loss(params):
        h = x
        for i in range(0, len(params) - 2, 2):
            h = anp.maximum(anp.dot(h, params[i]) + params[i + 1], 0)
        logits = anp.dot(h, params[-2]) + params[-1]
        return anp.mean(lse(logits, axis=1) - anp.sum(logits * one_hot, axis=1))

    value_and_grad = ag.value_and_grad(loss)

    def step():
        value, grads = value_and_grad(state["params"])
        state["params"] = [p - LR * g for p, g in zip(state["params"], grads)]
        state["loss"] = value

    return Run(step, lambda: [np.asarray(state["loss"]), *state["params"]])


def mygrad(data: dict) -> Run:
    mg = need("mygrad")
    ce = need("mygrad.nnet.losses").softmax_crossentropy
    params = [mg.tensor(p.copy()) for p in data["params"]]
    x, y = data["x"], data["y"]
    loss_box: list = []

    def step():
        h = x
        for i in range(0, len(params) - 2, 2):
            h = mg.nnet.activations.relu(mg.matmul(h, params[i]) + params[i + 1])
        loss = ce(mg.matmul(h, params[-2]) + params[-1], y)
        loss.backward()
        for p in params:
            p.data -= LR * p.grad  # MyGrad's documented way to update in place
        loss_box[:] = [loss.item()]

    return Run(step, lambda: [np.asarray(loss_box[0]), *(np.asarray(p.data) for p in params)])


def dezero(data: dict) -> Run:
    dz = need("dezero")
    F = need("dezero.functions")
    optimizers = need("dezero.optimizers")
    params = [dz.Parameter(p.copy()) for p in data["params"]]
    x, y = data["x"], data["y"].astype(np.int64)
    sgd = optimizers.SGD(lr=LR)
    loss_box: list = []

    def step():
        for p in params:
            p.cleargrad()
        h = x
        for i in range(0, len(params) - 2, 2):
            h = F.relu(F.linear(h, params[i], params[i + 1]))
        loss = F.softmax_cross_entropy(F.linear(h, params[-2], params[-1]), y)
        loss.backward()
        for p in params:
            sgd.update_one(p)
        loss_box[:] = [loss]

    return Run(step, lambda: [np.asarray(loss_box[0].data), *(p.data for p in params)])


WORKLOAD = Workload(
    name="W2",
    title="MLP step: 64-128-128-10 ReLU, softmax cross-entropy, batch 64, SGD",
    builders={
        "engine": engine,
        "traced": traced,
        "numpy": numpy,
        "torch": torch,
        "autograd": autograd,
        "mygrad": mygrad,
        "dezero": dezero,
    },
    make_data=make_data,
    targets={"torch": 1.0},
    traced_targets={"torch": 0.9},
)
