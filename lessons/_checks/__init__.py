"""Self-checks for the lesson exercises: they answer "Right!" or "Not yet: <hint>", never the answer.

In a lesson notebook (the kernel runs in ``lessons/``, so this package is importable)::

    from _checks import checker
    check = checker("02")
    check("partials", (dx, dy))     # prints "Right! ..." or "Not yet: ... Hint: <the idea>"
    check.hint("partials")          # the next tier of hints: the idea, the mistake found, the recipe

The checks are feedback for learning; grading happens out of the learner's kernel: the graded
assignments run the same checks (`evaluate`, the programmatic entry point) on a submitted notebook.

For lesson authors: register each exercise in your lesson's module of this package
(``lessons_01_03.py``, ``lessons_04_06.py``, ``lessons_06b.py``, ``lessons_07_08.py``,
``lessons_09.py``, ``lessons_10.py``, ``making.py`` for the making exercises of lessons 02 and 04,
``making_primitive.py`` for lesson 03's, ``making_steps.py`` for those of lessons 05 to 07,
``backward_by_hand.py`` for lesson 07's backward passes, ``lessons_10*.py`` for lesson 10's engine
(``progress.py``: a ``check`` that remembers, and ``needs`` for the cells that use the learner's parts);
a new one is imported below), under the lesson's number (two digits; ``"06b"`` for the lesson between
06 and 07) and a short exercise name that the notebook uses.
The machinery: ``registry.py`` (`register`, `evaluate`, `check`, `checker`, `hint`), ``answers.py``
(expected values computed on each check, or hashed), ``timelimit.py``,
``forbidden.py`` (calls to a forbidden built-in), ``plain.py`` (plain values), ``compare.py`` (the
value judge `close_to`), ``through.py`` (a gradient through an engine-op answer) and ``seal.py``.

* ``register("04", "slots", expected=2, hint="...")`` compares the learner's answer with a value:
  numbers, arrays and tensors (with a tolerance), tuples/lists of them (part by part), ``None``,
  dtypes, strings (case and surrounding spaces ignored) and sets of strings. The course's exercises
  keep no answer in plain form: ``expected=computed(function)`` computes it on each check, the engine
  doing what the lesson asks, and ``expected=hashed(digest, among=options)`` keeps a set of options
  that nothing computes as a hash (``answers.py``; ``hashed_choice`` for one of the options). An
  exercise with a judge of its own takes its ``reference=`` from the same two, and its judge
  computes what it compares with (the engine's shapes, its SGD, its Hessian, its placement).
* ``register("04", "step", judge=my_judge, hint="...")`` lets ``my_judge(answer)`` decide: it
  returns ``None`` when the answer is right, else a short sentence saying what is wrong.
* Every registration carries the course's answer, ``reference=`` (the value, or the function of a
  function exercise; ``expected=`` is its own reference), and a function exercise its typical
  ``wrong=`` variants, each with the fragment of the sentence that names its mistake: the one source
  the tests and the graded assignments take them from (``EXERCISES[key].reference``).
* Hints in tiers: ``idea=`` (what to think about, never code) is what every "Not yet" shows;
  ``check.hint(name)`` then gives the kind of mistake the last check found, then ``hint=``, the recipe.
  A function still as the lesson's template leaves it (its body ``...``) gets "not answered yet" and
  nothing more, so Run All on an untouched lesson shows no recipe.

Rules that keep the checks honest: a hint or a judge's sentence never contains the expected value
(tests/test_lessons_exercises.py checks this for every exercise, with a right and a wrong answer),
and an exception raised while checking is reported by its type only, so that no message that
might quote the expected value reaches the learner.

What a check trusts, and what it does not (tests/test_lessons_checks_honest.py tries each point):

* **Only plain values.** An answer is read as a plain copy, never through its own methods: numbers
  must be exactly ``int`` or ``float`` (not ``bool``, not a subclass) or NumPy numbers, arrays exactly
  ``numpy.ndarray``, tensors exactly the engine's ``Tensor`` or ``Variable``, text exactly ``str``,
  collections exactly ``tuple``, ``list``, ``set`` or ``frozenset``. An object that only *looks* like
  one (a subclass with its own ``__eq__``, ``__len__`` or ``strip``, or any object with
  ``__array__``/``__float__``) gets "Not yet" with the kinds that are accepted. Tuples and lists must
  have exactly the asked number of parts; shapes must match (a single number may be any size-1
  array); NaN and inf are never right; strings and booleans are not numbers.
* **"Do not call the built-in" is checked by identity.** While an answer runs, a profile hook watches
  for the code of the engine's own function (``clip_by_norm``, the fused cross-entropies and their
  private forward, ``clip_by_global_norm``, ``global_norm``, ``Momentum._update``, ``Adam._update``,
  ``apply_gradients``, ``Accumulator.add``, ``training.train_step``, ...), captured when this package
  is imported; it sees the call however the function is reached (``eg.clip_by_norm``,
  ``engine.clipping.clip_by_norm``, a saved reference, ``functools.partial``) and in every thread the
  answer starts (``threading.setprofile``); an answer that removes the hook is refused too. A thread
  started *before* the check (a pool from an earlier cell) is not watched: Python 3.11 has no hook
  for running threads.
* **Judged on what it does.** A making exercise runs on the check's random inputs (fixed seeds: the
  same answer gets the same verdict on every run); the gradient and optimizer exercises in float32
  and float64: dtypes must be kept, float32 arithmetic on float64 inputs is refused, and inputs
  changed in place are refused (the accumulator's too). Where an exercise
  asks for engine ops, the check takes a gradient through the result (``through.py``).
* **The checks cannot be re-wired from a cell.** The entry points (``evaluate``, ``check``,
  ``checker`` and the ``check`` functions it returns) first put back every name of every module of
  this package and every exercise registered at import, from a snapshot that only their closures
  hold: assigning ``_checks._compare_numbers = ...`` or ``_checks.compare._compare_numbers = ...``, or
  replacing ``_checks.EXERCISES[...]`` or a field of one (``object.__setattr__``), changes nothing;
  NumPy's functions (``np.allclose``) are put back the same way, and an answer that replaces any of
  them *while it is checked* gets "Not yet". The engine's tensor classes, the forbidden built-ins'
  code and ``sys.setprofile`` are captured at import too, so rebinding ``eg.Tensor`` or
  ``sys.setprofile`` in a cell does not help. ``SystemExit`` or ``KeyboardInterrupt`` from an answer
  is reported, not raised. After ``DIRECTED_TRIES`` wrong answers to a value exercise (one, for a
  set of names: its options could be tried one at a time), ``check`` stops saying which way an
  answer is off, and ``check.hint`` too. Not protected (a determined learner can always cheat, in
  their own kernel; grading runs elsewhere): the engine's own methods (``eg.Tensor.numpy``) and
  functions (the computed answers run on the engine: re-wiring it changes them), the closures'
  cells, the source of this package (the function exercises' references live here; a value's is
  computed or hashed, never written), ``evaluate`` called directly (it keeps no count of tries), and
  the ``check`` name in the notebook.
* **An answer that runs forever is stopped** after ``TIME_LIMIT_S`` seconds (``checker(lesson,
  time_limit=...)`` changes it) with a message that says so. In the main thread of a kernel on
  Linux or macOS a SIGALRM timer interrupts anything, ``time.sleep`` included; elsewhere (Windows, a
  non-main thread) a watchdog thread raises into the checking thread, which stops Python loops but
  not a blocking call: there, **Kernel ▸ Interrupt Kernel** (the ■ button) stops it.

>>> register("99", "demo", expected=4.0, hint="Add two and two.")
>>> check = checker("99")
>>> check("demo", 4.0)
Right!
>>> check("demo", 5.0)
Not yet: your answer is not right. Hint: Add two and two.
>>> del EXERCISES[("99", "demo")]
"""

from __future__ import annotations

import sys

import numpy as np

from . import (  # noqa: F401 (they register; grading: the graded assignments' test cells, sealed too)
    backward_by_hand,
    grading,
    lessons_01_03,
    lessons_04_06,
    lessons_06b,
    lessons_07_08,
    lessons_09,
    lessons_10,
    making,
    making_primitive,
    making_steps,
    progress,
    registry,
)
from .answers import computed, hashed, hashed_choice
from .compare import Judge, _compare, _compare_numbers, close_to  # noqa: F401 (the helpers: as before)
from .registry import EXERCISES, Exercise, check, checker, evaluate, hint, register
from .seal import seal as _seal
from .timelimit import TIME_LIMIT_S

__all__ = ["Exercise", "EXERCISES", "TIME_LIMIT_S", "register", "evaluate", "check", "checker", "hint",
           "close_to", "Judge", "computed", "hashed", "hashed_choice"]

# The package's modules and NumPy's (whose functions the judges call) are sealed.
_seal([m for n, m in list(sys.modules.items()) if n == __name__ or n.startswith(__name__ + ".")]
      + [np, np.linalg], EXERCISES, ("evaluate", "check", "checker", "hint"), home=registry)
