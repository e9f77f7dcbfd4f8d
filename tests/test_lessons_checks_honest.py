"""The exercise self-checks (lessons/_checks/) cannot be fooled by answers that only look right.

Every registered exercise is tried with adversarial answers (see `ADVERSARIAL`): objects whose own
``__eq__``, ``__len__``, ``strip``, ``__array__`` or ``numpy`` lie, tuples hiding an extra part,
booleans and NaN for numbers, arrays of the wrong shape, the forbidden built-in reached by another
path, answers that never return; and with patches of the checks' own helpers from "a cell".
Each must get "Not yet", with a message that says what is wrong; the right answer stays "Right!".
`test_every_exercise_is_tried` fails until a new exercise gets its adversarial answers here.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import pkgutil
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import engine as eg
import engine.clipping
import engine.nn.losses
import engine.training
from tests.test_lessons_exercises import _course_answer, checks
from tests.test_lessons_exercises_0406 import _global_clip
from tests.test_lessons_exercises_10 import ANSWER as ANSWER_10
from tests.test_lessons_exercises_10 import engine as engine_10
from tests.test_lessons_exercises_10 import reference as reference_10

# The course's answers, from their registrations (the one source of truth).
rows_right = checks.EXERCISES["05", "clip_rows"].reference
acc_right = checks.EXERCISES["07", "accuracy"].reference
names_right = checks.EXERCISES["09", "gradient_names"].reference
GradientAccumulator = checks.EXERCISES["06", "accumulator"].reference
clip_by_global_norm_by_hand = checks.EXERCISES["05", "global_clip_by_hand"].reference

# ---- answers that only look right ------------------------------------------------------------------


class LiarInt(int):
    """Equal to everything."""

    def __eq__(self, other: object) -> bool:
        return True

    def __ne__(self, other: object) -> bool:
        return False

    __hash__ = int.__hash__


class LiarFloat(float):
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = float.__hash__


class LiarStr(str):
    """Equal to everything, and stays a liar through strip() and lower()."""

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = str.__hash__

    def strip(self, chars: Any = None) -> LiarStr:
        return self

    def lower(self) -> LiarStr:
        return self


class DeviceLiar(LiarStr):
    """Equal to any device name (and to nothing else, so that it is not taken for "cpu")."""

    def __eq__(self, other: object) -> bool:
        return other in ("cpu:0", "gpu:0")

    __hash__ = str.__hash__


class PoserStr(str):
    """A string that prints as something else."""

    def __new__(cls, text: str, shown: str) -> PoserStr:
        made = super().__new__(cls, text)
        made.shown = shown
        return made

    def __str__(self) -> str:
        return self.shown


class Shown:
    """Not a string at all, but str() of it is ``shown``."""

    def __init__(self, shown: str):
        self.shown = shown

    def __str__(self) -> str:
        return self.shown


class ShortTuple(tuple):
    """Hides its last part from len()."""

    def __len__(self) -> int:
        return tuple.__len__(self) - 1


class ShortList(list):
    def __len__(self) -> int:
        return list.__len__(self) - 1


class ArrayLike:
    """Any object whose __array__ gives the right numbers."""

    def __init__(self, value: Any):
        self.value = value

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.asarray(self.value, dtype=dtype)


class SubArray(np.ndarray):
    """An ndarray subclass (it could override anything NumPy calls)."""


class FloatLike:
    def __init__(self, value: float):
        self.value = value

    def __float__(self) -> float:
        return float(self.value)


class LiarTensor(eg.Tensor):
    """An engine tensor subclass holding one value and reporting another through numpy/item/__array__."""

    def numpy(self) -> np.ndarray:
        return np.array(self.lie)

    def item(self) -> Any:
        return np.array(self.lie).item()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.asarray(self.lie, dtype=dtype)


def liar_tensor(shown: Any, real: Any) -> LiarTensor:
    t = LiarTensor._make(np.asarray(real, np.float32), eg.constant(0.0)._device)
    t.lie = np.asarray(shown, np.float32)
    return t


def runs_forever(*args: Any) -> None:
    """An answer whose loop never ends (bounded at 60 s: a broken time limit must not hang the suite)."""
    end = time.monotonic() + 60
    while time.monotonic() < end:
        pass


def swallows_and_runs_forever(*args: Any) -> None:
    end = time.monotonic() + 60
    while time.monotonic() < end:
        try:
            while time.monotonic() < end:
                pass
        except Exception:  # noqa: S112 (what a learner might write)
            continue


# ---- the forbidden built-ins, reached without the name the old check patched -------------------------

_saved_clip_by_norm = eg.clip_by_norm  # a reference saved "in an earlier cell"
_saved_xent = eg.nn.softmax_cross_entropy


def rows_via_module(t, c):
    return engine.clipping.clip_by_norm(t, c, axes=1)


def rows_via_saved(t, c):
    return _saved_clip_by_norm(t, c, axes=1)


rows_via_partial = functools.partial(eg.clip_by_norm, axes=1)


def xent_via_module(labels, logits):
    return engine.nn.losses.softmax_cross_entropy(labels, logits)


def xent_via_saved(labels, logits):
    return _saved_xent(labels, logits)


def xent_sparse_via_module(labels, logits):
    return engine.nn.losses.sparse_softmax_cross_entropy(eg.argmax(labels, axis=-1), logits)


# ---- answers of the judge-written exercises that lie through their return value --------------------


def _clip_rows_value(t):
    rows = t.numpy().astype(np.float64)
    norms = np.sqrt((rows**2).sum(axis=1, keepdims=True))
    return rows * 2.0 / np.maximum(norms, 2.0)


def rows_liar_tensor(t, c):
    return liar_tensor(_clip_rows_value(t), t.numpy())


def sse_liar_tensor(pred, target):
    p, t = pred.numpy().astype(np.float64), target.numpy().astype(np.float64)
    return liar_tensor(np.sum((p[:, 0] - t) ** 2), 0.0)


def scale_array_like(pairs, factor):
    return [(None if g is None else ArrayLike(g.numpy() * factor), v) for g, v in pairs]


def scale_long_pairs(pairs, factor):
    return [ShortTuple((None if g is None else g * factor, v, "extra")) for g, v in pairs]


def combine_array_like(gradients, sizes):
    return ArrayLike(sum(n * g for n, g in zip(sizes, gradients)) / sum(sizes))


def combine_bools(gradients, sizes):
    return np.ones_like(gradients[0], dtype=bool)


def accuracy_liar_tensor(logits, labels):
    return liar_tensor(acc_right(logits, labels), 0.0)


def accuracy_array_like(logits, labels):
    return ArrayLike(acc_right(logits, labels))


def accuracy_true(logits, labels):
    return True


def server_liar_count(optimizer, variables, worker_gradients):
    optimizer._count.assign(np.int64(1))  # counts a step it never took


def names_hidden_extra(graph):
    return ShortList([*names_right(graph), names_right(graph)[0]])


def _float32_product_liar():
    right = np.linspace(0.0, 1.0, 5) * np.arange(1.0, 6.0)
    return liar_tensor(right, np.zeros(5))


def _landing_liar():
    return DeviceLiar("nowhere")


FOREVER_FRAGMENT = "took more than"
JACOBIAN = np.array([[3.0, 2.0], [1.0, 1.0], [0.0, 6.0]])

# (key) -> [(label, build the answer, fragment of the message, is it one of the holes open on main)]
Adversary = tuple[str, Callable[[], Any], str, bool]
ADVERSARIAL: dict[tuple[str, str], list[Adversary]] = {
    ("01", "floor_mod"): [
        ("tuple hiding a 3rd part", lambda: ShortTuple((-4, 3, 7)), "plain tuple", True),
        ("__array__ object part", lambda: (ArrayLike(-4), 3), "of type ArrayLike", True),
        ("bool part", lambda: (-4, True), "True/False", False),
        ("NaN part", lambda: (-4, float("nan")), "NaN", False),
        ("liar int parts", lambda: (LiarInt(0), LiarInt(0)), "of type LiarInt", False),
    ],
    ("01", "float32_product"): [
        ("Tensor subclass lying", _float32_product_liar, "engine tensor", True),
        ("__array__ object", lambda: ArrayLike(np.linspace(0.0, 1.0, 5)), "engine tensor", False),
    ],
    ("01", "landing_device"): [
        ("str subclass equal to devices", _landing_liar, "plain string", True),
        ("object printing as a device", lambda: Shown("cpu:0"), "plain string", False),
    ],
    ("02", "partials"): [
        ("tuple hiding a 3rd part", lambda: ShortTuple((6.0, -3.0, 1.0)), "plain tuple", True),
        ("__array__ object part", lambda: (ArrayLike(6.0), -3.0), "of type ArrayLike", True),
        ("__float__ object part", lambda: (FloatLike(6.0), -3.0), "of type FloatLike", False),
        ("wrong-shape array part", lambda: (np.full(3, 6.0), -3.0), "shape", False),
    ],
    ("02", "sgd_step"): [
        ("never returns", lambda: runs_forever, FOREVER_FRAGMENT, True),
        ("never returns, swallows Exception", lambda: swallows_and_runs_forever, FOREVER_FRAGMENT, True),
    ],
    ("02", "fix_broadcast"): [
        ("Tensor subclass lying", lambda: sse_liar_tensor, "engine Tensor", True),
        ("never returns", lambda: runs_forever, FOREVER_FRAGMENT, True),
    ],
    ("03", "third_derivative"): [
        ("__array__ object", lambda: ArrayLike(0.5), "of type ArrayLike", True),
        ("Tensor subclass lying", lambda: liar_tensor(0.5, 9.0), "of type LiarTensor", True),
        ("liar float", lambda: LiarFloat(9.0), "of type LiarFloat", False),
        ("NaN", lambda: float("nan"), "NaN", False),
        ("string", lambda: "0.5", "of type str", False),
        ("broadcastable array", lambda: np.full((2, 2), 0.5), "shape", False),
    ],
    ("03", "watch_constant"): [
        ("__array__ object", lambda: ArrayLike(29.0), "of type ArrayLike", True),
        ("bool", lambda: True, "True/False", False),
        ("inf", lambda: np.float32("inf"), "NaN or inf", False),
    ],
    ("03", "jacobian"): [
        ("__array__ object", lambda: ArrayLike(JACOBIAN), "of type ArrayLike", True),
        ("ndarray subclass", lambda: JACOBIAN.view(SubArray), "of type SubArray", True),
        ("a row that broadcasts", lambda: JACOBIAN[:1], "shape", False),
        ("bool array", lambda: JACOBIAN > 0, "True/False", False),
    ],
    ("04", "decay_half"): [
        ("__array__ object", lambda: ArrayLike(2.125), "of type ArrayLike", True),
        ("list of one number", lambda: [2.125, 0.0], "shape", False),
    ],
    ("04", "scale_pairs"): [
        ("__array__ gradients", lambda: scale_array_like, "tensor (or a NumPy array)", True),
        ("pairs hiding a 3rd part", lambda: scale_long_pairs, "(gradient, variable) pair", False),
        ("never returns", lambda: runs_forever, FOREVER_FRAGMENT, True),
    ],
    ("04", "stable_rate"): [
        ("__array__ object", lambda: ArrayLike(2.0 / 6.0), "of type ArrayLike", False),
        ("liar float", lambda: LiarFloat(0.3), "of type LiarFloat", False),
        ("bool", lambda: True, "True/False", False),
        ("NaN", lambda: float("nan"), "positive", False),
        ("array of two rates", lambda: np.full(2, 2.0 / 6.0), "one number", False),
    ],
    ("04", "adam_slots"): [
        ("tuple hiding a 3rd part", lambda: ShortTuple((0.58, 0.019996, 1.0)), "plain tuple", True),
        ("numpy array, not a tuple", lambda: np.array([0.58, 0.019996]), "plain tuple", False),
    ],
    ("05", "clip_rows"): [
        ("engine.clipping.clip_by_norm", lambda: rows_via_module, "eg.clip_by_norm", True),
        ("saved reference", lambda: rows_via_saved, "eg.clip_by_norm", True),
        ("functools.partial", lambda: rows_via_partial, "eg.clip_by_norm", True),
        ("Tensor subclass lying", lambda: rows_liar_tensor, "engine tensor", True),
        ("never returns", lambda: runs_forever, FOREVER_FRAGMENT, True),
    ],
    ("05", "global_clip"): [
        ("tuple hiding a 3rd part", lambda: ShortTuple((*_global_clip(), 1.0)), "plain tuple", True),
        ("list hiding a 3rd part", lambda: ShortList([*_global_clip(), 1.0]), "plain tuple", True),
        ("plain 3 parts", lambda: (*_global_clip(), 1.0), "3 parts", False),
    ],
    ("05", "keeps_direction"): [
        ("str subclass printing right", lambda: {PoserStr("value", "global norm")}, "plain str", True),
        ("object printing right", lambda: [Shown("global norm")], "plain str", True),
        ("a plain string", lambda: "global norm", "collection of strings", False),
    ],
    ("06", "combine"): [
        ("__array__ object", lambda: combine_array_like, "of type ArrayLike", True),
        ("bool array", lambda: combine_bools, "True/False", False),
        ("never returns", lambda: runs_forever, FOREVER_FRAGMENT, True),
    ],
    ("06", "server_step"): [
        ("liar step count", lambda: server_liar_count, "not by the workers' averaged gradients", False),
        ("never returns", lambda: runs_forever, FOREVER_FRAGMENT, True),
    ],
    ("06", "sum_lr"): [
        ("__array__ object", lambda: ArrayLike(0.025), "of type ArrayLike", True),
        ("bool", lambda: False, "True/False", False),
    ],
    ("07", "flatten_size"): [
        ("int subclass equal to all", lambda: LiarInt(5), "plain int", True),
        ("bool", lambda: True, "plain int", False),
        ("NaN", lambda: float("nan"), "plain int", False),
        ("array of one", lambda: np.array([3136]), "plain int", False),
    ],
    ("07", "cross_entropy"): [
        ("engine.nn.losses path", lambda: xent_via_module, "fused loss", True),
        ("saved reference", lambda: xent_via_saved, "fused loss", True),
        ("sparse by module path", lambda: xent_sparse_via_module, "fused loss", True),
        ("never returns", lambda: runs_forever, FOREVER_FRAGMENT, True),
    ],
    ("07", "accuracy"): [
        ("Tensor subclass lying", lambda: accuracy_liar_tensor, "one plain number", True),
        ("__array__ object", lambda: accuracy_array_like, "one plain number", True),
        ("bool", lambda: accuracy_true, "one plain number", False),
    ],
    ("06b", "saved_bytes"): [
        ("int subclass equal to all", lambda: lambda batch, n_in, n_out: LiarInt(5), "plain int", False),
        ("bool", lambda: lambda batch, n_in, n_out: True, "plain int", False),
        ("NaN", lambda: lambda batch, n_in, n_out: float("nan"), "plain int", False),
        ("never returns", lambda: runs_forever, FOREVER_FRAGMENT, False),
    ],
    ("08", "activation_bytes"): [
        ("int subclass equal to all", lambda: LiarInt(5), "plain int", True),
        ("bool", lambda: True, "plain int", False),
        ("NaN", lambda: np.float64("nan"), "plain int", False),
    ],
    ("08", "pool_drop"): [
        ("str subclass equal to all", lambda: LiarStr("held_bytes"), "plain string", True),
        ("object printing right", lambda: Shown("used_bytes"), "plain string", False),
    ],
    ("08", "bit_identical"): [
        ("str subclass printing right", lambda: {PoserStr("d", "a"), "b", "c"}, "plain str", True),
        ("objects printing right", lambda: [Shown("a"), Shown("b"), Shown("c")], "plain str", True),
    ],
    ("09", "gradient_names"): [
        ("list hiding an extra name", lambda: names_hidden_extra, "plain list", True),
        ("never returns", lambda: runs_forever, FOREVER_FRAGMENT, True),
    ],
    ("09", "trace_count"): [
        ("__array__ object", lambda: ArrayLike(4), "of type ArrayLike", True),
        ("liar int", lambda: LiarInt(3), "of type LiarInt", False),
        ("bool", lambda: True, "True/False", False),
        ("a broadcastable array", lambda: np.full(3, 4), "shape", False),
    ],
    ("09", "leaky_relu"): [
        ("never returns (while tracing)", lambda: runs_forever, FOREVER_FRAGMENT, True),
    ],
    ("02", "mse_grads"): [
        ("__array__ objects", lambda: lambda x, y, w, b: (ArrayLike(w), ArrayLike(b)), "of type ArrayLike",
         True),
        ("never returns", lambda: runs_forever, FOREVER_FRAGMENT, True),
    ],
    ("04", "momentum_update"): [
        ("tuple subclass", lambda: lambda w, g, s, lr, mu: ShortTuple((w - lr * (mu * s + g), mu * s + g)),
         "return a tuple", True),
        ("never returns", lambda: runs_forever, FOREVER_FRAGMENT, True),
    ],
    ("04", "adam_update"): [
        ("never returns", lambda: runs_forever, FOREVER_FRAGMENT, True),
    ],
    ("03", "softsign"): [
        ("Primitive subclass, lying", lambda: softsign_liar_primitive, "return the eg.Primitive", True),
        ("never returns", lambda: runs_forever, FOREVER_FRAGMENT, True),
    ],
    ("05", "global_clip_by_hand"): [
        ("__array__ gradients", lambda: global_clip_array_like, "engine tensors", True),
        ("pair hiding a 3rd part", lambda: lambda g, c: ShortTuple((*clip_by_global_norm_by_hand(g, c), 1.0)),
         "tuple of 2", True),
        ("engine.clipping path", lambda: global_clip_via_module, "eg.clip_by_global_norm", True),
        ("never returns", lambda: runs_forever, FOREVER_FRAGMENT, True),
    ],
    ("06", "accumulator"): [
        ("__array__ means", lambda: AccumulatorArrayLike, "of type ArrayLike", True),
        ("list hiding an extra mean", lambda: AccumulatorShortList, "plain list", True),
        ("never returns", lambda: runs_forever, FOREVER_FRAGMENT, True),
    ],
    ("07", "train_step"): [
        ("liar float loss", lambda: train_step_liar_loss, "of type LiarFloat", True),
        ("engine.training path", lambda: train_step_via_module, "eg.training.train_step", True),
        ("never returns", lambda: runs_forever, FOREVER_FRAGMENT, True),
    ],
}

# ---- the making exercises of lessons 03 and 05-07 ----------------------------------------------------


class LiarPrimitive(eg.Primitive):
    """A Primitive subclass whose call answers for itself with a lying Tensor."""

    __slots__ = ()

    def __call__(self, x):
        return liar_tensor(np.asarray(x.numpy()) / (1 + np.abs(x.numpy())), 0.0)


def softsign_liar_primitive(name):
    return LiarPrimitive(name, lambda xp, x: x, vjps=[lambda g, y, x: g], rule="∂x = g", elementwise=True)


def global_clip_array_like(grads, clip_norm):
    clipped, norm = clip_by_global_norm_by_hand(grads, clip_norm)
    return [None if g is None else ArrayLike(g.numpy()) for g in clipped], norm


def global_clip_via_module(grads, clip_norm):
    clipped, norm = engine.clipping.clip_by_global_norm(grads, clip_norm)
    return list(clipped), norm


class AccumulatorArrayLike(GradientAccumulator):
    def mean(self):
        return [None if m is None else ArrayLike(m) for m in super().mean()]


class AccumulatorShortList(GradientAccumulator):
    def mean(self):
        return ShortList([*super().mean(), None])


train_step_right = checks.EXERCISES["07", "train_step"].reference


def train_step_liar_loss(model, optimizer, x, y):
    return LiarFloat(train_step_right(model, optimizer, x, y).numpy())


def train_step_via_module(model, optimizer, x, y):
    return engine.training.train_step(model, optimizer, x, y)[0]

# ---- lesson 10: the learner's whole engine, one part replaced ----------------------------------------

_LOOP = "end = time.monotonic() + 60\nwhile time.monotonic() < end:\n    pass\n"


def _indented(text: str, spaces: int) -> str:
    return "".join(" " * spaces + line + "\n" for line in text.splitlines())


def forever_10(name: str) -> Any:
    """The learner's engine whose part ``name`` never returns (its class's constructor or its function)."""
    answer = ANSWER_10[name]
    if name in ("value", "tape"):
        loop = (f"class {answer}:\n    active = []\n\n    def __init__(self, *args, **kwargs):\n"
                + _indented(_LOOP, 8))
    elif name == "primitive":  # the later cells call it while they are run: the op it makes loops
        loop = "def primitive(*args, **kwargs):\n    def op(*args, **kwargs):\n" + _indented(_LOOP, 8) + (
            "    return op\n")
    else:
        loop = f"def {answer}(*args, **kwargs):\n" + _indented(_LOOP, 4)
    return engine_10({name: "import time\n" + reference_10(name) + "\n\n" + loop})[answer]


def arithmetic_vjp_by_engine() -> Any:
    """multiply's VJP asks the engine for the gradient (Tensors) instead of computing it."""
    wrong = reference_10("arithmetic").replace(
        "return g * b, g * a", "return eg.constant(g.value * b.value), eg.constant(g.value * a.value)")
    return engine_10({"arithmetic": "import engine as eg\n" + wrong})["add"]


