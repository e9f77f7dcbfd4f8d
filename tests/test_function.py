"""Graph mode: `eg.function` traces once per signature and replays; `eg.Graph` runs fetches by object
or name. Each semantic of API.md's "graph mode" section has a test here."""

from __future__ import annotations

import warnings
import weakref

import numpy as np
import pytest

import engine as eg
from engine.primitive import REGISTRY, Primitive
from engine.replay import Plan
from tests.helpers import DEVICES


@pytest.fixture
def scratch():
    """Make test-only primitives, removed from the registry afterwards (the registry lists real ops)."""
    made = []

    def make(*args, **kwargs):
        made.append(Primitive(*args, **kwargs))
        return made[-1]

    yield make
    for p in made:
        REGISTRY.pop(p.name, None)


def _mlp_step(seed: int = 0, optimizer: str = "Adam", dropout: float = 0.0):
    eg.layers.reset_names()
    eg.random.set_seed(seed)
    layers = [eg.layers.Dense(8, activation="tanh")]
    if dropout:
        layers.append(eg.layers.Dropout(dropout))
    model = eg.layers.Sequential([*layers, eg.layers.Dense(3)])
    model(eg.zeros((4, 5)))
    opt = {"Adam": lambda: eg.optimizers.Adam(0.05), "Momentum": lambda: eg.optimizers.Momentum(0.1, 0.9),
           "SGD": lambda: eg.optimizers.SGD(0.1)}[optimizer]()

    def step(x, y, training=False):
        with eg.GradientTape() as tape:
            loss = eg.mean(eg.nn.sparse_softmax_cross_entropy(y, model(x, training=training)))
        grads = tape.gradient(loss, model.trainable_variables)
        clipped, _ = eg.clip_by_global_norm(grads, 1.0)
        opt.apply_gradients(zip(clipped, model.trainable_variables))
        return loss, grads

    return model, opt, step


def _batch(i: int):
    rng = np.random.default_rng(i)
    return (eg.constant(rng.normal(size=(4, 5)).astype(np.float32)),
            eg.constant(rng.integers(0, 3, 4).astype(np.int32)))


# ---- tracing and retracing ------------------------------------------------------------------------

def test_same_signature_replays_new_signature_retraces():
    calls = []

    @eg.function
    def f(x, scale):
        calls.append(x.shape)  # a Python side effect: runs only while tracing
        return x * scale

    a = f(eg.constant([1.0, 2.0]), 2.0)
    b = f(eg.constant([3.0, 4.0]), 2.0)
    np.testing.assert_array_equal(a.numpy(), [2.0, 4.0])
    np.testing.assert_array_equal(b.numpy(), [6.0, 8.0])
    assert f.trace_count == 1 and calls == [(2,)]
    f(eg.constant([1.0, 2.0, 3.0]), 2.0)  # new shape
    f(eg.constant([1.0, 2.0]), 3.0)  # new Python value
    f(eg.constant([1.0, 2.0], dtype="float64"), 2.0)  # new dtype
    assert f.trace_count == 4 and len(calls) == 4
    np.testing.assert_array_equal(f(eg.constant([5.0, 6.0]), 3.0).numpy(), [15.0, 18.0])
    assert f.trace_count == 4


def test_numpy_arrays_and_nested_arguments():
    @eg.function
    def f(pair, d):
        return {"sum": pair[0] + pair[1], "scaled": d["x"] * d["k"]}

    out = f((np.ones(2, np.float32), eg.constant([1.0, 2.0])), {"x": eg.constant(3.0), "k": 2.0})
    np.testing.assert_array_equal(out["sum"].numpy(), [2.0, 3.0])
    out = f((np.full(2, 5, np.float32), eg.constant([1.0, 2.0])), {"x": eg.constant(4.0), "k": 2.0})
    np.testing.assert_array_equal(out["sum"].numpy(), [6.0, 7.0])
    assert float(out["scaled"]) == 8.0 and f.trace_count == 1
    out = f((eg.ones(2), np.array([1.0, 2.0], np.float32)), {"x": np.array(4.0, np.float32),
                                                             "k": 2.0})
    assert f.trace_count == 1  # arrays and tensors of one shape and dtype share a trace
    np.testing.assert_array_equal(out["sum"].numpy(), [2.0, 3.0])


