"""A small, readable training loop for classifiers: ``eg.training.fit``, `train_step`, `evaluate`.

Nothing here is hidden machinery: `train_step` is the loop body a lesson writes by hand (forward
under a tape, ``compute_gradients``, an optional transform such as clipping, ``apply_gradients``),
and `fit` repeats it over shuffled mini-batches, with a progress bar (``tqdm.auto``: a widget in
Jupyter, text elsewhere) and, in a notebook, a live plot of the loss (engine/live_plot.py).

>>> import engine as eg
>>> x_train, y_train, x_test, y_test = eg.data.load_digits(flatten=True)
>>> model = eg.layers.Sequential([eg.layers.Dense(10, seed=0)])
>>> history = eg.training.fit(model, x_train, y_train, eg.optimizers.Adam(0.01), epochs=2, seed=0,
...                           progress=False)
>>> sorted(history), len(history["loss"])
(['accuracy', 'epoch_seconds', 'loss'], 2)
>>> evaluate(model, x_test, y_test)["accuracy"] > 0.8
True
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from . import backend, checks
from . import ops as F
from .data import batches
from .interop import to_numpy
from .live_plot import LossPlot, in_notebook
from .nn import sparse_softmax_cross_entropy
from .tape import GradientTape
from .tensor import Tensor

__all__ = ["train_step", "evaluate", "accuracy", "fit"]

Pairs = list[tuple[Tensor | None, Any]]


def accuracy(logits: Any, labels: Any) -> float:
    """The fraction of rows whose largest logit is at the integer label (NaN for no rows).

    >>> accuracy([[0.1, 0.9], [0.8, 0.2]], [1, 1])
    0.5
    """
    hits = to_numpy(logits).argmax(axis=-1) == to_numpy(labels)
    return float(np.mean(hits)) if hits.size else float("nan")


def _hits(logits: Tensor, labels: Any) -> Tensor:
    """How many rows have their largest logit at the label: a float64 scalar on the logits' device."""
    dev = logits._device
    if isinstance(labels, Tensor):
        labels = labels.to(dev) if labels._device is not dev else labels
    else:  # host labels (a NumPy batch) go to the device once; nothing comes back
        labels = Tensor._make(backend.transfer(np.asarray(labels), dev), dev)
    predicted = F.cast(F.argmax(logits, axis=-1), labels.dtype)
    return F.sum(F.cast(F.equal(predicted, labels), "float64"))


def _model_device(model: Callable) -> backend.Device:
    """Where the model's variables live (the current device while it has none yet)."""
    for v in getattr(model, "variables", None) or ():
        return v._device
    return backend.current_device()


def _check_labels(y: Any, op: str) -> int | None:
    """Integer labels >= 0, checked once where the data enters; returns the largest (None if empty)."""
    ids = y.numpy() if isinstance(y, Tensor) else backend.to_host(y) if backend.is_device_array(y) \
        else np.asarray(y)
    if ids.dtype.kind not in "iu":
        raise TypeError(f"{op}: labels must be integer class ids, got dtype {ids.dtype}.")
    if not ids.size:
        return None
    if ids.min() < 0:
        raise ValueError(f"{op}: label {ids.min()} is negative; labels are class ids 0 .. classes - 1.")
    return int(ids.max())


def train_step(model: Callable, optimizer: Any, x: Any, y: Any,
               loss_fn: Callable = sparse_softmax_cross_entropy,
               transform: Callable[[Pairs], Pairs] | None = None) -> tuple[Tensor, Tensor, Pairs]:
    """One update on the batch ``(x, y)``; returns ``(mean loss, logits, grads_and_vars)``.

    The body, spelled out::

        with eg.GradientTape() as tape:
            logits = model(x, training=True)
            loss = eg.mean(loss_fn(y, logits))
        grads_and_vars = optimizer.compute_gradients(loss, tape=tape)
        grads_and_vars = transform(grads_and_vars)        # e.g. clipping; optional
        optimizer.apply_gradients(grads_and_vars)
    """
    with GradientTape() as tape:
        logits = model(x, training=True)
        loss = F.mean(loss_fn(y, logits))
    grads_and_vars = optimizer.compute_gradients(loss, tape=tape)
    if transform is not None:
        grads_and_vars = transform(grads_and_vars)
    optimizer.apply_gradients(grads_and_vars)
    return loss, logits, grads_and_vars


