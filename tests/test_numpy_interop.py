"""NumPy's functions on tensors (engine/interop.py): ufuncs and array functions with an engine op run
that op (recorded on tapes, on the tensor's device), the others compute with NumPy but never lose a
gradient silently, and ``np.asarray`` of a watched tensor warns with `eg.TapeEscapeWarning`."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import engine as eg
from engine.interop import engine_functions, engine_ufuncs, to_numpy
from tests import gradcheck
from tests.helpers import DEVICES

UNARY = ["sin", "cos", "tan", "exp", "log", "log1p", "sqrt", "tanh", "square", "negative", "abs", "sign"]
BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "mod"]


def numeric_gradient(f, x: np.ndarray) -> np.ndarray:
    """Central differences of sum(f(x)) in float64 (`tests.gradcheck.numeric_gradient`)."""
    return gradcheck.numeric_gradient(lambda xs: float(np.sum(f(xs[0]))), [x])[0]


@pytest.fixture
def no_escape():
    """Every TapeEscapeWarning becomes an error inside the test."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", eg.TapeEscapeWarning)
        yield


def test_the_issue_example_gives_the_right_gradient():
    v = eg.Variable(2.0)
    with eg.GradientTape() as tape:
        y = np.sin(v) * v
    g = tape.gradient(y, v)
    assert isinstance(g, eg.Tensor)
    np.testing.assert_allclose(g.numpy(), np.sin(2.0) + 2.0 * np.cos(2.0), rtol=1e-5)  # 0.077, not 0.909


@pytest.mark.parametrize("name", UNARY)
def test_unary_ufuncs_run_the_engine_op_and_match_finite_differences(name, no_escape):
    ufunc = getattr(np, name)
    x0 = np.array([0.3, 0.7, 1.9], np.float64)
    x = eg.constant(x0)
    with eg.GradientTape() as tape:
        tape.watch(x)
        y = ufunc(x)
    assert isinstance(y, eg.Tensor) and tape.records[-1].op != "", type(y)
    np.testing.assert_allclose(y.numpy(), ufunc(x0), rtol=1e-12)
    want = numeric_gradient(ufunc, x0)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", BINARY)
def test_binary_ufuncs_run_the_engine_op_and_match_finite_differences(name, no_escape):
    ufunc = getattr(np, name)
    a0, b0 = np.array([0.5, 1.5, 2.5]), np.array([1.25, 0.7, 2.0])  # no jump of mod nearby
    a, b = eg.constant(a0), eg.constant(b0)
    with eg.GradientTape(persistent=True) as tape:
        tape.watch([a, b])
        y = ufunc(a, b)
    assert isinstance(y, eg.Tensor)
    np.testing.assert_allclose(y.numpy(), ufunc(a0, b0), rtol=1e-12)
    ga, gb = tape.gradient(y, [a, b])
    np.testing.assert_allclose(ga.numpy(), numeric_gradient(lambda t: ufunc(t, b0), a0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gb.numpy(), numeric_gradient(lambda t: ufunc(a0, t), b0), rtol=1e-6, atol=1e-8)


def test_ndarray_operators_with_a_tensor_are_recorded(no_escape):
    x = eg.constant([1.0, 2.0])
    with eg.GradientTape() as tape:
        tape.watch(x)
        y = np.array([3.0, 4.0], np.float32) * x + np.float32(1.0) - x
        z = np.multiply(np.array([3.0, 4.0], np.float32), x)  # the ufunc called directly, as NumPy does
    assert isinstance(y, eg.Tensor) and isinstance(z, eg.Tensor)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [2.0, 3.0])


@pytest.mark.parametrize(("call", "op"), [
    (lambda x: np.sum(x, axis=0), lambda x: eg.sum(x, axis=0)),
    (lambda x: np.mean(x), lambda x: eg.mean(x)),
    (lambda x: np.max(x, axis=1, keepdims=True), lambda x: eg.max(x, axis=1, keepdims=True)),
    (lambda x: np.prod(x, axis=-1), lambda x: eg.prod(x, axis=-1)),
    (lambda x: np.transpose(x, (1, 0)), lambda x: eg.transpose(x, (1, 0))),
    (lambda x: np.reshape(x, (3, 2)), lambda x: eg.reshape(x, (3, 2))),
    (lambda x: np.concatenate([x, x], axis=1), lambda x: eg.concat([x, x], axis=1)),
    (lambda x: np.stack([x, x]), lambda x: eg.stack([x, x])),
    (lambda x: np.clip(x, 0.5, 2.5), lambda x: eg.clip(x, 0.5, 2.5)),
    (lambda x: np.where(x > 1.5, x, 0.0), lambda x: eg.where(x > 1.5, x, 0.0)),
    (lambda x: np.expand_dims(x, 0), lambda x: eg.expand_dims(x, 0)),
    (lambda x: np.broadcast_to(x, (2, 2, 3)), lambda x: eg.broadcast_to(x, (2, 2, 3))),
])
def test_array_functions_with_an_engine_op_run_it_with_its_gradient(call, op, no_escape):
    x0 = np.array([[1.0, 2.0, 3.0], [0.5, 1.75, 2.25]])
    x = eg.constant(x0)
    with eg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        got, want = call(x), op(x)
    assert isinstance(got, eg.Tensor)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    np.testing.assert_array_equal(tape.gradient(got, x).numpy(), tape.gradient(want, x).numpy())


