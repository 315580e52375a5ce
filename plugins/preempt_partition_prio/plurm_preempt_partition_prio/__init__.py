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

import attrs

from plurm import hookimpl
from plurm._markers import HOOK_API_VERSION
from plurm.conf.model import PartitionSpec
from plurm.conf.values import PreemptBase, PreemptMode
from plurm.model.cluster import Cluster
from plurm.model.job import Job
from plurm.registry import PluginContext

__all__ = ["PartitionPriority"]


def _mode(part: PartitionSpec, cluster: Cluster) -> PreemptMode:
    mode = part.preempt_mode if part.preempt_mode is not None else cluster.config.preempt_mode
    return attrs.evolve(mode, gang=False, priority=False)


class PartitionPriority:
    """Slurm's preempt/partition_prio policy."""

    PLURM_HOOK_API = HOOK_API_VERSION

    def __init__(self, context: PluginContext) -> None:
        self.context = context
        # Whether two partitions share a node, per pair of partition objects: the queue
        # order asks for every pair of jobs it compares, and a partition's node list can
        # be thousands of names (a partition update makes a new object, so a new answer).
        self._overlaps: dict[tuple[str, str], tuple[PartitionSpec, PartitionSpec, bool]] = {}

    @hookimpl
    def preempt_preemptable(self, preemptor: Job, preemptee: Job, cluster: Cluster) -> bool:
        mine = cluster.partition(preemptor.partition)
        theirs = cluster.partition(preemptee.partition)
        flags = mine.preempt_mode or cluster.config.preempt_mode
        if (flags.priority or cluster.config.preempt_mode.priority) and (
            preemptor.priority < preemptee.priority
        ):
            return False
        if theirs.priority_tier >= mine.priority_tier:
            return False
        return _mode(theirs, cluster).base is not PreemptBase.OFF

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
        mine = cluster.partition(preemptor.partition)
        theirs = cluster.partition(preemptee.partition)
        if not self._overlap(mine, theirs):
            return False
        return self.preempt_preemptable(preemptor, preemptee, cluster)

    def _overlap(self, mine: PartitionSpec, theirs: PartitionSpec) -> bool:
        key = (mine.name, theirs.name)
        known = self._overlaps.get(key)
        if known is None or known[0] is not mine or known[1] is not theirs:
            known = (mine, theirs, not set(mine.nodes).isdisjoint(theirs.nodes))
            self._overlaps[key] = known
        return known[2]
