"""acct_gather: sampling what jobs use (CPU, memory), as JobAcctGatherType names it.

The simulator has no processes to sample; ``jobacct_gather/none`` ships in the core and
answers nothing. Live daemons (a later issue) poll through these hooks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from plurm._markers import hookspec

if TYPE_CHECKING:
    from plurm.model.job import Job


@hookspec
def acct_gather_poll(job: Job, now: float) -> None:
    """Sample ``job``'s tasks.

    When called: every JobAcctGatherFrequency seconds for each running job.

    :returns: nothing (observers).
    Purity: may update the plugin's own samples.
    Slurm equivalent: ``jobacct_gather_p_poll_data``.

    .. versionadded:: 1.0
    """


@hookspec
def acct_gather_add_task(job: Job, pid: int) -> None:
    """Start following process ``pid`` of ``job``.

    When called: when a task of the job starts.

    :returns: nothing.
    Purity: may update the plugin's own state.
    Slurm equivalent: ``jobacct_gather_p_add_task``.

    .. versionadded:: 1.0
    """


@hookspec(firstresult=True)
def acct_gather_stat_job(job: Job) -> dict[str, float] | None:
    """What ``job`` used so far (for example ``{"cpu_seconds": ..., "max_rss_mib": ...}``).

    When called: by sacct-like reports and at job end.

    :returns: the figures, or None when the plugin gathers nothing. Exclusive.
    Purity: pure.
    Slurm equivalent: ``jobacct_gather_p_stat_job``.

    .. versionadded:: 1.0
    """
