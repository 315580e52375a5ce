"""The controller's clock in live mode: the wall clock, with timers on the asyncio loop.

It implements :class:`plurm.controller.runtime.Timer`. Times are seconds since
:data:`plurm.commands.timefmt.EPOCH`, as in a simulation, so that the commands print real
dates with the same code. Timers run on the daemon's one event loop, in the order they are
due (ties in the order they were set, as the loop keeps them); after each one the daemon's
``after`` callback runs (it commits state and sends what the controller decided).
"""

from __future__ import annotations

import asyncio
import heapq
import math
import time
from collections.abc import Callable

from plurm.commands.timefmt import EPOCH

__all__ = ["WallClock", "epoch_seconds", "unix_seconds"]

_EPOCH_UNIX = EPOCH.timestamp()
#: How early the loop may fire a handle (its clock resolution), in seconds.
_EARLY = 1e-3


def epoch_seconds(unix: float) -> float:
    """A Unix time as controller-clock seconds."""
    return unix - _EPOCH_UNIX


def unix_seconds(seconds: float) -> float:
    """A controller-clock time as Unix seconds."""
    return seconds + _EPOCH_UNIX


class _Entry:
    __slots__ = ("callback", "cancelled")

    def __init__(self, callback: Callable[[], None]) -> None:
        self.callback = callback
        self.cancelled = False


class WallClock:
    """Implements :class:`plurm.controller.runtime.Timer` on the wall clock.

    Timers are kept on a heap of their own, ordered by (time, order set), as the simulated
    clock keeps them, and the loop holds one handle for the earliest: timers due at the same
    moment run in the order they were set, which the loop's own heap does not promise.
    """

    def __init__(
        self, loop: asyncio.AbstractEventLoop, after: Callable[[], None] = lambda: None
    ) -> None:
        self.loop = loop
        self.after = after
        # loop time (monotonic) and wall time read together: timers follow the loop's
        # monotonic clock, so a wall-clock step does not fire them early or late.
        self._offset = epoch_seconds(time.time()) - loop.time()
        self._heap: list[tuple[float, int, _Entry]] = []
        self._seq = 0
        self._handle: asyncio.TimerHandle | None = None
        self._armed_for = math.inf

    def now(self) -> float:
        return self.loop.time() + self._offset

    def call_at(self, when: float, callback: Callable[[], None]) -> _Entry:
        entry = _Entry(callback)
        self._seq += 1
        heapq.heappush(self._heap, (when, self._seq, entry))
        self._arm()
        return entry

    def cancel(self, handle: object) -> None:
        if isinstance(handle, _Entry):
            handle.cancelled = True

    def _arm(self) -> None:
        heap = self._heap
        while heap and heap[0][2].cancelled:
            heapq.heappop(heap)
        due = heap[0][0] if heap else math.inf
        if due == self._armed_for:
            return
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        self._armed_for = due
        if heap:
            self._handle = self.loop.call_at(due - self._offset, self._run)

    def _run(self) -> None:
        self._handle = None
        self._armed_for = math.inf
        heap = self._heap
        # the loop fires a handle up to its clock's resolution early
        now = self.now() + _EARLY
        ran = False
        try:
            while heap and (heap[0][2].cancelled or heap[0][0] <= now):
                entry = heapq.heappop(heap)[2]
                if not entry.cancelled:
                    ran = True
                    entry.callback()
        finally:
            if ran:
                self.after()
            self._arm()
