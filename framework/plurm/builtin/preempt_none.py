"""preempt/none: no job may preempt another (Slurm's default, PreemptType unset)."""

from __future__ import annotations

from plurm._markers import HOOK_API_VERSION, hookimpl
from plurm.conf.values import PreemptMode
from plurm.model.cluster import Cluster
from plurm.model.job import Job
from plurm.registry import PluginContext


class NoPreemption:
    """Answers every preemption question with no."""

    PLURM_HOOK_API = HOOK_API_VERSION

    def __init__(self, context: PluginContext) -> None:
        self.context = context

    @hookimpl
    def preempt_enabled(self, cluster: Cluster) -> bool:
        return False

    @hookimpl
    def preempt_preemptable(self, preemptor: Job, preemptee: Job, cluster: Cluster) -> bool:
        return False

    @hookimpl
    def preempt_mode(self, job: Job, cluster: Cluster) -> PreemptMode:
        return PreemptMode()

    @hookimpl
    def preempt_priority(self, job: Job, cluster: Cluster) -> int:
        return 0

    @hookimpl
    def preempt_grace_time(self, job: Job, cluster: Cluster) -> int:
        return 0

    @hookimpl
    def preempt_job_preempt_check(self, preemptor: Job, preemptee: Job, cluster: Cluster) -> bool:
        return False
