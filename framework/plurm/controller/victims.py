"""The running and suspended jobs kept in victim order between decisions.

Building the candidates anew for each job that must preempt asks the preempt plugin three
questions per running job and sorts them all: 85 % of a decision on a 10,000-node cluster.
When the plugin says a job's mode and victim priority stay fixed while it runs
(``preempt_victims_fixed``), the controller keeps this pool instead: each job is asked
about and filed in order once, when it starts, and taken out when it stops holding its
nodes. A decision then reads victims in order and asks ``preempt_preemptable`` only of
those it reads (see :class:`plurm.model.select.Candidates`).
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Callable, Iterable, Iterator

from plurm.conf.values import PreemptBase, PreemptMode
from plurm.model.job import Job
from plurm.model.select import Candidate

__all__ = ["VictimPool"]

#: (sort key, candidate, node mask): the key ends with the job id, so keys never tie and
#: the candidate is never compared.
_Entry = tuple[tuple[float, int], Candidate, int]


class VictimPool:
    """Per partition, its running and suspended jobs that have a preempt mode, in the order
    Slurm sorts candidates: lowest victim priority first, or youngest first with
    PreemptParameters=youngest_first; the job id breaks ties."""

    def __init__(
        self,
        mode_of: Callable[[Job], PreemptMode],
        priority_of: Callable[[Job], int],
        mask_of: Callable[[Iterable[str]], int],
        *,
        youngest_first: bool,
    ) -> None:
        self._mode_of = mode_of
        self._priority_of = priority_of
        self._mask_of = mask_of
        self._youngest_first = youngest_first
        self._by_partition: dict[str, list[_Entry]] = {}
        #: Per partition, a node bitmap holding its filed jobs' nodes, and how many jobs
        #: were taken out since it was worked out (their nodes may still be in it).
        self._nodes_of: dict[str, tuple[int, int]] = {}
        #: Each filed job's partition and entry (its start time may change after filing).
        self._filed: dict[int, tuple[str, _Entry]] = {}

    def add(self, job: Job) -> None:
        """File a job that now holds its nodes (it started, or was filed when suspended)."""
        mode = self._mode_of(job).base
        if mode is PreemptBase.OFF or job.job_id in self._filed:
            return
        priority = self._priority_of(job)
        if self._youngest_first:
            key = (-(job.start_time or 0.0), job.job_id)
        else:
            key = (float(priority), job.job_id)
        entry = (key, Candidate(job, mode, priority), self._mask_of(job.nodes))
        bisect.insort(self._by_partition.setdefault(job.partition, []), entry)
        self._filed[job.job_id] = (job.partition, entry)
        known = self._nodes_of.get(job.partition)
        if known is not None:
            self._nodes_of[job.partition] = (known[0] | entry[2], known[1])

    def discard(self, job_id: int) -> None:
        """Take out a job that no longer holds its nodes (ended, killed, requeued)."""
        filed = self._filed.pop(job_id, None)
        if filed is None:
            return
        partition, entry = filed
        entries = self._by_partition[partition]
        del entries[bisect.bisect_left(entries, entry)]
        known = self._nodes_of.get(partition)
        if known is not None:
            # A bound may hold more nodes than the jobs have: the nodes of the jobs taken
            # out stay in it until as many have gone as remain, when it is worked out
            # again (each job filed or taken out costs O(1) on average, where working it
            # out at every change cost a pass over every filed job).
            if known[1] + 1 > len(entries):
                del self._nodes_of[partition]
            else:
                self._nodes_of[partition] = (known[0], known[1] + 1)

    def __len__(self) -> int:
        return len(self._filed)

    def candidates(
        self,
        preemptor: Job,
        partitions: Iterable[str],
        nodes_mask: int,
        may_preempt: Callable[[Job, Job], bool],
    ) -> Iterator[Candidate]:
        """The jobs of ``partitions`` on a node of ``nodes_mask`` that ``preemptor`` may
        preempt, in victim order, asking ``may_preempt`` only as they are read. The order is
        taken when reading starts: jobs filed or taken out after that do not show."""
        lists = [self._by_partition.get(name) for name in partitions]
        present = [list(entries) for entries in lists if entries]
        ordered: Iterable[_Entry] = present[0] if len(present) == 1 else heapq.merge(*present)
        for _, candidate, mask in ordered:
            if mask & nodes_mask and may_preempt(preemptor, candidate.job):
                yield candidate

    def nodes_of(self, partitions: Iterable[str]) -> int:
        """A node bitmap holding every node of the filed jobs of ``partitions``, and perhaps
        some nodes of jobs taken out lately: every candidate :meth:`candidates` can yield
        for them is on these nodes (see :meth:`plurm.model.select.Candidates.nodes_bound`).
        """
        total = 0
        known = self._nodes_of
        for name in partitions:
            found = known.get(name)
            if found is None:
                nodes = 0
                for _, _, mask in self._by_partition.get(name, ()):
                    nodes |= mask
                found = known[name] = (nodes, 0)
            total |= found[0]
        return total
