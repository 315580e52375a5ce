"""preempt/partition_prio: jobs in higher-PriorityTier partitions preempt lower ones.

* A victim needs a strictly lower tier than the preemptor, and its partition's PreemptMode
  (else the cluster's) must not be OFF. With the PRIORITY flag (in the preemptor's partition
  or the cluster) the preemptor's job priority must not be lower than the victim's.
* The victim's mode is its partition's PreemptMode, else the cluster's, without GANG and
  PRIORITY.
* The ordering key is ``(PriorityTier << 16) + node count``: lower tiers first, then smaller
  jobs.
* GraceTime is the victim partition's.
"""

from __future__ import annotations

import functools

import attrs

from plurm import HOOK_API_VERSION, hookimpl
from plurm.conf.model import PartitionSpec
from plurm.conf.values import PreemptBase, PreemptMode
from plurm.model.cluster import Cluster
from plurm.model.job import Job
from plurm.registry import PluginContext

__all__ = ["PartitionPriority"]


def _mode(part: PartitionSpec, cluster: Cluster) -> PreemptMode:
    mode = part.preempt_mode if part.preempt_mode is not None else cluster.config.preempt_mode
    return _without_flags(mode)


@functools.lru_cache(maxsize=256)
def _without_flags(mode: PreemptMode) -> PreemptMode:
    """The mode without GANG and PRIORITY (modes are frozen values: asked for every
    candidate, the answer is made once)."""
    return attrs.evolve(mode, gang=False, priority=False)


@attrs.frozen
class _Pair:
    """The policy for a preemptor's partition and a victim's: whether the preemptor's job
    priority must not be lower (the PRIORITY flag), whether the tiers and the victim's mode
    allow it, and whether the partitions share a node."""

    by_priority: bool
    tiers: bool
    overlap: bool


class PartitionPriority:
    """Slurm's preempt/partition_prio policy."""

    PLURM_HOOK_API = HOOK_API_VERSION

    def __init__(self, context: PluginContext) -> None:
        self.context = context
        # What the policy says for a pair of partitions (see _pair), per pair of partition
        # objects and cluster PreemptMode: the queue order asks for every pair of jobs it
        # compares, and a partition's node list can be thousands of names (a partition
        # update makes a new object, so a new answer).
        self._pairs: dict[tuple[str, str], tuple[PartitionSpec, PartitionSpec, object, _Pair]]
        self._pairs = {}

    def _pair(self, mine: PartitionSpec, theirs: PartitionSpec, cluster: Cluster) -> _Pair:
        key = (mine.name, theirs.name)
        config_mode = cluster.config.preempt_mode
        known = self._pairs.get(key)
        if (
            known is None
            or known[0] is not mine
            or known[1] is not theirs
            or known[2] is not config_mode
        ):
            flags = mine.preempt_mode or config_mode
            pair = _Pair(
                by_priority=flags.priority or config_mode.priority,
                tiers=theirs.priority_tier < mine.priority_tier
                and _mode(theirs, cluster).base is not PreemptBase.OFF,
                overlap=not set(mine.nodes).isdisjoint(theirs.nodes),
            )
            known = self._pairs[key] = (mine, theirs, config_mode, pair)
        return known[3]

    @hookimpl
    def preempt_by_tier(self, cluster: Cluster) -> bool:
        return True  # a victim needs a strictly lower tier (see _pair)

    @hookimpl
    def preempt_by_partition(self, cluster: Cluster) -> bool:
        return True  # lower tiers only, never a PreemptMode=OFF partition (see _pair)

    @hookimpl
    def preempt_victims_fixed(self, cluster: Cluster) -> bool:
        return True  # mode and priority come from the partition, QOS and node count

    @hookimpl
    def preempt_preemptable(self, preemptor: Job, preemptee: Job, cluster: Cluster) -> bool:
        pair = self._pair(
            cluster.partition(preemptor.partition), cluster.partition(preemptee.partition), cluster
        )
        if pair.by_priority and preemptor.priority < preemptee.priority:
            return False
        return pair.tiers

    @hookimpl
    def preempt_mode(self, job: Job, cluster: Cluster) -> PreemptMode:
        return _mode(cluster.partition(job.partition), cluster)

    @hookimpl
    def preempt_priority(self, job: Job, cluster: Cluster) -> int:
        tier = cluster.partition(job.partition).priority_tier
        return (tier << 16) + min(len(job.nodes) or job.request.min_nodes, 0xFFFF)

    @hookimpl
    def preempt_grace_time(self, job: Job, cluster: Cluster) -> int:
        return cluster.partition(job.partition).grace_time

    @hookimpl
    def preempt_job_preempt_check(self, preemptor: Job, preemptee: Job, cluster: Cluster) -> bool:
        pair = self._pair(
            cluster.partition(preemptor.partition), cluster.partition(preemptee.partition), cluster
        )
        if not pair.overlap:
            return False
        if pair.by_priority and preemptor.priority < preemptee.priority:
            return False
        return pair.tiers
