"""Wrong versions of lesson 10's cells, as a learner could write them (source text, like the reference).

Each is ``exercise → {source of a wrong cell: fragment of the hint it must get}``; tests/
test_lessons_exercises_10.py judges each one, and tests/test_lesson10_solved.py runs the whole lesson with
the four the issue names (an aliasing walk, a forward-order walk, a walk without unbroadcast, a VJP
without g) to see each refused in the notebook with its own hint.
"""

from __future__ import annotations

from tests.checks_package import checks


def reference(name: str) -> str:
    """The course's answer to lesson 10's exercise ``name``: the source text beside its registration."""
    return checks.EXERCISES[("10", name)].reference


TAPE, ARITHMETIC, ELEMENTWISE, MATMUL, REDUCTIONS, WALK = (
    reference(n) for n in ("tape", "arithmetic", "elementwise", "matmul", "reductions", "walk"))

#: the in-place accumulation trap: grads hold arrays, and += adds into an array add's VJP handed out twice
ALIASING_WALK = '''\
def backward(tape, target):
    grads = {id(target): np.ones(target.shape)}
    steps = []
    for record in reversed(tape.records):
        if id(record.outputs[0]) not in grads:
            continue
        g = Value(grads[id(record.outputs[0])])
        vjps = record.vjp(g, record.outputs[0], *record.inputs, **record.params)
        contributions = [unbroadcast(c, x.shape) for x, c in zip(record.inputs, vjps)]
        steps.append(Step(record, (g,), contributions))
        for x, c in zip(record.inputs, contributions):
            if id(x) in grads:
                grads[id(x)] += c.value
            else:
                grads[id(x)] = c.value
    for record in tape.records:
        for v in (*record.inputs, *record.outputs):
            if id(v) in grads:
                v.grad = Value(grads[id(v)])
    return steps
'''

FORWARD_WALK = WALK.replace("reversed(tape.records)", "tape.records")
NO_UNBROADCAST_WALK = WALK.replace("[unbroadcast(c, x.shape) for x, c in zip(record.inputs, vjps)]",
                                   "list(vjps)")
OVERWRITING_WALK = WALK.replace("grads[id(x)] + c if id(x) in grads else c", "c")
NO_STEPS_WALK = WALK.replace("    return steps\n", "")
MISSING_G_MULTIPLY = ARITHMETIC.replace("return g * b, g * a", "return b, a")

assert len({WALK, FORWARD_WALK, NO_UNBROADCAST_WALK, OVERWRITING_WALK, NO_STEPS_WALK}) == 5
assert MISSING_G_MULTIPLY != ARITHMETIC

VARIANTS: dict[str, dict[str, str]] = {
    "value": {
        reference("value").replace("        self._prev, self._op, self._record = (), \"\", None\n", ""):
            "leaf",
        "class Value:\n    def __init__(self, value, name=None):\n        self.value = value\n":
            "NumPy array",
        "class Value:\n    def __init__(self, value, name=None):\n"
        "        self.value = np.asarray(value, dtype=float)\n        self.name, self.grad = name, None\n"
        "        self._prev, self._op, self._record = (), '', None\n"
        "    shape = property(lambda self: self.value.shape)\n    numpy = lambda self: self.value\n":
            "__add__",
    },
    "tape": {
        TAPE.replace("    active = []\n\n    def __init__(self):\n        self.records = []\n",
                     "    active = []\n    records = []\n"): "its own .records",
        TAPE.replace("        Tape.active.remove(self)",
                     "        Tape.active.remove(self)\n        return True"):
            "swallows errors",
        TAPE.replace("        return self\n", ""): "returns self",
    },
    "primitive": {
        "def primitive(name, forward, vjp):\n    def op(*inputs, **params):\n"
        "        inputs = [x if isinstance(x, Value) else Value(x) for x in inputs]\n"
        "        out = Value(forward(*[x.value for x in inputs], **params))\n"
        "        if Tape.active:\n"
        "            Tape.active[-1].records.append(Record(name, inputs, [out], vjp, params))\n"
        "        return out\n    return op\n": "every tape",
        "def primitive(name, forward, vjp):\n    def op(*inputs, **params):\n"
        "        out = Value(forward(*[x.value for x in inputs], **params))\n"
        "        return out\n    return op\n": "wrapped",
    },
    "arithmetic": {
        MISSING_G_MULTIPLY: "upstream gradient g",
        ARITHMETIC.replace("return g, -g", "return g, g"): "sign of ∂b",
        ARITHMETIC.replace("return g * b, g * a", "return g * a, g * b"): "swapped",
        ARITHMETIC.replace("return g / b, -g * y / b", "return g / b, -g * y"): "quotient rule",
        ARITHMETIC.replace("return g * b, g * a",
                           "return Value(g.value * b.value), Value(g.value * a.value)"):
            "outside your ops",
        ARITHMETIC.replace("return g * b, g * a", "return g.value * b.value, g.value * a.value"):
            "not a Value",
    },
    "elementwise": {
        ELEMENTWISE.replace("return (g * (1 - y * y),)", "return (g * (1 - x * x),)"): "input x where",
        ELEMENTWISE.replace("return (g / x,)", "return (1 / x,)"): "upstream gradient g",
        ELEMENTWISE.replace("return (g * y,)", "return g * y"): "return a tuple",
    },
    "matmul": {
        MATMUL.replace("return g @ b.T, a.T @ g", "return g @ b.T, g.T @ a"): "transpose of its input",
        MATMUL.replace("return g @ b.T, a.T @ g", "return b @ g, a @ g"): "VJP raised",
    },
    "reductions": {
        REDUCTIONS.replace("return (spread * (y.value.size / x.value.size),)", "return (spread,)"):
            "not divided",
        REDUCTIONS.replace("reshape(g, shape=kept) * Value(np.ones(x.shape))", "g * Value(np.ones(x.shape))"):
            "VJP raised",
    },
    "unbroadcast": {
        "def unbroadcast(g, shape):\n    while len(g.shape) > len(shape):\n"
        "        g = reduce_sum(g, axis=0)\n    return g\n": "not summed over a broadcast axis",
        "def unbroadcast(g, shape):\n    for axis, n in enumerate(shape):\n        if n == 1:\n"
        "            g = reduce_sum(g, axis=axis, keepdims=True)\n    return g\n": "leading axes",
        "def unbroadcast(g, shape):\n    while len(g.shape) > len(shape):\n"
        "        g = reduce_sum(g, axis=0)\n    for axis, n in enumerate(shape):\n"
        "        if n == 1 and g.shape[axis] != 1:\n"
        "            g = reduce_sum(g, axis=axis)\n    return g\n": "must be kept",
        "def unbroadcast(g, shape):\n    return Value(np.ones(shape))\n": "outside your ops",
    },
    "walk": {
        ALIASING_WALK: "changed in place",
        FORWARD_WALK: "wrong order",
        NO_UNBROADCAST_WALK: "not summed over a broadcast axis",
        OVERWRITING_WALK: "sum of all the contributions",
        NO_STEPS_WALK: "list of steps",
    },
}
