"""When jobs could start: sbatch --test-only's answer for a job not submitted
(:meth:`EstimatesMixin.will_run`, which uses up a job id as Slurm 22.05's does) and squeue
--start's expected starts of the pending jobs (:meth:`EstimatesMixin.expected_starts`).

Both look ahead the way Slurm's will-run test does: the jobs holding nodes end at their
time limits (a job without one never ends), and the job starts at the first of those ends
(or now) at which the select plugin places it on the nodes of its partition that are free
then. A node some job still holds counts as taken, even if that job uses only part of it.
:meth:`~EstimatesMixin.expected_starts` plans the eligible pending jobs in queue order, each
one's nodes held from its expected start to its time limit, so that no job is expected
ahead of one the queue puts first, as a backfill plan does. (Known gap: Slurm's own plan
comes from its backfill pass, and shows N/A for a job no pass has planned yet.)

Part of :class:`~plurm.controller.controller.Controller` (see :mod:`.base`).
"""

from __future__ import annotations

import attrs

from plurm.controller.base import _PENDING, _SUCCESS, ControllerBase, RequestError
from plurm.model.job import Job, JobRequest

__all__ = ["EstimatesMixin", "WillRun"]


@attrs.frozen
class WillRun:
    """sbatch --test-only's answer: the id the job would get, when and where it would
    start, and with how many CPUs."""

    job_id: int
    start: float
    nodes: tuple[str, ...]
    cpus: int
    partition: str


#: (start, end (None: never), node bitmap) of each planned hold.
_Hold = tuple[float, float | None, int]


class EstimatesMixin(ControllerBase):
    """The controller's start-time estimates."""

    def will_run(self, request: JobRequest) -> WillRun:
        """When and where a job of ``request`` would start if it were submitted now,
        ahead of every pending job; RequestError with sbatch's refusal otherwise. Nothing
        is submitted and no job id is used up."""
        self._tick()
        partition = self._partition_for(request)
        if request.min_nodes < 1:
            raise RequestError("Node count specification invalid")
        charged = self._validate(request, partition)
        part = self.cluster.partition(partition)
        limit = self._time_limit_of(request, part)
        job = Job(
            job_id=self._next_id,
            request=request,
            submit_time=self.now,
            partition=partition,
            account=charged.account,
            qos=charged.qos,
            time_limit=limit,
            wanted_nodes=self._wanted_nodes(request, part),
        )
        if self._beyond_node_limits(request, partition):
            raise RequestError("Requested node configuration is not available")
        begin = request.begin_time if request.begin_time is not None else self.now
        # (as Slurm's will-run test: the jobs that hold nodes, not the pending ones' plans;
        # 22.05 also uses up a job id for the answer)
        found = self._earliest(job, self._holds(), max(begin, self.now))
        if found is None:
            raise RequestError("Requested node configuration is not available")
        self._next_id += 1
        start, nodes = found
        # a select that gives whole nodes (no finer resources to tell of) gives all their
        # CPUs; one that gives cores, what the job asks for
        if self.plugins.select_job_resources(job, self.cluster) is None:
            cpus = sum(self.cluster.node(name).cpus for name in nodes)
        else:
            cpus = max(request.cpus, len(nodes))
        return WillRun(job.job_id, start, nodes, cpus, partition)

    def expected_starts(self) -> dict[int, float]:
        """The expected start of each pending job that may start at all: its begin time
        while it is not eligible yet, else its place in a plan of the queue (see the module
        docstring). A job that no plan places (it waits on its partition's limits, or for
        nodes that never free) has none."""
        self._tick()
        now = self.now
        holds = self._holds()
        pending = [
            job
            for job in self.cluster.jobs_in(_PENDING)
            if job.job_id not in self._ending and not self._refused(job)
        ]
        ordered = self.plugins.sched_queue_order(pending, self._preempts(), self.cluster)
        starts: dict[int, float] = {}
        for job in ordered:
            found = self._earliest(job, holds, max(job.eligible_time, now))
            if found is None:
                continue
            start, nodes = found
            starts[job.job_id] = start
            end = None if job.time_limit is None else start + job.time_limit * 60
            holds.append((start, end, self.cluster.mask_of(nodes)))
        for job in pending:
            if job.job_id not in starts and job.eligible_time > now:
                starts[job.job_id] = job.eligible_time
        return starts

    def _holds(self) -> list[_Hold]:
        now = self.now
        return [(now, end, mask) for _, end, mask in self._held_ends()]

    def _earliest(
        self, job: Job, holds: list[_Hold], after: float
    ) -> tuple[float, tuple[str, ...]] | None:
        """The first moment from ``after`` on at which the select plugin places ``job`` on
        its usable nodes that no hold covers then, and the nodes."""
        usable = self._usable_nodes(job).mask
        test = self.plugins.select_test_only_for(self.cluster)
        moments = sorted(
            {after}
            | {end for _, end, _ in holds if end is not None and end > after}
            | {start for start, _, _ in holds if start > after}
        )
        for moment in moments:
            taken = 0
            for start, end, mask in holds:
                if start <= moment and (end is None or end > moment):
                    taken |= mask
            free = usable & ~taken
            if not free:
                continue
            result = test(job, self.cluster.bitmap(free))
            if result.status is _SUCCESS:
                return moment, result.nodes
        return None
