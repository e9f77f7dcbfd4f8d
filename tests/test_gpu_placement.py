"""Placement follows the inputs (API.md, "tensors and devices"): with tensors on a device and no
device scope, results, gradients, optimizer slots, losses and jacobians land on that device, and
are really there (not only labelled so). On the fake CuPy the last device is gpu:1, which catches
every result that silently lands on CuPy's current device, gpu:0 (issue 12, items 1 and 5)."""

from __future__ import annotations

import numpy as np
import pytest

import engine as eg
from engine import backend
from tests.helpers import DEVICES

GPUS = [d for d in DEVICES if d.startswith("gpu")]
OPTIMIZERS = {
    "sgd": lambda: eg.optimizers.SGD(0.1),
    "momentum": lambda: eg.optimizers.Momentum(0.1, momentum=0.9, nesterov=True),
    "rmsprop": lambda: eg.optimizers.RMSProp(0.1, momentum=0.5, centered=True),
    "adam": lambda: eg.optimizers.Adam(0.1),
    "adagrad": lambda: eg.optimizers.Adagrad(0.1),
}


def where(t) -> str:
    """The device the tensor's array really lives on (its label must agree)."""
    real = backend.device_of_array(t._data).name
    assert real == t.device, f"labelled {t.device} but the array is on {real}"
    return real


def on(device, value, dtype="float64"):
    with eg.device(device):
        return eg.constant(value, dtype=dtype)


X = np.array([[0.5, -1.0, 2.0], [3.0, 0.0, -2.0]])


