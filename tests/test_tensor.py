"""Tensors, Variables, creation, operators, devices, and the errors for bad input."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

import engine as eg
from tests.helpers import DEVICES


# ---- creation and dtypes ----------------------------------------------------------------------------
def test_default_dtypes_follow_tensorflow():
    assert eg.constant(1.5).dtype == np.float32
    assert eg.constant(2).dtype == np.int32
    assert eg.constant([1.0, 2.0]).dtype == np.float32
    assert eg.constant(True).dtype == np.bool_
    assert eg.constant(np.ones(2)).dtype == np.float64  # NumPy arrays keep their dtype
    assert eg.constant(np.int64(3)).dtype == np.int64
    assert eg.constant(1, dtype="float64").dtype == np.float64
    assert eg.convert_to_tensor([1, 2], dtype=eg.float32).dtype == np.float32


def test_lossy_conversions_are_errors():
    with pytest.raises(TypeError, match="cast"):
        eg.constant(1.5, dtype="int32")
    with pytest.raises(TypeError, match="int32"):
        eg.constant(3) * 1.5
    with pytest.raises(TypeError, match="convert_to_tensor"):
        eg.convert_to_tensor(eg.constant(1.0), dtype="float64")


def test_properties_and_conversions():
    t = eg.constant([[1.0, 2.0], [3.0, 4.0]], name="t")
    assert (t.shape, t.ndim, t.size, t.device, t.name) == ((2, 2), 2, 4, "cpu:0", "t")
    a = t.numpy()
    a[0, 0] = 100.0  # a copy: the tensor is unchanged
    assert float(t[0, 0]) == 1.0
    view = np.asarray(t)
    assert not view.flags.writeable
    assert eg.constant(3.5).item() == 3.5 and float(eg.constant(2.0)) == 2.0 and int(eg.constant(7)) == 7
    with pytest.raises(ValueError, match="one element"):
        t.item()
    with pytest.raises(TypeError, match="immutable"):
        t[0, 0] = 5.0


def test_repr():
    assert repr(eg.constant([2.0, 2.0])) == "<Tensor shape=(2,) dtype=float32 device=cpu:0 [2. 2.]>"
    assert repr(eg.Variable(1.0, name="w")) == "<Variable 'w' shape=() dtype=float32 device=cpu:0 1.>"
    long = repr(eg.zeros((100, 100)))
    assert "..." in long and len(long) < 300


def test_creation_functions():
    np.testing.assert_array_equal(eg.zeros((2, 3)).numpy(), np.zeros((2, 3), np.float32))
    np.testing.assert_array_equal(eg.ones(3, dtype="int32").numpy(), np.ones(3, np.int32))
    x = eg.constant([[1, 2]])
    assert eg.zeros_like(x).dtype == np.int32 and eg.ones_like(x).shape == (1, 2)
    np.testing.assert_array_equal(eg.fill((2,), 7.0).numpy(), [7.0, 7.0])
    np.testing.assert_array_equal(eg.eye(2).numpy(), np.eye(2))
    np.testing.assert_array_equal(eg.arange(5).numpy(), np.arange(5))
    assert eg.arange(5).dtype == np.int32 and eg.arange(0.0, 1.0, 0.5).dtype == np.float32
    np.testing.assert_allclose(eg.arange(0.0, 1.0, 0.25).numpy(), [0, 0.25, 0.5, 0.75])
    np.testing.assert_allclose(eg.linspace(0, 1, 5).numpy(), np.linspace(0, 1, 5))


def test_random_is_reproducible():
    eg.random.set_seed(42)
    a = eg.random.normal((3,))
    eg.random.set_seed(42)
    b = eg.random.normal((3,))
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    u = eg.random.uniform((1000,), -1.0, 1.0, seed=3)
    assert -1 <= float(eg.min(u)) and float(eg.max(u)) < 1
    t = eg.random.truncated_normal((1000,), stddev=2.0, seed=3)
    assert float(eg.max(eg.abs(t))) <= 4.0
    assert eg.random.normal((2, 2), dtype="float64").dtype == np.float64


# ---- operators ----------------------------------------------------------------------------------------
def test_integer_floor_division_and_modulo():
    assert int(eg.constant(17) // 3) == 5
    assert int(eg.constant(17) % 3) == 2
    assert int(eg.constant(-17) // 3) == -6 and int(eg.constant(-17) % 3) == 1  # floor semantics
    assert (eg.constant(17) // 3).dtype == np.int32


def test_operators_match_numpy():
    a0, b0 = np.array([[1.0, -2.0], [3.0, 4.0]], np.float32), np.array([2.0, 0.5], np.float32)
    a, b = eg.constant(a0), eg.constant(b0)
    for got, want in [(a + b, a0 + b0), (a - b, a0 - b0), (a * b, a0 * b0), (a / b, a0 / b0),
                      (a ** 2, a0**2), (2 ** b, 2**b0), (-a, -a0), (abs(a), np.abs(a0)), (a @ a, a0 @ a0),
                      (1 - a, 1 - a0), (a0 + b, a0 + b0), (3 / b, 3 / b0), (a // b, a0 // b0)]:
        assert isinstance(got, eg.Tensor)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
        assert got.dtype == np.float32


def test_comparisons_and_logic():
    x = eg.constant([1.0, 2.0, 3.0])
    np.testing.assert_array_equal((x > 1.5).numpy(), [False, True, True])
    np.testing.assert_array_equal((x == 2.0).numpy(), [False, True, False])
    m = (x > 1.5) & ~(x > 2.5)
    np.testing.assert_array_equal(m.numpy(), [False, True, False])
    np.testing.assert_array_equal(((x < 1.5) | (x > 2.5)).numpy(), [True, False, True])
    np.testing.assert_array_equal(((x < 2.5) ^ (x > 1.5)).numpy(), [True, False, True])
    with pytest.raises(TypeError, match="bool"):
        x & x


def test_indexing_iteration_len():
    x = eg.constant(np.arange(12.0).reshape(3, 4))
    np.testing.assert_array_equal(x[1].numpy(), [4, 5, 6, 7])
    np.testing.assert_array_equal(x[:, [0, 3]].numpy(), [[0, 3], [4, 7], [8, 11]])
    np.testing.assert_array_equal(x[eg.constant([2, 0])][:, 1].numpy(), [9, 1])
    np.testing.assert_array_equal(x[x[:, 0] > 3].numpy(), [[4, 5, 6, 7], [8, 9, 10, 11]])
    assert len(x) == 3 and [r.shape for r in x] == [(4,)] * 3
    with pytest.raises(IndexError, match=r"\(3, 4\)"):
        x[5]
    with pytest.raises(TypeError):
        len(eg.constant(1.0))


def test_variable_assign():
    v = eg.Variable([1.0, 2.0], name="v")
    assert v.trainable and v.name == "v" and isinstance(v.value(), eg.Tensor)
    v.assign_add([1.0, 1.0])
    v.assign_sub(eg.constant([0.5, 0.5]))
    np.testing.assert_allclose(v.numpy(), [1.5, 2.5])
    assert isinstance(v * 2, eg.Tensor) and not isinstance(v * 2, eg.Variable)
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        v.assign([1.0, 2.0, 3.0])
    assert eg.Variable(lambda: eg.zeros(2)).shape == (2,)
    assert eg.Variable(1, dtype="float64").dtype == np.float64


# ---- errors for bad input -------------------------------------------------------------------------------
def test_shape_mismatch_names_op_and_shapes():
    with pytest.raises(ValueError, match=r"add: shapes \(2, 3\) and \(4,\) cannot be broadcast"):
        eg.ones((2, 3)) + eg.ones(4)
    with pytest.raises(ValueError, match=r"matmul.*\(2, 3\) @ \(4, 5\)"):
        eg.ones((2, 3)) @ eg.ones((4, 5))
    with pytest.raises(ValueError, match=r"reshape.*\(2, 3\).*\(4,\)"):
        eg.reshape(eg.ones((2, 3)), (4,))
    with pytest.raises(ValueError, match="concat"):
        eg.concat([eg.ones((2, 3)), eg.ones((3, 2))], axis=0)


def test_dtype_mismatch_names_dtypes():
    with pytest.raises(TypeError, match=r"multiply: inputs have different dtypes \(float32, float64\)"):
        eg.constant(1.0) * eg.constant(np.float64(2.0))
    with pytest.raises(TypeError, match="exp: expected a floating-point tensor, got int32"):
        eg.exp(eg.constant(1))


def test_device_mismatch_names_both_devices():
    a = eg.constant([1.0])
    b = eg.Tensor(np.array([2.0], np.float32), DEVICES[-1])  # gpu:1 on the fake CuPy
    assert b.device == DEVICES[-1] != "cpu:0"
    with pytest.raises(ValueError, match=rf"inputs are on different devices \(cpu:0 and {DEVICES[-1]}\)"):
        a + b


def test_nan_and_inf_are_never_silently_numbers():
    x = eg.constant([np.nan, np.inf, -np.inf, 1.0])
    for f in (eg.relu, eg.sigmoid, eg.tanh, eg.exp, lambda t: eg.clip(t, -1.0, 1.0),
              lambda t: eg.maximum(t, 0.0), eg.softplus, eg.abs):
        assert np.isnan(f(x).numpy()[0])
    assert np.isnan(float(eg.max(x))) and np.isnan(float(eg.sum(x)))
    assert np.isnan(eg.softmax(x).numpy()).all()
    z = eg.constant(0.0)
    with eg.GradientTape() as tape:
        tape.watch(z)
        y = eg.sqrt(z)
    with np.errstate(divide="ignore"):
        assert np.isinf(float(tape.gradient(y, z)))


def test_stable_functions_for_large_inputs():
    big = eg.constant([1000.0, -1000.0])
    np.testing.assert_allclose(eg.sigmoid(big).numpy(), [1.0, 0.0])
    np.testing.assert_allclose(eg.softplus(big).numpy(), [1000.0, 0.0])
    np.testing.assert_allclose(eg.logsumexp(big).numpy(), 1000.0)
    np.testing.assert_allclose(eg.log_softmax(eg.constant([1e4, 0.0])).numpy(), [0.0, -1e4])


# ---- devices --------------------------------------------------------------------------------
def test_devices_listing_and_memory_info():
    assert eg.list_devices()[0] == "cpu:0"
    info = eg.memory_info("cpu:0")
    assert info["used_bytes"] > 0 and info["device"] == "cpu:0"
    with eg.device("/CPU:0"):
        assert eg.constant(1.0).device == "cpu:0"
    with pytest.raises(ValueError, match="Unknown device"):
        eg.device("tpu:0").__enter__()


def test_soft_placement_falls_back_with_one_warning_and_strict_mode_raises(monkeypatch, no_gpu):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with eg.device("gpu:0"):
            x = eg.constant([1.0, 2.0])
        y = x.gpu()
    assert x.device == "cpu:0" and y.device == "cpu:0"
    assert len([w for w in caught if "soft placement" in str(w.message)]) == 1
    monkeypatch.setattr(eg.config, "soft_placement", False)
    with pytest.raises(RuntimeError, match="cupy"):
        eg.device("gpu:0").__enter__()


@pytest.mark.gpu
@pytest.mark.skipif(not eg.gpu_available(), reason="needs a CUDA GPU and CuPy")
def test_gpu_transfers_and_gradients_cross_devices():
    x_cpu = eg.constant([1.0, 2.0, 3.0])
    x_gpu = x_cpu.gpu()
    assert x_gpu.device == "gpu:0"
    np.testing.assert_array_equal(x_cpu.numpy(), x_gpu.numpy())
    with eg.GradientTape() as tape:
        tape.watch(x_cpu)
        y = eg.sum(x_cpu.gpu() ** 2)
    g = tape.gradient(y, x_cpu)
    assert g.device == "cpu:0"
    np.testing.assert_allclose(g.numpy(), [2.0, 4.0, 6.0])
    assert eg.memory_info("gpu:0")["pooled"]


@pytest.mark.parametrize("device", DEVICES)
def test_ops_run_on_the_device_of_their_inputs(device):
    with eg.device(device):
        x = eg.constant([1.0, 2.0])
    y = eg.tanh(x) * 2 + eg.sum(x)
    assert y.device == device and isinstance(y.numpy(), np.ndarray)


def test_import_engine_is_light():
    heavy = "('cupy', 'matplotlib', 'ipywidgets')"
    code = f"import sys, engine; print(sorted(m for m in {heavy} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_ops_on_python_values_pick_a_common_dtype():
    assert float(eg.add(1, 2.5)) == 3.5 and eg.add(1, 2.5).dtype == np.float32
    assert int(eg.floordiv(17, 3)) == 5 and eg.multiply(2, 3).dtype == np.int32


@pytest.mark.parametrize("device", DEVICES)
def test_deepcopy_makes_new_tensors_and_variables_on_the_same_device(device):
    """A deep copy is a new tensor (its own id, its own values); a Variable's copy is a Variable with
    the same name and trainability; the device is the same object (devices compare by identity)."""
    import copy  # noqa: PLC0415 (only this test copies)
    import pickle  # noqa: PLC0415

    with eg.device(device):
        t = eg.constant([1.0, 2.0])
        v = eg.Variable([3.0, 4.0], name="w", trainable=False)
    t2, v2 = copy.deepcopy([t, v])
    assert t2.id not in (t.id, v.id) and v2.id not in (t.id, v.id, t2.id)
    assert t2._device is t._device and v2._device is v._device
    assert isinstance(v2, eg.Variable) and v2.name == "w" and not v2.trainable
    v2.assign([5.0, 6.0])
    assert v.numpy().tolist() == [3.0, 4.0] and v2.numpy().tolist() == [5.0, 6.0]
    assert pickle.loads(pickle.dumps(t._device)) is t._device


def test_deepcopy_of_an_optimizer_keeps_its_state_apart():
    """An optimizer holds Variables (its step count, its slots): a deep copy steps on its own."""
    import copy  # noqa: PLC0415

    w = eg.Variable([1.0, -2.0])
    opt = eg.optimizers.Adam(learning_rate=0.1)
    opt.apply_gradients([(eg.constant([0.5, 0.5]), w)])
    twin = copy.deepcopy(opt)
    assert twin.iterations == opt.iterations == 1
    opt.apply_gradients([(eg.constant([0.5, 0.5]), w)])
    assert (opt.iterations, twin.iterations) == (2, 1)
