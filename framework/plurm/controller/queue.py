"""The pending queue, kept in the sched plugin's order between scheduling passes.

Every pass reads the eligible pending jobs in queue order. Ordering them all anew for each
pass costs a sort of the whole queue per event, and on a loaded cluster the queue holds tens
of thousands of jobs while an event-triggered pass reads about a hundred of them. When the
sched plugin gives a sort key (``sched_queue_key``), the controller files each job under its
key once, when it becomes pending, eligible, or moves to another partition, and a pass reads
the filed jobs in key order.

Changes are noted as they happen (:meth:`PendingQueue.note`) and filed at the next read, so a
pass that starts jobs while it reads never changes the list it is reading.
"""

from __future__ import annotations

import heapq
import itertools
import operator
from collections.abc import Callable, Container, Iterable, Iterator, Sequence, Set
from typing import Any, TypeVar, overload

from plurm.controller.ordered import ArrivalSorted
from plurm.model.job import Job, JobState, PendingReason

__all__ = ["PendingByPartition", "PendingQueue", "ReadAsNeeded"]

# Enum members for the hot paths: on Python 3.11 a member read through its enum class goes
# through the class's __getattr__ hook (some ten times the cost of reading a global).
_PENDING = JobState.PENDING

T = TypeVar("T")

#: A filed job: its key, then its id (so that two entries never compare their jobs), then it.
_Entry = tuple[Any, int, Job]
_job_of: Callable[[_Entry], Job] = operator.itemgetter(2)


def _every(job: Job) -> bool:
    return True


class PendingQueue:
    """The pending jobs filed by a sort key: those eligible now in key order, the others by
    the time they become eligible. Without a key (:meth:`reset` with None) it keeps nothing
    and the controller orders the queue through ``sched_queue_order`` each pass."""

    def __init__(self) -> None:
        self._key: Callable[[Job], Any] | None = None
        self._admit: Callable[[Job], bool] = _every
        self._filed: ArrivalSorted[_Entry] = ArrivalSorted()
        #: The key and partition each filed job was filed under (both may have changed
        #: since).
        self._filed_as: dict[int, tuple[Any, str]] = {}
        #: Pending jobs not eligible yet: (eligible time, job id, job), earliest first.
        self._waiting: list[tuple[float, int, Job]] = []
        #: Jobs changed since the last read, to file anew.
        self._noted: dict[int, Job] = {}
        #: The filed jobs of each partition (the one they were filed in), in key order.
        self._per_partition: dict[str, ArrivalSorted[_Entry]] = {}

    @property
    def kept(self) -> bool:
        """Whether the queue is kept (the sched plugin gave a key)."""
        return self._key is not None

    def reset(
        self,
        key: Callable[[Job], Any] | None,
        pending: Iterable[Job],
        admit: Callable[[Job], bool] = _every,
    ) -> None:
        """Start over with ``key`` (None: keep nothing) and the jobs pending now. A job is
        filed only if ``admit(job)``, asked as it is filed; the answer must hold until the
        job is noted again or the queue reset (the controller's partition limits)."""
        self._key = key
        self._admit = admit
        self._filed.clear()
        self._filed_as.clear()
        self._waiting.clear()
        self._per_partition.clear()
        self._noted = {job.job_id: job for job in pending} if key is not None else {}

    def note(self, job: Job) -> None:
        """``job`` became pending, stopped pending, or changed partition: file it anew at
        the next read."""
        if self._key is not None:
            self._noted[job.job_id] = job

    def ordered(self, now: float) -> Iterator[Job]:
        """The pending jobs eligible by ``now`` and admitted, in key order. A job filed as it
        becomes eligible loses its BeginTime reason. The iterator is good until the next
        call."""
        key = self._key
        if key is None:
            raise RuntimeError("the pending queue is not kept (no sched_queue_key)")
        filed, filed_as, waiting = self._filed, self._filed_as, self._waiting
        if self._noted:
            noted, self._noted = self._noted, {}
            for job_id, job in noted.items():
                old = filed_as.pop(job_id, None)
                if old is not None:
                    entry = (old[0], job_id, job)
                    filed.remove(entry)
                    mates = self._per_partition[old[1]]
                    mates.remove(entry)
                    if not mates:
                        del self._per_partition[old[1]]
                if job.state is not _PENDING:
                    continue
                if job.eligible_time <= now:
                    self._file(job, key)
                else:
                    heapq.heappush(waiting, (job.eligible_time, job_id, job))
        while waiting and waiting[0][0] <= now:
            when, job_id, job = heapq.heappop(waiting)
            # an entry is stale if the job left the queue or was filed anew since
            stale = job.state is not JobState.PENDING or job.eligible_time != when
            if not stale and job_id not in filed_as:
                self._file(job, key)
        return map(_job_of, filed)

    def partitions(self) -> Set[str]:
        """The partitions the jobs the last read gave wait in (as they were filed)."""
        return self._per_partition.keys()

    def ordered_except(self, skipped: Container[str]) -> Iterator[Job]:
        """The jobs the last read gave, in key order, but those of the partitions in
        ``skipped`` (as they were filed), which is asked as the reading goes: a partition
        added to it mid-way yields no more jobs. Each partition's jobs are read in turn
        with the others' (a heap merge), so the skipped jobs cost nothing."""
        heap = []
        for name, mates in self._per_partition.items():
            rest = iter(mates)
            heap.append((next(rest), name, rest))  # (a filed partition has jobs)
        heapq.heapify(heap)  # entries are unique (job ids): names and iterators never compare
        while heap:
            entry, name, rest = heap[0]
            if name in skipped:
                heapq.heappop(heap)
                continue
            yield entry[2]
            following = next(rest, None)
            if following is None:
                heapq.heappop(heap)
            else:
                heapq.heapreplace(heap, (following, name, rest))

    def where(self, job_id: int) -> tuple[tuple[Any, int], str] | None:
        """Where the last read filed the job: its place in key order (key, job id) and
        its partition; None when it is not filed (not pending, not eligible yet, or not
        admitted)."""
        filed = self._filed_as.get(job_id)
        return None if filed is None else ((filed[0], job_id), filed[1])

    def _file(self, job: Job, key: Callable[[Job], Any]) -> None:
        if job.reason is PendingReason.BEGIN_TIME:
            job.reason = PendingReason.NONE
        if not self._admit(job):
            return
        value = key(job)
        entry = (value, job.job_id, job)
        self._filed_as[job.job_id] = (value, job.partition)
        self._filed.add(entry)
        mates = self._per_partition.get(job.partition)
        if mates is None:
            mates = self._per_partition[job.partition] = ArrivalSorted()
        mates.add(entry)


