"""Optimizers: each update rule against the rule written out in NumPy, the compute/apply protocol,
slots, learning-rate schedules, seed 002's descent trace, and gradient accumulation."""

from __future__ import annotations

import numpy as np
import pytest

import engine as eg
from engine import optimizers as opt_lib
from tests.helpers import assert_ulps

# ---- the published rules, written out in NumPy (float64) -------------------------------------------


def numpy_sgd(lr):
    def step(w, g, s, t):
        return w - lr * g
    return step


def numpy_momentum(lr, mu, nesterov):
    def step(w, g, s, t):
        s["a"] = mu * s.get("a", 0.0) + g
        return w - lr * (g + mu * s["a"]) if nesterov else w - lr * s["a"]
    return step


def numpy_adagrad(lr, init, eps):
    def step(w, g, s, t):
        s["acc"] = s.get("acc", np.full_like(w, init)) + g * g
        return w - lr * g / (np.sqrt(s["acc"]) + eps)
    return step


def numpy_rmsprop(lr, rho, mu, eps, centered):
    def step(w, g, s, t):
        s["ms"] = rho * s.get("ms", 0.0) + (1 - rho) * g * g
        denom = s["ms"]
        if centered:
            s["mg"] = rho * s.get("mg", 0.0) + (1 - rho) * g
            denom = denom - s["mg"] ** 2
        delta = lr * g / np.sqrt(denom + eps)
        if mu > 0:
            s["mom"] = mu * s.get("mom", 0.0) + delta
            delta = s["mom"]
        return w - delta
    return step


def numpy_adam(lr, b1, b2, eps):
    def step(w, g, s, t):
        s["m"] = b1 * s.get("m", 0.0) + (1 - b1) * g
        s["v"] = b2 * s.get("v", 0.0) + (1 - b2) * g * g
        lr_t = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        return w - lr_t * s["m"] / (np.sqrt(s["v"]) + eps)
    return step


