"""sched: the order of the pending queue, backfill, and gang scheduling's events.

The main scheduling loop is the core's (as Slurm's ``schedule()`` is slurmctld's). The sched
plugin named by SchedulerType orders the queue and, if it backfills, says how often to run a
backfill pass and which lower-priority jobs may start in it without delaying those ahead. A
gang plugin, loaded when PreemptMode has GANG (or SchedulerType=sched/gang, the Slurm 1.3
spelling), answers the job start, end, reconfig and timeslice events with the jobs to suspend
and resume; the core carries that out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from plurm._markers import hookspec

if TYPE_CHECKING:
    from plurm.model.backfill import BackfillStart, BackfillView
    from plurm.model.cluster import Cluster
    from plurm.model.job import Job
    from plurm.model.select import GangDecision

# ----------------------------------------------------------------------------- the queue


@hookspec(firstresult=True)
def sched_queue_order(
    jobs: Sequence[Job], preempts: Callable[[Job, Job], bool], cluster: Cluster
) -> list[Job] | None:
    """The pending jobs in the order the scheduling pass should try them.

    When called: at the start of every scheduling pass, with the jobs that are eligible now,
    unless the plugin gave a sort key (``sched_queue_key``): the core then keeps the queue
    in that order and does not call this hook.

    :param jobs: pending, eligible jobs, in job-id order.
    :param preempts: ``preempts(a, b)`` is True when ``a`` could preempt ``b`` (the preempt
        plugin's ``preempt_job_preempt_check``): Slurm queues such a job ahead. When the
        preempt plugin says no job ever preempts (``preempt_enabled``), it is
        ``plurm.model.job.never_preempts``, which a plugin may recognize and not call;
        when it says jobs preempt only lower tiers (``preempt_by_tier``), it is a
        ``plurm.model.job.PreemptsByTier``, which an order by tier need not call.
    :returns: the same jobs, ordered. Exclusive: first non-None result wins.
    :Purity: pure.
    :Slurm equivalent: ``sort_job_queue2`` in slurmctld (not a plugin there).

    .. versionadded:: 1.0
    """


@hookspec(firstresult=True)
def sched_queue_key(
    preempts: Callable[[Job, Job], bool], cluster: Cluster
) -> Callable[[Job], Any] | None:
    """A sort key for the order ``sched_queue_order`` gives, so that the core can keep the
    pending queue in order between passes instead of ordering it anew for each.

    When called: when the controller starts, and again after ``scontrol update`` changed a
    partition (which may change the key or ``preempts``).

    :param preempts: the relation ``sched_queue_order`` would get (see there).
    :returns: ``key(job)``, such that the jobs sorted by it, ascending, are in exactly
        the order ``sched_queue_order(jobs, preempts, cluster)`` gives for any set of
        eligible pending jobs, with keys unique (end them with the job id). The core
        computes a job's key when it becomes pending or changes partition, and keeps it;
        so the key may depend only on the job's partition, priority, submit time and id,
        on the partitions, and on what was known at this call. None (the default when no
        plugin implements it) when the order is not a key order, or depends on anything
        else (time, usage): the core then calls ``sched_queue_order`` every pass.
        Exclusive: first non-None result wins.
    :Purity: pure.
    :Slurm equivalent: none (Slurm builds and sorts its job queue for every pass).

    .. versionadded:: 1.6
    """


# ----------------------------------------------------------------------------- backfill


@hookspec(firstresult=True)
def sched_backfill_interval(cluster: Cluster) -> int | None:
    """Seconds between backfill passes, or None when the plugin does not backfill.

    When called: once at start-up.

    :returns: seconds (``bf_interval``). Exclusive: first non-None result wins.
    :Purity: pure.
    :Slurm equivalent: the period of the sched/backfill thread.

    .. versionadded:: 1.0
    """


@hookspec(firstresult=True)
def sched_backfill(
    jobs: Sequence[Job], view: BackfillView, cluster: Cluster
) -> list[BackfillStart] | None:
    """The jobs to start now out of priority order, because they delay no job ahead of them.

    When called: every ``sched_backfill_interval`` seconds while jobs are pending, after
    the main scheduler left them pending.

    :param jobs: the pending jobs the main scheduler could not start (eligible, within their
        partition's limits), in queue order (``sched_queue_order``). A sequence that the
        core reads from the queue only as far as it is indexed (``jobs[:n]`` reads n jobs;
        ``len()`` reads all), good for this call only.
    :param view: the time, the usable nodes of a job, a select test on a node set as if it
        were idle, and the expected end of running jobs (one by one, ``expected_end``, or
        all held jobs with their ends and node bitmaps at once, ``held_ends``); with
        preemption on, the preemption questions too (``preempt_test``, ``may_preempt``,
        ``may_preempt_in``: see ``BackfillView``); since 1.12, a select test on nodes as
        they are and the nodes with CPUs free beside their jobs (``test_now``,
        ``partly_free``), so that a job may start beside running ones.
    :returns: the jobs to start, each with its nodes, in the order to start them. The core
        starts each one whose nodes the select plugin still grants. A start by preempting
        (``preempts``) goes through the main scheduler's path, on the nodes of its
        ``allowed`` field when the plugin gives them (since 1.12: placement and victim
        search stay off the nodes the pass reserved for jobs ahead), else on all the job's
        usable nodes. Exclusive.
    :Purity: pure; plans (reservations) live only inside one call.
    :Slurm equivalent: ``_attempt_backfill`` in the sched/backfill plugin.

    .. versionadded:: 1.0
    """


# ----------------------------------------------------------------------------- gang events


@hookspec
def sched_gang_job_start(job: Job, cluster: Cluster) -> GangDecision | None:
    """``job`` started or resumed by the core: place it in its partition's active row and
    cast its shadow over lower-tier partitions.

    When called: after the core started a job. A job an admin resumed is taken in at the
    next time slice or partition update instead, as Slurm's gang scheduler takes it in when
    it next scans the job list.

    :returns: the jobs to suspend, resume or preempt as a consequence, or None.
    :Purity: updates the gang plugin's own state only; the core applies the decision.
    :Slurm equivalent: ``gs_job_start``.

    .. versionadded:: 1.0
    """


@hookspec
def sched_gang_job_fini(job: Job, cluster: Cluster) -> GangDecision | None:
    """``job`` left its resources (ended, requeued, cancelled, or suspended by an admin):
    drop it and its shadows, and say which jobs may now resume.

    When called: after the core released the job; for a COMPLETING job, also at each time
    slice and partition update before that (Slurm's gang scheduler lets go of jobs that no
    longer run when it scans the job list), so it may come twice for one job.

    :returns: a decision, or None.
    :Purity: updates the gang plugin's own state only.
    :Slurm equivalent: ``gs_job_fini``.

    .. versionadded:: 1.0
    """


@hookspec
def sched_gang_job_resized(job: Job, cluster: Cluster) -> GangDecision | None:
    """``job``, COMPLETING, gave up some of its nodes: it holds only ``job.held_nodes``
    (and those of ``job.units`` on them) now. Shrink its entry and shadows, and say which jobs may
    now resume.

    When called: after ``select_job_resized``.

    :returns: a decision, or None.
    :Purity: updates the gang plugin's own state only.
    :Slurm equivalent: none; Plurm's gang plugin keeps its own copy of each job's
        resources, which this keeps in step with the job's.

    .. versionadded:: 1.4
    """


@hookspec
def sched_gang_reconfig(cluster: Cluster) -> GangDecision | None:
    """Partitions changed (PriorityTier, OverSubscribe): rebuild shadows and active rows.

    When called: after ``scontrol update`` changed a partition.

    :returns: a decision, or None.
    :Purity: updates the gang plugin's own state only.
    :Slurm equivalent: ``gs_reconfig``.

    .. versionadded:: 1.0
    """


@hookspec(firstresult=True)
def sched_gang_timeslice_interval(cluster: Cluster) -> int | None:
    """Seconds between timeslice ticks, or None when the plugin needs no ticks.

    When called: once at start-up and after a reconfig.

    :returns: seconds (SchedulerTimeSlice). Exclusive: first non-None result wins.
    :Purity: pure.
    :Slurm equivalent: the period of gang.c's timeslicer thread.

    .. versionadded:: 1.0
    """


@hookspec
def sched_gang_timeslice(cluster: Cluster) -> GangDecision | None:
    """A timeslice passed: rotate the jobs that share resources in each partition.

    When called: every ``sched_gang_timeslice_interval`` seconds while jobs are allocated.

    :returns: a decision, or None.
    :Purity: updates the gang plugin's own state only.
    :Slurm equivalent: gang.c's ``_timeslicer_thread`` and ``_cycle_job_list``.

    .. versionadded:: 1.0
    """