def arithmetic_vjp_array_like() -> Any:
    wrong = reference_10("arithmetic").replace("return g * b, g * a",
                                               "return ArrayLike(g * b), ArrayLike(g * a)")
    ns = {"ArrayLike": ArrayLike}
    return engine_10({"arithmetic": wrong}, ns)["add"]


ADVERSARIAL.update({("10", name): [("never returns", lambda name=name: forever_10(name), FOREVER_FRAGMENT,
                                     True)] for name in ANSWER_10})
ADVERSARIAL[("07", "xent_backward")] = [
    ("the engine's own gradient", lambda: xent_backward_by_engine, "asks the engine", True),
    ("__array__ object", lambda: lambda z, y: ArrayLike(z * 0), "NumPy array", True),
    ("never returns", lambda: runs_forever, FOREVER_FRAGMENT, True),
]
ADVERSARIAL[("07", "max_pool_vjp")] = [
    ("__array__ object", lambda: lambda g, x, k: ArrayLike(x * 0), "NumPy array", True),
    ("never returns", lambda: runs_forever, FOREVER_FRAGMENT, True),
]


def xent_backward_by_engine(logits, labels):  # asks the engine instead of writing the backward
    z = eg.constant(logits)
    with eg.GradientTape() as tape:
        tape.watch(z)
        loss = eg.mean(eg.nn.softmax_cross_entropy(eg.constant(labels), z))
    return tape.gradient(loss, z)


