"""`GradientTape`: records the ops run on watched tensors, then walks them backwards.

Every active tape records every op whose inputs it watches (directly, or through earlier recorded
ops). ``gradient`` replays the records in reverse, calling each op's VJPs. VJPs are engine ops, so
tapes that are still recording during that replay record it too: a gradient of a gradient is a
second derivative.

>>> import engine as eg
>>> x = eg.constant(3.0)
>>> with eg.GradientTape() as outer:
...     outer.watch(x)
...     with eg.GradientTape() as inner:
...         inner.watch(x)
...         y = x * x * x
...     dy = inner.gradient(y, x)        # 3x² = 27, recorded by `outer`
>>> float(dy), float(outer.gradient(dy, x))  # and 6x = 18
(27.0, 18.0)
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Any

from . import backward as _backward
from . import listeners as _listeners
from . import nest
from .creation import zeros_like
from .jacobian import batch_jacobian, jacobian
from .record import Record
from .tensor import Tensor, is_floating

__all__ = ["GradientTape", "Record"]

_UNCONNECTED = ("none", "zero")


class GradientTape:
    """Record operations for automatic differentiation (TensorFlow 2's API).

    - Trainable Variables read inside the block are watched automatically; other tensors need
      ``tape.watch(t)``. Only ops on watched tensors are recorded.
    - ``gradient(target, sources)`` returns d target / d sources shaped like ``sources``
      (a tensor, or a nested list / tuple / dict of them); unconnected sources give None.
    - A non-persistent tape answers one ``gradient`` call and then frees what it recorded.

    >>> import engine as eg
    >>> w = eg.Variable(2.0)
    >>> with eg.GradientTape() as tape:
    ...     loss = w * w
    >>> tape.gradient(loss, w).numpy()
    array(4., dtype=float32)
    """

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True):
        self._persistent = bool(persistent)
        self._watch_accessed = bool(watch_accessed_variables)
        self._recording = False
        self._used = False  # a non-persistent tape has answered its one gradient call
        self._records: list[Record] = []
        self._watched: set[int] = set()
        self._watched_vars: dict[int, Any] = {}
        self._watched_tensors: dict[int, Tensor] = {}
        self._host_reads: dict[int, str] = {}  # tensor id → how its value left the engine (host_read)
        self._stack: list | None = None  # the thread's active-tape stack while inside `with`

    # ---- recording ----------------------------------------------------------------------------
    def __enter__(self) -> GradientTape:
        if self._stack is not None:
            raise RuntimeError("This GradientTape is already active; tapes cannot be entered twice.")
        self._stack = _listeners.push(self)  # this thread's active tapes: other threads' ops are not recorded
        self._recording = True
        return self

    def __exit__(self, *exc: Any) -> None:
        self._recording = False
        if self._stack is not None:
            _listeners.pop(self, self._stack)
            self._stack = None

    @property
    def persistent(self) -> bool:
        return self._persistent

    @property
    def records(self) -> list[Record]:
        """The recorded operations, in the order they ran (a copy of the list)."""
        return list(self._records)

    def watch(self, tensor: Any) -> None:
        """Record the ops that use ``tensor`` (or every tensor in a nested list/tuple/dict)."""
        for t in nest.flatten(tensor):
            if not isinstance(t, Tensor):
                raise ValueError(
                    f"GradientTape.watch: passed in an object of type {type(t).__name__}, not a Tensor "
                    f"or Variable. Convert it first: x = eg.constant(value)."
                )
            if not is_floating(t.dtype):
                warnings.warn(
                    f"The dtype of the watched tensor must be floating (e.g. float32), got {t.dtype}: "
                    "its gradient will be None. Cast it first: eg.cast(x, 'float32').",
                    UserWarning, stacklevel=2,
                )
            self._watch_one(t)

    def _watch_one(self, t: Tensor) -> None:
        self._watched.add(t._uid)
        if t._is_variable:
            self._watched_vars.setdefault(t._uid, t)
        else:
            self._watched_tensors.setdefault(t._uid, t)

    def watched_variables(self) -> tuple:
        """The Variables this tape watches, in the order it first saw them."""
        return tuple(self._watched_vars.values())

    def watched_tensors(self) -> tuple[Tensor, ...]:
        """The non-Variable tensors passed to `watch`, in order."""
        return tuple(self._watched_tensors.values())

    def is_watching(self, t: Tensor) -> bool:
        """Whether ops on ``t`` are recorded (it was watched, or computed from a watched tensor)."""
        return t._uid in self._watched

    def host_read(self, t: Tensor) -> str | None:
        """How ``t``'s value left the engine while this tape was recording and watching it (or would
        have watched it: a trainable Variable): ``".numpy()"``, ``"np.asarray()"`` or ``".item()"``;
        None if it did not. Ops on such a copy are not recorded: a reason for a None gradient.

        >>> import engine as eg
        >>> v = eg.Variable([1.0, 2.0])
        >>> with eg.GradientTape() as tape:
        ...     y = eg.constant(v.numpy() * 2.0)
        >>> tape.host_read(v), tape.gradient(y, v)
        ('.numpy()', None)
        """
        return self._host_reads.get(t._uid)

    @property
    def is_recording(self) -> bool:
        return self._recording

    @contextlib.contextmanager
    def stop_recording(self) -> Iterator[None]:
        """Pause recording inside the block: ops there are invisible to this tape."""
        if not self._recording:
            raise RuntimeError("GradientTape.stop_recording: the tape is not recording.")
        self._recording = False
        try:
            yield
        finally:
            self._recording = True

    def reset(self) -> None:
        """Forget every record and watched tensor; the tape stays usable (and active if it was)."""
        self._records = []
        self._watched = set()
        self._watched_vars = {}
        self._watched_tensors = {}
        self._host_reads = {}
        self._used = False

    # ---- differentiation ----------------------------------------------------------------------
    def gradient(self, target: Any, sources: Any, output_gradients: Any = None,
                 unconnected_gradients: str = "none") -> Any:
        """d target / d sources, in the structure of ``sources``.

        ``target``: a tensor, or a list of tensors (their sum is differentiated).
        ``output_gradients``: the upstream gradient for each target (default ones).
        ``unconnected_gradients``: "none" (default) gives None for a source the target does not
        depend on; "zero" gives zeros.
        """
        self._start_gradient()
        flat_sources = nest.flatten(sources)
        grads = self._gradients(nest.flatten(target), flat_sources, output_gradients, unconnected_gradients,
                                release=not self._persistent)
        self._finish_gradient()
        return nest.pack_like(sources, grads)

    def jacobian(self, target: Tensor, sources: Any, unconnected_gradients: str = "none") -> Any:
        """The full Jacobian: shape ``target.shape + source.shape`` for each source (one backward
        pass per element of ``target``)."""
        return jacobian(self, target, sources, unconnected_gradients)

    def batch_jacobian(self, target: Tensor, source: Tensor,
                       unconnected_gradients: str = "none") -> Tensor | None:
        """Per-example Jacobians: ``target`` (B, *T), ``source`` (B, *S) → (B, *T, *S)."""
        return batch_jacobian(self, target, source, unconnected_gradients)

    def _start_gradient(self) -> None:
        if self._used:
            raise RuntimeError(
                "GradientTape.gradient can only be called once on non-persistent tapes. "
                "Create the tape with eg.GradientTape(persistent=True) to ask for several gradients."
            )
        if not self._persistent:
            self._recording = False  # TensorFlow: a non-persistent tape stops recording here

    def _finish_gradient(self) -> None:
        if not self._persistent:
            self._used = True
            self._records = []  # free every saved tensor
            self._watched = set()

    def _gradients(self, targets: list[Any], sources: list[Any], output_gradients: Any,
                   unconnected: str, release: bool = False) -> list[Tensor | None]:
        if unconnected not in _UNCONNECTED:
            raise ValueError(
                f"GradientTape.gradient: unconnected_gradients must be 'none' or 'zero', got {unconnected!r}."
            )
        _backward.check_sources(sources, "GradientTape.gradient")
        with _listeners.gradients_scope():  # listeners hear these ops in the scope gradients/...
            seeds = _backward.seed_gradients(targets, output_gradients)
            # Only what this tape watches (or computed from what it watches) has a gradient here.
            watched = [s._uid for s in sources if s._uid in self._watched]
            try:
                grads = _backward.walk(self._records, seeds, watched, release=release) if watched else {}
            except BaseException:
                if release:  # the walk had begun to let go of the records: a second call could not be right
                    self._finish_gradient()
                raise
        out: list[Tensor | None] = []
        for s in sources:
            g = grads.get(s._uid) if s._uid in self._watched else None
            if g is None and unconnected == "zero":
                g = zeros_like(s)
            if g is not None and not is_floating(s.dtype):
                g = None  # integer and bool tensors have no gradient
            out.append(g)
        return out