def test_unhashable_python_argument_is_a_clear_error():
    f = eg.function(lambda x, opts: x)
    with pytest.raises(TypeError, match="neither a tensor nor hashable"):
        f(eg.constant(1.0), {"a": [1, {2, 3}]})  # a set: unhashable


def test_decorator_with_name_and_repr():
    @eg.function(name="train_step")
    def f(x):
        return x + 1

    f(eg.constant(1.0))
    assert f.get_graph(eg.constant(2.0)).name == "train_step"
    assert "train_step" in repr(f) and f.__name__ == "f"


# ---- what tracing refuses -------------------------------------------------------------------------

@pytest.mark.parametrize("use", [bool, lambda t: t.numpy(), lambda t: t.item(), float, np.asarray])
def test_python_values_of_traced_tensors_are_a_clear_error(use):
    @eg.function
    def f(x):
        y = x * 2
        return use(y)

    with pytest.raises(eg.TracingError, match=r"Mul:0.*eg.function traces 'f'") as info:
        f(eg.constant(1.0))
    assert "eg.where" in str(info.value) or "Return the tensor" in str(info.value)


def test_bool_error_points_to_where_and_python_values():
    @eg.function
    def f(x):
        if x > 0:
            return x
        return -x

    with pytest.raises(eg.TracingError, match=r"eg\.where.*Python value"):
        f(eg.constant(1.0))
    g = eg.function(lambda x: eg.where(x > 0, x, -x))
    assert float(g(eg.constant(-2.0))) == 2.0 and float(g(eg.constant(3.0))) == 3.0


def test_variable_value_inside_trace_is_an_error_but_constants_are_fine():
    v = eg.Variable(1.0, name="v")
    c = eg.constant(4.0)

    @eg.function
    def f(x):
        return x * float(c)  # a tensor made outside: a constant, its value is known

    assert float(f(eg.constant(2.0))) == 8.0
    with pytest.raises(eg.TracingError, match="Variable 'v'"):
        eg.function(lambda x: x * v.numpy())(eg.constant(1.0))


def test_print_shows_the_graph_name_not_a_value():
    seen = []

    @eg.function
    def f(x):
        seen.append(repr(x * 2))
        return x

    f(eg.constant(1.0))
    assert seen == ["<Tensor 'Mul:0' shape=() dtype=float32 device=cpu:0 (traced: it has a value only when "
                    "the graph runs)>"]


def test_variables_created_on_the_first_call_only():
    made = []

    @eg.function
    def f(x):
        if not made:
            made.append(eg.Variable(2.0, name="scale"))
        return x * made[0]

    assert float(f(eg.constant(3.0))) == 6.0
    assert float(f(eg.constant(4.0))) == 8.0  # replayed: no new Variable
    made[0].assign(10.0)
    assert float(f(eg.constant(4.0))) == 40.0  # captured by reference

    @eg.function
    def g(x):
        return x * eg.Variable(2.0, name="each_time")

    g(eg.constant(1.0))
    with pytest.raises(ValueError, match=r"created a Variable \(each_time\) on a later trace"):
        g(eg.constant([1.0, 2.0]))  # a new signature traces again, which would make a new Variable


# ---- Variables, optimizers and random ops on replay -------------------------------------------------

