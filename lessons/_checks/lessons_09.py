"""The self-checks of lesson 09 (graphs)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

import engine as eg

from .answers import computed
from .plain import _is_tensor
from .registry import register

# ===================================================================================================
# Lesson 09: graphs
# ===================================================================================================

def _traced_check_step() -> tuple[Any, Any, list[Any]]:
    """A small traced step returning (loss, grads): its graph, its input and the tape's gradients."""
    w = eg.Variable(np.array([[1.0, -2.0], [0.5, 3.0]], np.float32), name="check/w")
    b = eg.Variable(np.array([0.1, -0.2], np.float32), name="check/b")

    def step(x: Any) -> Any:
        with eg.GradientTape() as tape:
            loss = eg.sum(eg.tanh(x @ w + b) ** 2)
        return loss, tape.gradient(loss, [w, b])

    x = eg.constant([[1.0, 2.0], [-1.0, 0.5]])
    graph = eg.function(step).get_graph(x)
    return graph, x, [g.numpy() for g in step(x)[1]]


def _judge_gradient_names(answer: Any) -> str | None:
    graph, x, expected = _traced_check_step()
    names = answer(graph)
    if names is None:
        return "your function returns None; return the names, a list of strings."
    if type(names) not in (list, tuple):
        return "return a plain list (or tuple) of names, one per gradient."
    if any(hasattr(n, "node") for n in names):
        return "those are the graph tensors themselves; the exercise asks for their names (strings)."
    if not all(type(n) is str for n in names):
        return "every entry should be a name: a plain string."
    if len(names) != len(expected):
        return "return one name per gradient (the step returns one gradient per Variable)."
    variables = {n.name for n in graph.nodes if n.op == "ReadVariable"}
    if set(names) & variables:
        return ("at least one of those names is a Variable's: fetching it gives the Variable's value, not "
                "its gradient (TensorFlow 1.x's pitfall).")
    try:
        fetched = graph.run(list(names), feeds={"x": x})
    except KeyError:
        return "at least one of those names is not in the graph."
    for got, want in zip(fetched, expected):
        if got.shape != want.shape or not np.allclose(got.numpy(), want, rtol=1e-5, atol=1e-6):
            return ("those names fetch tensors of the graph, but not the gradients (or not in the right "
                    "order).")
    return None


def _judge_leaky_relu(answer: Any) -> str | None:
    traced = eg.function(answer)
    drawn = np.random.default_rng(9).normal(size=(3, 4)) * 2.0  # a random float64 matrix: another trace
    for v in (np.array([-2.0, -0.5, 0.0, 1.5], np.float32), np.array([3.0, -1.0, 2.0, -4.0], np.float32),
              drawn):
        try:
            y = traced(eg.constant(v))
        except eg.TracingError:
            return ("your function asks a traced tensor for a Python value (an `if` on a tensor, or "
                    ".numpy()), which a graph cannot do.")
        if not _is_tensor(y) or y.shape != v.shape:
            return "return a tensor with the shape of x."
        if y.dtype != v.dtype:
            return f"for {v.dtype} x it returns {y.dtype}: keep the dtype of x."
        got = y.numpy()
        if np.allclose(got, np.maximum(v, 0)):
            return "negative inputs should be scaled down, not set to zero."
        if not np.allclose(got, np.where(v > 0, v, 0.1 * v), atol=1e-6):
            return "the values are not right for every element."
    return None


def _gradient_names(graph: Any) -> list[str]:
    """The course's answer to lesson 09's gradient_names."""
    return [g.name for g in graph.outputs[1]]


def _leaky_relu(x: Any) -> Any:
    """The course's answer to lesson 09's leaky_relu."""
    return eg.where(x > 0, x, 0.1 * x)


def _leaky_if(x: Any) -> Any:
    if x > 0:
        return x
    return 0.1 * x


register("09", "gradient_names",
         idea=("Every tensor of a graph has a name, and a graph returns what its traced function "
               "returned."),
         judge=_judge_gradient_names, function="gradient_names",
         reference=_gradient_names, wrong=(
             (lambda graph: [n.name for n in graph.nodes if n.op == "ReadVariable"], "Variable's value"),
            (lambda graph: list(graph.outputs[1]), "graph tensors themselves"),
            (lambda graph: [graph.outputs[0].name], "one name per gradient"),
            (lambda graph: [graph.outputs[0].name] * 2, "not the gradients")),
         hint="The step returned (loss, grads), so graph.outputs holds the loss and the list of the "
              "gradients as graph tensors; each graph tensor has a .name.")
def _trace_count_answer() -> int:
    """Exercise 2 of lesson 09: how often a fresh eg.function(lambda x, lr: x * lr) traces for the
    lesson's six calls, counted by its trace_count."""
    f = eg.function(lambda x, lr: x * lr)
    calls = [(eg.ones((64, 10)), 0.1), (eg.ones((64, 10)), 0.1), (eg.ones((29, 10)), 0.1),
             (eg.ones((64, 10)), 0.05), (eg.ones((64, 10)), eg.constant(0.05)),
             (eg.ones((64, 10)), eg.constant(0.01))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the retracing warnings are the lesson's point, not the check's
        for x, lr in calls:
            f(x, lr)
    return f.trace_count


register("09", "trace_count",
         idea=("A traced function traces again only for a signature it has not seen; work out what makes "
               "two calls' signatures the same."),
         expected=computed(_trace_count_answer),
         hint="A tensor argument counts by its shape, dtype and device; any other argument by its value. "
              "Go through the calls and count the signatures not seen before.")
register("09", "leaky_relu",
         idea=("A graph cannot ask a tensor for a Python value while tracing; the choice between two "
               "values has to be an op of the graph."),
         judge=_judge_leaky_relu, function="leaky_relu", reference=_leaky_relu,
         wrong=((_leaky_if, "Python value"), (lambda x: eg.relu(x), "not set to zero"),
                (lambda x: x, "not right")),
         hint="eg.where(condition, a, b) picks elementwise from a where the condition holds and from b "
              "elsewhere, inside the graph.",
         praise="eg.where keeps the choice inside the graph, so every replay chooses anew.")
