"""Complex numbers (issue 13, item 4): every path is right or a clear error. A complex Python number
never joins a real tensor; norms and clipping of complex tensors use |t|² and are real; gradients
through complex inputs are computed by holomorphic/linear ops (g·f'(z), JAX's transpose convention)
and refused, naming the op, everywhere else (abs, ordering ops, complex-to-real casts)."""

from __future__ import annotations

import numpy as np
import pytest

import engine as eg
from tests.helpers import DEVICES, on_device


@pytest.mark.parametrize("device", DEVICES)
def test_a_complex_number_does_not_join_a_real_tensor(device):
    x = on_device(device, [1.0])
    with pytest.raises(TypeError, match=r"add: cannot combine the complex number 1j with a float32 tensor.*"
                                        r"eg.cast\(x, 'complex64'\)"):
        x + 1j
    with pytest.raises(TypeError, match="multiply: cannot combine the complex number"):
        [2j] * on_device(device, [1], "int32")
    with pytest.raises(TypeError, match="constant: cannot convert complex values .* to float32"):
        on_device(device, [1 + 2j], "float32")
    z = on_device(device, [1.0 + 0j])
    np.testing.assert_allclose((z + 1j).numpy(), [1 + 1j])  # complex with complex: fine


@pytest.mark.parametrize("device", DEVICES)
def test_norms_of_complex_tensors_are_real_and_use_the_modulus(device):
    z = on_device(device, [3 + 4j, 0j])
    n = eg.norm(z)
    assert n.dtype == np.float32 and n.device == device
    np.testing.assert_allclose(n.numpy(), 5.0, rtol=1e-6)
    np.testing.assert_allclose(eg.norm(z, ord=1).numpy(), 5.0, rtol=1e-6)
    np.testing.assert_allclose(eg.global_norm([z, on_device(device, [1j])]).numpy(), np.sqrt(26.0), rtol=1e-6)
    m = on_device(device, [[3 + 4j, 0j], [0j, 1j]])
    np.testing.assert_allclose(eg.norm(m, axis=(0, 1)).numpy(), np.sqrt(26.0), rtol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_clipping_complex_tensors_scales_by_the_modulus(device):
    z = on_device(device, [3 + 4j, 0j])
    clipped = eg.clip_by_norm(z, 1.0)
    assert clipped.dtype == np.complex64 and clipped.device == device
    np.testing.assert_allclose(clipped.numpy(), [0.6 + 0.8j, 0], rtol=1e-6)
    np.testing.assert_allclose(eg.clip_by_norm(z, 10.0).numpy(), z.numpy())  # short enough: unchanged
    (c,), n = eg.clip_by_global_norm([z], 2.5)
    np.testing.assert_allclose(n.numpy(), 5.0, rtol=1e-6)
    np.testing.assert_allclose(c.numpy(), [1.5 + 2j, 0], rtol=1e-6)
    with pytest.raises(TypeError, match="clip_by_value: complex numbers have no order"):
        eg.clip_by_value(z, -1.0 + 0j, 1.0 + 0j)


@pytest.mark.parametrize("op", [lambda z: eg.maximum(z, z), lambda z: z < z, lambda z: eg.max(z),
                                lambda z: eg.argmax(z), lambda z: eg.relu(z), lambda z: eg.sigmoid(z),
                                lambda z: eg.softplus(z)])
def test_ops_that_order_values_refuse_complex(op):
    with pytest.raises(TypeError, match="complex numbers have no order"):
        op(eg.constant([1 + 1j, 2 + 0j]))


@pytest.mark.parametrize("device", DEVICES)
def test_gradient_of_abs_of_a_complex_input_is_a_clear_error(device):
    z = on_device(device, [3 + 4j])
    with eg.GradientTape() as tape:
        tape.watch(z)
        y = eg.abs(z)
    assert y.numpy().tolist() == [5.0]
    with pytest.raises(TypeError, match="gradient of abs: its input x is complex \\(complex64\\), and abs "
                                        "has no complex gradient"):
        tape.gradient(y, z)
    with eg.GradientTape() as tape:
        tape.watch(z)
        n = eg.norm(z)
    with pytest.raises(TypeError, match="gradient of abs: .*complex"):
        tape.gradient(n, z)
    with eg.GradientTape() as tape:
        tape.watch(z)
        r = eg.cast(z, "float32")  # the real part: not holomorphic
    with pytest.raises(TypeError, match="gradient of cast: its input x is complex"):
        tape.gradient(r, z)


@pytest.mark.parametrize("device", DEVICES)
def test_holomorphic_ops_give_g_times_the_derivative_and_abs_refuses(device):
    z = on_device(device, [1 + 2j, -0.5 + 1j], "complex128")
    with eg.GradientTape(persistent=True) as tape:
        tape.watch(z)
        y = eg.exp(z) * z + z ** 2.0
        total = eg.sum(eg.abs(y))
    g = tape.gradient(y, z, output_gradients=eg.ones_like(y))
    zz = z.numpy()
    np.testing.assert_allclose(g.numpy(), np.exp(zz) * zz + np.exp(zz) + 2 * zz, rtol=1e-12)
    with pytest.raises(TypeError, match="gradient of abs: its input x is complex"):
        tape.gradient(total, z)  # the same path, ending in |y|: refused, not a wrong number
