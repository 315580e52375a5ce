"""lifecycle: the job's life, for any plugin: the default time limit a job gets at
submission, and observers of job state changes (metrics, logs, accounting)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from plurm._markers import hookspec

if TYPE_CHECKING:
    from plurm.model.cluster import Cluster
    from plurm.model.job import Job, JobRequest, JobState


@hookspec
def plurm_job_state_changed(job: Job, old: JobState, new: JobState, cluster: Cluster) -> None:
    """``job`` went from ``old`` to ``new`` (``job.state`` is already ``new``).

    When called: after every state change the core makes, in the order it makes them.

    :returns: nothing (observers; every implementation is called).
    :Purity: MUST NOT change the job or the cluster.
    :Slurm equivalent: none (slurmctld's job completion and accounting hooks come closest).

    .. versionadded:: 1.0
    """


@hookspec(firstresult=True)
def plurm_job_default_time_limit(
    request: JobRequest, partition: str, cluster: Cluster
) -> int | None:
    """The time limit, in minutes, of a job submitted to ``partition`` without one (no
    ``sbatch -t``): a policy whose own configuration gives queues a default run limit (LSF's
    queue ``RUNLIMIT``) answers it here, and the job is then held to it as to a ``-t`` of
    that length (TIMEOUT at its end; ``scontrol update TimeLimit=`` changes it).

    When called: at submission (and for ``sbatch --test-only``), only for a request that
    gives no time limit, before the job exists.

    :returns: the limit in whole minutes (at least 1); None (the default when no plugin
        implements it, or for a partition the policy gives no limit) to take the
        partition's DefaultTime, as Slurm does. Exclusive.
    :Purity: pure.
    :Slurm equivalent: none (Slurm's job_submit plugins may set ``time_limit``; here only
        the default of a job that gives none).

    .. versionadded:: 1.9
    """