ADVERSARIAL[("10", "arithmetic")] += [
    ("the engine's own gradient", arithmetic_vjp_by_engine, "not a Value", True),
    ("__array__ objects", arithmetic_vjp_array_like, "not a Value", True),
]


ROWS = [(key, label, build, fragment)
        for key, tries in ADVERSARIAL.items() for label, build, fragment, _ in tries]
ROW_IDS = [f"{key[0]}-{key[1]}-{label}" for key, label, _, _ in ROWS]
LIMIT_S = 1.0  # the time limit for answers that never return (the lessons' is TIME_LIMIT_S)


def _evaluate(key: tuple[str, str], answer: Any, short: bool = False) -> tuple[bool, str]:
    """The check's verdict; with the short time limit only for answers that never return (a slow
    machine must not turn another verdict into "took too long")."""
    return checks.evaluate(*key, answer, time_limit=LIMIT_S) if short else checks.evaluate(*key, answer)


# ---- tests ---------------------------------------------------------------------------------------


def test_every_exercise_is_tried():
    assert set(checks.EXERCISES) <= set(ADVERSARIAL), sorted(set(checks.EXERCISES) - set(ADVERSARIAL))


@pytest.mark.parametrize("key", sorted(ADVERSARIAL), ids=lambda k: f"{k[0]}-{k[1]}")
def test_the_right_answer_is_still_right(key):
    ok, message = _evaluate(key, _course_answer(key))
    assert ok, message


