"""The backfill plan's profile: the nodes free over time, as sched/backfill's pass sees them.

:class:`PyProfile` is the reference, in Python. ``_backfill_profile`` (Cython, built by the
README's install commands with the machine's C compiler) is the same class with the base
plan and each view's segments in C arrays of 64-bit words; property tests run the two side
by side on random plans and on random jobs holding nodes
(tests/framework/test_backfill_profile.py). :data:`Profile` is the compiled one when it
was built and ``PLURM_PURE_PYTHON`` is not set, else the reference; both give the same
openings, so a pass decides the same either way.
"""

from __future__ import annotations

import bisect
import itertools
import math
import os
import sys
from collections.abc import Iterable, Iterator
from operator import or_ as _or
from typing import cast

__all__ = ["COMPILED", "Profile", "PyProfile"]


class PyProfile:
    """Free nodes over time, as seen by jobs that may use only some nodes.

    The base plan is a list of segments: ``starts[i]`` begins a segment whose free nodes
    are ``free[i]``; the last segment lasts for ever. A job searches only its usable nodes,
    so it searches a *view*: the segments with their free nodes restricted to its usable
    set, merged where that restriction does not change (a partition's view has only the
    times its own nodes free up, not every node's). Merging segments with the same free
    nodes changes no opening: a start inside such a run has a window that reaches at least
    as far as the run's first start, so it fails wherever that one fails.

    Reservations are kept in a list. A view built later is built from the base with them
    replayed; a view built already takes those that touch it when it is next read, in
    the order they were made, which splits its segments as taking each at once would. So
    a reservation costs the segments of the views it touches that are read again, not
    those of every node in the cluster. A view built later is merged after the replay,
    where one kept up to date keeps the splits reservations made; both give the same
    first opening, but when select refuses an opening, the next one offered can differ.
    Views are built in queue order, at the first job that searches each node set, so a
    pass is the same every time it runs on the same state.

    A view's bitmaps are shifted down by the index of its lowest usable node: a partition
    high in the node table then works on ints as wide as its own nodes, not as the table
    up to them (each AND, count and copy of a Python int costs by its width). Openings
    shift their nodes back.
    """

    def __init__(
        self, now: float, everything: int, ends: dict[float, int], held: int | None = None
    ) -> None:
        """``ends``: the nodes freed at each time (no node at two); ``held``: their union,
        if the caller has it (nodes outside ``everything`` may be in it too)."""
        self.everything = everything
        self.starts = [now, *sorted(ends)]
        # The nodes each segment frees: the first, those free from now on; no two share a
        # node (the ends give each node to one time). A segment's free nodes are the union
        # of its own and the earlier ones', worked out per view, on the view's own nodes
        # (the base's unions would be whole-table ints, most never read).
        self._freed = [everything & ~(_union(ends.values()) if held is None else held)]
        self._freed.extend(map(ends.__getitem__, itertools.islice(self.starts, 1, None)))
        # each view (its bitmaps shifted down by its lowest node's index, that index) with
        # how many of the reservations it has had applied
        self._views: dict[int, tuple[list[float], list[int], int, list[int]]] = {}
        self._reservations: list[tuple[float, float, int]] = []
        self._taken_now = 0  # the nodes of the reservations that start now

    @classmethod
    def of_held(
        cls,
        now: float,
        resolution: int,
        held: Iterable[tuple[object, float | None, int]],
        node_count: int,
    ) -> tuple[PyProfile, int]:
        """A pass's plan from the jobs holding nodes, and the nodes they hold.

        ``held`` gives each such job (not read), its expected end (None: it has none) and
        its nodes as a bitmap of the node table's ``node_count`` nodes. Each node is busy
        until the latest end of the jobs on it. Ends are kept at ``resolution``: they round
        up from now, and an end before now stands for now. The nodes of a job without an end
        are never free: they are left out of :attr:`everything`."""
        ceil, inf = math.ceil, math.inf
        by_end: dict[float, int] = {}  # the nodes of the jobs held, by their rounded end
        for _, when, mask in held:
            if when is None:
                end = inf
            elif when > now:
                end = now + ceil((when - now) / resolution) * resolution
            else:
                end = now
            before = by_end.get(end)  # (0 | mask would copy the mask)
            by_end[end] = mask if before is None else before | mask
        # Latest end first: each end gets its jobs' nodes less those of later ends.
        ends: dict[float, int] = {}
        claimed = 0
        for end in sorted(by_end, reverse=True):
            mask = by_end[end]
            if mask & claimed:  # (rarely: ~claimed would be a whole-table int each time)
                mask ^= mask & claimed
                if not mask:
                    continue
            ends[end] = mask
            claimed |= mask
        infinite = ends.pop(inf, 0)
        everything = ((1 << node_count) - 1) & ~infinite
        return cls(now, everything, ends, claimed), claimed

    def free_now(self) -> int:
        """The nodes free in some segment that starts now: a job can start now only among
        them. (More than one segment may start now: a running job can be due to end this
        very second; a reservation from now takes its nodes from the last of them.)"""
        now = self.starts[0]
        freed = self._freed
        before = 0  # the nodes free in the segments before the last that starts now
        last = freed[0]  # the last's
        for index in range(1, len(freed)):
            if self.starts[index] != now:
                break
            before = last
            last |= freed[index]
        return before | (last & ~self._taken_now)

    def view(self, usable: int) -> tuple[list[float], list[int], int]:
        """The segments seen by a job that may use the nodes of ``usable``, their bitmaps
        shifted down by the index of its lowest node (the third item): built at the first
        call, then brought up to date with the reservations made since the last call that
        touch them. (They are applied in the order they were made, as if each had been
        applied when made: the same splits, the same segments. A view no later job reads
        is then never updated for nothing.)"""
        view = self._views.get(usable)
        reservations = self._reservations
        if view is None:
            low = (usable & -usable).bit_length() - 1 if usable else 0
            starts, frees = self._build_view(usable, low)
            self._views[usable] = (starts, frees, low, [len(reservations)])
            return starts, frees, low
        starts, frees, low, applied = view
        if applied[0] < len(reservations):
            for index in range(applied[0], len(reservations)):
                start, end, nodes = reservations[index]
                if nodes & usable:
                    _take(starts, frees, start, end, (nodes & usable) >> low)
            applied[0] = len(reservations)
        return starts, frees, low

    def build_view(self, usable: int) -> None:
        """Build the view of ``usable`` now if it is not built yet (views are built in the
        order jobs first search them; see the class docstring). A view built already is
        left as it is: it takes the reservations made since when it is next read."""
        if usable not in self._views:
            self.view(usable)

    def _build_view(self, usable: int, low: int) -> tuple[list[float], list[int]]:
        taken = [
            (start, end, (nodes & usable) >> low)
            for start, end, nodes in self._reservations
            if nodes & usable
        ]
        starts, freed = self.starts, self._freed
        if not taken and usable != self.everything:
            # The base restricted to the usable nodes changes exactly where a segment frees
            # one of them: keep the first segment and those (the merge below, in one pass).
            free = (freed[0] & usable) >> low
            view_starts, view_frees = [starts[0]], [free]
            for index in itertools.compress(
                range(1, len(freed)), map(usable.__and__, itertools.islice(freed, 1, None))
            ):
                free |= (freed[index] & usable) >> low
                view_starts.append(starts[index])
                view_frees.append(free)
            return view_starts, view_frees
        # a copy: views change with reservations
        starts = list(starts)
        frees = list(itertools.accumulate([(nodes & usable) >> low for nodes in freed], _or))
        for start, end, nodes in taken:
            _take(starts, frees, start, end, nodes)
        if usable == self.everything:
            return starts, frees  # every node: the base itself, segments unmerged
        merged_starts: list[float] = []
        merged_frees: list[int] = []
        last = -1
        for start, free in zip(starts, frees, strict=True):
            if free != last:
                merged_starts.append(start)
                merged_frees.append(free)
                last = free
        return merged_starts, merged_frees

    def reserve(self, start: float, end: float, nodes: int) -> None:
        """Take ``nodes`` from ``start`` to ``end``: the views take it when next read."""
        self._reservations.append((start, end, nodes))
        if start == self.starts[0] and end > start:
            self._taken_now |= nodes

    def openings(
        self, usable: int, least: int, duration: float, horizon: float
    ) -> Iterator[tuple[float, int]]:
        """Each segment start before ``horizon``, earliest first, from which at least
        ``least`` usable nodes stay free for ``duration``, with those nodes. A start at the
        horizon itself is outside the window (recorded on 22.05: bf_window=1 plans nothing
        60 s ahead)."""
        starts, frees, low = self.view(usable)  # (a view holds usable nodes only, shifted)
        count = len(starts)
        first = 0
        while first < count:
            start = starts[first]
            if start >= horizon:
                return
            free = frees[first]
            first += 1
            if free.bit_count() < least:
                continue
            end = start + duration
            index = first
            while index < count and starts[index] < end:
                free &= frees[index]
                if free.bit_count() < least:
                    if frees[index].bit_count() < least:
                        # that segment is too full by itself, and every start up to it
                        # has it in its window too: go on after it
                        first = index + 1
                    break
                index += 1
            else:
                yield start, free << low