CASES = {
    "sgd": (lambda: opt_lib.SGD(0.1), numpy_sgd(0.1)),
    "gradient_descent": (lambda: opt_lib.GradientDescent(0.05), numpy_sgd(0.05)),
    "momentum": (lambda: opt_lib.Momentum(0.1, momentum=0.9), numpy_momentum(0.1, 0.9, False)),
    "nesterov": (lambda: opt_lib.Momentum(0.1, momentum=0.8, nesterov=True), numpy_momentum(0.1, 0.8, True)),
    "adagrad": (lambda: opt_lib.Adagrad(0.3), numpy_adagrad(0.3, 0.1, 1e-7)),
    "adagrad_tf1": (lambda: opt_lib.Adagrad(0.3, initial_accumulator_value=0.5, epsilon=0.0),
                    numpy_adagrad(0.3, 0.5, 0.0)),
    "rmsprop": (lambda: opt_lib.RMSProp(0.01), numpy_rmsprop(0.01, 0.9, 0.0, 1e-7, False)),
    "rmsprop_momentum_centered": (lambda: opt_lib.RMSProp(0.01, rho=0.8, momentum=0.5, centered=True),
                                  numpy_rmsprop(0.01, 0.8, 0.5, 1e-7, True)),
    "adam": (lambda: opt_lib.Adam(0.01), numpy_adam(0.01, 0.9, 0.999, 1e-7)),
    "adam_custom": (lambda: opt_lib.Adam(0.1, beta1=0.5, beta2=0.9, epsilon=1e-3),
                    numpy_adam(0.1, 0.5, 0.9, 1e-3)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_rule_matches_numpy_for_several_steps(name):
    make, reference = CASES[name]
    opt = make()
    rng = np.random.default_rng(0)
    start = [rng.normal(size=(2, 3)), rng.normal(size=4)]
    variables = [eg.Variable(a, name=f"w{i}") for i, a in enumerate(start)]
    expected = [a.copy() for a in start]
    states: list[dict] = [{}, {}]
    for t in range(1, 8):
        grads = [rng.normal(size=a.shape) for a in start]
        opt.apply_gradients([(eg.constant(g), v) for g, v in zip(grads, variables)])
        expected = [reference(w, g, s, t) for w, g, s in zip(expected, grads, states)]
        for v, e in zip(variables, expected):
            np.testing.assert_allclose(v.numpy(), e, rtol=1e-12, atol=1e-14)
    assert opt.iterations == 7


def test_defaults_are_the_documented_ones():
    adam = opt_lib.Adam()
    assert (adam.beta1, adam.beta2, adam.epsilon) == (0.9, 0.999, 1e-7)
    assert opt_lib.Adagrad().initial_accumulator_value == 0.1
    rms = opt_lib.RMSProp()
    assert (rms.rho, rms.momentum, rms.epsilon, rms.centered) == (0.9, 0.0, 1e-7, False)
    assert opt_lib.Momentum(momentum=0.5).nesterov is False
    assert opt_lib.GradientDescent is opt_lib.SGD


# ---- seed 002: the ½(x − b)² trace, lr = 1, gradients scaled by a "decay" factor ---------------------
# Digest values (float32, computed for the curriculum; the seed itself printed none).
TRACE_01 = [9.1, 8.29, 7.561, 6.9049, 6.31441, 5.782969, 5.3046722, 4.874205, 4.4867845, 4.138106]
TRACE_09 = [1.9000006, 1.0900002, 1.0090001, 1.0009, 1.00009, 1.0000091, 1.000001, 1.0000001, 1.0,
            1.0, 1.0, 1.0, 1.0, 1.0]


@pytest.mark.parametrize(("decay", "steps", "trace"), [(0.1, 10, TRACE_01), (0.9, 14, TRACE_09)])
def test_seed002_descent_trace(decay, steps, trace):
    x = eg.Variable(10.0, name="x")
    b = eg.constant(1.0)
    opt = opt_lib.GradientDescent(learning_rate=1.0)
    afters = []
    for _ in range(steps):
        before = x.numpy()
        gv = opt.compute_gradients(lambda: 0.5 * eg.pow(x - b, 2), [x])
        (g, var), = gv
        assert var is x
        assert_ulps(g.numpy(), before - np.float32(1))                 # the raw gradient x − b
        opt.apply_gradients([(decay * g, v) for g, v in gv])           # the transformed gradient
        after = x.numpy()
        # after = before − decay·(before − 1), in float32 as every value here is float32
        assert_ulps(after, before - np.float32(decay) * (before - np.float32(1)))
        afters.append(after)
    assert_ulps(np.array(afters), trace)
    assert opt.iterations == steps


# ---- compute_gradients / apply_gradients / minimize -------------------------------------------------
def test_compute_gradients_finds_the_variables_the_loss_read():
    a = eg.Variable(2.0, name="a")
    b = eg.Variable(3.0, name="b")
    frozen = eg.Variable(5.0, name="frozen", trainable=False)
    unused = eg.Variable(7.0, name="unused")
    opt = opt_lib.SGD(0.1)
    pairs = opt.compute_gradients(lambda: a * b + frozen)
    assert len(pairs) == 2 and pairs[0][1] is a and pairs[1][1] is b
    assert [float(g) for g, _ in pairs] == [3.0, 2.0]
    # an explicit var_list: an unconnected variable gets None; a non-trainable one is watched
    pairs = opt.compute_gradients(lambda: a * frozen, var_list=[a, unused, frozen])
    assert [None if g is None else float(g) for g, _ in pairs] == [5.0, None, 2.0]


def test_compute_gradients_with_a_tape():
    w = eg.Variable([1.0, 2.0], name="w")
    opt = opt_lib.SGD(0.1)
    with eg.GradientTape() as tape:
        loss = eg.sum(w * w)
    (g, v), = opt.compute_gradients(loss, tape=tape)
    assert v is w
    np.testing.assert_array_equal(g.numpy(), [2.0, 4.0])
    with pytest.raises(TypeError, match="pass the GradientTape"):
        opt.compute_gradients(loss)
    with pytest.raises(ValueError, match="either"):
        opt.compute_gradients(lambda: eg.sum(w), tape=tape)
    with pytest.raises(ValueError, match="no variables to optimize"):
        opt.compute_gradients(lambda: eg.constant(1.0) * 2)
    with pytest.raises(TypeError, match="not a Tensor"):
        opt.compute_gradients(lambda: 3.0)


def test_apply_gradients_skips_none_and_counts_iterations():
    a = eg.Variable(1.0, name="a")
    b = eg.Variable(1.0, name="b")
    opt = opt_lib.SGD(0.5)
    assert opt.iterations == 0
    opt.apply_gradients(zip([eg.constant(2.0), None], [a, b]))
    assert (float(a), float(b), opt.iterations) == (0.0, 1.0, 1)
    opt.apply_gradients([(np.float32(2.0), a), (1.0, b)])     # NumPy and Python values work too
    assert (float(a), float(b), opt.iterations) == (-1.0, 0.5, 2)
    with pytest.raises(ValueError, match="no gradients provided"):
        opt.apply_gradients([(None, a)])
    assert opt.iterations == 2


def test_apply_gradients_errors_name_the_variable():
    w = eg.Variable(np.zeros((2, 3), np.float32), name="dense_1/kernel")
    opt = opt_lib.Adam()
    with pytest.raises(ValueError, match=r"'dense_1/kernel' has shape \(3, 2\) but the variable has shape "
                                         r"\(2, 3\)"):
        opt.apply_gradients([(eg.zeros((3, 2)), w)])
    with pytest.raises(TypeError, match="'dense_1/kernel' has dtype float64"):
        opt.apply_gradients([(eg.zeros((2, 3), dtype="float64"), w)])
    with pytest.raises(TypeError, match="float64"):
        opt.apply_gradients([(np.zeros((2, 3)), w)])
    with pytest.raises(TypeError, match="eg.Variable"):
        opt.apply_gradients([(eg.zeros((2, 3)), eg.zeros((2, 3)))])
    with pytest.raises(TypeError, match="pairs"):
        opt.apply_gradients([eg.zeros((2, 3))])
    with pytest.raises(ValueError, match="twice"):
        opt.apply_gradients([(eg.zeros((2, 3)), w), (eg.zeros((2, 3)), w)])
    assert opt.iterations == 0 and opt.slots(w) == {}


@pytest.mark.skipif(not eg.gpu_available(), reason="needs a GPU to put a gradient on another device")
def test_apply_gradients_device_mismatch():
    w = eg.Variable([1.0], name="w")
    with pytest.raises(ValueError, match="'w' is on gpu:0 but the variable is on cpu:0"):
        opt_lib.SGD().apply_gradients([(eg.constant([1.0]).gpu(), w)])


def test_minimize_is_compute_then_apply_and_returns_the_loss():
    w1, w2 = eg.Variable(3.0), eg.Variable(3.0)
    o1, o2 = opt_lib.Adam(0.1), opt_lib.Adam(0.1)
    for _ in range(3):
        loss = o1.minimize(lambda: w1 * w1)
        o2.apply_gradients(o2.compute_gradients(lambda: w2 * w2))
    assert float(w1) == float(w2) and o1.iterations == 3
    assert isinstance(loss, eg.Tensor)


def test_apply_gradients_inside_a_tape_records_nothing():
    w = eg.Variable(1.0)
    opt = opt_lib.Momentum(0.1)
    with eg.GradientTape() as tape:
        y = w * 2.0
        n = len(tape.records)
        opt.apply_gradients([(eg.constant(1.0), w)])
        assert len(tape.records) == n
    assert float(tape.gradient(y, w)) == 2.0


def test_learning_rate_schedule_is_called_with_the_step():
    seen = []

    def schedule(step):
        seen.append(step)
        return 1.0 / (step + 1)

    w = eg.Variable(0.0)
    opt = opt_lib.SGD(schedule)
    for _ in range(3):
        opt.apply_gradients([(eg.constant(1.0), w)])
    assert seen == [0, 1, 2]
    np.testing.assert_allclose(float(w), -(1 + 1 / 2 + 1 / 3), rtol=1e-6)
    assert opt.current_learning_rate() == 0.25
    assert "schedule" in repr(opt)


def test_slots_are_readable():
    w = eg.Variable([1.0, -1.0], name="w")
    opt = opt_lib.Adam(0.1)
    assert opt.get_slot(w, "m") is None and opt.slots(w) == {}
    opt.apply_gradients([(eg.constant([0.5, 2.0]), w)])
    slots = opt.slots(w)
    assert sorted(slots) == ["m", "v"] and opt.get_slot_names() == ["m", "v"]
    np.testing.assert_allclose(slots["m"].numpy(), [0.05, 0.2], rtol=1e-6)
    np.testing.assert_allclose(opt.get_slot(w, "v").numpy(), [0.00025, 0.004], rtol=1e-5)
    assert isinstance(slots["m"], eg.Variable) and not slots["m"].trainable
    assert slots["m"].name == "w/Adam/m"
    with pytest.raises(KeyError, match="'m', 'v'"):
        opt.get_slot(w, "momentum")
    assert len(opt.variables()) == 2
    rms = opt_lib.RMSProp(momentum=0.9, centered=True)
    assert rms.get_slot_names() == ["rms", "momentum", "mg"]
    assert opt_lib.SGD().get_slot_names() == []


@pytest.mark.parametrize(("make", "message"), [
    (lambda: opt_lib.SGD("fast"), "must be a number"),
    (lambda: opt_lib.SGD(float("nan")), "finite"),
    (lambda: opt_lib.Adam(beta1=1.0), "beta1 must be < 1"),
    (lambda: opt_lib.Adam(beta2=-0.1), "beta2 must be >= 0"),
    (lambda: opt_lib.Momentum(momentum=-1), "momentum must be >= 0"),
    (lambda: opt_lib.Adagrad(initial_accumulator_value=-1), "initial_accumulator_value"),
    (lambda: opt_lib.RMSProp(rho=1.5), "rho"),
])
def test_hyperparameter_errors(make, message):
    with pytest.raises((ValueError, TypeError), match=message):
        make()


def test_optimizers_keep_float64_and_work_on_float16():
    for dtype in ("float64", "float16"):
        w = eg.Variable(np.ones(3, dtype=dtype))
        opt = opt_lib.Adam(0.1)
        opt.apply_gradients([(eg.ones(3, dtype=dtype), w)])
        assert w.dtype == np.dtype(dtype) and opt.get_slot(w, "v").dtype == np.dtype(dtype)
        np.testing.assert_allclose(w.numpy().astype(float), 0.9, rtol=1e-3)


# ---- accumulation -----------------------------------------------------------------------------------
def _regression(seed=0, n=12):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3))
    y = x @ np.array([1.0, -2.0, 0.5]) + 0.1 * rng.normal(size=n)
    return x, y


