"""PBS's preemption rules over Plurm's jobs: a job's status, its preempt priority, its
method ladder and its ``preempt_targets``. Pure functions of the configuration, the job and
the running jobs; the plugin (:mod:`plurm_preempt_pbs.plugin`) answers hooks with them.

* **Statuses.** ``express_queue`` when the job's queue (its partition) has a priority at
  least ``preempt_queue_prio``; ``queue_softlimits`` / ``server_softlimits`` when its user,
  group or project (Slurm account) runs more jobs than a ``max_run_soft`` of its queue / of
  the server allows, counting the job itself (so every running job of an entity over its
  limit is over, and a pending job is over when starting it would put the entity over).
  A job with none of them is ``normal_jobs``.
* **Preempt priority.** ``preempt_prio``'s levels get 99000, 98000, ... in list order; the
  levels are matched most specific first (more statuses first, then the higher value); a
  job takes the first level all of whose statuses it has, plus its queue's priority when
  that level is an express one. A job that matches no level counts as normal: the value of
  the ``normal_jobs`` level (0 when that is not listed).
* **Ladder.** ``preempt_order``'s letters for the job's percent of requested walltime left,
  ``100 - used/requested*100`` (a job past its time counts as 1%, a job that requested no
  walltime takes the first range); used time leaves suspended time out. The request is the
  job's ``sbatch -t``, else its partition's DefaultTime.
* **preempt_targets.** A job names them in its comment (``sbatch --comment``) as PBS's
  resource: ``preempt_targets=queue=Q1,queue=Q2`` or ``preempt_targets=NONE``, optionally
  after ``-l``; a job that gives none takes its queue's, else the server's
  ``resources_default.preempt_targets`` (qmgr.conf). Only running jobs in a named queue may
  then be preempted for it; NONE preempts nothing. Only when ``preempt_targets_enable`` is
  true.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

import attrs

from plurm.model.cluster import Cluster
from plurm.model.job import Job, JobState
from plurm_preempt_pbs.config import PbsConfig
from plurm_preempt_pbs.values import SoftLimits

__all__ = [
    "NORMAL",
    "Levels",
    "Targets",
    "job_targets",
    "methods",
    "parse_targets",
    "percent_left",
    "statuses",
]

EXPRESS = "express_queue"
NORMAL = "normal_jobs"
QUEUE_SOFT = "queue_softlimits"
SERVER_SOFT = "server_softlimits"
#: The value of the first level of preempt_prio; the next ones count down by this step.
TOP_LEVEL = 99000
LEVEL_STEP = 1000


@attrs.frozen
class Levels:
    """``preempt_prio`` as a table: (statuses, value), most specific first."""

    table: tuple[tuple[frozenset[str], int], ...]
    normal: int

    @classmethod
    def build(cls, pbs: PbsConfig) -> Levels:
        listed = [
            (level, TOP_LEVEL - LEVEL_STEP * index) for index, level in enumerate(pbs.preempt_prio)
        ]
        table = sorted(listed, key=lambda entry: (-len(entry[0]), -entry[1]))
        normal = next((value for level, value in listed if level == {NORMAL}), 0)
        return cls(tuple(table), normal)

    def value(self, bits: frozenset[str], queue_priority: int) -> int:
        """The preempt priority of a job with statuses ``bits`` in a queue of that priority."""
        if not bits:
            bits = frozenset({NORMAL})
        for level, value in self.table:
            if level <= bits:
                return value + (queue_priority if EXPRESS in level else 0)
        return self.normal


def _over(limits: SoftLimits, job: Job, running: Iterable[Job]) -> bool:
    """Is ``job``'s user, group, project or the whole set over ``limits``, counting the
    job itself as running?"""
    if limits.empty():
        return False
    others = [other for other in running if other.job_id != job.job_id]
    if limits.overall is not None and len(others) + 1 > limits.overall:
        return True
    request = job.request
    user = limits.user_limit(request.user)
    if user is not None and sum(o.request.user == request.user for o in others) + 1 > user:
        return True
    group = limits.group_limit(request.group)
    if group is not None and sum(o.request.group == request.group for o in others) + 1 > group:
        return True
    project = limits.project_limit(job.account)
    return project is not None and sum(o.account == job.account for o in others) + 1 > project


def statuses(pbs: PbsConfig, job: Job, cluster: Cluster) -> frozenset[str]:
    """The PBS statuses of ``job`` now (see the module docstring)."""
    queue = pbs.queue(job.partition)
    bits: set[str] = set()
    if queue is not None and queue.priority >= pbs.preempt_queue_prio:
        bits.add(EXPRESS)
    server = pbs.server_max_run_soft
    queue_limits = queue.max_run_soft if queue is not None else SoftLimits()
    if server.empty() and queue_limits.empty():
        return frozenset(bits)
    running = cluster.jobs_unordered(JobState.RUNNING)
    if _over(server, job, running):
        bits.add(SERVER_SOFT)
    if not queue_limits.empty():
        in_queue = [other for other in running if other.partition == job.partition]
        if _over(queue_limits, job, in_queue):
            bits.add(QUEUE_SOFT)
    return frozenset(bits)


def queue_priority(pbs: PbsConfig, job: Job) -> int:
    """The priority of ``job``'s queue (0 when qmgr.conf does not set one)."""
    queue = pbs.queue(job.partition)
    return queue.priority if queue is not None else 0