@pytest.mark.parametrize("key, label, build, fragment", ROWS, ids=ROW_IDS)
def test_an_answer_that_only_looks_right_is_refused(key, label, build, fragment):
    start = time.perf_counter()
    ok, message = _evaluate(key, build(), short=fragment == FOREVER_FRAGMENT)
    assert not ok, f"{label}: accepted ({message})"
    assert message.startswith("Not yet: ") and " Hint: " in message, message
    assert fragment in message, f"{fragment!r} not in {message!r}"
    if fragment == FOREVER_FRAGMENT:
        assert time.perf_counter() - start < LIMIT_S + 10
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0), "the time limit left a timer running"
    assert sys.getprofile() is None, "the built-in watch left its profile hook installed"


def test_the_forbidden_built_ins_still_work_afterwards():
    t = eg.constant([[3.0, 4.0]])
    _evaluate(("05", "clip_rows"), rows_via_saved)
    assert eg.clip_by_norm is _saved_clip_by_norm and engine.clipping.clip_by_norm is _saved_clip_by_norm
    assert np.allclose(eg.clip_by_norm(t, 1.0).numpy(), [[0.6, 0.8]])


@pytest.mark.parametrize("name", ["_compare_numbers", "_compare", "close_to", "evaluate"])
def test_patching_a_helper_of_the_checks_changes_nothing(name, capsys):
    original = getattr(checks, name)
    setattr(checks, name, lambda *args, **kwargs: None)
    try:
        checks.checker("03")("watch_constant", 1.0)  # a wrong answer, checked the way a lesson does
        checks.check("02", "partials", (0.0, 0.0))
    finally:
        patched = getattr(checks, name)
        setattr(checks, name, original)
    assert patched is original, f"_checks.{name} was not put back"
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and all(line.startswith("Not yet: ") for line in lines), lines


