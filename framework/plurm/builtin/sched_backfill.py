"""sched/backfill: Slurm's default scheduler. The main scheduler's queue order, plus a
periodic pass that starts lower-priority jobs early when that delays no job ahead of them.

Each pass walks the pending jobs in queue order, at most ``bf_max_job_test`` of them. For
each it looks for the earliest time, within ``bf_window`` minutes, at which enough of its
nodes are free: free of running jobs (which end at their time limit, rounded up to
``bf_resolution`` seconds) and of the reservations made earlier in the pass. A job that fits
now starts; one that fits later reserves its nodes from that time until its time limit, so no
job after it may use them then. A job without a time limit reserves its nodes for ever.
This is conservative backfill over the window, as Slurm's plugin does; like Slurm, nodes are
the unit of the plan (a node running anything counts as busy until that job's end).
"""

from __future__ import annotations

import math

import attrs

from plurm._markers import hookimpl
from plurm.builtin.sched_builtin import BuiltinScheduler
from plurm.model.backfill import BackfillStart, BackfillView
from plurm.model.cluster import Cluster
from plurm.model.job import Job, JobState
from plurm.model.select import SelectStatus

__all__ = ["BackfillScheduler"]


@attrs.frozen
class _Reservation:
    start: float
    end: float
    nodes: frozenset[str]

    def overlaps(self, start: float, end: float) -> bool:
        return self.start < end and start < self.end


class BackfillScheduler(BuiltinScheduler):
    """The builtin queue order with EASY-style backfill over a window."""

    @hookimpl
    def sched_backfill_interval(self, cluster: Cluster) -> int:
        return max(1, cluster.config.scheduler_parameters.bf_interval)

    @hookimpl
    def sched_backfill(
        self, jobs: list[Job], view: BackfillView, cluster: Cluster
    ) -> list[BackfillStart]:
        params = cluster.config.scheduler_parameters
        now = view.now
        horizon = now + params.bf_window * 60
        resolution = max(1, params.bf_resolution)

        def rounded(when: float | None) -> float:
            """Times in the plan are kept at bf_resolution: ends round up."""
            if when is None:
                return math.inf
            return now + math.ceil(max(0.0, when - now) / resolution) * resolution

        busy_until: dict[str, float] = {}
        for job in cluster.jobs_in(JobState.RUNNING, JobState.SUSPENDED, JobState.COMPLETING):
            end = rounded(view.expected_end(job))
            for name in job.nodes:
                busy_until[name] = max(busy_until.get(name, now), end)
        plan: list[_Reservation] = []
        starts: list[BackfillStart] = []
        for job in jobs[: max(0, params.bf_max_job_test)]:
            usable = view.usable_nodes(job)
            if not usable:
                continue
            duration = math.inf if job.time_limit is None else job.time_limit * 60
            times = sorted(
                {now}
                | {end for end in busy_until.values() if now < end <= horizon}
                | {r.end for r in plan if now < r.end <= horizon}
            )
            for start in times:
                end = start + duration
                free = [
                    name
                    for name in usable
                    if busy_until.get(name, now) <= start
                    and not any(name in r.nodes and r.overlaps(start, end) for r in plan)
                ]
                result = view.test_only(job, free)
                if result.status is not SelectStatus.SUCCESS:
                    continue
                if start == now:
                    starts.append(BackfillStart(job.job_id, result.nodes))
                    for name in result.nodes:
                        busy_until[name] = end
                else:
                    plan.append(_Reservation(start, end, frozenset(result.nodes)))
                break
        return starts
