"""Conversions into tensors (issue 13, items 3, 5, 15 and a message of 14): integer values never wrap,
unsupported dtypes are refused, NumPy arrays carry their dtype beside tensors (the same rule in ops and
in apply_gradients), bool tensors do no arithmetic, integer division by zero raises, ragged lists are
named, and a tensor never shares memory with the caller's array."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine as eg
from engine import backend
from tests.helpers import DEVICES, on_device

INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


# ---- item 3: every int conversion is range-checked --------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_weak_python_int_beside_an_int32_tensor_does_not_wrap(device):
    x = on_device(device, [1])
    with pytest.raises(OverflowError, match=r"add: 1099511627776 does not fit in int32 \(range "
                                            r"-2147483648 to 2147483647\).*int64"):
        x + 2**40
    with pytest.raises(OverflowError, match="multiply: -1099511627776 does not fit in int32"):
        -(2**40) * x
    assert (x + (2**31 - 2)).numpy().tolist() == [2**31 - 1]  # the edge of the range still fits


@pytest.mark.parametrize("device", DEVICES)
def test_constant_with_an_int_dtype_checks_the_range(device):
    with pytest.raises(OverflowError, match=r"constant: 1099511627776 does not fit in int32"):
        on_device(device, 2**40, "int32")
    with pytest.raises(OverflowError, match=r"constant: -1 does not fit in uint8 \(range 0 to 255\)"):
        on_device(device, -1, "uint8")
    with pytest.raises(OverflowError, match="constant: 300 does not fit in uint8"):
        on_device(device, np.array([1, 300]), "uint8")
    with pytest.raises(OverflowError, match="constant: 2 does not fit in bool"):
        on_device(device, [0, 2], "bool")
    assert on_device(device, 255, "uint8").numpy().item() == 255


@settings(max_examples=60, deadline=None)
@given(value=st.integers(min_value=-(2**64), max_value=2**64), dtype=st.sampled_from(INT_DTYPES))
def test_constant_of_any_python_int_is_exact_or_refused(value, dtype):
    info = np.iinfo(dtype)
    if info.min <= value <= info.max:
        assert eg.constant(value, dtype=dtype).numpy().item() == value
    else:
        with pytest.raises(OverflowError, match=f"does not fit in {dtype} "):
            eg.constant(value, dtype=dtype)


@settings(max_examples=60, deadline=None)
@given(value=st.integers(min_value=-(2**40), max_value=2**40))
def test_int32_op_with_any_python_int_is_exact_or_refused(value):
    x = eg.constant([0], dtype="int32")
    if np.iinfo(np.int32).min <= value <= np.iinfo(np.int32).max:
        assert (x + value).numpy().tolist() == [value]
    else:
        with pytest.raises(OverflowError, match="add: .* does not fit in int32"):
            x + value


@pytest.mark.parametrize("device", DEVICES)
def test_variable_assign_and_creation_check_the_range(device):
    with eg.device(device):
        v = eg.Variable([1])
        with pytest.raises(OverflowError, match=r"Variable.assign: 1099511627776 does not fit in int32"):
            v.assign([2**40])
        with pytest.raises(OverflowError, match="Variable.assign_add: .* does not fit in int32"):
            v.assign_add([-(2**33)])
        assert v.numpy().tolist() == [1]
        with pytest.raises(OverflowError, match="constant: -5 does not fit in uint16"):
            eg.Variable([-5], dtype="uint16")


def test_python_ints_beyond_int64_are_refused_by_default():
    assert eg.constant(2**40).dtype == np.int64  # too large for int32: int64, not a wrapped int32
    with pytest.raises(OverflowError, match="does not fit in int64.*dtype='uint64'"):
        eg.constant(2**63)
    assert eg.constant(2**63, dtype="uint64").numpy().item() == 2**63
    with pytest.raises(OverflowError, match="constant: the Python int .* does not fit in int64"):
        eg.constant([1, 2**70])


def test_cast_of_python_values_checks_the_truncated_range():
    np.testing.assert_array_equal(eg.cast([1.7, -1.7], "int32").numpy(), [1, -1])  # truncation: TF's cast
    with pytest.raises(OverflowError, match="cast: 1099511627776 does not fit in int32"):
        eg.cast(2**40, "int32")
    with pytest.raises(OverflowError, match="cast: 3000000000.0 does not fit in int32"):
        eg.cast([3e9], "int32")
    with pytest.raises(OverflowError, match="cast: -1 does not fit in uint8"):
        eg.cast(np.array([-1]), "uint8")
    with pytest.raises(ValueError, match="cast: cannot convert inf or NaN to int32"):
        eg.cast([float("nan")], "int32")
    with pytest.raises(TypeError, match="cast: the ndarray's dtype <U1 is not supported"):
        eg.cast(np.array(["1"]), "int32")


def test_fill_checks_its_value():
    with pytest.raises(OverflowError, match="fill: 1099511627776 does not fit in int32"):
        eg.fill([2], 2**40, dtype="int32")
    with pytest.raises(TypeError, match="fill: cannot convert float64 values to int32"):
        eg.fill([2], 1.5, dtype="int32")
    assert eg.fill([2], 7, dtype="uint8").numpy().tolist() == [7, 7]


def test_arange_and_linspace_values_never_wrap():
    with pytest.raises(OverflowError, match=r"arange: 299 does not fit in uint8 \(range 0 to 255\)"):
        eg.arange(0, 300, dtype="uint8")
    with pytest.raises(OverflowError, match=r"arange: 10995116277\d+ does not fit in int32"):
        eg.arange(2**40, 2**40 + 3, dtype="int32")
    with pytest.raises(OverflowError, match="linspace: 1000000.0 does not fit in int8"):
        eg.linspace(0, 1e6, 3, dtype="int8")
    assert eg.arange(250, 256, 2, dtype="uint8").numpy().tolist() == [250, 252, 254]
    assert eg.arange(5, 0, -2, dtype="uint8").numpy().tolist() == [5, 3, 1]
    assert eg.arange(0, 0, dtype="int8").shape == (0,)


def test_float_overflow_in_conversions_is_refused():
    with pytest.raises(OverflowError, match="multiply: 1e.39 overflows float32"):
        eg.constant([1.0]) * 1e39
    with pytest.raises(OverflowError, match="constant: 70000 overflows float16"):
        eg.constant(70000, dtype="float16")
    assert np.isinf((eg.constant([1.0]) * float("inf")).numpy()).all()  # inf itself stays inf


def test_python_floats_convert_directly_to_the_requested_dtype():
    assert eg.constant(0.1, dtype="float64").numpy().item() == 0.1  # not float32's 0.1 widened


# ---- item 15: supported dtypes only, ragged lists named -----------------------------------------------

@pytest.mark.parametrize("value", [np.array(["a", "b"]), np.array([b"x"]), np.array([object()]),
                                   np.array(["2020-01-01"], dtype="datetime64[D]"),
                                   np.array([1], dtype="timedelta64[s]"), np.zeros(2, dtype="V4")])
def test_constant_refuses_non_numeric_arrays(value):
    with pytest.raises(TypeError, match=r"constant: .* is not supported by tensors.*Supported dtypes: bool"):
        eg.constant(value)


@pytest.mark.parametrize("dtype", [object, str, "datetime64[s]", "V8", "U3"])
def test_cast_and_creation_refuse_unsupported_dtypes(dtype):
    with pytest.raises(TypeError, match="cast: dtype .* is not supported"):
        eg.cast(eg.constant([1.0]), dtype)
    with pytest.raises(TypeError, match="constant: dtype .* is not supported"):
        eg.constant([1.0], dtype=dtype)


def test_ragged_lists_name_constant():
    with pytest.raises(ValueError, match=r"constant: the nested list \[\[1, 2\], \[3\]\] is ragged"):
        eg.constant([[1, 2], [3]])
    with pytest.raises(ValueError, match="add: the nested list .* is ragged"):
        eg.constant([1.0, 2.0]) + [[1.0, 2.0], [3.0]]


# ---- item 15: NumPy arrays carry their dtype; ops and apply_gradients agree -----------------------

@pytest.mark.parametrize("device", DEVICES)
def test_numpy_arrays_are_not_weak_typed_beside_tensors(device):
    x = on_device(device, [1.0, 2.0])
    with pytest.raises(TypeError, match="add: a NumPy array of dtype float64 cannot be combined with a "
                                        "float32 tensor.*np.asarray"):
        x + np.ones(2)
    with pytest.raises(TypeError, match="multiply: a NumPy scalar of dtype float64"):
        x * np.float64(2.0)
    with pytest.raises(TypeError, match="subtract: a NumPy array of dtype int64"):
        np.arange(2) - x
    np.testing.assert_allclose((x + np.ones(2, np.float32)).numpy(), [2.0, 3.0])  # matching dtype: fine
    np.testing.assert_allclose((x + [1.0, 1.0]).numpy(), [2.0, 3.0])  # Python lists stay weak
    assert (x * 2).dtype == np.float32  # Python numbers stay weak


@pytest.mark.parametrize("device", DEVICES)
def test_apply_gradients_uses_the_same_rule_as_ops(device):
    with eg.device(device):
        w = eg.Variable([1.0, 2.0], name="w")
    opt = eg.optimizers.SGD(1.0)
    refused = "a NumPy array of dtype .* cannot be combined with a float32"
    for g in (np.ones(2), np.float64(1.0) * np.ones(2), np.ones(2, np.int64)):
        with pytest.raises(TypeError, match=refused) as op_err:
            w.value() + g
        with pytest.raises(TypeError, match=refused) as opt_err:
            opt.apply_gradients([(g, w)])
        assert str(op_err.value).split(": ", 1)[1] == str(opt_err.value).split("): ", 1)[1]
    opt.apply_gradients([([0.5, 0.5], w)])  # a Python list adopts the variable's dtype, as in `w + [...]`
    np.testing.assert_allclose(w.numpy(), [0.5, 1.5])


# ---- item 15: bool arithmetic, integer division by zero ----------------------------------------------

@pytest.mark.parametrize("expr", [lambda b: b * 2, lambda b: 2 + b, lambda b: b - b, lambda b: b / b,
                                  lambda b: b // b, lambda b: b % b, lambda b: b ** b, lambda b: -b,
                                  lambda b: abs(b), lambda b: eg.sum(b), lambda b: eg.mean(b),
                                  lambda b: eg.prod(b), lambda b: eg.maximum(b, b),
                                  lambda b: eg.square(b), lambda b: b @ b])
def test_bool_tensors_do_no_arithmetic(expr):
    b = eg.constant([[True, False], [False, True]])
    with pytest.raises(TypeError, match=r"bool.*eg.cast\(x, 'int32'\)"):
        expr(b)


def test_logic_on_bool_tensors_still_works():
    a, b = eg.constant([True, False]), eg.constant([True, True])
    assert (a & b).numpy().tolist() == [True, False]
    assert (~a | b).numpy().tolist() == [True, True]
    assert (a == b).numpy().tolist() == [True, False]
    assert eg.sum(eg.cast(a, "int32")).numpy().item() == 1
    with pytest.raises(TypeError, match="sum: bool tensors do no arithmetic"):
        eg.sum(a)  # (NumPy would count the Trues; TensorFlow asks for the cast above)


@pytest.mark.parametrize("device", DEVICES)
def test_integer_division_by_zero_raises(device):
    x = on_device(device, [7, -7])
    with pytest.raises(ZeroDivisionError, match="floordiv: integer division by zero"):
        x // 0
    with pytest.raises(ZeroDivisionError, match="mod: integer division by zero"):
        x % on_device(device, [1, 0])
    assert (x // 2).numpy().tolist() == [3, -4]
    with np.errstate(divide="ignore"):
        assert np.isinf((on_device(device, [1.0]) // 0.0).numpy()).all()  # floats keep IEEE's inf


# ---- item 14: the dtype-mismatch message suggests the lossless cast -------------------------------

def test_int_float_mismatch_suggests_casting_the_int_one():
    with pytest.raises(TypeError, match=r"convert a \(int32\) to float32, e.g. eg.cast\(a, 'float32'\)"):
        eg.constant([1]) + eg.constant([1.5])
    with pytest.raises(TypeError, match=r"convert b \(int32\) to float32, e.g. eg.cast\(b, 'float32'\)"):
        eg.constant([1.5]) * eg.constant([1])
    with pytest.raises(TypeError, match=r"convert a \(float32\) to float64"):
        eg.constant([1.5]) - eg.constant([1.5], dtype="float64")


# ---- item 5: no shared memory with the caller ---------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_constant_copies_the_callers_array(device):
    arr = np.array([1.0, 2.0], np.float32)
    if device != "cpu:0":  # the caller's array is a raw CuPy array on that GPU
        arr = on_device(device, arr)._data
    t = eg.constant(arr)
    with backend.get_device(device).activate():
        arr[0] = 100
    assert t.numpy().tolist() == [1.0, 2.0] and t.device == device


def test_a_tape_keeps_what_it_saw_when_the_array_changes_later():
    arr = np.array([3.0], np.float32)
    x = eg.constant([2.0])
    with eg.GradientTape() as tape:
        tape.watch(x)
        y = x * arr  # the tape saves arr (as b) for the gradient of x
    arr[0] = 100.0
    assert tape.gradient(y, x).numpy().tolist() == [3.0]


def test_variable_and_assign_copy_the_callers_array():
    arr = np.array([1.0, 2.0], np.float32)
    v = eg.Variable(arr)
    arr[0] = 100
    assert v.numpy().tolist() == [1.0, 2.0]
    new = np.array([5.0, 6.0], np.float32)
    v.assign(new)
    new[0] = 100
    assert v.numpy().tolist() == [5.0, 6.0]


@pytest.mark.parametrize("device", [d for d in DEVICES if d.startswith("gpu")])
def test_raw_cupy_arrays_are_copied_too(device):
    with eg.device(device):
        raw = eg.constant([1.0, 2.0])._data
    t = eg.constant(raw)
    assert t._data is not raw and backend.device_of_array(t._data).name == device
    assert (eg.constant([1.0, 1.0]).to(device) + raw)._data is not raw


def test_graph_feeds_are_range_checked():
    graph = eg.function(lambda x: x * 2).get_graph(eg.constant([1, 2], dtype="int32"))
    with pytest.raises(OverflowError, match="Graph.run: feed for 'x': 1099511627776 does not fit in int32"):
        graph.run("Mul", feeds={"x": [2**40, 1]})
    assert graph.run("Mul", feeds={"x": [3, 4]}).numpy().tolist() == [6, 8]