def _float32_zeros():
    return eg.constant(np.zeros(5, np.float32))


# (module of the package, name, replacement, exercise, a wrong answer the replacement would let through)
HELPER_PATCHES = [
    ("compare", "_compare_numbers", lambda *args: None, ("03", "watch_constant"), lambda: 1.0),
    ("compare", "_compare", lambda *args: None, ("02", "partials"), lambda: (0.0, 0.0)),
    ("lessons_01_03", "_compare_numbers", lambda *args: None, ("01", "float32_product"), _float32_zeros),
    ("plain", "_plain_array", lambda value: np.linspace(0.0, 1.0, 5) * np.arange(1.0, 6.0),
     ("01", "float32_product"), _float32_zeros),
    ("lessons_04_06", "_calls_to", lambda *names: contextlib.nullcontext([]), ("05", "clip_rows"),
     lambda: rows_via_module),
    ("forbidden", "_BUILT_INS", {"clip_by_norm": (lambda: None).__code__}, ("05", "clip_rows"),
     lambda: rows_via_module),
]


@pytest.mark.parametrize("module, name, replacement, key, answer", HELPER_PATCHES,
                         ids=[f"{m}.{n}" for m, n, *_ in HELPER_PATCHES])
def test_patching_a_helper_in_its_own_module_changes_nothing(module, name, replacement, key, answer, capsys):
    """The seal covers the helpers where they live (``_checks.compare._compare_numbers = ...``), not
    only the names the package re-exports."""
    check = checks.checker(key[0])  # taken before the patch, as a lesson does in its first cell
    home = importlib.import_module(f"{checks.__name__}.{module}")
    original = getattr(home, name)
    setattr(home, name, replacement)
    try:
        check(key[1], answer())
    finally:
        patched = getattr(home, name)
        setattr(home, name, original)
    assert patched is original, f"_checks.{module}.{name} was not put back"
    out = capsys.readouterr().out
    assert out.startswith("Not yet: "), out


