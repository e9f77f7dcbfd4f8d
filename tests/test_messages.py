"""Error messages name the op the user called, the bad argument and the fix (issue 13, item 14).

Each case is (the call, the error type, what the message must contain). The table covers the ops'
argument paths that used to end in a raw NumPy / Python error ("'float' object is not iterable",
"negative dimensions are not allowed", ZeroDivisionError, "high - low < 0") or in an inner op's name
(softmax of a scalar blamed ``sum``)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import engine as eg

x2 = eg.constant([[1.0, 2.0], [3.0, 4.0]])
x1 = eg.constant([1.0, 2.0])
s0 = eg.constant(1.0)

CASES = [
    # reductions: axis must be ints in range
    ("sum float axis", lambda: eg.sum(x2, axis=1.0), TypeError, r"^sum: axis .*float 1\.0"),
    ("mean float axis", lambda: eg.mean(x2, axis=0.5), TypeError, r"^mean: axis"),
    ("max str axis", lambda: eg.max(x2, axis="0"), TypeError, r"^max: axis"),
    ("prod repeated axis", lambda: eg.prod(x2, axis=(0, -2)), ValueError, r"^prod: axis .* twice"),
    ("min axis out of range with a float", lambda: eg.min(x2, axis=[2.0]), TypeError, r"^min: axis"),
    ("argmin bool axis", lambda: eg.argmin(x2, axis=True), TypeError, r"^argmin: axis must be an int"),
    ("sum axis of a scalar", lambda: eg.sum(s0, axis=0), ValueError, r"^sum: axis 0 .*scalar"),
    ("argmax float axis", lambda: eg.argmax(x2, axis=0.5), TypeError, r"^argmax: axis"),
    # composites name themselves, not the primitives inside them
    ("softmax of a scalar", lambda: eg.softmax(s0), ValueError, r"^softmax: .*scalar.*reshape"),
    ("log_softmax of a scalar", lambda: eg.log_softmax(s0), ValueError, r"^log_softmax: .*scalar"),
    ("softmax axis out of range", lambda: eg.softmax(x2, axis=5), ValueError, r"^softmax: axis 5"),
    ("softmax float axis", lambda: eg.softmax(x2, axis=1.0), TypeError, r"^softmax: axis"),
    ("softmax of ints", lambda: eg.softmax([1, 2]), TypeError, r"^softmax: expected a floating"),
    ("logsumexp float axis", lambda: eg.logsumexp(x2, axis=0.5), TypeError, r"^logsumexp: axis"),
    ("logsumexp axis out of range", lambda: eg.logsumexp(x2, axis=3), ValueError, r"^logsumexp: axis 3"),
    # shape ops
    ("reshape float size", lambda: eg.reshape(x2, (2.5, 2)), TypeError, r"^reshape: .*float 2\.5"),
    ("reshape negative size", lambda: eg.reshape(x2, (-2, -2)), ValueError, r"^reshape: .*negative"),
    ("transpose perm out of range", lambda: eg.transpose(x2, (0, 5)), ValueError, r"^transpose: axis 5"),
    ("transpose float perm", lambda: eg.transpose(x2, (0.0, 1.0)), TypeError, r"^transpose: axis"),
    ("squeeze axis out of range", lambda: eg.squeeze(eg.ones((1,)), 3), ValueError, r"^squeeze: axis 3"),
    ("squeeze float axis", lambda: eg.squeeze(eg.ones((1,)), 0.0), TypeError, r"^squeeze: axis"),
    ("expand_dims float axis", lambda: eg.expand_dims(x1, 0.5), TypeError, r"^expand_dims: axis"),
    ("expand_dims axis beyond", lambda: eg.expand_dims(x1, -4), ValueError,
     r"^expand_dims: axis -4 .* valid: -2"),
    ("concat float axis", lambda: eg.concat([x1, x1], axis=1.5), TypeError, r"^concat: axis"),
    ("concat axis out of range", lambda: eg.concat([x1, x1], axis=1), ValueError, r"^concat: axis 1"),
    ("stack axis out of range", lambda: eg.stack([x1, x1], axis=3), ValueError, r"^stack: axis 3"),
    ("broadcast_to negative", lambda: eg.broadcast_to(x1, (-1, 2)), ValueError, r"^broadcast_to: .*negative"),
    ("broadcast_to mismatch", lambda: eg.broadcast_to(x1, (3,)), ValueError, r"^broadcast_to: shape \(2,\)"),
    ("broadcast_to float", lambda: eg.broadcast_to(x1, (2.0, 2)), TypeError, r"^broadcast_to: shape"),
    # creation
    ("arange step 0", lambda: eg.arange(0, 5, 0), ValueError, r"^arange: delta .* not be 0"),
    ("arange float step 0", lambda: eg.arange(0.0, 1.0, 0.0), ValueError, r"^arange: delta"),
    ("arange string", lambda: eg.arange("5"), TypeError, r"^arange: limit must be a number"),
    ("arange inf", lambda: eg.arange(0.0, np.inf), ValueError, r"^arange: limit must be finite"),
    ("arange bad dtype", lambda: eg.arange(3, dtype="nope"), TypeError, r"^arange: .*not a dtype"),
    ("zeros negative", lambda: eg.zeros((-1, 2)), ValueError, r"^zeros: shape \(-1, 2\) has a negative"),
    ("zeros float size", lambda: eg.zeros((1.5,)), TypeError, r"^zeros: shape must hold ints"),
    ("ones string shape", lambda: eg.ones("3"), TypeError, r"^ones: shape"),
    ("ones string dtype", lambda: eg.ones(2, dtype="str"), TypeError, r"^ones: dtype .*not numeric"),
    ("fill negative", lambda: eg.fill([-2], 1.0), ValueError, r"^fill: dims"),
    ("fill string value", lambda: eg.fill([2], "a"), TypeError, r"^fill: "),
    ("fill array value", lambda: eg.fill([2], [1.0, 2.0]), ValueError, r"^fill: value must be a scalar"),
    ("eye negative", lambda: eg.eye(-1), ValueError, r"^eye: num_rows must be >= 0"),
    ("eye float", lambda: eg.eye(2.5), TypeError, r"^eye: num_rows must be an int"),
    ("linspace negative num", lambda: eg.linspace(0.0, 1.0, -1), ValueError, r"^linspace: num must be >= 0"),
    ("linspace float num", lambda: eg.linspace(0.0, 1.0, 2.5), TypeError, r"^linspace: num must be an int"),
    ("zeros_like bad dtype", lambda: eg.zeros_like(x1, dtype="nope"), TypeError, r"^zeros_like: "),
    # random
    ("normal negative shape", lambda: eg.random.normal((-1, 2)), ValueError, r"^normal: shape .*negative"),
    ("normal float shape", lambda: eg.random.normal((2.5,)), TypeError, r"^normal: shape"),
    ("normal int dtype", lambda: eg.random.normal((2,), dtype="int32"), TypeError,
     r"^normal: dtype must be floating"),
    ("normal bad dtype", lambda: eg.random.normal((2,), dtype="foo"), TypeError, r"^normal: .*not a dtype"),
    ("normal negative stddev", lambda: eg.random.normal((2,), stddev=-1.0), ValueError, r"^normal: stddev"),
    ("normal string mean", lambda: eg.random.normal((2,), mean="0"), TypeError,
     r"^normal: mean must be a number"),
    ("normal nan stddev", lambda: eg.random.normal((2,), stddev=np.nan), ValueError,
     r"^normal: stddev must be finite"),
    ("normal float seed", lambda: eg.random.normal((2,), seed=1.5), TypeError, r"^normal: seed"),
    ("uniform minval > maxval", lambda: eg.random.uniform((2,), minval=2.0, maxval=1.0), ValueError,
     r"^uniform: minval \(2\.0\) must not be greater than maxval \(1\.0\)"),
    ("uniform negative shape", lambda: eg.random.uniform((-3,)), ValueError, r"^uniform: shape"),
    ("uniform int dtype", lambda: eg.random.uniform((2,), dtype="int32"), TypeError, r"^uniform: dtype"),
    ("uniform inf bound", lambda: eg.random.uniform((2,), maxval=np.inf), ValueError, r"^uniform: maxval"),
    ("truncated_normal negative stddev", lambda: eg.random.truncated_normal((2,), stddev=-0.5), ValueError,
     r"^truncated_normal: stddev"),
    ("truncated_normal float shape", lambda: eg.random.truncated_normal(2.0), TypeError,
     r"^truncated_normal: shape"),
    # nn and the rest
    ("dropout negative noise_shape", lambda: eg.nn.dropout(x1, 0.5, noise_shape=(-1,)), ValueError,
     r"^dropout: noise_shape"),
    ("dropout float noise_shape", lambda: eg.nn.dropout(x1, 0.5, noise_shape=(1.5,)), TypeError,
     r"^dropout: noise_shape must hold ints"),
    ("dropout wrong noise_shape", lambda: eg.nn.dropout(x1, 0.5, noise_shape=(3,)), ValueError,
     r"^dropout: noise_shape \(3,\) does not broadcast"),
    ("dropout float seed", lambda: eg.nn.dropout(x1, 0.5, seed=1.5), TypeError, r"^dropout: seed"),
    ("cast to a non-dtype", lambda: eg.cast(x1, "nope"), TypeError, r"^cast: 'nope' is not a dtype"),
    ("matmul of a vector", lambda: eg.matmul(x1, [1.0]), ValueError,
     r"^matmul: inner dimensions differ: \(2,\) @ \(1,\)"),
    # indexing, variables, functional transforms
    ("getitem on a 0-d tensor", lambda: s0[0], IndexError, r"^getitem: cannot index a 0-d tensor"),
    ("getitem on a 0-d Variable", lambda: eg.Variable(1.0)[0], IndexError, r"^getitem: cannot index a 0-d"),
    ("getitem too many indices", lambda: x2[0, 0, 0], IndexError,
     r"^getitem: index \(0, 0, 0\) does not fit"),
    ("assign to an unnamed Variable", lambda: eg.Variable([1.0, 2.0]).assign([1.0]), ValueError,
     r"^Variable\.assign: shape \(1,\) does not match an unnamed Variable of shape \(2,\)"),
    ("assign_add to a named Variable", lambda: eg.Variable([1.0, 2.0], name="w").assign_add([1.0]),
     ValueError,
     r"^Variable\.assign_add: .* the Variable 'w' of shape \(2,\)"),
    ("grad of an int", lambda: eg.grad(lambda x: x * x)(1), TypeError,
     r"^grad: argument 0 \('x'\) is the int 1.*pass 1\.0"),
    ("value_and_grad of an int", lambda: eg.value_and_grad(lambda x, y: x * y, argnums=1)(2.0, 3), TypeError,
     r"^value_and_grad: argument 1 \('y'\) is the int 3.*pass 3\.0"),
    ("gradients_function of ints", lambda: eg.gradients_function(lambda x: x * x)([1, 2]), TypeError,
     r"^gradients_function: argument 0 \('x'\) is a int32 value of shape \(2,\).*eg\.cast"),
    ("value_and_gradients_function of a bool", lambda: eg.value_and_gradients_function(lambda x: x)(True),
     TypeError, r"^value_and_gradients_function: argument 0 \('x'\) is the bool True"),
]


@pytest.mark.parametrize(("call", "error", "pattern"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_arguments_raise_errors_that_name_the_op_called(call, error, pattern):
    with pytest.raises(error) as info:
        call()
    message = str(info.value)
    assert re.search(pattern, message), message
    noises = ("failed on inputs", "not iterable", "negative dimensions", "high - low", "division by zero")
    for noise in noises:
        assert noise not in message, message
    assert message.count("getitem:") <= 1, message
    assert "variable None" not in message.lower(), message


def test_valid_arguments_still_work():
    np.testing.assert_array_equal(eg.sum(x2, axis=(0, 1)).numpy(), 10.0)
    np.testing.assert_array_equal(eg.sum(x2, axis=np.int64(-1)).numpy(), [3.0, 7.0])
    np.testing.assert_array_equal(eg.argmax(x2, axis=-1).numpy(), [1, 1])
    assert eg.softmax(x2, axis=0).shape == (2, 2) and eg.logsumexp(x2, axis=[0, 1]).shape == ()
    assert eg.reshape(x2, [-1]).shape == (4,) and eg.reshape(x2, eg.constant([4, 1])).shape == (4, 1)
    assert eg.transpose(x2, (-1, 0)).shape == (2, 2) and eg.squeeze(eg.ones((1, 2)), -2).shape == (2,)
    assert eg.expand_dims(x1, -1).shape == (2, 1) and eg.stack([x1, x1], axis=-1).shape == (2, 2)
    assert eg.concat([x2, x2], axis=-1).shape == (2, 4) and eg.broadcast_to(x1, (3, 2)).shape == (3, 2)
    assert eg.zeros(np.int64(3)).shape == (3,) and eg.ones(eg.constant([2, 1])).shape == (2, 1)
    assert eg.arange(np.float32(0.5), 2.0, 0.5).shape == (3,) and eg.eye(2, 3).shape == (2, 3)
    assert eg.linspace(0, 1, np.int32(3)).shape == (3,) and eg.fill((2,), eg.constant(1.5)).shape == (2,)
    assert eg.random.uniform((2,), minval=1.0, maxval=1.0).numpy().tolist() == [1.0, 1.0]
    assert eg.random.normal(np.array([2, 2]), stddev=0.0, seed=np.int64(3)).shape == (2, 2)
    assert float(eg.grad(lambda x: x * x)(1.0)) == 2.0
    assert eg.Variable(1.0)[()].shape == ()
