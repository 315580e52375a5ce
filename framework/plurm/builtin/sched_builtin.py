"""sched/builtin: the pending queue in Slurm's order, nothing else.

Slurm's ``sort_job_queue2`` puts a job that can preempt another ahead of it, then orders by
the partition's PriorityTier (higher first), the job's priority (higher first), submit time
and job id. Unless a job may preempt one of its own tier or above, that is a key order, and
the plugin gives the key (``sched_queue_key``) so that the core keeps the queue in order.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Mapping, Sequence

from plurm._markers import HOOK_API_VERSION, hookimpl
from plurm.model.cluster import Cluster
from plurm.model.job import Job, PreemptsByTier, never_preempts
from plurm.registry import PluginContext


class BuiltinScheduler:
    """The queue order of Slurm's main scheduler."""

    PLURM_HOOK_API = HOOK_API_VERSION

    def __init__(self, context: PluginContext) -> None:
        self.context = context

    @hookimpl
    def sched_queue_key(
        self, preempts: Callable[[Job, Job], bool], cluster: Cluster
    ) -> Callable[[Job], tuple[int, int, float, int]] | None:
        if not (preempts is never_preempts or isinstance(preempts, PreemptsByTier)):
            return None  # a job goes ahead of one it may preempt: not a key order
        if type(self).sched_queue_order is not BuiltinScheduler.sched_queue_order:
            return None  # a subclass orders the queue its own way: the key is not its order
        tiers = {name: part.priority_tier for name, part in cluster.partitions.items()}

        def key(job: Job) -> tuple[int, int, float, int]:
            return (-tiers[job.partition], -job.priority, job.submit_time, job.job_id)

        return key

    @hookimpl
    def sched_queue_order(
        self, jobs: Sequence[Job], preempts: Callable[[Job, Job], bool], cluster: Cluster
    ) -> list[Job]:
        tiers = {name: part.priority_tier for name, part in cluster.partitions.items()}
        if preempts is never_preempts or isinstance(preempts, PreemptsByTier):
            # No job goes ahead of another by preemption, or only of jobs in lower tiers,
            # which the key puts after it anyway: the order is the key's alone.
            return _by_key(jobs, tiers)
        keyed = [
            ((-tiers[job.partition], -job.priority, job.submit_time, job.job_id), job)
            for job in jobs
        ]
        keyed.sort(key=_first)  # keys are unique (they end with the job id)
        keys = {job.job_id: key for key, job in keyed}  # each job's key, once

        def compare(first: Job, second: Job) -> int:
            ahead, behind = preempts(first, second), preempts(second, first)  # once each
            if ahead and not behind:
                return -1
            if behind and not ahead:
                return 1
            a, b = keys[first.job_id], keys[second.job_id]
            return (a > b) - (a < b)

        ordered = [job for _, job in keyed]
        return sorted(ordered, key=functools.cmp_to_key(compare))


_first = operator.itemgetter(0)
_JOB_ID = operator.attrgetter("job_id")
_SUBMIT_TIME = operator.attrgetter("submit_time")
_PRIORITY = operator.attrgetter("priority")
_PARTITION = operator.attrgetter("partition")


def _by_key(jobs: Sequence[Job], tiers: Mapping[str, int]) -> list[Job]:
    """``jobs`` in the order of the key (-tier, -priority, submit time, job id), sorted one
    field at a time from the last, as sort is stable (descending fields with reverse=True,
    which keeps equal jobs in their order too). Every pass orders the whole pending queue:
    attribute getters run in C, where building a key tuple per job does not; a list
    already in order costs one comparison per job."""
    ordered = sorted(jobs, key=_JOB_ID)
    ordered.sort(key=_SUBMIT_TIME)
    ordered.sort(key=_PRIORITY, reverse=True)
    if len({tiers[name] for name in set(map(_PARTITION, ordered))}) > 1:
        ordered.sort(key=lambda job: tiers[job.partition], reverse=True)
    return ordered