def test_every_name_of_every_module_of_the_checks_is_put_back(capsys):
    check = checks.checker("03")
    modules = [checks] + [importlib.import_module(f"{checks.__name__}.{info.name}")
                          for info in pkgutil.iter_modules(checks.__path__)]
    assert len(modules) > 5
    saved = {module: {k: v for k, v in vars(module).items() if not k.startswith("__")} for module in modules}
    try:
        for module, names in saved.items():
            for name in names:
                setattr(module, name, lambda *args, **kwargs: None)
        check("watch_constant", 1.0)
        left = [f"{module.__name__}.{name}" for module, names in saved.items()
                for name, value in names.items() if getattr(module, name) is not value]
    finally:
        for module, names in saved.items():
            vars(module).update(names)
    assert left == [], f"not put back: {left}"
    out = capsys.readouterr().out
    assert out.startswith("Not yet: "), out


def test_replacing_a_registered_exercise_changes_nothing():
    key = ("05", "global_clip")
    original = checks.EXERCISES[key]
    checks.EXERCISES[key] = checks.Exercise("05", "global_clip", lambda answer: None, "a hint")
    try:
        ok, message = checks.evaluate(*key, (1.0, 1.0))
    finally:
        checks.EXERCISES[key] = original
    assert not ok and message.startswith("Not yet: "), message


