"""Repeated identical structure in a sequence of graph pieces: a block of pieces (same ops, same shapes)
that comes again and again in a row, as an unrolled loop or a per-sample model makes it.

A piece's signature is what makes two pieces "the same" (`fold` builds it: the op, the shapes, where
each input comes from); `find_runs` finds, from the left, the longest stretch covered by one block
repeated at least twice, and `chained` tells a series (each copy reads the one before: a chain drawn
"× n") from a stack (copies side by side: per-sample work).

>>> find_runs(list("xabcabcabcy"))
[(1, 3, 3)]
>>> find_runs(list("aaaa"), min_items=3)
[(0, 1, 4)]
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

__all__ = ["find_runs", "intern", "MAX_PERIOD"]

MAX_PERIOD = 24  # the longest block (in pieces) looked for


def intern(signatures: Sequence[Hashable]) -> list[int]:
    """Small ints that are equal exactly where ``signatures`` are (fast to compare).

    >>> intern([("a", 1), ("b",), ("a", 1)])
    [0, 1, 0]
    """
    table: dict[Hashable, int] = {}
    return [table.setdefault(s, len(table)) for s in signatures]


def find_runs(
    sigs: Sequence[Hashable], max_period: int = MAX_PERIOD, min_items: int = 3
) -> list[tuple[int, int, int]]:
    """``(start, period, count)`` of each run: ``sigs[start:start + period]`` repeated ``count`` ≥ 2
    times in a row, covering at least ``min_items`` pieces. Greedy from the left; at each start the
    run covering most pieces wins (the shortest block on a tie).

    >>> find_runs([1, 2, 1, 2, 1, 2, 5, 5])
    [(0, 2, 3)]
    """
    keys = intern(sigs)
    n = len(keys)
    periods = range(1, min(max_period, n // 2) + 1)
    # same[p][i]: how many pieces in a row from i equal the piece p further on
    same: dict[int, list[int]] = {}
    for p in periods:
        row = [0] * (n + 1)
        for i in range(n - p - 1, -1, -1):
            row[i] = row[i + 1] + 1 if keys[i] == keys[i + p] else 0
        same[p] = row
    out = []
    i = 0
    while i < n:
        best = (0, 0)  # (period, count)
        for p in periods:
            if i + p >= n:
                break
            count = same[p][i] // p + 1
            if count >= 2 and count * p >= min_items and count * p > best[0] * best[1]:
                best = (p, count)
        if best[0]:
            out.append((i, best[0], best[1]))
            i += best[0] * best[1]
        else:
            i += 1
    return out
