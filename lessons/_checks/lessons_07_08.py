"""The self-checks of lessons 07 (training a CNN) and 08 (on the GPU)."""

from __future__ import annotations

from typing import Any

import numpy as np

import engine as eg

from .answers import computed, hashed, hashed_choice
from .forbidden import _calls_to, _refusal
from .plain import _is_tensor, _plain_count, _plain_numbers
from .registry import register

# ===================================================================================================
# Lesson 07: training a CNN
# ===================================================================================================

def _conv_blocks(side: int, filters: tuple[int, ...]) -> tuple[int, ...]:
    """The shape per image after the Deep MNIST network's blocks, one per entry of ``filters`` (a 5×5
    convolution with that many filters, then 2×2 max pooling with stride 2, both with SAME padding),
    from ``side``×``side`` images of one channel: the engine's own conv2d and max_pool2d say it."""
    x = eg.zeros((1, side, side, 1))
    for count in filters:
        x = eg.nn.conv2d(x, eg.zeros((5, 5, x.shape[-1], count)), padding="SAME")
        x = eg.nn.max_pool2d(x, 2, 2, padding="SAME")
    return tuple(x.shape[1:])


def _count(shape: tuple[int, ...]) -> int:
    return int(np.prod(shape))


def _flatten_size_answer() -> int:
    """Exercise 1 of lesson 07: the numbers per 28×28 image at the flatten (two blocks, 32 then 64)."""
    return _count(_conv_blocks(28, (32, 64)))


def _judge_flatten_size(answer: Any) -> str | None:
    answer = _plain_count(answer)
    if answer is None:
        return "the answer should be a whole number (a plain int): how many numbers per image."
    height, width, channels = _conv_blocks(28, (32, 64))
    if answer == height * width * channels:
        return None
    if answer == _count(_conv_blocks(8, (32, 64))):
        return "that is the flatten size for the 8×8 digits of this lesson; redo it for 28×28 images."
    if answer == height * width * _conv_blocks(28, (32,))[-1]:
        return "the channels are those of the first convolution; after the second block there are more."
    if answer == _count(_conv_blocks(28, (32,))[:2]) * channels:
        return "that size has only been halved once; the network pools twice."
    if answer in (height * width, 28 * 28 * channels, 28 * 28):
        return "count height, width and channels after both pooling steps."
    return "that is not the number of values per image after the second pooling."


def _judge_cross_entropy(answer: Any) -> str | None:
    cases = [
        (np.eye(4, dtype=np.float32)[[2, 0, 3]],
         np.array([[0.5, -1.0, 2.0, 0.0], [1.5, 0.2, -0.3, 0.7], [-2.0, 0.0, 1.0, 3.0]], np.float32)),
        (np.eye(3, dtype=np.float32)[[1, 0]],
         np.array([[250.0, 0.0, -80.0], [-300.0, 400.0, 10.0]], np.float32)),
    ]
    rng = np.random.default_rng(71)  # and random float64 batches of other shapes
    for n, classes in ((5, 7), (1, 2)):
        cases.append((np.eye(classes)[rng.integers(0, classes, n)], 3.0 * rng.normal(size=(n, classes))))
    for k, (labels, logits) in enumerate(cases):
        y, z = eg.constant(labels), eg.constant(logits)
        with _calls_to("softmax_cross_entropy", "sparse_softmax_cross_entropy", "fused_xent") as used_fused:
            try:
                with eg.GradientTape() as tape:
                    tape.watch(z)
                    out = answer(y, z)
                    total = eg.sum(out) if _is_tensor(out) else None
                grad = tape.gradient(total, z) if total is not None else None
            except Exception as exc:
                failed = f"calling cross_entropy(labels, logits) raised {type(exc).__name__}: {exc}."
            else:
                failed = None
        if used_fused:
            return _refusal(used_fused, "the exercise asks you to build the loss yourself.")
        if failed is not None:
            return failed
        if not _is_tensor(out):
            return "return an engine Tensor built with engine ops, so that it can be differentiated."
        if out.shape != (len(labels),):
            return (f"it returns shape {out.shape}; the exercise asks for one loss per example, "
                    f"shape (batch,), not their sum or mean.")
        if out.dtype != logits.dtype:
            return f"for {logits.dtype} logits it returns {out.dtype}: keep the logits' dtype."
        z64, y64 = logits.astype(np.float64), labels.astype(np.float64)
        top = z64.max(axis=1, keepdims=True)
        log_p = z64 - (top + np.log(np.exp(z64 - top).sum(axis=1, keepdims=True)))
        want = -(y64 * log_p).sum(axis=1)
        got = out.numpy().astype(np.float64)
        if not np.all(np.isfinite(got)) or grad is None or not np.all(np.isfinite(grad.numpy())):
            if k == 0:
                return "it gives NaN or inf even for small logits."
            return ("it is not finite for large logits (or its gradient is not): it probably takes the "
                    "log of a softmax.")
        if np.allclose(-got, want, rtol=1e-4, atol=1e-4):
            return "the losses have the wrong sign: a cross-entropy is never negative."
        if not np.allclose(got, want, rtol=1e-4, atol=1e-4):
            return "the values are not the cross-entropy of these logits and labels."
        want_grad = np.exp(log_p) - y64
        if not np.allclose(grad.numpy(), want_grad, rtol=1e-3, atol=1e-4):
            return "the values are right but the gradient is not: is part of it cut off (stop_gradient)?"
    return None