def test_assignments_happen_on_every_call_and_reads_see_them():
    v = eg.Variable(0.0, name="counter")

    @eg.function
    def f(x):
        before = v.value()
        v.assign_add(x)
        after = v.value()
        v.assign_sub(eg.constant(0.5))
        return before, after

    for i in range(3):
        before, after = f(eg.constant(1.0))
        assert float(before) == 0.5 * i and float(after) == 0.5 * i + 1
    assert float(v) == 1.5 and f.trace_count == 1
    g = f.get_graph(eg.constant(1.0))
    assert [n.name for n in g.nodes if n.kind in ("read", "write")] == [
        "counter", "AssignAdd", "counter/read", "AssignSub"]
    assert float(g.run("counter/read", feeds={"x": 2.0})) == 3.5  # the read waits for the assignment
    assert float(v) == 3.5


def test_get_graph_does_not_take_a_training_step():
    model, opt, step = _mlp_step()
    f = eg.function(step)
    before = [v.numpy() for v in model.trainable_variables]
    graph = f.get_graph(*_batch(0))
    assert opt.iterations == 0 and f.trace_count == 1
    for v, b in zip(model.trainable_variables, before):
        np.testing.assert_array_equal(v.numpy(), b)
    assert isinstance(graph, eg.Graph)
    f(*_batch(0))  # the traced signature: replayed, one step
    assert opt.iterations == 1 and f.trace_count == 1


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("optimizer", ["Adam", "Momentum", "SGD"])
def test_training_traced_equals_eager(optimizer, device):
    with eg.device(device):
        model_e, opt_e, step_e = _mlp_step(optimizer=optimizer)
        model_t, opt_t, step_t = _mlp_step(optimizer=optimizer)
        batches = [_batch(i) for i in range(6)]
    traced = eg.function(step_t)
    for batch in batches:
        le, ge = step_e(*batch)
        lt, gt = traced(*batch)
        assert lt.device == device and all(g.device == device for g in gt)
        np.testing.assert_allclose(float(lt), float(le), rtol=1e-6)
        for a, b in zip(gt, ge):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-7)
    assert traced.trace_count == 1 and opt_t.iterations == opt_e.iterations == 6
    for a, b in zip(model_t.variables, model_e.variables):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-7)
    for a, b in zip(opt_t.variables(), opt_e.variables()):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-7)


def test_random_ops_draw_new_values_on_every_call():
    @eg.function
    def f(x):
        return x + eg.random.normal((3,)), eg.nn.dropout(eg.ones((50,)), 0.5), x + eg.random.uniform((3,))

    x = eg.zeros(3)
    first = [t.numpy() for t in f(x)]
    second = [t.numpy() for t in f(x)]
    assert f.trace_count == 1
    for a, b in zip(first, second):
        assert not np.array_equal(a, b)


def test_seeded_random_ops_replay_like_eager():
    eg.random.set_seed(3)
    eager = [eg.random.normal((2,), seed=5).numpy() for _ in range(2)]
    f = eg.function(lambda: eg.random.normal((2,), seed=5))
    traced = [f().numpy() for _ in range(2)]
    np.testing.assert_array_equal(eager[0], eager[1])
    np.testing.assert_array_equal(traced[0], eager[0])
    np.testing.assert_array_equal(traced[1], eager[0])


def test_dropout_in_a_traced_step_trains_like_eager():
    model_e, _, step_e = _mlp_step(dropout=0.5)
    model_t, _, step_t = _mlp_step(dropout=0.5)
    traced = eg.function(step_t)
    eg.random.set_seed(11)
    eager_losses = [float(step_e(*_batch(i), training=True)[0]) for i in range(4)]
    eg.random.set_seed(11)
    traced_losses = [float(traced(*_batch(i), training=True)[0]) for i in range(4)]
    np.testing.assert_allclose(traced_losses, eager_losses, rtol=1e-6)
    assert len(set(eager_losses)) == 4 and model_t.built and model_e.built


# ---- Graph: names, fetches, feeds, counts ---------------------------------------------------------

def _graph():
    model, opt, step = _mlp_step()
    f = eg.function(step)
    return model, f.get_graph(*_batch(0))


