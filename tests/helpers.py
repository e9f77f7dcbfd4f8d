"""Shared test helpers: the devices to parametrise over, and float comparison within a few ulps."""

import engine as eg

#: Every device of the session: cpu:0, plus gpu:0 and gpu:1 of the fake CuPy (tests/fakecupy), or the
#: real GPUs where CuPy and a GPU work (see tests/conftest.py).
DEVICES = eg.list_devices()

#: How far two computations of the same float value may drift apart: summation order, fused
#: multiply-adds and the vector unit's pow/exp/sqrt move the last bits from one CPU (or GPU) to another.
ULPS = 4


def assert_ulps(actual, expected, ulps: int = ULPS) -> None:
    """Assert that the float array ``actual`` equals ``expected`` to within ``ulps`` units in the last
    place of ``actual``'s dtype. ``expected`` (e.g. float32 values printed with 8 digits) is converted
    to that dtype first; shapes must match.

    Exact comparisons stay exact elsewhere in the suite only where the result is exact by
    construction: integers and bools, copies and reruns of one computation (same seed, same code),
    clipping to a bound, a max of the inputs, and arithmetic on small integers (exact in binary
    floating point).

    >>> import numpy as np
    >>> assert_ulps(np.float32([10.408294]), [10.408293])      # 1 ulp apart: equal
    """
    import numpy as np

    actual = np.asarray(actual)
    if not np.issubdtype(actual.dtype, np.floating):
        raise TypeError(f"assert_ulps compares floats; got {actual.dtype} (compare integers exactly)")
    expected = np.asarray(expected, dtype=actual.dtype)
    assert actual.shape == expected.shape, f"shapes differ: {actual.shape} vs {expected.shape}"
    np.testing.assert_array_max_ulp(actual, expected, maxulp=ulps)
