"""W4 CNN step: lesson 07's network (seed 002's "Deep MNIST" CNN on 8×8 digits), one Adam step on a
batch of 64: conv 5×5 (32, SAME) → relu → max pool 2×2 → conv 5×5 (64, SAME) → relu → max pool 2×2
→ flatten → dense 1024 → relu → dropout 0.5 → dense 10 → softmax cross-entropy.

So that every implementation computes the same numbers, dropout multiplies by one fixed mask (drawn
once; the frameworks' random generators differ). ``fetch`` returns the loss and the gradients.
"""

from __future__ import annotations

import numpy as np

from bench.common import Run, Workload, need

LR = 1e-4
EPSILON = 1e-7


def make_data(
    batch: int = 64, size: int = 8, filters: tuple[int, int] = (32, 64), hidden: int = 1024, seed: int = 0
) -> dict:
    rng = np.random.default_rng(seed)
    x, y = _digits(batch, size, rng)
    f1, f2 = filters
    flat = (size // 4) ** 2 * f2

    def weights(*shape):  # the seed's truncated normal, stddev 0.1
        return np.clip(rng.normal(scale=0.1, size=shape), -0.2, 0.2).astype(np.float32)

    params = [
        weights(5, 5, 1, f1),
        np.full(f1, 0.1, np.float32),
        weights(5, 5, f1, f2),
        np.full(f2, 0.1, np.float32),
        weights(flat, hidden),
        np.full(hidden, 0.1, np.float32),
        weights(hidden, 10),
        np.full(10, 0.1, np.float32),
    ]
    mask = (rng.random((batch, hidden)) >= 0.5).astype(np.float32) * 2  # keep with 0.5, scale by 2
    return {"x": x, "y": y, "params": params, "mask": mask}


def _digits(batch: int, size: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The first ``batch`` scikit-learn digits when they are 8×8 and installed, else random images."""
    if size == 8:
        try:
            import engine as eg  # noqa: PLC0415

            x_train, y_train, _, _ = eg.data.load_digits()
            if len(x_train) >= batch:
                return (
                    np.asarray(x_train[:batch], np.float32).reshape(batch, 8, 8, 1),
                    np.asarray(y_train[:batch], np.int32),
                )
        except Exception:  # noqa: BLE001,S110  (no scikit-learn: random pixels time the same)
            pass
    return (rng.random((batch, size, size, 1), dtype=np.float32), rng.integers(0, 10, batch).astype(np.int32))


def engine(data: dict) -> Run:
    import engine as eg  # noqa: PLC0415

    params = [eg.Variable(p.copy()) for p in data["params"]]
    x, y, mask = eg.constant(data["x"]), eg.constant(data["y"]), eg.constant(data["mask"])
    adam = eg.optimizers.Adam(learning_rate=LR, epsilon=EPSILON)
    out: list = []

    def step():
        k1, c1, k2, c2, w3, b3, w4, b4 = params
        with eg.GradientTape() as tape:
            h = eg.nn.max_pool2d(eg.relu(eg.nn.conv2d(x, k1, padding="SAME") + c1), 2, 2, "SAME")
            h = eg.nn.max_pool2d(eg.relu(eg.nn.conv2d(h, k2, padding="SAME") + c2), 2, 2, "SAME")
            h = eg.reshape(h, (h.shape[0], -1))
            h = eg.relu(h @ w3 + b3) * mask
            loss = eg.mean(eg.nn.sparse_softmax_cross_entropy(y, h @ w4 + b4))
        grads = tape.gradient(loss, params)
        adam.apply_gradients(zip(grads, params))
        out[:] = [loss, *grads]

    return Run(step, lambda: [t.numpy() for t in out])


def traced(data: dict) -> Run:
    """The engine's step inside ``eg.function``: traced once, then replayed."""
    import engine as eg  # noqa: PLC0415

    params = [eg.Variable(p.copy()) for p in data["params"]]
    x, y, mask = eg.constant(data["x"]), eg.constant(data["y"]), eg.constant(data["mask"])
    adam = eg.optimizers.Adam(learning_rate=LR, epsilon=EPSILON)
    out: list = []

    @eg.function
    def train_step(x, y, mask):
        k1, c1, k2, c2, w3, b3, w4, b4 = params
        with eg.GradientTape() as tape:
            h = eg.nn.max_pool2d(eg.relu(eg.nn.conv2d(x, k1, padding="SAME") + c1), 2, 2, "SAME")
            h = eg.nn.max_pool2d(eg.relu(eg.nn.conv2d(h, k2, padding="SAME") + c2), 2, 2, "SAME")
            h = eg.reshape(h, (h.shape[0], -1))
            h = eg.relu(h @ w3 + b3) * mask
            loss = eg.mean(eg.nn.sparse_softmax_cross_entropy(y, h @ w4 + b4))
        grads = tape.gradient(loss, params)
        adam.apply_gradients(zip(grads, params))
        return [loss, *grads]

    def step():
        out[:] = train_step(x, y, mask)

    return Run(step, lambda: [t.numpy() for t in out])


# ---- hand-written NumPy (NHWC, HWIO): im2col convolution, reshape pooling, Adam ------------------------


def _windows(x: np.ndarray, k: int) -> np.ndarray:
    """(B, H, W, k, k, C) patches of x zero-padded for SAME (stride 1, odd k)."""
    p = k // 2
    padded = np.pad(x, ((0, 0), (p, p), (p, p), (0, 0)))
    view = np.lib.stride_tricks.sliding_window_view(padded, (k, k), axis=(1, 2))  # (B, H, W, C, k, k)
    return view.transpose(0, 1, 2, 4, 5, 3)


def _conv(x, w):
    b, h, wd, _ = x.shape
    cols = _windows(x, w.shape[0]).reshape(b * h * wd, -1)
    return (cols @ w.reshape(-1, w.shape[-1])).reshape(b, h, wd, -1), cols


def _conv_backward(g, x, cols, w, need_input):
    k, f = w.shape[0], w.shape[-1]
    g2 = g.reshape(-1, f)
    dw = (cols.T @ g2).reshape(w.shape)
    if not need_input:
        return None, dw
    b, h, wd, c = x.shape
    dcols = (g2 @ w.reshape(-1, f).T).reshape(b, h, wd, k, k, c)
    dpad = np.zeros((b, h + k - 1, wd + k - 1, c), x.dtype)
    for i in range(k):
        for j in range(k):
            dpad[:, i : i + h, j : j + wd, :] += dcols[:, :, :, i, j, :]
    p = k // 2
    return dpad[:, p : p + h, p : p + wd, :], dw


def _pool(x):
    """2×2 max pooling of an even-sized NHWC x; also the index of each window's first maximum."""
    b, h, w, c = x.shape
    win = x.reshape(b, h // 2, 2, w // 2, 2, c).transpose(0, 1, 3, 5, 2, 4).reshape(b, h // 2, w // 2, c, 4)
    first = win.argmax(axis=-1)
    return np.take_along_axis(win, first[..., None], axis=-1)[..., 0], first


def _pool_backward(g, first):
    """The gradient goes to each window's first maximum (TensorFlow's rule for ties)."""
    b, h, w, c = g.shape
    spread = (first[..., None] == np.arange(4)) * g[..., None]
    return spread.reshape(b, h, w, c, 2, 2).transpose(0, 1, 4, 2, 5, 3).reshape(b, 2 * h, 2 * w, c)


def numpy(data: dict) -> Run:
    params = [p.copy() for p in data["params"]]
    moments = [[np.zeros_like(p), np.zeros_like(p)] for p in params]
    x, y, mask = data["x"], data["y"], data["mask"]
    rows = np.arange(len(y))
    state = {"t": 0}
    out: list = []

    def step():
        k1, c1, k2, c2, w3, b3, w4, b4 = params
        z1, cols1 = _conv(x, k1)
        a1 = np.maximum(z1 + c1, 0)
        p1, first1 = _pool(a1)
        z2, cols2 = _conv(p1, k2)
        a2 = np.maximum(z2 + c2, 0)
        p2, first2 = _pool(a2)
        flat = p2.reshape(len(x), -1)
        z3 = flat @ w3 + b3
        h = np.maximum(z3, 0) * mask
        logits = h @ w4 + b4
        shift = logits.max(axis=1, keepdims=True)
        e = np.exp(logits - shift)
        total = e.sum(axis=1, keepdims=True)
        loss = np.mean(np.log(total[:, 0]) + shift[:, 0] - logits[rows, y])
        g = e / total
        g[rows, y] -= 1
        g /= len(y)
        gw4, gb4 = h.T @ g, g.sum(0)
        gz3 = (g @ w4.T) * mask * (z3 > 0)
        gw3, gb3 = flat.T @ gz3, gz3.sum(0)
        ga2 = _pool_backward((gz3 @ w3.T).reshape(p2.shape), first2) * (a2 > 0)
        gp1, gk2 = _conv_backward(ga2, p1, cols2, k2, need_input=True)
        ga1 = _pool_backward(gp1, first1) * (a1 > 0)
        _, gk1 = _conv_backward(ga1, x, cols1, k1, need_input=False)
        grads = [gk1, ga1.sum((0, 1, 2)), gk2, ga2.sum((0, 1, 2)), gw3, gb3, gw4, gb4]
        state["t"] += 1
        t = state["t"]
        lr_t = LR * np.sqrt(1 - 0.999**t) / (1 - 0.9**t)
        for p, gp, mv in zip(params, grads, moments):
            mv[0] = 0.9 * mv[0] + 0.1 * gp
            mv[1] = 0.999 * mv[1] + 0.001 * gp * gp
            p -= (lr_t * mv[0] / (np.sqrt(mv[1]) + EPSILON)).astype(p.dtype)
        out[:] = [np.asarray(loss), *grads]

    return Run(step, lambda: list(out))


def torch(data: dict) -> Run:
    torch = need("torch")
    F = torch.nn.functional
    k1, c1, k2, c2, w3, b3, w4, b4 = data["params"]
    dev = data.get("torch_device", "cpu")
    params = [
        torch.tensor(a.transpose(3, 2, 0, 1).copy() if a.ndim == 4 else a, device=dev, requires_grad=True)
        for a in (k1, c1, k2, c2, w3, b3, w4, b4)
    ]
    x = torch.tensor(data["x"].transpose(0, 3, 1, 2).copy(), device=dev)  # NCHW
    y = torch.tensor(data["y"], dtype=torch.long, device=dev)
    mask = torch.tensor(data["mask"], device=dev)
    adam = torch.optim.Adam(params, lr=LR, eps=EPSILON)
    out: list = []

    def step():
        k1, c1, k2, c2, w3, b3, w4, b4 = params
        h = F.max_pool2d(torch.relu(F.conv2d(x, k1, c1, padding=2)), 2)
        h = F.max_pool2d(torch.relu(F.conv2d(h, k2, c2, padding=2)), 2)
        h = h.permute(0, 2, 3, 1).reshape(h.shape[0], -1)  # flatten in NHWC order, like the others
        h = torch.relu(h @ w3 + b3) * mask
        loss = F.cross_entropy(h @ w4 + b4, y)
        adam.zero_grad(set_to_none=True)
        loss.backward()
        adam.step()
        out[:] = [loss.detach(), *(p.grad for p in params)]

    def fetch():
        loss, *grads = [t.cpu().numpy() for t in out]
        return [loss, *(g.transpose(2, 3, 1, 0) if g.ndim == 4 else g for g in grads)]  # back to HWIO

    return Run(step, fetch)


WORKLOAD = Workload(
    name="W4",
    title="CNN step: lesson 07's conv-pool-conv-pool-dense-dropout-dense net, batch 64, Adam",
    builders={"engine": engine, "traced": traced, "numpy": numpy, "torch": torch},
    make_data=make_data,
    targets={"torch": 1.5},
    traced_targets={"torch": 1.0},
    notes=[
        "dropout is a fixed mask in every implementation (same numbers everywhere)",
        "autograd, MyGrad and DeZero are not run here: no NHWC convolution to compare like for like",
    ],
)