def test_names_follow_tensorflow():
    model, graph = _graph()
    names = [n.name for n in graph.nodes]
    assert len(names) == len(set(names))
    for expected in ["x", "y", "dense_1/kernel", "sequential_1/dense_1/MatMul", "sequential_1/dense_1/Tanh",
                     "gradients/sequential_1/dense_1/MatMul_grad/MatMul", "Adam/OptimizerStep",
                     "Adam/update_dense_1/kernel/Assign"]:
        assert expected in names, expected
    assert all(n.backward == n.name.startswith("gradients") for n in graph.nodes)
    assert graph.get_tensor_by_name("dense_1/kernel").node.variable is model.trainable_variables[0]
    assert graph.get_tensor_by_name("dense_1/kernel:0") is graph.get_tensor_by_name("dense_1/kernel")
    with pytest.raises(KeyError, match="Did you mean 'dense_1/kernel'"):
        graph.get_tensor_by_name("dense_1/kernal")


def test_fetch_by_object_by_name_and_nested():
    model, graph = _graph()
    loss, grads = graph.outputs
    feeds = {"x": _batch(1)[0], "y": _batch(1)[1]}
    by_object = graph.run(grads, feeds)
    by_name = graph.run([g.name for g in grads], feeds)
    variables = graph.run([v.name for v in model.trainable_variables], feeds)
    eager_vars = [v.numpy() for v in model.trainable_variables]
    with eg.GradientTape() as tape:
        eager_loss = eg.mean(eg.nn.sparse_softmax_cross_entropy(feeds["y"], model(feeds["x"])))
    eager_grads = tape.gradient(eager_loss, model.trainable_variables)
    for a, b, c in zip(by_object, by_name, eager_grads):
        np.testing.assert_allclose(a.numpy(), c.numpy(), rtol=1e-6)
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    for got, want in zip(variables, eager_vars):  # a Variable's name fetches its value, not its gradient
        np.testing.assert_array_equal(got.numpy(), want)
    nested = graph.run({"loss": loss, "pair": (grads[0], model.trainable_variables[1])}, feeds)
    assert set(nested) == {"loss", "pair"} and isinstance(nested["pair"], tuple)
    np.testing.assert_allclose(float(nested["loss"]), float(eager_loss), rtol=1e-6)
    np.testing.assert_array_equal(nested["pair"][1].numpy(), eager_vars[1])


def test_fetching_a_none_gradient_says_what_tensorflow_said_and_why():
    """Seed 000's pitfall: a (None, variable) pair among the fetches. TF 1.x's sess.run refused it with
    "Fetch argument None has invalid type <class 'NoneType'>"; the engine says the same, then why."""
    used, spare = eg.Variable([1.0, 2.0], name="used"), eg.Variable(3.0, name="spare")

    def step(x):
        with eg.GradientTape() as tape:
            loss = eg.sum(used * x)
        return eg.optimizers.SGD(0.1).compute_gradients(loss, [used, spare], tape=tape)

    graph = eg.function(step).get_graph(eg.constant([1.0, 1.0]))
    grads = [g for g, _ in graph.outputs]
    assert grads[1] is None
    said = r"^Graph.run: Fetch argument None has invalid type <class 'NoneType'>\. A None among the fetches"
    with pytest.raises(TypeError, match=said + r" is usually the gradient of a Variable"):
        graph.run(grads, {"x": eg.constant([1.0, 1.0])})
    np.testing.assert_array_equal(graph.run(grads[0], {"x": eg.constant([3.0, 4.0])}).numpy(), [3.0, 4.0])
    # the seed's workaround, run(vars): the weights, not the gradients
    np.testing.assert_array_equal(graph.run(used, {"x": eg.constant([3.0, 4.0])}).numpy(), [1.0, 2.0])


