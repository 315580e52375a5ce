"""acct_gather: sampling what jobs use (CPU, memory), as JobAcctGatherType names it.

``jobacct_gather/none`` ships in the core and answers nothing. Two families of hooks:

* On a node (``plurmd``), by job id: :func:`acct_gather_job_start` when a batch job starts
  (its session id: every process of the job is in it, srun's step tasks in process groups
  of their own), :func:`acct_gather_sample` every ``JobAcctGatherFrequency`` seconds,
  :func:`acct_gather_usage` for the figures of each step (at the job's end and for sstat),
  :func:`acct_gather_over_memory` for the steps to end OUT_OF_MEMORY, and
  :func:`acct_gather_job_end`.
* In a simulation, on the controller's jobs: :func:`acct_gather_poll` and
  :func:`acct_gather_stat_job` (simulated usage: a trace's memory field).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from plurm._markers import hookspec

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from plurm.model.job import Job
    from plurm.model.usage import StepUsage


@hookspec
def acct_gather_poll(job: Job, now: float) -> None:
    """Sample ``job``'s tasks.

    When called: every JobAcctGatherFrequency seconds for each running job.

    :returns: nothing (observers).
    :Purity: may update the plugin's own samples.
    :Slurm equivalent: ``jobacct_gather_p_poll_data``.

    .. versionadded:: 1.0
    """


@hookspec
def acct_gather_add_task(job: Job, pid: int) -> None:
    """Start following process ``pid`` of ``job``.

    When called: when a task of the job starts.

    :returns: nothing.
    :Purity: may update the plugin's own state.
    :Slurm equivalent: ``jobacct_gather_p_add_task``.

    .. versionadded:: 1.0
    """


@hookspec(firstresult=True)
def acct_gather_stat_job(job: Job) -> dict[str, float] | None:
    """What ``job`` used so far (for example ``{"cpu_seconds": ..., "max_rss_mib": ...}``).

    When called: by sacct-like reports and at job end.

    :returns: the figures, or None when the plugin gathers nothing. Exclusive.
    :Purity: pure.
    :Slurm equivalent: ``jobacct_gather_p_stat_job``.

    .. versionadded:: 1.0
    """


@hookspec
def acct_gather_job_start(job_id: int, sid: int, mem_limit: int | None, node: str) -> None:
    """A batch job started on this node: its processes are those of session ``sid``;
    ``mem_limit`` is its memory limit on the node in bytes (None: unlimited).

    When called: by plurmd, once the job's session exists and before its script runs: the
    session's leader waits until the hook returns, so the processes of the script are born
    where a plugin put it (a cgroup whose limits hold from the first byte).

    :returns: nothing.
    :Purity: may update the plugin's own state (and make a cgroup for the job).
    :Slurm equivalent: ``jobacct_gather_p_add_task`` and ``jobacct_gather_set_mem_limit``.

    .. versionadded:: 1.7
    .. versionchanged:: 1.12 called before the script runs (was: right after it started).
    """


@hookspec
def acct_gather_sample(job_id: int, now: float) -> None:
    """Sample the processes of job ``job_id`` on this node.

    When called: every JobAcctGatherFrequency seconds while the job runs, and before its
    figures are read.

    :returns: nothing.
    :Purity: may update the plugin's own samples.
    :Slurm equivalent: ``jobacct_gather_p_poll_data``.

    .. versionadded:: 1.7
    """


@hookspec(firstresult=True)
def acct_gather_usage(job_id: int) -> Mapping[str, StepUsage] | None:
    """What each step of job ``job_id`` used on this node so far, by step (``"batch"``,
    ``"0"``, ...).

    When called: at the job's end, and for sstat.

    :returns: the figures by step, or None when the plugin does not know the job. Exclusive.
    :Purity: pure.
    :Slurm equivalent: ``jobacct_gather_stat_task``.

    .. versionadded:: 1.7
    """


@hookspec(firstresult=True)
def acct_gather_over_memory(job_id: int) -> Sequence[str] | None:
    """The steps of job ``job_id`` to end OUT_OF_MEMORY (over their limit with
    ``JobAcctGatherParams=OverMemoryKill``, or killed by a cgroup's ``memory.max``).

    When called: after each sample.

    :returns: step names (``"batch"``, ``"0"``), each once; None or empty: none. Exclusive.
    :Purity: may note that it answered a step.
    :Slurm equivalent: ``_check_mem_limits`` of jobacct_gather.

    .. versionadded:: 1.7
    """


@hookspec
def acct_gather_job_end(job_id: int) -> None:
    """Job ``job_id`` has ended on this node: forget it (and remove its cgroup).

    When called: by plurmd after the job's figures were read for its end report.

    :returns: nothing.
    :Purity: may update the plugin's own state.
    :Slurm equivalent: ``jobacct_gather_fini``.

    .. versionadded:: 1.7
    """
