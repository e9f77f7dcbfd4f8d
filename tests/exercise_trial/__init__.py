"""Issue 31's trial of the exercises, rerunnable: every exercise of every lesson answered as learners
answer, right, wrong and by shortcut, each answer with the words its verdict must contain.

`corpus.trials()` assembles it from the one place each kind of answer already lives (the registered
references and wrong variants, the tests' `CASES`, the shortcuts and look-alikes of
tests/test_lessons_checks_shortcuts.py and tests/test_lessons_checks_honest.py) plus the answers only
the trial holds (`learners.py`: right answers written otherwise than the course's, the typical mistakes
the issue lists, the searches). ``tools/exercise_trial.py`` runs it through `evaluate`;
tests/test_exercise_trial.py asserts it misses nothing.
"""