def _mean_loss(w, b, x, y):
    return eg.mean(eg.square(eg.matmul(eg.constant(x), w) + b - eg.constant(y)))


@pytest.mark.parametrize("make", [lambda: opt_lib.SGD(0.1), lambda: opt_lib.Adam(0.05),
                                  lambda: opt_lib.Momentum(0.1, nesterov=True)])
@pytest.mark.parametrize("k", [2, 3, 4])
def test_multisteps_k_micro_batches_equal_the_full_batch_update(make, k):
    x, y = _regression()
    full_w, full_b = eg.Variable(np.zeros(3)), eg.Variable(0.0, dtype="float64")
    acc_w, acc_b = eg.Variable(np.zeros(3)), eg.Variable(0.0, dtype="float64")
    full, multi = make(), opt_lib.MultiSteps(make(), every_k=k)
    for _ in range(3):                           # three real updates
        full.minimize(lambda: _mean_loss(full_w, full_b, x, y))
        for xs, ys in zip(np.array_split(x, k), np.array_split(y, k)):
            applied = multi.minimize(lambda xs=xs, ys=ys: _mean_loss(acc_w, acc_b, xs, ys))
        assert multi.micro_steps == 0 and multi.iterations == full.iterations
        np.testing.assert_allclose(acc_w.numpy(), full_w.numpy(), rtol=1e-6, atol=1e-12)
        np.testing.assert_allclose(acc_b.numpy(), full_b.numpy(), rtol=1e-6, atol=1e-12)
    assert isinstance(applied, eg.Tensor)


