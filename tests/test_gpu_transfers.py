"""Transfer budgets (API.md): nothing comes back to the host unless asked. Counted with the fake
CuPy's counter on each fake GPU: an op, a backward pass, an optimizer step and a loss with device
labels make no device→host transfer; `fit` and a hand-written training loop make one per step (the
loss shown); `gv.Recorder.record` one per call; dropout uploads nothing (issue 12, item 6)."""

from __future__ import annotations

import numpy as np
import pytest

import engine as eg
import gradviz as gv
from engine.training import fit, train_step
from tests.helpers import DEVICES

GPUS = [d for d in DEVICES if d.startswith("gpu")]
pytestmark = pytest.mark.skipif(not GPUS, reason="needs a (fake or real) GPU")


def _model_and_data(device, n=24, classes=3, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 5)).astype(np.float32)
    y = rng.integers(0, classes, n).astype(np.int32)
    with eg.device(device):
        model = eg.layers.Sequential([eg.layers.Dense(8, activation="relu", seed=1),
                                      eg.layers.Dropout(0.2, seed=2), eg.layers.Dense(classes, seed=3)])
        model(eg.constant(x[:1]))  # build the variables on the device
        xt, yt = eg.constant(x), eg.constant(y)
    return model, xt, yt


@pytest.mark.parametrize("device", GPUS)
def test_an_op_and_a_backward_pass_make_no_transfer(device, transfers):
    model, x, y = _model_and_data(device)
    with transfers() as count:
        with eg.GradientTape() as tape:
            loss = eg.mean(eg.nn.sparse_softmax_cross_entropy(y, model(x, training=True)))
        grads = tape.gradient(loss, model.trainable_variables)
    assert count.to_host == 0, count
    assert all(g.device == device for g in grads)


@pytest.mark.parametrize("name", ["SGD", "Momentum", "RMSProp", "Adam", "Adagrad"])
@pytest.mark.parametrize("device", GPUS)
def test_an_optimizer_step_makes_no_transfer(device, name, transfers):
    model, x, y = _model_and_data(device)
    opt = getattr(eg.optimizers, name)(0.01)
    with eg.GradientTape() as tape:
        loss = eg.mean(eg.nn.sparse_softmax_cross_entropy(y, model(x)))
    pairs = opt.compute_gradients(loss, tape=tape)
    with transfers() as count:
        opt.apply_gradients(pairs)  # the first step also makes the slots
        opt.apply_gradients(pairs)
    assert (count.to_host, count.to_device) == (0, 0), count


@pytest.mark.parametrize("device", GPUS)
def test_a_hand_written_training_loop_makes_one_transfer_per_step(device, transfers):
    model, x, y = _model_and_data(device)
    opt = eg.optimizers.Adam(0.01)
    steps = 0
    with transfers() as count:
        for xb, yb in eg.data.batches(x, y, batch_size=8, seed=0):
            loss, _, _ = train_step(model, opt, xb, yb)
            shown = float(loss)  # the one transfer: the loss the loop prints
            steps += 1
    assert np.isfinite(shown) and steps == 3
    assert count.to_host == steps, count


@pytest.mark.parametrize("data_on_device", [True, False], ids=["device-data", "numpy-data"])
@pytest.mark.parametrize("device", GPUS)
def test_fit_makes_one_transfer_per_step(device, data_on_device, transfers):
    model, x, y = _model_and_data(device)
    if not data_on_device:
        x, y = x.numpy(), y.numpy()
    with transfers() as count:
        history = fit(model, x, y, eg.optimizers.Adam(0.01), epochs=2, batch_size=8, seed=0,
                                  progress=False)
    steps = 2 * 3
    labels_checked_once = 1 if data_on_device else 0
    assert count.to_host == steps + labels_checked_once, count
    assert len(history["loss"]) == 2 and all(np.isfinite(history["loss"]))


@pytest.mark.parametrize("device", GPUS)
def test_fit_checks_device_labels_once_where_they_enter(device):
    model, x, _ = _model_and_data(device)
    with eg.device(device):
        y = eg.constant(np.full(24, 3, np.int32))  # 3 classes: 3 is out of range
    with pytest.raises(ValueError, match="fit: label 3 is out of range for the model's 3 classes"):
        fit(model, x, y, eg.optimizers.SGD(0.1), batch_size=8, progress=False)


@pytest.mark.parametrize("device", GPUS)
def test_recorder_record_makes_one_transfer_per_call(device, transfers):
    model, x, y = _model_and_data(device)
    opt = eg.optimizers.SGD(0.1)
    rec = gv.Recorder()
    for step in range(3):
        with eg.GradientTape() as tape:
            loss = eg.mean(eg.nn.sparse_softmax_cross_entropy(y, model(x)))
        pairs = opt.compute_gradients(loss, tape=tape)
        opt.apply_gradients(pairs)
        with transfers() as count:
            rec.record(step, loss=loss, grads_and_vars=pairs, lr=0.1, accuracy=eg.constant(0.5).to(device))
        assert count.to_host == 1, count
    assert len(pairs) == 4 and rec.variable_names and len(rec.scalar("loss")[1]) == 3
    kernel = rec.variable_names[0]
    stats = rec.gradient_stats(kernel)
    assert np.isnan(stats["update_ratio"][0]) and stats["update_ratio"][2] > 0
    g = pairs[0][0].numpy().astype(np.float64)
    np.testing.assert_allclose(stats["norm"][2], np.sqrt(np.sum(g * g)), rtol=1e-12)


@pytest.mark.parametrize("device", GPUS)
def test_dropout_draws_its_mask_on_the_device(device, transfers):
    with eg.device(device):
        x = eg.ones((64, 32))
    with transfers() as count:
        eg.nn.dropout(x, rate=0.5, seed=1)
        eg.nn.dropout(x, rate=0.5)
    assert (count.to_host, count.to_device) == (0, 0), count


@pytest.mark.parametrize("device", GPUS)
def test_the_sparse_loss_with_device_labels_makes_no_round_trip(device, transfers):
    with eg.device(device):
        logits, labels = eg.constant(np.zeros((4, 3), np.float32)), eg.constant([0, 1, 2, 1])
    with transfers() as count:
        eg.nn.sparse_softmax_cross_entropy(labels, logits)
    assert (count.to_host, count.to_device) == (0, 0), count


@pytest.mark.parametrize("device", GPUS)
def test_batches_of_device_tensors_upload_the_order_once_per_pass(device, transfers):
    with eg.device(device):
        x, y = eg.constant(np.arange(20.0).reshape(10, 2)), eg.constant(np.arange(10))
    with transfers() as count:
        got = list(eg.data.batches(x, y, batch_size=4, seed=0))
    assert len(got) == 3 and (count.to_host, count.to_device) == (0, 1), count
    order = np.random.default_rng(0).permutation(10)
    np.testing.assert_array_equal(np.concatenate([yb.numpy() for _, yb in got]), order)


@pytest.mark.parametrize("device", GPUS)
def test_python_numbers_in_ops_are_uploaded_once(device, transfers):
    with eg.device(device):
        x = eg.constant([1.0, 2.0])
    with transfers() as count:
        for _ in range(5):
            x = x * 0.123 + 0.456
    assert count.to_device == 2, count  # each number once, then reused
    zero, minus_zero = x * 0.0, x * -0.0  # 0.0 and -0.0 are different numbers
    assert not np.signbit(zero.numpy()).any() and np.signbit(minus_zero.numpy()).all()
