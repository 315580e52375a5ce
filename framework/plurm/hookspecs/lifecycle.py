"""lifecycle: observers of job state changes, for any plugin (metrics, logs, accounting)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from plurm._markers import hookspec

if TYPE_CHECKING:
    from plurm.model.cluster import Cluster
    from plurm.model.job import Job, JobState


@hookspec
def plurm_job_state_changed(job: Job, old: JobState, new: JobState, cluster: Cluster) -> None:
    """``job`` went from ``old`` to ``new`` (``job.state`` is already ``new``).

    When called: after every state change the core makes, in the order it makes them.

    :returns: nothing (observers; every implementation is called).
    :Purity: MUST NOT change the job or the cluster.
    :Slurm equivalent: none (slurmctld's job completion and accounting hooks come closest).

    .. versionadded:: 1.0
    """