def test_multisteps_applies_every_kth_call_only():
    w = eg.Variable([0.0, 0.0], name="w")
    multi = opt_lib.MultiSteps(opt_lib.SGD(1.0), every_k=3)
    results = []
    for g in ([1.0, 0.0], [2.0, 3.0], [3.0, 0.0]):
        results.append(multi.apply_gradients([(eg.constant(g), w)]))
        if len(results) < 3:
            np.testing.assert_array_equal(w.numpy(), [0.0, 0.0])
            assert multi.micro_steps == len(results)
            np.testing.assert_array_equal(multi.get_slot(w, "accumulated").numpy(),
                                          [1.0, 0.0] if len(results) == 1 else [3.0, 3.0])
    assert results == [False, False, True]
    np.testing.assert_array_equal(w.numpy(), [-2.0, -1.0])            # the mean: [2, 1]
    assert multi.iterations == 1 and multi.micro_steps == 0 and "accumulated" not in multi.slots(w)
    summed = opt_lib.MultiSteps(opt_lib.SGD(1.0), every_k=2, average=False)
    summed.apply_gradients([(eg.constant([1.0, 1.0]), w)])
    summed.apply_gradients([(eg.constant([1.0, 2.0]), w)])
    np.testing.assert_array_equal(w.numpy(), [-4.0, -4.0])
    assert multi.get_slot_names() == ["accumulated"]