@pytest.mark.parametrize("device", DEVICES)
def test_softmax_family_and_losses_stay_on_the_inputs_device(device):
    logits = on(device, X)
    results = [eg.softmax(logits), eg.log_softmax(logits), eg.logsumexp(logits, axis=1),
               eg.nn.softmax_cross_entropy(np.eye(3)[[2, 0]], logits),
               eg.nn.sparse_softmax_cross_entropy([2, 0], logits),
               eg.nn.sparse_softmax_cross_entropy(on(device, [2, 0], "int32"), logits)]
    for r in results:
        assert where(r) == device
    np.testing.assert_allclose(results[0].numpy(), np.exp(X) / np.exp(X).sum(1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(results[4].numpy(), results[5].numpy(), rtol=1e-12)
    with eg.GradientTape() as tape:
        tape.watch(logits)
        loss = eg.sum(eg.nn.sparse_softmax_cross_entropy(on(device, [2, 0], "int32"), logits))
    assert where(tape.gradient(loss, logits)) == device


@pytest.mark.parametrize("device", GPUS)
def test_out_of_range_device_labels_give_nan_not_a_transfer(device):
    logits = on(device, X)
    loss = eg.nn.sparse_softmax_cross_entropy(on(device, [2, 7], "int32"), logits).numpy()
    assert np.isfinite(loss[0]) and np.isnan(loss[1])
    with pytest.raises(ValueError, match="label 7 is out of range for 3 classes"):
        eg.nn.sparse_softmax_cross_entropy([2, 7], logits)  # host labels are checked


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
@pytest.mark.parametrize("device", DEVICES)
def test_optimizer_updates_and_slots_stay_on_the_variables_device(device, name):
    results = {}
    for dev in ("cpu:0", device):
        with eg.device(dev):
            w = eg.Variable([1.0, -2.0, 3.0], name="w")
        opt = OPTIMIZERS[name]()
        for _ in range(3):  # outside any device scope
            opt.minimize(lambda w=w: eg.sum(w * w * w), var_list=[w])
        assert where(w) == dev
        for slot in opt.slots(w).values():
            assert where(slot) == dev
        results[dev] = w.numpy()
    np.testing.assert_allclose(results[device], results["cpu:0"], rtol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_variable_assign_puts_the_value_on_the_variables_device(device):
    with eg.device(device):
        v = eg.Variable([1.0, 2.0])
    for value in ([3.0, 4.0], np.array([3.0, 4.0], np.float32), 5.0 * np.ones(2, np.float32)):
        v.assign(value)
        assert where(v) == device
    v.assign_add([1.0, 1.0])
    v.assign_sub(np.array([0.5, 0.5], np.float32))
    assert where(v) == device
    np.testing.assert_allclose(v.numpy(), [5.5, 5.5])


@pytest.mark.parametrize("device", DEVICES)
def test_jacobians_land_beside_their_target(device):
    x = on(device, [1.0, 2.0])
    unused = on(device, [1.0])
    with eg.GradientTape(persistent=True) as tape:
        tape.watch([x, unused])
        y = x * x
        yb = eg.reshape(x, (2, 1)) ** 3
    j, z = tape.jacobian(y, [x, unused], unconnected_gradients="zero")
    b = tape.batch_jacobian(yb, eg.reshape(x, (2, 1)))
    assert where(j) == where(z) == device
    np.testing.assert_allclose(j.numpy(), [[2.0, 0.0], [0.0, 4.0]])
    assert z.shape == (2, 1) and not z.numpy().any()
    assert b is None or where(b) == device


@pytest.mark.skipif(len(GPUS) < 2, reason="needs two GPUs (the fake CuPy has two)")
def test_gpu0_tensors_inside_a_gpu1_scope_compute_on_gpu0():
    x = on("gpu:0", [1.0, 2.0, 3.0])
    with eg.device("gpu:1"):
        with eg.GradientTape() as tape:
            tape.watch(x)
            y = eg.sum(eg.softmax(x) * x + x[[0, 0]] @ eg.ones((2, 3), "float64").to("gpu:0"))
        g = tape.gradient(y, x)
        w = eg.Variable(x)
        eg.optimizers.Adam(0.1).apply_gradients([(g, w)])
    assert where(y) == where(g) == where(w) == "gpu:0"


@pytest.mark.parametrize("device", DEVICES)
def test_batches_of_device_tensors_stay_on_the_device(device):
    x, y = on(device, np.arange(10.0).reshape(5, 2)), on(device, [0, 1, 0, 1, 1], "int32")
    for xb, yb in eg.data.batches(x, y, batch_size=2, seed=0):
        assert where(xb) == where(yb) == device


@pytest.mark.parametrize("device", GPUS)
def test_the_tensor_constructor_moves_what_it_labels(device):
    t = eg.Tensor(np.array([1.0, 2.0]), device)
    assert where(t) == device
    back = eg.Tensor(t._data, "cpu:0")
    assert where(back) == "cpu:0" and isinstance(back._data, np.ndarray)


@pytest.mark.parametrize("device", GPUS)
def test_raw_cupy_arrays_are_accepted_and_stay_on_their_gpu(device):
    import cupy

    index = int(device.split(":")[1])
    with cupy.cuda.Device(index):
        raw = cupy.arange(3, dtype=np.float32)
        raw_labels = cupy.arange(2, dtype=np.int32)
    c, v = eg.constant(raw), eg.Variable(raw)
    assert where(c) == where(v) == device and c.dtype == np.float32
    assert where(eg.exp(raw)) == where(eg.add(raw, 1.0)) == where(c * raw) == device
    v.assign(raw * 2 if index == 0 else c * 2)
    eg.optimizers.SGD(1.0).apply_gradients([(raw, v)])
    np.testing.assert_allclose(v.numpy(), [0.0, 1.0, 2.0])
    logits = eg.reshape(eg.concat([c, c], axis=0), (2, 3))
    assert where(eg.nn.sparse_softmax_cross_entropy(raw_labels, logits)) == device
    with eg.device("cpu:0"):
        assert where(eg.constant(raw)) == "cpu:0"  # inside a scope, the scope wins


@pytest.mark.parametrize("device", DEVICES)
def test_dropout_mask_is_drawn_on_the_device_and_reproducible(device):
    x = on(device, np.ones((50, 40)), "float32")
    a = eg.nn.dropout(x, rate=0.5, seed=3)
    b = eg.nn.dropout(x, rate=0.5, seed=3)
    assert where(a) == device
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    kept = a.numpy()
    assert set(np.unique(kept)) == {0.0, 2.0} and 0.4 < (kept > 0).mean() < 0.6


@pytest.mark.parametrize("device", DEVICES)
def test_accumulated_gradients_stay_on_the_variables_device(device):
    with eg.device(device):
        w = eg.Variable([1.0, 2.0])
        g = eg.constant([1.0, 3.0])
    opt = eg.optimizers.MultiSteps(eg.optimizers.SGD(1.0), every_k=2)
    opt.apply_gradients([(g, w)])
    assert where(opt.get_slot(w, "accumulated")) == device
    opt.apply_gradients([(g, w)])
    assert where(w) == device
    np.testing.assert_allclose(w.numpy(), [0.0, -1.0])


@pytest.mark.skipif(len(GPUS) < 2, reason="needs two GPUs (the fake CuPy has two)")
def test_a_traced_function_of_gpu0_tensors_replays_on_gpu0_inside_a_gpu1_scope():
    f = eg.function(lambda a: eg.sum(eg.softmax(a) * a))
    x = on("gpu:0", [1.0, 2.0])
    with eg.device("gpu:1"):
        first, second = f(x), f(x)  # the trace, then its replay
    assert where(first) == where(second) == "gpu:0"
    np.testing.assert_allclose(second.numpy(), first.numpy(), rtol=1e-12)


@pytest.mark.parametrize("device", GPUS)
def test_a_seed_gives_the_same_dropout_mask_on_every_device(device):
    x = np.ones((30, 20), np.float32)
    on_cpu = eg.nn.dropout(eg.constant(x), rate=0.3, seed=11).numpy()
    here = eg.nn.dropout(on(device, x, "float32"), rate=0.3, seed=11)
    assert where(here) == device
    np.testing.assert_array_equal(here.numpy(), on_cpu)
    u = eg.random.hashed_uniform(np, 5, (10000,))
    assert u.dtype == np.float32 and 0 <= u.min() and u.max() < 1 and abs(u.mean() - 0.5) < 0.01
