"""The course's own answers to lesson 10, as the source text of each exercise cell.

Each text is what a learner could type into the cell of that name (run in order, in one namespace, after
``import numpy as np``, they make a whole engine). `lessons_10.py` passes each as ``reference=`` to its
exercise's registration, and the tests put it into the notebook in place of the empty cell. The lesson
never imports this module: the learner's engine is the learner's own.
"""

from __future__ import annotations

VALUE = '''\
class Value:
    def __init__(self, value, name=None):
        self.value = np.asarray(value, dtype=float)
        self.name, self.grad = name, None
        self._prev, self._op, self._record = (), "", None

    shape = property(lambda self: self.value.shape)
    T = property(lambda self: transpose(self))
    numpy = lambda self: self.value
    __repr__ = lambda self: f"Value({self.value}, name={self.name!r})"
    __add__ = lambda self, other: add(self, other)
    __radd__ = lambda self, other: add(other, self)
    __sub__ = lambda self, other: subtract(self, other)
    __rsub__ = lambda self, other: subtract(other, self)
    __mul__ = lambda self, other: multiply(self, other)
    __rmul__ = lambda self, other: multiply(other, self)
    __truediv__ = lambda self, other: divide(self, other)
    __rtruediv__ = lambda self, other: divide(other, self)
    __matmul__ = lambda self, other: matmul(self, other)
    __neg__ = lambda self: multiply(self, -1.0)
'''

TAPE = '''\
class Record:
    def __init__(self, op, inputs, outputs, vjp, params):
        self.op, self.inputs, self.outputs = op, inputs, outputs
        self.vjp, self.params = vjp, params


class Step:
    def __init__(self, record, upstream, contributions):
        self.record, self.upstream, self.contributions = record, upstream, contributions


class Tape:
    active = []

    def __init__(self):
        self.records = []

    def __enter__(self):
        Tape.active.append(self)
        return self

    def __exit__(self, *exc):
        Tape.active.remove(self)
'''

PRIMITIVE = '''\
def primitive(name, forward, vjp):
    def op(*inputs, **params):
        inputs = [x if isinstance(x, Value) else Value(x) for x in inputs]
        out = Value(forward(*[x.value for x in inputs], **params))
        record = Record(name, inputs, [out], vjp, params)
        out._prev, out._op, out._record = tuple(inputs), name, record
        for tape in Tape.active:
            tape.records.append(record)
        return out
    return op
'''

ARITHMETIC = '''\
def add_vjp(g, y, a, b):
    return g, g


def subtract_vjp(g, y, a, b):
    return g, -g


def multiply_vjp(g, y, a, b):
    return g * b, g * a


def divide_vjp(g, y, a, b):
    return g / b, -g * y / b


add = primitive("add", np.add, add_vjp)
subtract = primitive("subtract", np.subtract, subtract_vjp)
multiply = primitive("multiply", np.multiply, multiply_vjp)
divide = primitive("divide", np.divide, divide_vjp)
'''

ELEMENTWISE = '''\
def tanh_vjp(g, y, x):
    return (g * (1 - y * y),)


def exp_vjp(g, y, x):
    return (g * y,)


def log_vjp(g, y, x):
    return (g / x,)


tanh = primitive("tanh", np.tanh, tanh_vjp)
exp = primitive("exp", np.exp, exp_vjp)
log = primitive("log", np.log, log_vjp)
'''

MATMUL = '''\
def matmul_vjp(g, y, a, b):
    return g @ b.T, a.T @ g


def transpose_vjp(g, y, x):
    return (g.T,)


matmul = primitive("matmul", np.matmul, matmul_vjp)
transpose = primitive("transpose", np.transpose, transpose_vjp)
'''

REDUCTIONS = '''\
def reshape_vjp(g, y, x, shape):
    return (reshape(g, shape=x.shape),)


def sum_vjp(g, y, x, axis=None, keepdims=False):
    kept = np.sum(x.value, axis=axis, keepdims=True).shape
    return (reshape(g, shape=kept) * Value(np.ones(x.shape)),)


def mean_vjp(g, y, x, axis=None, keepdims=False):
    (spread,) = sum_vjp(g, y, x, axis=axis, keepdims=keepdims)
    return (spread * (y.value.size / x.value.size),)


reshape = primitive("reshape", lambda x, shape: np.reshape(x, shape), reshape_vjp)
reduce_sum = primitive("sum", np.sum, sum_vjp)
reduce_mean = primitive("mean", np.mean, mean_vjp)
'''

UNBROADCAST = '''\
def unbroadcast(g, shape):
    while len(g.shape) > len(shape):
        g = reduce_sum(g, axis=0)
    for axis, n in enumerate(shape):
        if n == 1 and g.shape[axis] != 1:
            g = reduce_sum(g, axis=axis, keepdims=True)
    return g
'''

WALK = '''\
def backward(tape, target):
    grads = {id(target): Value(np.ones(target.shape))}
    steps = []
    for record in reversed(tape.records):
        g = grads.get(id(record.outputs[0]))
        if g is None:
            continue
        vjps = record.vjp(g, record.outputs[0], *record.inputs, **record.params)
        contributions = [unbroadcast(c, x.shape) for x, c in zip(record.inputs, vjps)]
        steps.append(Step(record, (g,), contributions))
        for x, c in zip(record.inputs, contributions):
            grads[id(x)] = grads[id(x)] + c if id(x) in grads else c
    for record in tape.records:
        for v in (*record.inputs, *record.outputs):
            if id(v) in grads:
                v.grad = grads[id(v)]
    return steps
'''

SECOND = '''\
def second_derivative(f, x0):
    x = Value(x0, "x")
    with Tape() as outer:
        with Tape() as inner:
            y = f(x)
        backward(inner, y)
    first, x.grad = x.grad, None
    backward(outer, first)
    return first.value, x.grad.value
'''

GRAPH_WALK = '''\
def backward_graph(root):
    order, seen = [], set()

    def visit(v):
        if id(v) not in seen:
            seen.add(id(v))
            for parent in getattr(v, "_prev", ()):
                visit(parent)
            order.append(v)

    visit(root)
    grads = {id(root): Value(np.ones(root.shape))}
    for v in reversed(order):
        record = getattr(v, "_record", None)
        if record is None or id(v) not in grads:
            continue
        vjps = record.vjp(grads[id(v)], v, *record.inputs, **record.params)
        for x, c in zip(record.inputs, vjps):
            c = unbroadcast(c, x.shape)
            grads[id(x)] = grads[id(x)] + c if id(x) in grads else c
    for v in order:
        v.grad = grads.get(id(v))
'''

#: exercise name → its cell's source, in the order of the lesson.
SOURCES: dict[str, str] = {
    "value": VALUE, "tape": TAPE, "primitive": PRIMITIVE, "arithmetic": ARITHMETIC,
    "elementwise": ELEMENTWISE, "matmul": MATMUL, "reductions": REDUCTIONS, "unbroadcast": UNBROADCAST,
    "walk": WALK, "second": SECOND, "graph_walk": GRAPH_WALK,
}