def test_multisteps_errors():
    with pytest.raises(ValueError, match="every_k"):
        opt_lib.MultiSteps(opt_lib.SGD(), every_k=0)
    with pytest.raises(TypeError, match="optimizer"):
        opt_lib.MultiSteps("sgd", every_k=2)


def test_accumulator_mean_sum_and_none():
    a, b = eg.Variable([0.0, 0.0], name="a"), eg.Variable(0.0, name="b")
    acc = opt_lib.Accumulator()
    acc.add([(eg.constant([1.0, 2.0]), a), (None, b)])
    acc.add([(eg.constant([3.0, 6.0]), a), (eg.constant(4.0), b)])
    assert acc.count == 2
    (ga, va), (gb, vb) = acc.grads_and_vars()
    assert va is a and vb is b
    np.testing.assert_array_equal(ga.numpy(), [2.0, 4.0])
    assert float(gb) == 2.0                      # None counts as a zero micro-batch gradient
    acc.average = False
    np.testing.assert_array_equal(acc.gradient(a).numpy(), [4.0, 8.0])
    acc.reset()
    assert acc.count == 0 and acc.grads_and_vars() == [] and acc.gradient(a) is None
    with pytest.raises(ValueError, match="shape"):
        acc.add([(eg.constant([1.0]), a)])


def test_accumulated_mean_of_micro_batch_gradients_is_the_full_batch_gradient():
    x, y = _regression(seed=1, n=16)
    w, b = eg.Variable(np.array([0.3, -0.1, 0.2])), eg.Variable(0.5, dtype="float64")
    opt = opt_lib.SGD()
    full = opt.compute_gradients(lambda: _mean_loss(w, b, x, y))
    acc = opt_lib.Accumulator()
    for xs, ys in zip(np.array_split(x, 4), np.array_split(y, 4)):
        acc.add(opt.compute_gradients(lambda xs=xs, ys=ys: _mean_loss(w, b, xs, ys)))
    for (g_full, _), (g_acc, _) in zip(full, acc.grads_and_vars()):
        np.testing.assert_allclose(g_acc.numpy(), g_full.numpy(), rtol=1e-12)


def test_get_by_name():
    assert isinstance(opt_lib.get("SGD"), opt_lib.SGD)
    assert isinstance(opt_lib.get("gradient_descent", learning_rate=0.5), opt_lib.SGD)
    adam = opt_lib.get("adam", learning_rate=0.1)
    assert isinstance(adam, opt_lib.Adam) and adam.learning_rate == 0.1
    assert opt_lib.get("Nesterov").nesterov and opt_lib.get("RMSprop").rho == 0.9
    assert opt_lib.get(adam) is adam
    with pytest.raises(ValueError, match="Unknown optimizer 'lbfgs'"):
        opt_lib.get("lbfgs")