def requested_walltime(job: Job, cluster: Cluster) -> int | None:
    """The walltime ``job`` requested, in seconds: its ``sbatch -t``, else its partition's
    DefaultTime (PBS's queue ``resources_default.walltime``); None when neither is set (a
    partition's MaxTime is a cap, not a request)."""
    minutes = job.request.time_limit
    if minutes is None:
        partition = cluster.partitions.get(job.partition)
        if partition is not None and partition.default_time_configured:
            minutes = partition.default_time
    return None if minutes is None else minutes * 60


def percent_left(job: Job, cluster: Cluster) -> int | None:
    """Percent of the requested walltime left now (1 when past it; None without a request)."""
    requested = requested_walltime(job, cluster)
    if requested is None:
        return None
    if requested <= 0:
        return 1
    used = job.run_time(cluster.now)
    left = 100 - math.floor(used * 100 / requested)
    return max(1, min(100, left))


def methods(pbs: PbsConfig, job: Job, cluster: Cluster) -> str:
    """The preemption methods tried for ``job`` now, in order."""
    return pbs.preempt_order.methods(percent_left(job, cluster))


@attrs.frozen
class Targets:
    """A job's ``preempt_targets``: the queues it may preempt jobs of (``none``: no job)."""

    queues: frozenset[str] = frozenset()
    none: bool = False
    #: Items Plurm does not model (``Resource_List.arch=linux``): they match no job.
    unknown: tuple[str, ...] = ()

    def allows(self, victim: Job) -> bool:
        return not self.none and victim.partition in self.queues


_TARGETS = re.compile(r"(?:^|\s)(?:-l\s*)?preempt_targets=(\S+)")


def parse_targets(text: str) -> Targets:
    """A ``preempt_targets`` value: ``queue=Q[,queue=Q2 ...]`` or ``NONE``."""
    items = [item.strip() for item in text.split(",") if item.strip()]
    if any(item.upper() == "NONE" for item in items):
        return Targets(none=True)
    queues: set[str] = set()
    unknown: list[str] = []
    for item in items:
        key, _, value = item.partition("=")
        if key.lower() == "queue" and value:
            queues.add(value)
        else:
            unknown.append(item)
    return Targets(frozenset(queues), unknown=tuple(unknown))


def job_targets(job: Job, pbs: PbsConfig | None = None) -> Targets | None:
    """The ``preempt_targets`` of ``job``: those in its comment, else its queue's
    ``resources_default.preempt_targets``, else the server's; None when there are none."""
    comment = job.request.comment
    if "preempt_targets" in comment:
        match = _TARGETS.search(comment)
        if match is not None:
            return parse_targets(match.group(1))
    if pbs is None:
        return None
    queue = pbs.queue(job.partition)
    if queue is not None and queue.default_preempt_targets is not None:
        return parse_targets(queue.default_preempt_targets)
    if pbs.server_default_preempt_targets is not None:
        return parse_targets(pbs.server_default_preempt_targets)
    return None
