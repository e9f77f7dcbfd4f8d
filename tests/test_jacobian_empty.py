"""Jacobians with nothing in them (issue 13, item 10): an empty target or batch gives a correctly shaped
array of zeros (``target.shape + source.shape``), not None or an error; None stays the answer for a
source the target does not depend on, with ``unconnected_gradients="none"`` only, as for non-empty ones.
"""

from __future__ import annotations

import numpy as np
import pytest

import engine as eg
from tests.helpers import DEVICES


def _check_zeros(j, shape, device):
    assert j is not None and j.shape == shape and j.dtype == np.float32 and j.device == device, j
    assert j.numpy().size == 0


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode", ["none", "zero"])
def test_jacobian_of_an_empty_target(mode, device):
    with eg.device(device):
        x, w = eg.constant([1.0, 2.0]), eg.constant([[1.0, 2.0, 3.0]])
        with eg.GradientTape() as tape:
            tape.watch([x, w])
            empty = eg.reshape(x[:0] * 2.0, (0, 1)) * w  # (0, 3), depends on x and w
        jx, (jw, jx2) = tape.jacobian(empty, [x, (w, x)], unconnected_gradients=mode)
    _check_zeros(jx, (0, 3, 2), device)
    _check_zeros(jw, (0, 3, 1, 3), device)
    _check_zeros(jx2, (0, 3, 2), device)


@pytest.mark.parametrize("device", DEVICES)
def test_jacobian_of_an_empty_target_unconnected(device):
    with eg.device(device):
        x = eg.constant([1.0, 2.0])
        for mode, expected in (("none", None), ("zero", (0, 3, 2))):
            with eg.GradientTape() as tape:
                tape.watch(x)
                empty = eg.zeros((0, 3))  # does not depend on x
            j = tape.jacobian(empty, x, unconnected_gradients=mode)
            if expected is None:
                assert j is None
            else:
                _check_zeros(j, expected, device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode", ["none", "zero"])
def test_batch_jacobian_with_no_elements_per_example_or_no_examples(mode, device):
    with eg.device(device):
        x = eg.constant(np.ones((2, 3), np.float32))
        with eg.GradientTape(persistent=True) as tape:
            tape.watch(x)
            no_columns = x[:, :0] * 2.0        # (2, 0)
            unconnected = eg.zeros((2, 0))     # (2, 0), not from x
        _check_zeros(tape.batch_jacobian(no_columns, x, unconnected_gradients=mode), (2, 0, 3), device)
        j = tape.batch_jacobian(unconnected, x, unconnected_gradients=mode)
        if mode == "none":
            assert j is None
        else:
            _check_zeros(j, (2, 0, 3), device)
        none = eg.constant(np.zeros((0, 2), np.float32))
        with eg.GradientTape() as tape:
            tape.watch(none)
            y = eg.concat([none, none * 2.0, none * none], axis=1)  # (0, 6)
        _check_zeros(tape.batch_jacobian(y, none, unconnected_gradients=mode), (0, 6, 2), device)


def test_an_empty_jacobian_uses_up_a_non_persistent_tape():
    x = eg.constant([1.0])
    with eg.GradientTape() as tape:
        tape.watch(x)
        empty = x[:0] * 2.0
    assert tape.jacobian(empty, x).shape == (0, 1)
    with pytest.raises(RuntimeError, match="only be called once"):
        tape.jacobian(empty, x)
