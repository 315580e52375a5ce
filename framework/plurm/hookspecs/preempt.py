"""preempt: small questions about who may preempt whom, and how.

The core builds the candidate list, orders it, and carries out the preemption; the preempt
plugin only answers these questions (Slurm's split, which keeps each policy about 60 lines).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from plurm._markers import hookspec

if TYPE_CHECKING:
    from plurm.conf.values import PreemptMode
    from plurm.model.cluster import Cluster
    from plurm.model.job import Job


@hookspec(firstresult=True)
def preempt_enabled(cluster: Cluster) -> bool | None:
    """Can this policy ever let one job preempt another? When it answers False the core
    skips building preemption candidates (a walk over every running job per job that does
    not fit) and orders the queue without asking ``preempt_job_preempt_check``.

    When called: when the controller starts and after ``scontrol update`` changed a
    partition.

    :returns: False only if ``preempt_preemptable`` and ``preempt_job_preempt_check`` answer
        False for every pair of jobs on this cluster; True or None (the default when no
        plugin implements it) when they may answer True. Exclusive.
    Purity: pure.
    Slurm equivalent: ``slurm_preemption_enabled``.

    .. versionadded:: 1.1
    """


@hookspec(firstresult=True)
def preempt_by_tier(cluster: Cluster) -> bool | None:
    """Does this policy let a job preempt only jobs whose partition has a strictly lower
    PriorityTier than its own? When it answers True the core leaves partitions of the
    preemptor's tier or above out of the candidate walk, and gives ``sched_queue_order`` a
    :class:`~plurm.model.job.PreemptsByTier` relation, which an order that puts higher
    tiers first need not call.

    When called: when the controller starts and after ``scontrol update`` changed a
    partition.

    :returns: True only if ``preempt_preemptable`` and ``preempt_job_preempt_check`` answer
        False for every pair of jobs whose preemptee's partition has a PriorityTier at
        least the preemptor's; False or None (the default when no plugin implements it)
        otherwise. Exclusive.
    Purity: pure.
    Slurm equivalent: none (preempt/partition_prio's rule, stated for the core).

    .. versionadded:: 1.3
    """


@hookspec(firstresult=True)
def preempt_victims_fixed(cluster: Cluster) -> bool | None:
    """Are a job's ``preempt_mode`` and ``preempt_priority`` fixed while it holds its
    nodes? When it answers True the core asks both once per job, when it starts (or when
    the answers may have changed: the controller starts, ``scontrol update`` changes a
    partition), and keeps the running and suspended jobs in victim order between
    decisions. A decision then reads candidates only as far as select needs them and asks
    ``preempt_preemptable`` only of those, instead of asking all three questions of every
    running job and sorting them each time. Without PreemptExemptTime only: an exempt
    victim arms a pass, so with exemptions every walk goes through all jobs.

    When called: when the controller starts and after ``scontrol update`` changed a
    partition.

    :returns: True only if both answers for a job depend on nothing that changes while it
        runs or is suspended (its partition, QOS, node count and the configuration are
        fine; its run time or the time of day are not); False or None (the default when no
        plugin implements it) otherwise, and the core asks them anew for every walk.
        Exclusive.
    Purity: pure.
    Slurm equivalent: none (Slurm builds and sorts its candidate list for every job).

    .. versionadded:: 1.5
    """


@hookspec(firstresult=True)
def preempt_preemptable(preemptor: Job, preemptee: Job, cluster: Cluster) -> bool | None:
    """May ``preemptor`` preempt ``preemptee``? The policy predicate.

    When called: while the core builds the candidates for a pending job, once per running
    or suspended job; or, when ``preempt_victims_fixed``, once per candidate select reads.

    :returns: True or False. Exclusive: first non-None result wins.
    Purity: pure; MUST NOT change anything.
    Slurm equivalent: ``preempt_p_preemptable``.

    .. versionadded:: 1.0
    """


@hookspec(firstresult=True)
def preempt_mode(job: Job, cluster: Cluster) -> PreemptMode | None:
    """How ``job`` is preempted: its effective PreemptMode (OFF, CANCEL, REQUEUE, SUSPEND).

    When called: for each candidate, and when the core carries out a preemption; when
    ``preempt_victims_fixed``, once when the job starts instead of for each candidate.

    :returns: the mode, without the GANG and PRIORITY flags. Exclusive.
    Purity: pure.
    Slurm equivalent: ``preempt_p_get_data(PREEMPT_DATA_MODE)``, later ``preempt_p_get_mode``.

    .. versionadded:: 1.0
    """


@hookspec(firstresult=True)
def preempt_priority(job: Job, cluster: Cluster) -> int | None:
    """The ordering key of ``job`` as a victim: the lowest value is preempted first.

    When called: while the core sorts the candidates; or, when ``preempt_victims_fixed``,
    once when the job starts (and again after a partition update).

    :returns: an integer key. Exclusive: first non-None result wins.
    Purity: pure.
    Slurm equivalent: ``preempt_p_get_data(PREEMPT_DATA_PRIO)``, later ``preempt_p_get_prio``.

    .. versionadded:: 1.0
    """


@hookspec(firstresult=True)
def preempt_grace_time(job: Job, cluster: Cluster) -> int | None:
    """Seconds ``job`` may run on after it was chosen as a victim (0: none).

    When called: when the core preempts the job by CANCEL or REQUEUE.

    :returns: seconds. Exclusive: first non-None result wins.
    Purity: pure.
    Slurm equivalent: ``preempt_p_get_data(PREEMPT_DATA_GRACE_TIME)``.

    .. versionadded:: 1.0
    """


@hookspec(firstresult=True)
def preempt_job_preempt_check(preemptor: Job, preemptee: Job, cluster: Cluster) -> bool | None:
    """Should ``preemptor`` be queued ahead of ``preemptee``? Used only to order the queue.

    When called: while the sched plugin orders the pending queue, for pairs of pending jobs.

    :returns: True when the first could preempt the second. Exclusive.
    Purity: pure.
    Slurm equivalent: ``preempt_p_job_preempt_check``.

    .. versionadded:: 1.0
    """