def _judge_accuracy(answer: Any) -> str | None:
    rng = np.random.default_rng(70)
    for n, classes, hits in ((8, 5, 5), (12, 10, 3)):
        logits = rng.normal(size=(n, classes)).astype(np.float32)
        predicted = logits.argmax(axis=1)
        labels = predicted.copy()
        misses = rng.choice(n, n - hits, replace=False)
        labels[misses] = (predicted[misses] + 1 + rng.integers(0, classes - 1, len(misses))) % classes
        labels = labels.astype(np.int32)
        try:
            got = answer(eg.constant(logits), labels)
        except Exception as exc:
            return f"calling my_accuracy(logits, labels) raised {type(exc).__name__}: {exc}."
        array = _plain_numbers(got, "")
        if isinstance(array, str) or array.size != 1:
            return ("it should return one plain number (a float, a NumPy number or a tensor), the "
                    "fraction of right predictions.")
        value = float(array.reshape(()))
        want = hits / n
        if np.isclose(value, 100 * want):
            return "that looks like a percentage; return a fraction between 0 and 1."
        if np.isclose(value, 1 - want):
            return "it counts the wrong predictions instead of the right ones."
        if np.isclose(value, hits):
            return "it counts the right predictions; divide by the number of examples."
        if not np.isclose(value, want, rtol=1e-6, atol=1e-6):
            return ("the fraction is not right: compare the arg-max over the class axis (axis=1) with "
                    "the labels.")
    return None


def _cross_entropy(labels: Any, logits: Any) -> Any:
    """The course's answer to lesson 07's cross_entropy: one loss per example, with log_softmax."""
    return -eg.sum(labels * eg.log_softmax(logits, axis=-1), axis=-1)


def _accuracy(logits: Any, labels: Any) -> float:
    """The course's answer to lesson 07's accuracy."""
    return float(np.mean(np.argmax(logits.numpy(), axis=1) == labels))


_XENT_WRONG = (
    (lambda labels, logits: -eg.sum(labels * eg.log(eg.softmax(logits)), axis=-1), "log of a softmax"),
    (lambda labels, logits: eg.mean(_cross_entropy(labels, logits)), "one loss per example"),
    (lambda labels, logits: eg.sum(labels * eg.log_softmax(logits, axis=-1), axis=-1), "sign"),
    (lambda labels, logits: -(labels.numpy() * np.log(np.exp(logits.numpy()))).sum(axis=1), "engine Tensor"),
)
_ACCURACY_WRONG = (
    (lambda logits, labels: 100 * _accuracy(logits, labels), "percentage"),
    (lambda logits, labels: 1 - _accuracy(logits, labels), "wrong predictions"),
    (lambda logits, labels: int(np.sum(np.argmax(logits.numpy(), axis=1) == labels)), "divide"),
    (lambda logits, labels: float(np.mean(np.argmin(logits.numpy(), axis=1) == labels)), "not right"),
)

register("07", "flatten_size",
         idea=("Follow the height, the width and the channels through every layer up to the flatten."),
         judge=_judge_flatten_size, reference=computed(_flatten_size_answer),
         hint="The convolutions keep height and width (SAME padding); each 2×2 pooling with stride 2 "
              "halves them, rounding up. Multiply the final height, width and number of channels.")
register("07", "cross_entropy",
         idea=("The cross-entropy is minus the log-probability of the right class; compute log- "
               "probabilities in a form that never takes the log of a rounded-off zero."),
         judge=_judge_cross_entropy, function="cross_entropy",
         reference=_cross_entropy, wrong=_XENT_WRONG,
         hint="log p = eg.log_softmax(logits, axis=-1) never takes the log of a rounded-off zero. The loss "
              "per example is minus the sum over the class axis of labels * log p.",
         praise="That is the stable formula TensorFlow's softmax_cross_entropy_with_logits uses.")
