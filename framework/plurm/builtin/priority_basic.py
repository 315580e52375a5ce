"""priority/basic: first in, first out (Slurm's PriorityType default).

Each job gets one less than the last priority given, starting below 0xFFFF0000 as Slurm 22.05
shows it (job N gets 0xFFFF0000 - N), lowered by its ``--nice``; a release of a hold or an
scontrol resume counts as a new submission. No recalculation, no factors, no shares.
"""

from __future__ import annotations

from collections.abc import Sequence

from plurm._markers import HOOK_API_VERSION, hookimpl
from plurm.model.cluster import Cluster
from plurm.model.job import Job
from plurm.registry import PluginContext

__all__ = ["TOP", "BasicPriority"]

#: The counter starts here; the first job gets one less.
TOP = 0xFFFF0000


class BasicPriority:
    """A descending counter."""

    PLURM_HOOK_API = HOOK_API_VERSION

    def __init__(self, context: PluginContext) -> None:
        self.context = context
        self.lowest = TOP

    @hookimpl
    def priority_job_set(self, job: Job, cluster: Cluster) -> int:
        self.lowest -= 1
        return max(1, self.lowest - job.request.nice)

    @hookimpl
    def priority_jobs_recovered(self, jobs: Sequence[Job], cluster: Cluster) -> None:
        # the counter goes on below the lowest priority the restored jobs were given
        given = [job.priority + job.request.nice for job in jobs if job.priority > 0]
        self.lowest = min([self.lowest, *given])