def test_rebinding_the_engine_names_or_the_profiler_changes_nothing(monkeypatch):
    monkeypatch.setattr(eg, "Tensor", LiarTensor)  # "eg.Tensor = LiarTensor" in a cell
    monkeypatch.setattr(sys, "setprofile", lambda function: None)  # no more watching
    ok, message = _evaluate(("01", "float32_product"), _float32_product_liar())
    assert not ok and "engine tensor" in message, message
    ok, message = _evaluate(("05", "clip_rows"), rows_via_module)
    assert not ok and "eg.clip_by_norm" in message, message


def test_the_time_limit_works_outside_the_main_thread():
    result: list[tuple[bool, str]] = []
    def check_in_a_thread() -> None:
        result.append(_evaluate(("02", "sgd_step"), runs_forever, short=True))

    worker = threading.Thread(target=check_in_a_thread)
    start = time.perf_counter()
    worker.start()
    worker.join(LIMIT_S + 20)
    assert not worker.is_alive(), "the watchdog did not stop the answer"
    ok, message = result[0]
    assert not ok and "took more than 1 seconds" in message and "Interrupt" in message, message
    assert time.perf_counter() - start < LIMIT_S + 10
    # and a check that watches for a built-in (a profile hook) still runs afterwards: cancelling a
    # pending stop with PyThreadState_SetAsyncExc(id, NULL) once left CPython 3.11 spinning there
    after: list[tuple[bool, str]] = []
    follower = threading.Thread(target=lambda: after.append(_evaluate(("05", "clip_rows"), rows_right)),
                                daemon=True)
    follower.start()
    follower.join(20)
    assert after and after[0][0], after


