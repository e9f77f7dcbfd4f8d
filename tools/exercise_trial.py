"""Rerun issue 31's trial of the exercises: every answer of tests/exercise_trial through `evaluate`.

``python tools/exercise_trial.py`` prints, per kind of answer (right, wrong, shortcut), how many were
given, accepted and refused, and how many verdicts contained the words the answer declares (a wrong
answer's hint names its mistake; a shortcut's refusal says why, or a search is told that the check
stopped giving directions); then every miss, one line each. Exit status 1 on any miss. A search (tries
through the kernel's ``check`` until one is right) counts as accepted only when it found the answer
before the check stopped saying which way an answer is off: a brute force over a question's few
options afterwards is reported, as the issue asks, not prevented.

Every answer but a search is judged twice, afresh: the same answer must get the same verdict, word for
word (numbers aside: a check names what it builds for each run, ``softsign_check_29``).

Options: ``--lesson NN`` (only that lesson's exercises; repeatable), ``--once`` (judge each answer
once), ``--verbose`` (one line per answer). A miss is a right answer refused, a wrong answer or
shortcut accepted, a verdict without its declared words (a wrong answer's also without "Hint:"), or
two verdicts that differ.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import sys
import time
import warnings
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.exercise_trial.corpus import KINDS, Trial, checks, trials  # noqa: E402

#: The time limit for answers that never return (the lessons' own is TIME_LIMIT_S).
SHORT_LIMIT_S = 1.0


@dataclass(frozen=True)
class Outcome:
    """What the check said to one trial answer, and whether that is what the answer's kind calls for."""

    trial: Trial
    ok: bool
    message: str
    named: bool
    tries: int = 1
    stable: bool = True
    found: int | None = None  # a search: the try that found the answer (after the check stopped directing)

    @property
    def miss(self) -> bool:
        if not self.stable:
            return True
        if self.trial.kind == "right":
            return not self.ok
        return self.ok or not self.named


def judge(trial: Trial, times: int = 2) -> Outcome:
    """Run one answer (its cell first, when it has one) and judge the verdict against its kind;
    ``times`` runs (a search: once) must give the same verdict."""
    outcome = _judged_once(trial)
    if trial.search is None:
        for _ in range(times - 1):
            again = _judged_once(trial)
            if (again.ok, _digits_out(again.message)) != (outcome.ok, _digits_out(outcome.message)):
                return Outcome(trial, outcome.ok, f"{outcome.message} | then: {again.message}", outcome.named,
                               stable=False)
    return outcome


def _digits_out(message: str) -> str:
    """A message with its numbers blanked: the names a check makes for each run (``softsign_check_29``)
    differ between runs, the verdict does not."""
    return re.sub(r"\d+", "#", message)


def _judged_once(trial: Trial) -> Outcome:
    with trial.cell() if trial.cell else contextlib.nullcontext():
        if trial.search is not None:  # found on the directions alone is the miss
            said = trial.search(lambda answer: checks.registry.verdict(*trial.key, answer))
            found = next((i for i, (right, _) in enumerate(said) if right), None)
            told = next((i for i, (_, text) in enumerate(said) if all(w in text for w in trial.words)), None)
            ok = found is not None and (told is None or found < told)
            message = said[told][1] if told is not None else said[-1][1]
            tries = len(said)
            return Outcome(trial, ok, message, told is not None, tries,
                           found=None if found is None else found + 1)
        else:
            answer = trial.build()
            limit = SHORT_LIMIT_S if trial.short else None
            ok, message = checks.evaluate(*trial.key, answer, time_limit=limit)
            tries = 1
    named = all(word in message for word in trial.words)
    if trial.kind == "wrong":
        named = named and message.startswith("Not yet: ") and " Hint: " in message
    return Outcome(trial, ok, message, named, tries)


def table(outcomes: list[Outcome]) -> str:
    """One row per kind: answers, accepted, refused, verdicts with the declared words, misses."""
    rows = [f"{'kind':<9} {'answers':>7} {'accepted':>8} {'refused':>7} {'named':>5} {'misses':>6}"]
    for kind in KINDS:
        mine = [o for o in outcomes if o.trial.kind == kind]
        named = "-" if kind == "right" else str(sum(o.named for o in mine))
        rows.append(f"{kind:<9} {len(mine):>7} {sum(o.ok for o in mine):>8} {sum(not o.ok for o in mine):>7} "
                    f"{named:>5} {sum(o.miss for o in mine):>6}")
    rows.append(f"{'all':<9} {len(outcomes):>7} {sum(o.ok for o in outcomes):>8} "
                f"{sum(not o.ok for o in outcomes):>7} {'':>5} {sum(o.miss for o in outcomes):>6}")
    return "\n".join(rows)


def _line(outcome: Outcome) -> str:
    t = outcome.trial
    verdict = ("accepted" if outcome.ok else "refused") + ("" if outcome.stable else ", then otherwise")
    tries = f" after {outcome.tries} tries" if t.search else ""
    return (f"{t.key[0]}-{t.key[1]} [{t.kind}, {t.origin}] {t.label}: {verdict}{tries}; "
            f"words {list(t.words)}: {outcome.message[:160]!r}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lesson", action="append", help="only this lesson's exercises (e.g. 04, 06b)")
    parser.add_argument("--once", action="store_true", help="judge each answer once, not twice")
    parser.add_argument("--verbose", action="store_true", help="one line per answer")
    args = parser.parse_args(argv)
    corpus = [t for t in trials() if not args.lesson or t.key[0] in args.lesson]
    start = time.perf_counter()
    outcomes = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # overflow and soft-placement warnings of the answers themselves
        for trial in corpus:
            outcomes.append(judge(trial, times=1 if args.once else 2))
            if args.verbose:
                print(("MISS " if outcomes[-1].miss else "ok   ") + _line(outcomes[-1]))
    exercises = {t.key for t in corpus}
    print(f"issue 31's trial: {len(corpus)} answers to {len(exercises)} exercises "
          f"({time.perf_counter() - start:.0f} s)")
    print(table(outcomes))
    unstable = sum(not o.stable for o in outcomes)
    print(f"verdicts that changed when the same answer was judged again: {unstable}")
    searches = [o for o in outcomes if o.trial.search]
    for o in searches:
        result = "not found" if o.found is None else f"found at try {o.found}"
        print(f"search {o.trial.key[0]}-{o.trial.key[1]} ({o.trial.label}): {o.tries} tries, {result}, "
              f"{'on the directions alone' if o.ok else 'after the check stopped directing'}; "
              f"it said: {o.message[:100]!r}")
    by_origin = Counter((o.trial.kind, o.trial.origin) for o in outcomes)
    print("origins: " + ", ".join(f"{kind}/{origin} {n}" for (kind, origin), n in sorted(by_origin.items())))
    misses = [o for o in outcomes if o.miss]
    for o in misses:
        print("MISS " + _line(o))
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
