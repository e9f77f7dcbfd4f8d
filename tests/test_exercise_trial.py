"""Issue 31's done-when: the trial's answers, rerun. ``tools/exercise_trial.py`` runs the corpus of
tests/exercise_trial through `evaluate`; here it must miss nothing, and the corpus must be the trial's
size (219 answers at least) and cover every registered exercise with a right answer of a learner's own
(not the course's reference) and a wrong one.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.exercise_trial.corpus import KINDS, Trial, trials
from tests.test_lessons_exercises import checks

ROOT = Path(__file__).resolve().parent.parent
TOOL = ROOT / "tools" / "exercise_trial.py"
CORPUS = trials()


def _tool():
    spec = importlib.util.spec_from_file_location("exercise_trial_tool", TOOL)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_the_corpus_is_the_trials_size_and_covers_every_exercise():
    assert len(CORPUS) >= 219
    kinds = Counter(t.kind for t in CORPUS)
    assert set(kinds) == set(KINDS) and all(kinds[k] for k in KINDS), kinds
    for key in checks.EXERCISES:
        mine = [t for t in CORPUS if t.key == key]
        own = [t for t in mine if t.kind == "right" and t.origin != "registered"]
        assert own, f"{key}: no right answer written otherwise than the course's reference"
        assert any(t.kind == "wrong" for t in mine), f"{key}: no wrong answer"
    assert all(t.words for t in CORPUS if t.kind != "right"), "a wrong answer or shortcut declares no words"


def test_the_learners_right_answers_are_not_the_reference():
    for t in CORPUS:
        if t.kind == "right" and t.origin == "trial":
            reference = checks.EXERCISES[t.key].reference
            if checks.EXERCISES[t.key].function and not isinstance(reference, str):
                assert t.build() is not reference, t.label  # a function of the learner's own


def test_the_tool_counts_a_miss_of_every_kind():
    """A right answer refused, a wrong one accepted, a wrong one refused without the words its hint must
    hold, a shortcut accepted: each is a miss (the tool can fail)."""
    tool = _tool()
    key = ("09", "trace_count")
    right = checks.EXERCISES[key].reference
    cases = [
        (Trial(key, "right", "a wrong answer posing as right", lambda: right + 1), True),
        (Trial(key, "wrong", "a right answer posing as wrong", lambda: right, ("not right",)), True),
        (Trial(key, "wrong", "words the hint lacks", lambda: right + 1, ("off by one retrace",)), True),
        (Trial(key, "shortcut", "a right answer posing as a shortcut", lambda: right, ("why",)), True),
        (Trial(key, "wrong", "an honest wrong answer", lambda: right + 1, ("not right",)), False),
    ]
    for trial, miss in cases:
        assert tool.judge(trial, times=1).miss is miss, trial.label


@pytest.mark.slow
def test_the_trial_rerun_misses_nothing():
    run = subprocess.run([sys.executable, str(TOOL)], cwd=ROOT, capture_output=True, text=True, timeout=1200)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-4000:]
    rows = {m.group(1): [int(x) for x in m.group(2).split() if x != "-"] for m in  # "-": no words to name
            re.finditer(r"^(right|wrong|shortcut|all)\s+([\d\s-]+)$", out, re.M)}
    assert set(rows) == {"right", "wrong", "shortcut", "all"}, out
    assert rows["all"][0] == len(CORPUS) >= 219
    assert all(row[-1] == 0 for row in rows.values()), out  # no misses
    assert rows["right"][1] == rows["right"][0]  # every right answer accepted
    assert rows["wrong"][1] == 0 and rows["shortcut"][1] == 0  # no wrong answer nor shortcut accepted
    assert "verdicts that changed when the same answer was judged again: 0" in out