def test_the_time_limit_leaves_other_alarms_alone():
    fired: list[int] = []
    previous = signal.signal(signal.SIGALRM, lambda signum, frame: fired.append(signum))
    try:
        ok, _ = _evaluate(("03", "watch_constant"), 29.0, short=True)
        assert ok
        assert fired == []
        signal.raise_signal(signal.SIGALRM)
        assert fired == [signal.SIGALRM], "the lesson's own SIGALRM handler was not put back"
    finally:
        signal.signal(signal.SIGALRM, previous)


# ---- inside a lesson's own kernel (SIGALRM in the kernel's main thread; patching from a cell) ------

FOREVER = (
    "import time\n"
    "def sgd_step(grads_and_vars, learning_rate):\n"
    "    end = time.monotonic() + 60\n"
    "    while time.monotonic() < end:\n"
    "        pass\n"
)


def test_in_a_lesson_an_endless_answer_is_stopped(lesson):
    run = lesson("02_gradients_of_functions.ipynb")
    start = time.perf_counter()
    out = run.run(FOREVER + 'checker("02", time_limit=1)("sgd_step", sgd_step)')
    assert out.startswith("Not yet: checking your answer took more than 1 seconds"), out
    assert time.perf_counter() - start < 30


def test_in_a_lesson_patching_the_checks_from_a_cell_changes_nothing(lesson):
    run = lesson("02_gradients_of_functions.ipynb")
    out = run.run(
        "import _checks\n"
        "_checks._compare_numbers = lambda *args: None\n"
        "_checks._compare = lambda *args: None\n"
        "_checks.compare._compare = lambda *args: None\n"
        'check("partials", (0.0, 0.0))\n'
        "print(_checks._compare_numbers.__name__, _checks.compare._compare.__name__)"
    )
    assert out.startswith("Not yet: "), out
    assert out.splitlines()[-1] == "_compare_numbers _compare", out


def test_lesson_01_states_the_time_limit():
    text = (Path(__file__).resolve().parent.parent / "lessons" / "01_tensors_and_devices.ipynb").read_text()
    assert f"more than {checks.TIME_LIMIT_S:g} seconds" in text