def evaluate(model: Callable, x: Any, y: Any, batch_size: int = 512,
             loss_fn: Callable = sparse_softmax_cross_entropy) -> dict[str, float]:
    """Mean loss and accuracy over ``(x, y)`` with ``training=False`` (dropout off).

    Host batches go to the model's device; the sums stay there, and one transfer brings them back.
    No examples is a ``ValueError`` (a mean over nothing has no value; 0.0 would read as a perfect loss).
    """
    batch_size = checks.count(batch_size, "batch_size", "evaluate", minimum=1)
    _check_examples(x, y, "evaluate", "x")
    totals, count = None, 0
    for xb, yb in batches(x, y, batch_size, shuffle=False):
        with backend.device(_model_device(model)):  # host batches go where the model is
            logits = model(xb, training=False)
        both = F.stack([F.cast(F.sum(loss_fn(yb, logits)), "float64"), _hits(logits, yb)])
        totals = both if totals is None else totals + both
        count += len(yb)
    total_loss, correct = totals.numpy().tolist()
    return {"loss": total_loss / count, "accuracy": correct / count}


def _check_examples(x: Any, y: Any, op: str, what: str) -> None:
    """Refuse zero examples: a mean loss or an accuracy over nothing is no number (0.0 would look like
    a result), and training on nothing is a mistake."""
    if len(x) == 0:
        raise ValueError(f"{op}: {what} has no examples (length 0): there is nothing to "
                         f"{'train on' if op == 'fit' and what == 'x' else 'score'}, and a loss or accuracy "
                         "over no examples has no value. Check how the data was loaded or split.")


def _progress_bar(total: int, enabled: bool) -> Any:
    if not enabled:
        return None
    try:
        from tqdm.auto import tqdm  # noqa: PLC0415  (heavy: only when a bar is wanted)
    except ImportError:
        warnings.warn("fit: tqdm is not installed, so no progress bar; `make lab` in the repository folder "
                      "installs it with the other lesson packages.", stacklevel=3)
        return None
    return tqdm(total=total, unit="batch", leave=True)


