"""The fake CuPy refuses what CuPy refuses: if it accepted more, the GPU tests would prove nothing."""

from __future__ import annotations

import numpy as np
import pytest

from tests import conftest

pytestmark = pytest.mark.skipif(conftest.GPU_BACKEND != "fake", reason="checks the fake CuPy itself")


@pytest.fixture
def cp():
    import cupy

    return cupy


def test_arrays_are_tagged_with_the_device_current_at_allocation(cp):
    a = cp.zeros(3)
    with cp.cuda.Device(1):
        b = cp.zeros(3)
        c = cp.zeros_like(a)  # *_like allocates on the current device, not beside its model
    assert (a.device.id, b.device.id, c.device.id) == (0, 1, 1)
    assert type(a) is cp.ndarray and not isinstance(a, np.ndarray)
    assert cp.cuda.runtime.getDeviceCount() == 2


def test_kernels_refuse_other_devices_and_numpy_arrays(cp):
    a = cp.ones(3)
    with cp.cuda.Device(1):
        b = cp.ones(3)
    with pytest.raises(ValueError, match="array device = 1 while current = 0"):
        a + b
    with pytest.raises(ValueError, match="array device = 1 while current = 0"):
        cp.exp(b)
    with pytest.raises(TypeError, match="Unsupported type"):
        a + np.ones(3)
    with pytest.raises(TypeError, match="Unsupported type"):
        np.ones(3) * a
    with pytest.raises(TypeError, match="Implicit conversion"):
        np.asarray(a)
    assert float((a * np.float32(2)).sum()) == 6.0  # NumPy scalars are scalars


def test_transfers_are_counted(cp, transfers):
    a = cp.arange(4.0)
    with transfers() as count:
        b = (a * 2).sum()
        assert count.to_host == 0
        float(b), b.item(), bool(b), int(b), a.get(), cp.asnumpy(a), a.tolist()
    assert count.to_host == 7
    with transfers() as count:
        cp.asarray(np.ones(2))
    assert (count.to_host, count.to_device) == (0, 1)


def test_integer_array_indices_wrap_but_scalar_indices_raise(cp):
    a = cp.asarray(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(a[cp.asarray(np.array([0, 5]))].get(), [1.0, 3.0])
    with pytest.raises(IndexError):
        a[5]


def test_copies_between_devices(cp):
    a = cp.ones(2)
    with cp.cuda.Device(1):
        assert cp.asarray(a) is a  # asarray leaves another device's array where it is
        assert a.copy().device.id == 1  # copy() brings it to the current device


def test_scatter_add_has_no_complex_and_pools_count_bytes(cp):
    import cupyx

    out = cp.zeros(3)
    cupyx.scatter_add(out, (cp.asarray(np.array([0, 0, 2])),), cp.ones(3))
    np.testing.assert_array_equal(out.get(), [2.0, 0.0, 1.0])
    with pytest.raises(TypeError, match="complex"):
        cupyx.scatter_add(cp.zeros(3, dtype=np.complex64), (cp.asarray(np.array([0])),),
                          cp.ones(1, dtype=np.complex64))
    pool = cp.get_default_memory_pool()
    with cp.cuda.Device(1):
        before = pool.used_bytes()
        keep = cp.zeros(1000, dtype=np.float64)
        assert pool.used_bytes() - before >= 8000 and pool.total_bytes() >= pool.used_bytes()
        del keep


def test_require_gpu_fails_the_session_instead_of_using_the_fake():
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {**os.environ, "GRADLAB_REQUIRE_GPU": "1"}
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "tests/test_fakecupy.py",
                          "-k", "tagged"], capture_output=True, text=True, env=env,
                         cwd=Path(__file__).resolve().parent.parent, timeout=120)
    assert run.returncode != 0
    assert "GRADLAB_REQUIRE_GPU=1 but no real GPU works here" in run.stdout + run.stderr
