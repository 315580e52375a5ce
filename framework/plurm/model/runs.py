"""Runs of consecutive nodes, and Slurm's choice among them, shared by the select plugins.

Slurm's select plugins (linear's ``_job_test``, cons_tres's ``_eval_nodes``) place a job by
walking blocks of consecutive usable nodes: each round takes the block that is enough for
what is still wanted with the fewest slots (CPUs or tasks), or, while none is enough, the
block with the most; ties go to the first block.
"""

from __future__ import annotations

import itertools
import operator
import re
from collections.abc import Iterable, Mapping, Sequence

__all__ = [
    "best_run",
    "best_span",
    "bitmap_of",
    "consecutive_runs",
    "consecutive_spans",
    "set_bit_spans",
]

_ONES = re.compile("1+")
#: Above this many runs, a regular expression over the bitmap written out finds them faster
#: than arithmetic on the whole integer per run.
_FEW_SPANS = 32


def bitmap_of(positions: Sequence[int]) -> int:
    """The bitmap with the bits at ``positions`` set (node-table places, say). Made in a
    byte buffer beyond a few: an OR per position would copy the bitmap so far each time."""
    if len(positions) < 8:
        bitmap = 0
        for position in positions:
            bitmap |= 1 << position
        return bitmap
    raw = bytearray(max(positions) // 8 + 1)
    for position in positions:
        raw[position >> 3] |= 1 << (position & 7)
    return int.from_bytes(raw, "little")


def set_bit_spans(bitmap: int) -> list[tuple[int, int]]:
    """The runs of set bits of a non-negative ``bitmap`` as index ranges (first, last + 1),
    lowest first: the runs of consecutive nodes of a node bitmap."""
    if (bitmap & ~(bitmap << 1)).bit_count() > _FEW_SPANS:
        return [match.span() for match in _ONES.finditer(format(bitmap, "b")[::-1])]
    spans = []
    base = 0
    while bitmap:
        zeros = (bitmap & -bitmap).bit_length() - 1  # to the next run's first bit
        bitmap >>= zeros
        base += zeros
        ones = (~bitmap & (bitmap + 1)).bit_length() - 1  # the run's length
        spans.append((base, base + ones))
        bitmap >>= ones
        base += ones
    return spans


def consecutive_spans(places: Sequence[int]) -> list[tuple[int, int]]:
    """The runs of consecutive numbers in ``places`` (increasing: node-table positions), as
    ranges of their positions in ``places`` (first, last + 1)."""
    count = len(places)
    breaks = itertools.compress(
        range(1, count), map((1).__ne__, map(operator.sub, places[1:], places))
    )
    edges = [0, *breaks, count]
    return list(itertools.pairwise(edges)) if count else []


def consecutive_runs(names: Iterable[str], index: Mapping[str, int]) -> list[list[str]]:
    """``names`` (in node-table order) split into runs of consecutive table positions."""
    names = list(names)
    spans = consecutive_spans(list(map(index.__getitem__, names)))
    return [names[first:end] for first, end in spans]


def best_run(
    runs: Sequence[list[str]], slots: Mapping[str, int], want_slots: int, want_nodes: int
) -> tuple[list[str], bool]:
    """The run to take next and whether it is enough (``want_slots`` slots on at least
    ``want_nodes`` nodes): the enough run with the fewest slots, else the one with the most;
    the first on ties. ``runs`` must not be empty."""
    best: list[str] | None = None
    best_slots = 0
    best_enough = False
    for run in runs:
        total = sum(slots[name] for name in run)
        enough = total >= want_slots and len(run) >= want_nodes
        if (
            best is None
            or (enough and not best_enough)
            or (enough and total < best_slots)
            or (not enough and not best_enough and total > best_slots)
        ):
            best, best_slots, best_enough = run, total, enough
    assert best is not None
    return best, best_enough


def best_span(
    spans: Sequence[tuple[int, int]], totals: Sequence[int], want_slots: int, want_nodes: int
) -> tuple[int, bool]:
    """:func:`best_run` for runs given as index ranges (first, last + 1) of the node table
    with their slot totals, as the bitmap paths find them: the position of the run to take
    next and whether it is enough. ``spans`` must not be empty, nor any span."""
    if want_nodes <= 1:  # every span has a node: enough is enough slots; ties go first
        fitting = [position for position, total in enumerate(totals) if total >= want_slots]
        if fitting:
            return min(fitting, key=totals.__getitem__), True
        return max(range(len(totals)), key=totals.__getitem__), False
    best = -1
    best_slots = 0
    best_enough = False
    for position, (start, end) in enumerate(spans):
        total = totals[position]
        enough = total >= want_slots and end - start >= want_nodes
        if (
            best < 0
            or (enough and not best_enough)
            or (enough and total < best_slots)
            or (not enough and not best_enough and total > best_slots)
        ):
            best, best_slots, best_enough = position, total, enough
    return best, best_enough
