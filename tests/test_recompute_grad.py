"""`eg.recompute_grad` (issue 33): f's inner results are not kept, its forward runs again in the backward
pass, gradients bit-identical to plain f's; a 12-layer tanh MLP in blocks of 3 keeps ≤ 0.65× (hand
count 7/13); nested tapes give exact higher derivatives; inside eg.function it is traced."""

from __future__ import annotations

import numpy as np
import pytest

import engine as eg

WIDTH, BATCH, DEPTH = 64, 32, 12


def _model(seed=0):
    eg.random.set_seed(seed)
    layers = [eg.layers.Dense(WIDTH, activation="tanh") for _ in range(DEPTH)]
    x = eg.constant(np.random.default_rng(1).standard_normal((BATCH, WIDTH)).astype(np.float32))
    for layer in layers:  # build the weights outside the profiles
        layer(x)
    return layers, x


def _blocks(layers, size):
    def block(chunk):
        def run(h):
            for layer in chunk:
                h = layer(h)
            return h
        return run
    return [block(layers[i:i + size]) for i in range(0, len(layers), size)]


def _step(blocks, variables, x):
    with eg.GradientTape() as tape:
        h = x
        for b in blocks:
            h = b(h)
        loss = eg.sum(h)
    return tape.gradient(loss, variables)


def test_blocks_of_three_keep_about_seven_thirteenths_with_bit_identical_gradients():
    layers, x = _model()
    variables = [v for layer in layers for v in layer.trainable_variables]
    plain = eg.memory_profile(_step, _blocks(layers, 3), variables, x)
    checkpointed = eg.memory_profile(_step, [eg.recompute_grad(b) for b in _blocks(layers, 3)], variables, x)
    activation = BATCH * WIDTH * 4
    assert plain.saved_peak_bytes == 13 * activation  # x and each of the 12 tanh outputs
    assert checkpointed.saved_peak_bytes <= 0.65 * plain.saved_peak_bytes
    assert checkpointed.saved_peak_bytes == 7 * activation  # 4 block inputs + 3 inside the block recomputed
    for a, b in zip(plain.result, checkpointed.result):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    # one record per block call (the forward events name them)
    forward_ops = [e for e in checkpointed.timeline if e.phase == "forward"]
    assert [e.op for e in forward_ops].count("recompute_grad") == 4


def test_the_inputs_gradient_and_kwargs():
    w = eg.Variable([[0.3, -0.2], [0.1, 0.4]])

    def f(x, scale=1.0):
        return eg.sin(x @ w) * scale

    x = eg.constant([[1.0, 2.0]])
    grads = []
    for fn in (f, eg.recompute_grad(f)):
        with eg.GradientTape() as tape:
            tape.watch(x)
            y = eg.sum(fn(x, scale=2.0))
        grads.append([g.numpy() for g in tape.gradient(y, [x, w])])
    for a, b in zip(*grads):
        np.testing.assert_array_equal(a, b)


def test_nested_tapes_give_the_exact_second_derivative():
    def f(x):
        return eg.exp(eg.sin(x) * x)

    x = eg.constant([0.3, -1.2, 2.0])
    results = []
    for fn in (f, eg.recompute_grad(f)):
        with eg.GradientTape() as outer:
            outer.watch(x)
            with eg.GradientTape() as inner:
                inner.watch(x)
                y = eg.sum(fn(x))
            dy = inner.gradient(y, x)
        results.append((dy.numpy(), outer.gradient(dy, x).numpy()))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-6)


def test_inside_eg_function_the_recomputation_is_traced():
    layers, x = _model()
    layers = layers[:3]
    variables = [v for layer in layers for v in layer.trainable_variables]
    blocks = [eg.recompute_grad(b) for b in _blocks(layers, 3)]
    traced = eg.function(lambda x: _step(blocks, variables, x))
    eager = _step(blocks, variables, x)
    for a, b in zip(eager, traced(x)):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-7)
    plain = eg.function(lambda x: _step(_blocks(layers, 3), variables, x))
    ops = lambda g: [n.op for n in g.nodes]  # noqa: E731
    # the forward ops of the block appear once more (under gradients/): 3 more tanh, 3 more matmul
    assert ops(traced.get_graph(x)).count("Tanh") == ops(plain.get_graph(x)).count("Tanh") + 3
    # 3 more forward MatMuls, and one for the gradient of the block's input x, which the plain walk
    # skips (x is no source) but a recomputed block's walk gives for every input it took
    assert ops(traced.get_graph(x)).count("MatMul") == ops(plain.get_graph(x)).count("MatMul") + 4


def test_without_a_tape_it_is_f_and_bad_input_is_refused():
    f = eg.recompute_grad(lambda x: x * 2.0)
    assert float(f(eg.constant(2.0))) == 4.0
    with pytest.raises(TypeError, match="recompute_grad: f must be callable"):
        eg.recompute_grad(3)
    g = eg.recompute_grad(lambda x: (x, x))
    with eg.GradientTape() as tape:
        x = eg.constant(1.0)
        tape.watch(x)
        with pytest.raises(TypeError, match="recompute_grad: f must return one Tensor"):
            g(x)