def test_the_dispatch_tables_are_read_off_the_engine_ops():
    ufuncs, functions = engine_ufuncs(), engine_functions()
    for table in (ufuncs, functions):
        for op in table.values():
            name = getattr(op, "name", None) or op.__name__
            assert getattr(eg, name) is op  # a public engine op
            assert name in eg.primitives or any(p.startswith(name) for p in eg.primitives) or \
                name in {"concat", "stack", "where"}
    # every engine op named like a NumPy ufunc is dispatched, and computes what NumPy computes
    rng = np.random.default_rng(0)
    a, b = rng.uniform(0.5, 2.0, 5), rng.uniform(0.5, 2.0, 5)
    wanted = {np.sin, np.add, np.multiply, np.maximum, np.sqrt, np.tanh, np.power, np.floor_divide}
    assert wanted <= set(ufuncs)
    for ufunc, op in ufuncs.items():
        if ufunc.nin == 1:
            args = (a > 1,) if ufunc is np.logical_not else (a,)
        elif ufunc.__name__.startswith("logical"):
            args = (a > 1, b > 1)
        elif ufunc is np.matmul:
            args = (a.reshape(5, 1), b.reshape(1, 5))
        else:
            args = (a, b)
        np.testing.assert_allclose(to_numpy(op(*args)), ufunc(*args), rtol=1e-12, err_msg=ufunc.__name__)
    assert {np.sum, np.mean, np.max, np.min, np.reshape, np.transpose, np.concatenate} <= set(functions)


@pytest.mark.parametrize("call", [lambda x: np.arctan(x), lambda x: np.linalg.norm(x),
                                  lambda x: np.add.reduce(x), lambda x: np.sum(x, dtype=np.float64),
                                  lambda x: np.exp(x, out=np.empty(2, np.float32))])
def test_numpy_without_an_engine_op_is_refused_inside_a_watching_tape(call):
    x = eg.constant([0.5, 2.0])
    with eg.GradientTape() as tape:
        tape.watch(x)
        with pytest.raises(TypeError, match=r"has no engine op.*x\.numpy\(\)"):
            call(x)
    # ... and gives NumPy's answer outside tapes, silently, as before
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = call(x)
    assert not isinstance(out, eg.Tensor)
    np.testing.assert_allclose(out, call(x.numpy()), rtol=1e-6)


def test_bool_results_and_unwatched_tensors_pass_inside_a_tape(no_escape):
    x, other = eg.constant([0.5, np.nan]), eg.constant([1.0, 2.0])
    with eg.GradientTape() as tape:
        tape.watch(x)
        np.testing.assert_array_equal(np.isnan(x), [False, True])
        np.testing.assert_array_equal(np.where(other > 1.5)[0], [1])  # NumPy's one-argument where
        np.testing.assert_allclose(np.arctan(other), np.arctan([1.0, 2.0]), rtol=1e-6)
        assert isinstance(np.exp(x), eg.Tensor) and len(tape.records) == 1  # ... and the engine op recorded


def test_asarray_of_a_watched_tensor_warns_and_names_the_escape():
    x, w = eg.constant([1.0, 2.0]), eg.Variable([3.0], name="w")
    with eg.GradientTape() as tape:
        tape.watch(x)
        with pytest.warns(eg.TapeEscapeWarning, match="leaves the tape.*None"):
            np.asarray(x)
        with pytest.warns(eg.TapeEscapeWarning, match="'w'"):
            np.array(w)
    assert issubclass(eg.TapeEscapeWarning, UserWarning) and "TapeEscapeWarning" in eg.__all__


def test_asarray_stays_silent_where_nothing_can_escape(no_escape):
    x, w = eg.constant([1.0, 2.0]), eg.Variable([3.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.asarray(x), np.asarray(w)                     # no tape
        with eg.GradientTape() as tape:
            np.asarray(x)                                # not watched
            np.asarray(eg.constant([1, 2]))              # not floating
            tape.watch(x)
            with tape.stop_recording():
                np.asarray(x)                            # not recording
            to_numpy(x), to_numpy([x, x]), x.numpy()     # the explicit / internal reads
        with eg.GradientTape(watch_accessed_variables=False):
            np.asarray(w)


def test_gradviz_reads_values_without_the_warning(no_escape):
    from gradviz.render.fmt import full, norm, short

    x = eg.constant([3.0, 4.0])
    with eg.GradientTape() as tape:
        tape.watch(x)
        assert short(x) and full(x) and norm(x) == 5.0
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            np.asarray(x)  # where a user's own np.asarray does warn
    assert [w.category for w in caught] == [eg.TapeEscapeWarning]


def test_formatting_a_scalar_result():
    total = np.sum(eg.constant([1.0, 2.5]))
    assert isinstance(total, eg.Tensor) and f"{total:.2f}" == "3.50" and f"{total}".startswith("<Tensor")


@pytest.mark.parametrize("device", DEVICES)
def test_dispatch_stays_on_the_device(device, transfers):
    with eg.device(device):
        x = eg.constant([0.25, 0.5, 1.0])
    with transfers() as count, eg.GradientTape() as tape:
        tape.watch(x)
        y = np.sum(np.exp(np.sin(x)) * np.float32(2.0), axis=0)
        g = tape.gradient(y, x)
    assert (y.device, g.device) == (x.device, x.device)
    assert count.to_host == 0, count
    want = 2 * np.exp(np.sin([0.25, 0.5, 1.0])) * np.cos([0.25, 0.5, 1.0])
    np.testing.assert_allclose(g.numpy(), want, rtol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_asarray_of_a_device_tensor_warns_inside_a_tape(device):
    with eg.device(device):
        x = eg.constant([1.0])
    with eg.GradientTape() as tape:
        tape.watch(x)
        with pytest.warns(eg.TapeEscapeWarning):
            np.asarray(x)
