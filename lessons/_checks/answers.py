"""Expected values that are not stored in plain form: computed on each check, or kept as a hash.

A value exercise registered with ``expected=42`` keeps its answer in plain sight: in this package's
source, in its judge's closure and in the exercise record. The course's value exercises register
instead

* ``computed(function)``: the course's computation of the answer, the engine (or NumPy) doing what
  the lesson asks, with the lesson's numbers (the floor division of the lesson's tensors, the
  partials of the lesson's function from a tape, the slots of the engine's Adam after the lesson's
  gradients). It runs on every check and on every read of ``Exercise.reference``; its value is never
  kept between checks (no attribute, no closure cell holds it).
* ``hashed(digest, among=options)``: where the answer is a pure definition with nothing to compute
  (a set of letters whose truth depends on a GPU the learner's machine may lack), the SHA-256 of its
  canonical form (`canonical`) and the options the question offers. The value is found on each check
  by hashing the subsets of the options. ``hashed_choice`` does the same for one string out of the
  options (which of two numbers a GPU's memory pool lowers).

What this buys, honestly: the answer cannot be *read* from the source, the judge or the record. It
can still be *computed* by whoever runs the computation (that is the exercise) or, for a hash over a
few options, tries them all (the check itself does); and a cell that re-wires the engine changes
what the course computes, as it changes what the learner's own code computes (see "Not protected" in
the package docstring).

>>> answer = computed(lambda: 2 ** 10)
>>> answer.value()
1024
>>> hashed(digest_of({"y", "x"}), among=("x", "y", "z")).value() == {"x", "y"}
True
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .plain import _plain_array


@dataclass(frozen=True)
class Computed:
    """An expected value computed on each check by ``compute`` (no arguments), never stored."""

    compute: Callable[[], Any]

    def value(self) -> Any:
        """The expected value, computed now."""
        return self.compute()


def canonical(options: Iterable[str]) -> str:
    """The canonical text of a set of strings, as the value judge compares them (case and surrounding
    spaces ignored, order irrelevant).

    >>> canonical([" B", "a"])
    "['a', 'b']"
    """
    return repr(sorted({str(o).strip().lower() for o in options}))


def digest_of(options: Iterable[str]) -> str:
    """The SHA-256 (hex) of `canonical` ``options``: what `hashed` keeps."""
    return hashlib.sha256(canonical(options).encode()).hexdigest()


@dataclass(frozen=True)
class Hashed:
    """A set of strings kept as the `digest_of` it and the ``among`` options the question offers;
    with ``one``, a single string (one of ``among``), kept as the digest of the set holding it."""

    digest: str
    among: tuple[str, ...]
    one: bool = False

    def value(self) -> set[str] | str:
        """The subset of ``among`` whose digest is ``digest`` (its one string, with ``one``), found now
        by hashing the subsets."""
        for size in ((1,) if self.one else range(len(self.among) + 1)):
            for subset in itertools.combinations(self.among, size):
                if digest_of(subset) == self.digest:
                    return subset[0] if self.one else set(subset)
        raise ValueError(f"no subset of {self.among} has the digest {self.digest}: a wrong registration.")


def computed(compute: Callable[[], Any]) -> Computed:
    """``expected=computed(function)``: the answer computed by ``function()`` on each check."""
    return Computed(compute)


def hashed(digest: str, *, among: Iterable[str]) -> Hashed:
    """``expected=hashed(digest_of(answer), among=options)``: a set of strings chosen from ``among``."""
    return Hashed(str(digest), tuple(sorted({str(o).strip().lower() for o in among})))


def hashed_choice(digest: str, *, among: Iterable[str]) -> Hashed:
    """A single string chosen from ``among``, kept as ``digest_of({answer})``.

    >>> hashed_choice(digest_of({"y"}), among=("x", "y")).value()
    'y'
    """
    return Hashed(str(digest), tuple(sorted({str(o).strip().lower() for o in among})), one=True)


def plain_value(value: Any) -> Any:
    """A computed number (tensor, NumPy number or array) as a plain Python int, float or float64
    array, floats rounded to 12 significant digits (float64 rounding noise is not part of an answer;
    the graded assignments write the reference as a literal).

    >>> plain_value(np.float64(0.1) * 3), plain_value(np.int32(-3)), plain_value(np.array([[0.5, 2]]))
    (0.3, -3, array([[0.5, 2. ]]))
    """
    array = _plain_array(value)
    if array.dtype.kind in "iu":
        return int(array) if array.size == 1 and array.ndim == 0 else array.astype(np.int64)
    rounded = np.array([float(f"{v:.12g}") for v in array.astype(np.float64).ravel()]).reshape(array.shape)
    return float(rounded) if rounded.ndim == 0 else rounded


#: What ``expected=`` (or ``reference=``) may be instead of a plain value.
Answer = Computed | Hashed