def test_fetching_only_reads_runs_no_update():
    model, graph = _graph()
    before = [v.numpy() for v in model.trainable_variables]
    loss, grads = graph.outputs
    graph.run([loss, *grads], {"x": _batch(1)[0], "y": _batch(1)[1]})
    for v, b in zip(model.trainable_variables, before):
        np.testing.assert_array_equal(v.numpy(), b)
    graph.run("Adam/update_dense_1/kernel/Assign", {"x": _batch(1)[0], "y": _batch(1)[1]})
    assert not np.array_equal(model.trainable_variables[0].numpy(), before[0])
    lr_and_step = graph.run("Adam/OptimizerStep").numpy()  # the step's op: learning rate, step number
    np.testing.assert_allclose(lr_and_step, [0.05, 1.0])  # one variable's assignment counts no step
    graph.run("Adam/AssignAdd")  # the count's own assignment does
    np.testing.assert_allclose(graph.run("Adam/OptimizerStep").numpy(), [0.05, 2.0])


def test_one_run_computes_each_needed_node_once(scratch):
    calls = []
    counted = scratch("counted_square", lambda xp, a: calls.append(1) or a * a,
                        vjps=[lambda g, y, a: g * 2 * a], inputs=("a",), rule="∂a = g·2a")

    @eg.function
    def f(x, w):
        with eg.GradientTape() as tape:
            tape.watch(w)
            h = counted(x * w)
            loss = eg.sum(h * h)
        return loss, tape.gradient(loss, w), h

    graph = f.get_graph(eg.ones(3), eg.ones(3))
    calls.clear()
    loss, grad, h = graph.outputs
    graph.run([loss, grad, h, h.name], {"x": np.ones(3, np.float32), "w": np.ones(3, np.float32)})
    assert len(calls) == 1
    assert graph.op_count([loss, grad]) < graph.op_count(loss) + graph.op_count(grad)
    assert graph.op_count(h) == 2  # Mul, CountedSquare: placeholders and constants are not ops


def test_feeds_are_checked():
    _, graph = _graph()
    loss, _ = graph.outputs
    with pytest.raises(ValueError, match="input 'y' is needed but was not fed"):
        graph.run(loss, {"x": _batch(1)[0]})
    with pytest.raises(ValueError, match=r"traced for shape \(4, 5\)"):
        graph.run(loss, {"x": np.ones((2, 5), np.float32), "y": _batch(1)[1]})
    with pytest.raises(TypeError, match="eager Tensor"):
        graph.run(eg.constant(1.0))
    with pytest.raises(TypeError, match="graph.run"):
        graph.outputs[0].numpy()


def test_feeding_an_intermediate_skips_what_is_upstream():
    @eg.function
    def f(x):
        h = x * 3
        return h + 1

    graph = f.get_graph(eg.constant(1.0))
    assert float(graph.run(graph.outputs, {"Mul": 10.0})) == 11.0
    assert graph.op_count(graph.outputs, {"Mul": 10.0}) == 1


@pytest.mark.parametrize("device", [d for d in DEVICES if d != "cpu:0"])
def test_replay_runs_on_the_inputs_device_without_host_transfers(device, transfers):
    with eg.device(device):
        model, opt, step = _mlp_step(dropout=0.5)
        batches = [_batch(i) for i in range(3)]
    traced = eg.function(step)
    traced(*batches[0], training=True)  # traces
    with transfers() as count:
        for batch in batches[1:]:
            loss, grads = traced(*batch, training=True)
    assert count.to_host == 0 and count.to_device == 0, count
    assert loss.device == device and all(v.device == device for v in model.variables + opt.variables())


# ---- the executor ---------------------------------------------------------------------------------

class _Tracked(np.ndarray):
    """An array whose lifetime the test can watch."""


def test_replay_frees_each_intermediate_after_its_last_use(scratch):
    alive = []
    track = scratch("tracked_add_one", lambda xp, a: _watch(alive, (a + 1).view(_Tracked)),
                      vjps=[lambda g, y, a: g], inputs=("a",), rule="∂a = g")

    @eg.function
    def chain(x):
        h = x
        for _ in range(30):
            h = track(h)
        return h

    chain(eg.zeros(4))
    alive.clear()
    out = chain(eg.zeros(4))
    np.testing.assert_array_equal(out.numpy(), np.full(4, 30.0))
    assert max(alive) <= 3  # the fresh array, its input, and the output kept for the caller


