"""A lesson's checks that remember their verdicts, for lessons whose later cells use the learner's parts.

``check, needs = progress("10")``: ``check(name, answer)`` prints the verdict as `checker`'s does (and
``check.hint(name)`` gives the next hint, as there) and remembers it; ``needs(*names)`` is True when
each named exercise's last check said "Right!", else it prints which parts are not written yet and
returns False, so a cell written ``if needs("walk"):`` skips, honestly, instead of computing with
anything but the learner's own engine.

>>> check, needs = progress("99")
>>> needs("demo")
Not written yet: demo (its check has not said Right!), so this cell skips.
False
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .registry import hint, verdict


def progress(lesson: str) -> tuple[Callable[[str, Any], None], Callable[..., bool]]:
    """``(check, needs)`` for one lesson's exercises (see the module's docstring)."""
    lesson = str(lesson)
    passed: dict[str, bool] = {}

    ask = hint  # the guarded entry point, held here (a cell may rebind the module's names)

    def check(name: str, answer: Any) -> None:
        ok, message = verdict(lesson, name, answer)
        passed[name] = ok
        print(message)

    def hint_for(name: str) -> None:
        ask(lesson, name)

    def needs(*names: str) -> bool:
        waiting = [n for n in names if not passed.get(n)]
        if waiting:
            print(f"Not written yet: {', '.join(waiting)} (its check has not said Right!), so this cell "
                  "skips.")
        return not waiting

    check.__doc__ = f"Check an answer to an exercise of lesson {lesson} and remember the verdict."
    needs.__doc__ = "True when each named exercise has passed its check; else say which have not."
    hint_for.__doc__ = f"The next hint for an exercise of lesson {lesson}: the idea, the mistake, the recipe."
    check.hint = hint_for  # type: ignore[attr-defined]
    return check, needs
