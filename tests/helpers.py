"""Shared test helpers: the devices to parametrise over, a constant made on one, and float comparison
within a few ulps."""

import engine as eg

#: Every device of the session: cpu:0, plus gpu:0 and gpu:1 of the fake CuPy (tests/fakecupy), or the
#: real GPUs where CuPy and a GPU work (see tests/conftest.py).
DEVICES = eg.list_devices()

#: How far two computations of the same float value may drift apart: summation order, fused
#: multiply-adds and the vector unit's pow/exp/sqrt move the last bits from one CPU (or GPU) to another.
ULPS = 4


def on_device(device, value, dtype=None):
    """``eg.constant(value, dtype=dtype)`` made on ``device`` (a device string such as "gpu:0")."""
    with eg.device(device):
        return eg.constant(value, dtype=dtype)


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


#: Two float64 computations of the same derivative by different but equally valid routes (another
#: library's formulas, a traced graph's reordered or fused ops, another CPU's vector unit) differ by
#: rounding, and rounding errors scale with the numbers rounded on the way, not with the (possibly tiny or
#: cancelling) result. `assert_rounding_close` bounds the difference by ROUNDING_ULPS · eps · scale ·
#: growth^order: ``scale`` = max(1, largest |expected value|) and ``growth`` = max(1, largest |value| the
#: program computes), once per order of differentiation. Measured over 3,000 random programs of
#: tests/test_oracle_autograd.py (engine vs HIPS autograd), the difference stayed below 4.1 (first order)
#: and 8.5 (second order) of these units: 256 leaves a 30x margin and still means about 1e-13 for
#: ordinary programs (scale, growth ≈ 1), where the former fixed tolerances were 1e-9 to 1e-7.
ROUNDING_ULPS = 256


def assert_rounding_close(actual, expected, *, scale: float, growth: float = 1.0, order: int = 0,
                          ulps: int = ROUNDING_ULPS, err_msg: str = "") -> None:
    """Assert ``|actual - expected| <= ulps · eps · scale · growth**order`` elementwise (eps of
    ``actual``'s dtype); see ROUNDING_ULPS for what ``scale`` and ``growth`` are.

    >>> import numpy as np
    >>> assert_rounding_close(np.array([1e-10 + 1e-15]), np.array([1e-10]), scale=1.0)   # tiny, but rounding
    """
    import numpy as np

    actual = np.asarray(actual)
    bound = ulps * np.finfo(actual.dtype).eps * max(1.0, scale) * max(1.0, growth) ** order
    np.testing.assert_allclose(actual, expected, rtol=0, atol=bound, err_msg=err_msg)