def _watch(alive: list, array: np.ndarray) -> np.ndarray:
    _watch.live = getattr(_watch, "live", 0) + 1
    weakref.finalize(array, _dec)
    alive.append(_watch.live)
    return array


def _dec() -> None:
    _watch.live -= 1


def test_plan_is_a_flat_list_of_steps():
    f = eg.function(lambda x: eg.tanh(x * 2) + x)
    graph = f.get_graph(eg.ones(2))
    plan = Plan(graph.nodes, [graph.outputs.node], [graph.inputs[0].node])
    assert [len(s) for s in plan.steps] == [4, 4, 4]
    assert all(callable(fn) and isinstance(ins, tuple) for fn, ins, _, _ in plan.steps)
    assert plan.op_count == 3


# ---- composition ----------------------------------------------------------------------------------

def test_nested_functions_inline_and_outer_tapes_see_the_ops():
    inner = eg.function(lambda x: x * x)
    outer = eg.function(lambda x: inner(x) + 1)
    assert float(outer(eg.constant(3.0))) == 10.0 and inner.trace_count == 0
    x = eg.constant(3.0)
    with eg.GradientTape() as tape:
        tape.watch(x)
        y = outer(x)
    assert float(tape.gradient(y, x)) == 6.0


def test_second_order_inside_a_trace():
    @eg.function
    def f(x):
        with eg.GradientTape() as outer:
            outer.watch(x)
            with eg.GradientTape() as inner:
                inner.watch(x)
                y = x * x * x
            dy = inner.gradient(y, x)
        return dy, outer.gradient(dy, x)

    for v in (1.0, 2.0, 3.0):
        dy, d2y = f(eg.constant(v))
        assert float(dy) == pytest.approx(3 * v * v) and float(d2y) == pytest.approx(6 * v)
    assert f.trace_count == 1
    names = [n.name for n in f.get_graph(eg.constant(1.0)).nodes]
    assert any(n.startswith("gradients_1/gradients/") for n in names)


def test_name_scope():
    @eg.function
    def f(x):
        with eg.name_scope("block"):
            a = x + 1
        with eg.name_scope("block"):
            b = x + 2
        return a * b

    names = [n.name for n in f.get_graph(eg.constant(1.0)).nodes]
    assert "block/Add" in names and "block_1/Add" in names
    with eg.name_scope("ignored") as scope:  # outside tracing: nothing to name
        assert scope is None


def test_layer_weights_are_initialised_outside_the_graph():
    eg.layers.reset_names()
    layer = eg.layers.Dense(3)  # not built yet: its first call is inside the trace
    f = eg.function(lambda x: layer(x))
    f(eg.ones((2, 4)))
    graph = f.get_graph(eg.ones((2, 4)))
    assert [n.op for n in graph.nodes] == ["Placeholder", "ReadVariable", "MatMul", "ReadVariable", "Add"]
    with pytest.raises(ValueError, match="on a later trace"):
        g = eg.function(lambda x: eg.layers.Dense(2)(x))
        g(eg.ones((1, 2)))
        g(eg.ones((2, 2)))  # a new shape traces again, and builds a new layer's Variables


def test_values_computed_from_the_input_are_not_frozen_into_the_graph():
    """The logsumexp shift (max of the input) is an op: traced on small logits, replayed on large ones,
    softmax stays finite. (Frozen to the first call's max, exp(1000 - 1) would overflow.)"""
    f = eg.function(lambda x: (eg.softmax(x), eg.logsumexp(x)))
    f(eg.constant([0.0, 1.0]))
    probs, lse = f(eg.constant([1000.0, 1000.0]))
    np.testing.assert_allclose(probs.numpy(), [0.5, 0.5], rtol=1e-6)
    assert np.isfinite(lse.numpy()) and f.trace_count == 1