class ReadAsNeeded(Sequence[T]):
    """A sequence over an iterator, read only as far as it is indexed: a backfill plugin
    that takes the first ``bf_max_job_test`` jobs of the queue does not make the core read
    and filter the rest of it. ``len()`` (or a negative index) reads everything."""

    def __init__(self, items: Iterable[T]) -> None:
        self._rest: Iterator[T] | None = iter(items)
        self._read: list[T] = []

    def _read_to(self, count: int | None) -> None:
        """Read until ``count`` items are read (None: all of them), or the end."""
        rest = self._rest
        if rest is None:
            return
        if count is None:
            self._read.extend(rest)
            self._rest = None
        elif count > len(self._read):
            self._read.extend(itertools.islice(rest, count - len(self._read)))
            if len(self._read) < count:
                self._rest = None

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[T]: ...

    def __getitem__(self, index: int | slice) -> T | Sequence[T]:
        if isinstance(index, slice):
            start, stop, step = index.start, index.stop, index.step
            # forwards from a known start to a known stop: read up to the stop; any other
            # slice (from the end, or backwards) reads everything
            forwards = step is None or step > 0
            bounded = forwards and stop is not None and stop >= 0 and (start or 0) >= 0
            self._read_to(stop if bounded else None)
        else:
            self._read_to(index + 1 if index >= 0 else None)
        return self._read[index]

    def __len__(self) -> int:
        self._read_to(None)
        return len(self._read)

    def __iter__(self) -> Iterator[T]:
        index = 0
        while True:
            self._read_to(index + 1)
            if index >= len(self._read):
                return
            yield self._read[index]
            index += 1


class PendingByPartition:
    """The pending jobs of each partition, highest priority first, so that a submission
    can tell whether a job of higher priority already waits in its partition without
    looking at every pending job. Kept up to date by :meth:`update` after each change of a
    job's state, partition or priority (scontrol update re-files the job it changes)."""

    def __init__(self) -> None:
        self._jobs: dict[str, ArrivalSorted[tuple[int, int, Job]]] = {}
        #: Where each filed job is: its partition and its entry there.
        self._entries: dict[int, tuple[str, tuple[int, int, Job]]] = {}

    def update(self, job: Job) -> None:
        """File ``job`` anew: out of the partition it was filed in, and into its partition
        if it is pending."""
        known = self._entries.pop(job.job_id, None)
        if known is not None:
            self._jobs[known[0]].remove(known[1])
        if job.state is _PENDING:
            entry = (-job.priority, job.job_id, job)
            mates = self._jobs.get(job.partition)
            if mates is None:
                mates = self._jobs[job.partition] = ArrivalSorted()
            mates.add(entry)
            self._entries[job.job_id] = (job.partition, entry)

    def higher_waits(self, job: Job, now: float) -> bool:
        """Whether another pending job of ``job``'s partition, eligible by ``now``, has a
        higher priority."""
        for negative, _, other in self._jobs.get(job.partition, ()):
            if -negative <= job.priority:
                return False
            if other is not job and other.eligible_time <= now:
                return True
        return False
