"""A simulated clock: an event heap with a deterministic tie-break (SimPy's design).

Events at the same time run in the order they were scheduled (a sequence number breaks ties,
never a hash or dict order), so a simulation replays byte for byte.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable

import attrs

__all__ = ["SimClock", "SimTimer"]


@attrs.define(eq=False)
class SimTimer:
    """A scheduled callback; cancelling marks it and the heap drops it when it comes up."""

    when: float
    seq: int
    callback: Callable[[], None]
    cancelled: bool = False

    def __lt__(self, other: SimTimer) -> bool:
        return (self.when, self.seq) < (other.when, other.seq)


class SimClock:
    """Implements :class:`plurm.controller.runtime.Timer` on simulated time."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        #: (when, seq, timer): tuples compare in C, without calling SimTimer.__lt__.
        self._heap: list[tuple[float, int, SimTimer]] = []
        self._seq = 0

    def now(self) -> float:
        return self._now

    def call_at(self, when: float, callback: Callable[[], None]) -> SimTimer:
        if when < self._now:
            when = self._now
        seq = self._seq
        self._seq = seq + 1
        timer = SimTimer(when, seq, callback)
        heapq.heappush(self._heap, (when, seq, timer))
        return timer

    def cancel(self, handle: object) -> None:
        if isinstance(handle, SimTimer):
            handle.cancelled = True

    def next_time(self) -> float | None:
        """When the next live event is due, or None when none is."""
        heap = self._heap
        while heap and heap[0][2].cancelled:
            heapq.heappop(heap)
        return heap[0][0] if heap else None

    def run_until(self, until: float) -> None:
        """Run every event due at or before ``until``, in order; the clock then reads
        ``until``."""
        heap = self._heap
        pop = heapq.heappop
        while heap:
            due, _, timer = heap[0]
            if timer.cancelled:  # (next_time's drop, inlined: four events per job)
                pop(heap)
                continue
            if due > until:
                break
            pop(heap)
            self._now = due
            timer.callback()
        self._now = max(self._now, until)

    def run(self, limit: float | None = None) -> None:
        """Run until no event is left (or until ``limit``)."""
        while True:
            due = self.next_time()
            if due is None or (limit is not None and due > limit):
                break
            self.run_until(due)