def test_a_method_traces_per_instance():
    class Model:
        def __init__(self, scale):
            self.w = eg.Variable(scale)

        @eg.function
        def __call__(self, x):
            return x * self.w

    a, b = Model(2.0), Model(3.0)
    assert float(a(eg.constant(1.0))) == 2.0 and float(b(eg.constant(1.0))) == 3.0
    assert float(a(eg.constant(5.0))) == 10.0
    assert a.__call__.trace_count == 1 and b.__call__.trace_count == 1
    assert a.__call__ is a.__call__


def test_accumulation_refuses_to_be_traced():
    w = eg.Variable(1.0)
    opt = eg.optimizers.MultiSteps(eg.optimizers.SGD(0.1), every_k=2)

    @eg.function
    def step(x):
        with eg.GradientTape() as tape:
            loss = w * x
        opt.apply_gradients([(tape.gradient(loss, w), w)])
        return loss

    with pytest.raises(eg.TracingError, match="MultiSteps.*outside the traced function"):
        step(eg.constant(1.0))


def test_graph_nodes_take_their_type_from_the_primitive():
    """The TensorFlow op name lives on the Primitive (one place), and graph nodes carry it."""
    import re

    for name, prim in eg.primitives.items():
        assert re.fullmatch(r"[A-Z][A-Za-z0-9]*", prim.op_type), (name, prim.op_type)
    assert {eg.primitives[n].op_type for n in ("matmul", "multiply", "argmax", "negative", "concat")} == {
        "MatMul", "Mul", "ArgMax", "Neg", "ConcatV2"}
    graph = eg.function(lambda x: eg.matmul(x, x) * 2.0).get_graph(eg.ones((2, 2)))
    ops = {n.op for n in graph.nodes if n.kind == "op"}
    assert ops == {"MatMul", "Mul"}
    node_ops = {n.op: n for n in graph.nodes}
    assert node_ops["MatMul"].primitive.op_type == "MatMul"


def test_a_function_that_keeps_tracing_warns_and_names_what_changed():
    f = eg.function(lambda x, lr: x * lr)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for k in range(eg.RETRACE_WARNING):
            f(eg.constant(1.0), 0.5 * k)
        assert not caught  # five traces: quiet
        f(eg.constant(1.0), 7.0)
        f(eg.constant(1.0), 8.0)  # warned once per function, not on every later trace
    assert [w.category for w in caught] == [eg.RetracingWarning]
    message = str(caught[0].message)
    assert "'lr' (a Python float: 2.0 → 7.0)" in message and "eg.constant" in message
    assert caught[0].filename == __file__  # points at the caller's line


def test_retracing_on_shapes_names_the_shape_change_and_tensors_do_not_retrace():
    g = eg.function(lambda x: x * 2.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(1, eg.RETRACE_WARNING + 2):
            g(eg.ones(n))
        h = eg.function(lambda x, lr: x * lr)
        for k in range(20):
            h(eg.constant(1.0), eg.constant(0.1 * k))  # a tensor learning rate: one trace
    assert len(caught) == 1 and "'x' (a tensor: shape (5,) → (6,))" in str(caught[0].message)
    assert h.trace_count == 1


def test_get_graph_leaves_the_random_sequence_where_it_was():
    f = eg.function(lambda x: x + eg.random.normal(x.shape))
    eg.random.set_seed(3)
    want = eg.random.normal((4,)).numpy()
    eg.random.set_seed(3)
    f.get_graph(eg.zeros(4))  # traces (and draws) without keeping its effects
    assert (eg.random.normal((4,)).numpy() == want).all()
    eg.random.set_seed(None)


def test_get_graph_undoes_a_set_seed_inside_the_function():
    def f(x):
        eg.random.set_seed(99)
        return x + eg.random.uniform(x.shape)

    eg.random.set_seed(5)
    want = eg.random.uniform((3,)).numpy()
    eg.random.set_seed(5)
    eg.function(f).get_graph(eg.zeros(3))
    assert (eg.random.uniform((3,)).numpy() == want).all()
    eg.random.set_seed(None)
