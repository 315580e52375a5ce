"""preempt/mirror: a third-party policy that answers every question as partition_prio does.

Written from the policy's description, not from the shipped plugin's code, the way an outside
author would: a job may preempt a job of a partition with a strictly lower PriorityTier whose
PreemptMode (the partition's, else the cluster's) is not OFF, unless the PRIORITY flag is on
(in the preemptor's partition or the cluster) and the preemptor's job priority is lower.
Victims go in order of (tier << 16) + node count, with their partition's GraceTime. It
answers the capability hooks too, so select plugins treat it as they treat partition_prio.
"""

from __future__ import annotations

import attrs

from plurm import HOOK_API_VERSION, hookimpl
from plurm.conf.values import PreemptBase

__all__ = ["Mirror"]


def _mode(part, cluster):
    mode = part.preempt_mode if part.preempt_mode is not None else cluster.config.preempt_mode
    return attrs.evolve(mode, gang=False, priority=False)


class Mirror:
    PLURM_HOOK_API = HOOK_API_VERSION

    def __init__(self, context):
        self.context = context

    def _allows(self, preemptor, preemptee, cluster):
        mine = cluster.partition(preemptor.partition)
        theirs = cluster.partition(preemptee.partition)
        flags = mine.preempt_mode or cluster.config.preempt_mode
        if (flags.priority or cluster.config.preempt_mode.priority) and (
            preemptor.priority < preemptee.priority
        ):
            return False
        return (
            theirs.priority_tier < mine.priority_tier
            and _mode(theirs, cluster).base is not PreemptBase.OFF
        )

    @hookimpl
    def preempt_by_partition(self, cluster):
        return True

    @hookimpl
    def preempt_by_tier(self, cluster):
        return True

    @hookimpl
    def preempt_victims_fixed(self, cluster):
        return True

    @hookimpl
    def preempt_preemptable(self, preemptor, preemptee, cluster):
        return self._allows(preemptor, preemptee, cluster)

    @hookimpl
    def preempt_mode(self, job, cluster):
        return _mode(cluster.partition(job.partition), cluster)

    @hookimpl
    def preempt_priority(self, job, cluster):
        tier = cluster.partition(job.partition).priority_tier
        return (tier << 16) + min(len(job.nodes) or job.request.min_nodes, 0xFFFF)

    @hookimpl
    def preempt_grace_time(self, job, cluster):
        return cluster.partition(job.partition).grace_time

    @hookimpl
    def preempt_job_preempt_check(self, preemptor, preemptee, cluster):
        mine = cluster.partition(preemptor.partition)
        theirs = cluster.partition(preemptee.partition)
        if set(mine.nodes).isdisjoint(theirs.nodes):
            return False
        return self._allows(preemptor, preemptee, cluster)
