"""What a traced function reads that is not an argument (issue 28): every case gives the eager answer
or a clear error. The rule (engine/captures.py): Variables are read live; an argument object's tensors
(``b.x``) are inputs of the call; closure variables and globals holding data are checked before each
replay and trace again when they changed; Variables are made once per traced function object; a
data-dependent shape that differs traces again; ``-0.0`` is its own trace key.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import pytest

import engine as eg

ONE = eg.constant(1.0)


def test_constant_of_a_variable_reads_the_variable_on_every_call():
    v = eg.Variable([1.0, 2.0])
    f = eg.function(lambda x: eg.constant(v) * x)
    assert f(ONE).numpy().tolist() == [1.0, 2.0]
    v.assign([5.0, 7.0])
    assert f(ONE).numpy().tolist() == [5.0, 7.0] and f.trace_count == 1


def test_constant_of_a_variable_is_still_a_constant_for_tapes():
    v = eg.Variable(3.0)

    @eg.function
    def f():
        with eg.GradientTape() as tape:
            y = eg.constant(v) * v
        return tape.gradient(y, v)

    assert float(f()) == 3.0  # d(c * v)/dv with c = v's value, not 2v
    v.assign(4.0)
    assert float(f()) == 4.0


def test_a_rebound_closure_tensor_traces_again():
    k = eg.constant(2.0)
    f = eg.function(lambda x: x * k)
    assert float(f(ONE)) == 2.0
    k = eg.constant(10.0)
    assert float(f(ONE)) == 10.0 and f.trace_count == 2
    assert float(f(ONE)) == 10.0 and f.trace_count == 2  # unchanged since: replayed


def test_a_rebound_closure_variable_traces_again_and_an_assigned_one_is_live():
    k = eg.Variable(2.0)
    f = eg.function(lambda x: x * k)
    assert float(f(ONE)) == 2.0
    k.assign(3.0)
    assert float(f(ONE)) == 3.0 and f.trace_count == 1  # read live: no new trace
    k = eg.Variable(10.0)
    assert float(f(ONE)) == 10.0 and f.trace_count == 2


def test_a_numpy_array_changed_in_place_traces_again():
    scale = np.array([2.0], dtype=np.float32)
    f = eg.function(lambda x: x * scale)
    assert f(ONE).numpy().tolist() == [2.0]
    scale[0] = 10.0
    assert f(ONE).numpy().tolist() == [10.0] and f.trace_count == 2


GLOBAL_K = 2.0


def _times_global(x):
    return x * GLOBAL_K


def test_a_rebound_global_read_by_a_helper_traces_again():
    global GLOBAL_K
    f = eg.function(lambda x: _times_global(x) + 0.0)
    try:
        assert float(f(ONE)) == 2.0
        GLOBAL_K = 10.0
        assert float(f(ONE)) == 10.0 and f.trace_count == 2
    finally:
        GLOBAL_K = 2.0


def test_a_tensor_inside_an_argument_object_is_an_input():
    class Box:
        pass

    b = Box()
    b.x = eg.constant(2.0)
    f = eg.function(lambda b, x: b.x * x)
    assert float(f(b, ONE)) == 2.0
    b.x = eg.constant(10.0)
    assert float(f(b, ONE)) == 10.0 and f.trace_count == 1  # an input: replayed, not traced again
    b.x = eg.constant([1.0, 2.0])  # another shape: another signature
    assert f(b, ONE).numpy().tolist() == [1.0, 2.0] and f.trace_count == 2
    assert [t.name for t in f.get_graph(b, ONE).inputs] == ["b.x:0", "x:0"]  # in argument order


def test_nested_and_unhashable_argument_objects_and_methods():
    @dataclass
    class Params:  # a dataclass compares by value: unhashable, keyed by identity
        w: eg.Tensor
        inner: SimpleNamespace

    p = Params(eg.constant(2.0), SimpleNamespace(b=eg.constant(1.0)))
    f = eg.function(lambda p, x: p.w * x + p.inner.b)
    assert float(f(p, ONE)) == 3.0
    p.w, p.inner.b = eg.constant(5.0), eg.constant(-1.0)
    assert float(f(p, ONE)) == 4.0 and f.trace_count == 1

    class Model:
        def __init__(self):
            self.scale = eg.constant(2.0)

        @eg.function
        def __call__(self, x):
            return x * self.scale

    m = Model()
    assert float(m(ONE)) == 2.0
    m.scale = eg.constant(7.0)
    assert float(m(ONE)) == 7.0

    class Plain:
        def __init__(self):
            self.scale = eg.constant(2.0)

        def times(self, x):
            return x * self.scale

    p = Plain()
    g = eg.function(p.times)  # a bound method given to eg.function
    assert float(g(ONE)) == 2.0
    p.scale = eg.constant(3.0)
    assert float(g(ONE)) == 3.0 and g.trace_count == 1


def test_one_tensor_at_two_places_of_an_argument_object():
    t = eg.constant(1.0)
    b = SimpleNamespace(x=t, y=t)
    f = eg.function(lambda b: b.x + b.y * 10.0)
    assert float(f(b)) == 11.0
    b.y = eg.constant(2.0)  # no longer the same tensor: the key says so, a new trace
    assert float(f(b)) == 21.0 and f.trace_count == 2


def test_the_codes_own_side_effects_do_not_retrace():
    traces = []
    count = 0

    @eg.function
    def f(x):
        nonlocal count
        count += 1  # assigned by the code: its own side effect, not a capture
        traces.append(x.shape)  # a list the code appends to: entries seen stay, new ones are fine
        return x * 2.0

    f(ONE)
    f(eg.constant([1.0, 2.0]))
    f(ONE)
    f(eg.constant([1.0, 2.0]))
    assert f.trace_count == 2 and count == 2 and len(traces) == 2


def test_a_capture_that_keeps_changing_warns_and_names_it():
    k = eg.constant(0.0)
    f = eg.function(lambda x: x * k)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(eg.RETRACE_WARNING + 1):
            k = eg.constant(float(i))
            assert float(f(ONE)) == float(i)
    assert [w.category for w in caught] == [eg.RetracingWarning]
    assert "the closure variable 'k'" in str(caught[0].message)


def test_a_variable_made_by_an_inner_function_is_made_once_whatever_calls_it():
    holder = SimpleNamespace(v=None)

    @eg.function
    def inner(x):
        if holder.v is None:
            holder.v = eg.Variable(0.0, name="count")
        holder.v.assign_add(1.0)
        return holder.v.value()

    @eg.function
    def outer(x):
        return inner(x) * 1.0

    assert [float(inner(ONE)), float(inner(ONE)), float(outer(ONE)), float(outer(ONE)),
            float(inner(ONE))] == [1.0, 2.0, 3.0, 4.0, 5.0]


@pytest.mark.parametrize("outer_first", [False, True])
def test_an_inner_function_that_makes_a_variable_on_every_run_is_refused(outer_first):
    made = []

    @eg.function
    def inner(x):
        v = eg.Variable(0.0, name="each_run")
        made.append(v)
        v.assign_add(1.0)
        return v.value()

    @eg.function
    def outer(x):
        return inner(x)

    first, second = (outer, inner) if outer_first else (inner, outer)
    assert float(first(ONE)) == 1.0
    with pytest.raises(ValueError, match=r"'inner' created a Variable \(each_run\)") as err:
        second(ONE)
    message = str(err.value)
    assert ("later run" in message or "later trace" in message) and "if self.v is None" in message
    assert len(made) == 1  # one Variable: the refused run made none


def test_a_mask_whose_count_changes_traces_again_and_warns_like_any_retrace():
    f = eg.function(lambda x: eg.sum(x[x > 0]))
    assert float(f(eg.constant([1.0, -1.0, 2.0]))) == 3.0
    assert float(f(eg.constant([1.0, 1.0, 2.0]))) == 4.0 and f.trace_count == 2
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(3, 3 + eg.RETRACE_WARNING):
            x = np.ones(8, dtype=np.float32)
            x[:n] = -1.0
            assert float(f(eg.constant(x))) == 8 - n
    assert [w.category for w in caught] == [eg.RetracingWarning]
    assert "boolean mask" in str(caught[0].message)


def test_a_mask_retrace_puts_back_random_state_and_writes():
    v = eg.Variable(0.0)
    eager_v = eg.Variable(0.0)

    def body(x, var):
        var.assign_add(1.0)
        noise = eg.random.uniform([2], seed=None)
        return eg.sum(x[x > 0]) + eg.sum(noise) * 0.0, noise

    f = eg.function(lambda x: body(x, v))
    xs = [eg.constant([1.0, -1.0]), eg.constant([1.0, 1.0]), eg.constant([-1.0, -1.0])]
    eg.random.set_seed(3)
    traced = [f(x) for x in xs]
    eg.random.set_seed(3)
    eager = [body(x, eager_v) for x in xs]
    for (ty, tn), (ey, en) in zip(traced, eager):
        assert float(ty) == float(ey)
        np.testing.assert_array_equal(tn.numpy(), en.numpy())
    assert float(v) == float(eager_v) == 3.0


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
def test_a_signed_zero_argument_is_its_own_trace():
    f = eg.function(lambda x, d: x / d)
    assert float(f(ONE, 0.0)) == np.inf
    assert float(f(ONE, -0.0)) == -np.inf and f.trace_count == 2
    assert float(f(ONE, float("nan"))) != float(f(ONE, float("nan")))  # NaN: one trace, not one per call
    assert f.trace_count == 3


def test_a_tensor_attribute_of_a_captured_object_is_checked():
    cfg = SimpleNamespace(k=eg.constant(2.0), log=[])
    f = eg.function(lambda x: x * cfg.k)
    assert float(f(ONE)) == 2.0
    cfg.log.append(eg.constant(0.0))  # an attribute the trace did not read: no new trace
    assert float(f(ONE)) == 2.0 and f.trace_count == 1
    cfg.k = eg.constant(10.0)
    assert float(f(ONE)) == 10.0 and f.trace_count == 2


def test_the_retracing_warning_names_an_argument_objects_tensor():
    b = SimpleNamespace(x=eg.constant(0.0))
    f = eg.function(lambda b: b.x * 2.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(eg.RETRACE_WARNING + 1):
            b.x = eg.zeros([n + 1])
            f(b)
    assert [w.category for w in caught] == [eg.RetracingWarning]
    assert "'b' (the tensors it holds: b.x ((5,), '<f4', 'cpu:0') → ((6,), '<f4', 'cpu:0'))" in str(
        caught[0].message)