def _take(starts: list[float], frees: list[int], start: float, end: float, nodes: int) -> None:
    """Take ``nodes`` from the segments from ``start`` to ``end``, splitting the segments
    that contain those two times."""
    first = _split(starts, frees, start)
    last = _split(starts, frees, end) if end != math.inf else len(starts)
    keep = ~nodes
    for index in range(first, last):
        frees[index] &= keep


def _split(starts: list[float], frees: list[int], when: float) -> int:
    """The index of the segment that starts at ``when``, splitting one if needed."""
    index = bisect.bisect_right(starts, when) - 1
    if starts[index] != when:
        index += 1
        starts.insert(index, when)
        frees.insert(index, frees[index - 1])
    return index


def _union(masks: Iterable[int]) -> int:
    total = 0
    for mask in masks:
        total |= mask
    return total


def _compiled() -> type[PyProfile] | None:
    """The compiled profile, unless ``PLURM_PURE_PYTHON`` asks for the reference or it was
    not built (no C compiler where Plurm was installed). It reads ints as little-endian
    words, so a big-endian machine runs the reference."""
    if os.environ.get("PLURM_PURE_PYTHON", "") not in ("", "0") or sys.byteorder != "little":
        return None
    try:
        from plurm.builtin._backfill_profile import Profile as compiled
    except ImportError:
        return None
    return cast("type[PyProfile]", compiled)  # (the same methods: see the .pyi)


#: The profile sched/backfill uses: the compiled one when there is one.
Profile: type[PyProfile] = _compiled() or PyProfile
#: Whether :data:`Profile` is the compiled one.
COMPILED = Profile is not PyProfile