def fit(model: Callable, x: Any, y: Any, optimizer: Any, epochs: int = 1, batch_size: int = 64,
        loss_fn: Callable = sparse_softmax_cross_entropy, validation_data: tuple[Any, Any] | None = None,
        seed: int | None = None, transform: Callable[[Pairs], Pairs] | None = None,
        on_step: Callable[..., Any] | None = None, progress: bool = True,
        plot: bool | str = "auto", step: Callable[[Any, Any], tuple] | None = None,
        on_epoch: Callable[[int, dict[str, float]], Any] | None = None) -> dict[str, list[float]]:
    """Train for ``epochs`` passes over shuffled mini-batches; returns the per-epoch history.

    >>> import engine as eg
    >>> x, y, _, _ = eg.data.load_digits(flatten=True)
    >>> model = eg.layers.Sequential([eg.layers.Dense(10, seed=0)])
    >>> history = eg.training.fit(model, x, y, eg.optimizers.Adam(0.01), epochs=3, seed=0, progress=False)
    >>> history["loss"][-1] < history["loss"][0]
    True

    - ``seed``: the shuffling of epoch ``e`` uses ``seed + e`` (None: eg.random's global sequence).
    - ``transform(grads_and_vars)``: applied between compute and apply (e.g. gradient clipping).
    - ``step(x_batch, y_batch)``: your own training step instead of `train_step` (then ``loss_fn``
      and ``transform`` are yours too); it returns ``(loss, logits, grads_and_vars)``, optionally
      followed by a dict of more scalars (a gradient norm...) that ``on_step`` receives.
    - ``on_step(step, loss=..., grads_and_vars=..., **scalars)``: called after every update, e.g. a
      ``gv.Recorder().record``. ``on_epoch(step, scores)``: after every epoch, with that epoch's
      ``loss``, ``accuracy`` (and ``val_loss``, ``val_accuracy``).
    - ``progress``: a tqdm progress bar with the running loss. ``plot``: a live loss plot
      (`LossPlot`); ``"auto"``: only inside a Jupyter kernel.
    - History keys: ``loss`` and ``accuracy`` (training, averaged over the epoch's batches as they
      were seen), ``epoch_seconds``, and with ``validation_data`` also ``val_loss``, ``val_accuracy``.
    - No examples (in ``x`` or in ``validation_data``) is a ``ValueError``, never a loss of 0.0.

    Host (NumPy) batches go to the device of the model's variables. On a GPU, each step brings back
    one small vector (its loss and hit count) and nothing else; the labels are checked once, here,
    rather than in every loss call.
    """
    epochs = checks.count(epochs, "epochs", "fit")
    batch_size = checks.count(batch_size, "batch_size", "fit", minimum=1)
    checks.seed(seed, "fit")
    _check_examples(x, y, "fit", "x")
    if validation_data is not None:
        if not isinstance(validation_data, list | tuple) or len(validation_data) != 2:
            raise TypeError(f"fit: validation_data must be a pair (x_val, y_val), got "
                            f"{type(validation_data).__name__}.")
        _check_examples(*validation_data, "fit", "validation_data")
    largest_label = _check_labels(y, "fit")
    n_batches = -(-len(x) // batch_size)
    history: dict[str, list[float]] = {"loss": [], "accuracy": [], "epoch_seconds": []}
    if validation_data is not None:
        history.update(val_loss=[], val_accuracy=[])
    if step is None:
        def step(xb, yb):
            return train_step(model, optimizer, xb, yb, loss_fn, transform)
    bar = _progress_bar(epochs * n_batches, progress)
    live = LossPlot() if (in_notebook() if plot == "auto" else plot) else None
    count_steps = 0
    try:
        for epoch in range(epochs):
            start = time.perf_counter()
            losses, hits, count = 0.0, 0.0, 0
            epoch_seed = None if seed is None else seed + epoch
            for xb, yb in batches(x, y, batch_size, shuffle=True, seed=epoch_seed):
                with backend.device(_model_device(model)):  # host batches go where the model is
                    loss, logits, pairs, *more = step(xb, yb)
                if largest_label is not None and largest_label >= logits.shape[-1]:
                    raise ValueError(f"fit: label {largest_label} is out of range for the model's "
                                     f"{logits.shape[-1]} classes (valid: 0 .. {logits.shape[-1] - 1}).")
                n = len(yb)
                # the step's one transfer: the loss shown and the hit count, in one small vector
                shown = F.stack([F.cast(loss, "float64"), _hits(logits, yb)])
                batch_loss, batch_hits = shown.numpy().tolist()
                losses += batch_loss * n
                hits += batch_hits
                count += n
                count_steps += 1
                if on_step is not None:
                    on_step(count_steps, loss=loss, grads_and_vars=pairs, **(more[0] if more else {}))
                if bar is not None:
                    bar.update(1)
                    bar.set_postfix(epoch=epoch + 1, loss=f"{losses / count:.4f}")
                if live is not None:
                    live.add(count_steps, batch_loss)
            history["epoch_seconds"].append(time.perf_counter() - start)
            history["loss"].append(losses / max(count, 1))
            history["accuracy"].append(hits / max(count, 1))
            scores = {"loss": history["loss"][-1], "accuracy": history["accuracy"][-1]}
            if validation_data is not None:
                held_out = evaluate(model, *validation_data, loss_fn=loss_fn)
                scores.update(val_loss=held_out["loss"], val_accuracy=held_out["accuracy"])
                history["val_loss"].append(held_out["loss"])
                history["val_accuracy"].append(held_out["accuracy"])
                if bar is not None:
                    bar.set_postfix(epoch=epoch + 1, loss=f"{history['loss'][-1]:.4f}",
                                    val_accuracy=f"{held_out['accuracy']:.3f}")
                if live is not None:
                    live.add_validation(count_steps, held_out["loss"])
            if on_epoch is not None:
                on_epoch(count_steps, scores)
    finally:
        if bar is not None:
            bar.close()
        if live is not None:
            live.close()
    return history
