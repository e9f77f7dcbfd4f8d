"""Integer-array indexing on every device: keys move to the array's device, bounds are checked on the
host, second derivatives work, and complex gradients scatter (issue 12, items 1-4)."""

from __future__ import annotations

import numpy as np
import pytest

import engine as eg
from tests.helpers import DEVICES


def _on(device, value, dtype="float64"):
    with eg.device(device):
        return eg.constant(value, dtype=dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("key", [[0, 5], np.array([3]), [-4], ([0], [2])], ids=str)
def test_out_of_range_indices_raise_on_every_device(device, key):
    x = _on(device, np.ones((3, 2)))
    with pytest.raises(IndexError, match="out of range"):
        x[key]


@pytest.mark.parametrize("device", DEVICES)
def test_index_keys_of_any_kind_move_to_the_array_device(device):
    x = _on(device, [10.0, 20.0, 30.0])
    keys = [[2, 0], np.array([2, 0]), eg.constant([2, 0]), _on(device, [2, 0], "int32")]
    for key in keys:  # no device scope here: the result stays on x's device
        y = x[key]
        assert y.device == device
        np.testing.assert_array_equal(y.numpy(), [30.0, 10.0])


@pytest.mark.parametrize("device", DEVICES)
def test_second_derivative_through_integer_array_indexing(device):
    x = _on(device, [1.0, 2.0, 3.0])
    with eg.GradientTape() as outer:
        outer.watch(x)
        with eg.GradientTape() as inner:
            inner.watch(x)
            y = eg.sum(x[[0, 2, 2]] ** 3)
        g = inner.gradient(y, x)  # 3x² at 0, 2·3x² at 2
    h = outer.gradient(g, x)  # 6x, 0, 12x
    assert g.device == h.device == device
    np.testing.assert_allclose(g.numpy(), [3.0, 0.0, 54.0], rtol=1e-12)
    np.testing.assert_allclose(h.numpy(), [6.0, 0.0, 36.0], rtol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_gradient_of_complex_integer_array_indexing(device):
    x = _on(device, np.array([1 + 1j, 2 - 1j, 3j]), "complex128")
    with eg.GradientTape() as tape:
        tape.watch(x)
        y = x[[0, 2, 2]] * eg.constant(np.array([1.0, 2j, 1.0]), dtype="complex128").to(device)
    g = tape.gradient(y, x, output_gradients=eg.ones_like(y))
    assert g.device == device
    np.testing.assert_allclose(g.numpy(), [1.0, 0.0, 1.0 + 2j], rtol=1e-12)  # as on the CPU