register("07", "accuracy",
         idea=("Accuracy is the fraction of examples whose most likely class is the label."),
         judge=_judge_accuracy, function="my_accuracy", reference=_accuracy,
         wrong=_ACCURACY_WRONG,
         hint="np.argmax(logits.numpy(), axis=1) gives the predicted class of each example; compare it "
              "with the labels and take the mean of the comparison.")


# ===================================================================================================
# Lesson 08: on the GPU
# ===================================================================================================

def _first_conv_output(batch: int = 50, filters: int = 32, dtype: str = "float32") -> Any:
    """Lesson 08's first Conv2D layer (``filters`` 5×5 filters, SAME padding) on a batch of the
    lesson's 8×8 one-channel digits: the engine's conv2d makes the tensor (of zeros) the exercise
    asks about."""
    images = eg.zeros((batch, 8, 8, 1), dtype=dtype)
    return eg.nn.conv2d(images, eg.zeros((5, 5, 1, filters), dtype=dtype), padding="SAME")


def _bytes(tensor: Any) -> int:
    return int(tensor.numpy().nbytes)


def _activation_bytes_answer() -> int:
    """Exercise 1 of lesson 08: the bytes of the first convolution's float32 output for 50 images."""
    return _bytes(_first_conv_output())


def _judge_activation_bytes(answer: Any) -> str | None:
    answer = _plain_count(answer)
    if answer is None:
        return "the answer should be a whole number of bytes (a plain int)."
    output = _first_conv_output()
    if answer == _bytes(output):
        return None
    pooled = eg.nn.max_pool2d(output, 2, 2, padding="SAME")
    if answer == int(np.prod(output.shape)) or answer == _bytes(pooled):  # the same number, here
        return ("that number is both the count of the values (not the bytes they take) and the bytes of the "
                "tensor after the pooling: the tensor asked for is the first convolution's output, and its "
                "size in bytes.")
    if answer == _bytes(_first_conv_output(dtype="float64")):
        return "that is the size in float64; the activations are float32."
    if answer == _bytes(_first_conv_output(batch=1)):
        return "that is one image; the batch holds 50."
    if answer == _bytes(_first_conv_output(filters=1)):
        return "check the shape of the first convolution's output: channels, and no pooling yet."
    return "that is not the size of that tensor in bytes."


def _judge_pool_drop(answer: Any) -> str | None:
    if type(answer) is not str:
        return "the answer should be a plain string: the name of one of the two numbers."
    text = answer.strip().strip("'\"").lower()
    name = text if text.endswith("_bytes") else text + "_bytes"  # a name given without its suffix
    options = _POOL_DROP.among
    if name in options:
        return None if name == _POOL_DROP.value() else \
            "that number stays where it was: think about what a pool does with a freed block."
    if text in ("both", "neither", "none"):
        return "exactly one of the two numbers falls."
    return "answer with the name of one of the two numbers that eg.memory_info reports."


#: Which number falls needs a GPU to show, and a learner's machine may lack one: the answer, one of the
#: two names eg.memory_info reports, is kept as the SHA-256 of its canonical form.
_POOL_DROP = hashed_choice("70eefecfbf05d1b3982e0945169bf8a9dde4a075f841428a01cad245bfd9a8c2",
                           among=("held_bytes", "used_bytes"))


register("08", "activation_bytes",
         idea=("The size of a tensor in bytes is the number of its entries times the bytes each entry "
               "takes."),
         judge=_judge_activation_bytes, reference=computed(_activation_bytes_answer),
         hint="Write down the shape of the first Conv2D's output for a batch of 50 (SAME padding keeps "
              "8×8; one channel per filter), multiply the sizes, then multiply by the bytes per float32.")
register("08", "pool_drop",
         idea=("A memory pool keeps freed blocks for later instead of giving them back."),
         judge=_judge_pool_drop, reference=_POOL_DROP,
         hint="A memory pool keeps freed blocks for the next allocation instead of returning them to "
              "the driver. Which number counts memory in use by tensors, and which the pool's total?")
register("08", "bit_identical",
         idea=("Numbers drawn or copied on the host stay identical; results of floating-point arithmetic "
               "done in another order may not."),
         # Which items agree bit for bit needs a GPU to compute, and a learner's machine may lack one:
         # the answer, a set of the letters below, is kept as the SHA-256 of its canonical form.
         expected=hashed("8b7bff6e4f868e026388803fa14914c21d7e63da6197cdec8e88d75e7b3218bb",
                         among=("a", "b", "c", "d", "e")),
         hint="For each item ask: does it come from the host's random generator (NumPy), copied to the "
              "device or turned into a mask by exact integer arithmetic, or is it the result of the "
              "device's floating-point arithmetic, where the order in which numbers are added differs "
              "between NumPy and CUDA libraries?",
         praise="Random draws on the host are the reason a seed means the same thing on every device.")
