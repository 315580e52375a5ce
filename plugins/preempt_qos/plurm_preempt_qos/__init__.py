"""preempt/qos: a job preempts jobs whose QOS its own QOS lists in ``Preempt``.

* A job's QOS is its ``--qos``, else ``normal`` (the default QOS slurmdbd creates); the
  core applies each QOS's PreemptExemptTime.
* Different QOS: the preemptor's QOS must list the victim's in ``Preempt``. Same QOS: only
  with WITHIN (in that QOS's PreemptMode or the cluster's) and a strictly higher job priority.
  With the PRIORITY flag the preemptor's job priority must also be strictly higher (unlike
  partition_prio, where equal is enough).
* The victim's mode is its QOS's PreemptMode, else the cluster's (``cluster`` or empty),
  without GANG, WITHIN and PRIORITY.
* The ordering key is ``(min(QOS Priority, 0xFFFF) << 16) + node count``: QOS Priority only
  orders victims, it does not decide who may preempt.
* GraceTime is the victim QOS's.
"""

from __future__ import annotations

import functools

import attrs

from plurm import HOOK_API_VERSION, hookimpl
from plurm.conf.model import QosSpec
from plurm.conf.values import PreemptMode
from plurm.model.cluster import Cluster
from plurm.model.job import Job
from plurm.registry import PluginContext

__all__ = ["QosPreemption"]


def _qos(job: Job, cluster: Cluster) -> QosSpec | None:
    return cluster.job_qos(job)


def _mode(qos: QosSpec | None, cluster: Cluster) -> PreemptMode:
    own = qos.preempt_mode if qos is not None else None
    mode = own if own is not None else cluster.config.preempt_mode
    return _without_flags(mode)


@functools.lru_cache(maxsize=256)
def _without_flags(mode: PreemptMode) -> PreemptMode:
    """The mode without GANG, WITHIN and PRIORITY (modes are frozen values: asked for every
    candidate, the answer is made once)."""
    return attrs.evolve(mode, gang=False, within=False, priority=False)


class QosPreemption:
    """Slurm's preempt/qos policy."""

    PLURM_HOOK_API = HOOK_API_VERSION

    def __init__(self, context: PluginContext) -> None:
        self.context = context

    @hookimpl
    def preempt_suspend_in_partition(self, cluster: Cluster) -> bool:
        return True  # victims by QOS, in any partition, the preemptor's own too

    @hookimpl
    def preempt_victims_fixed(self, cluster: Cluster) -> bool:
        return True  # mode and priority come from the partition, QOS and node count

    @hookimpl
    def preempt_preemptable(self, preemptor: Job, preemptee: Job, cluster: Cluster) -> bool:
        mine, theirs = _qos(preemptor, cluster), _qos(preemptee, cluster)
        if mine is None or theirs is None:
            return False
        cluster_mode = cluster.config.preempt_mode
        higher = preemptor.priority > preemptee.priority
        if mine.name == theirs.name:
            within = cluster_mode.within or (mine.preempt_mode or cluster_mode).within
            if not (within and higher):
                return False
        elif theirs.name not in mine.preempt:
            return False
        return higher or not cluster_mode.priority

    @hookimpl
    def preempt_mode(self, job: Job, cluster: Cluster) -> PreemptMode:
        return _mode(_qos(job, cluster), cluster)

    @hookimpl
    def preempt_priority(self, job: Job, cluster: Cluster) -> int:
        qos = _qos(job, cluster)
        priority = min(qos.priority if qos is not None else 0, 0xFFFF)
        return (priority << 16) + min(len(job.nodes) or job.request.min_nodes, 0xFFFF)

    @hookimpl
    def preempt_grace_time(self, job: Job, cluster: Cluster) -> int:
        qos = _qos(job, cluster)
        return qos.grace_time if qos is not None else 0

    @hookimpl
    def preempt_job_preempt_check(self, preemptor: Job, preemptee: Job, cluster: Cluster) -> bool:
        return self.preempt_preemptable(preemptor, preemptee, cluster)
