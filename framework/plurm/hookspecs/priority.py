"""priority: the number each pending job is ordered by, and what it is made of.

One plugin (``PriorityType``) answers. The core asks it for a job's priority when the job is
submitted and whenever Slurm would set one anew (release of a hold, scontrol resume of an
administrator's suspension); the plugin may ask to be called back every
``priority_calc_period`` seconds to give the pending jobs new priorities (and, as Slurm's
priority/multifactor does there, to decay the usage it keeps). The core tells it when a job
stops running, so that usage it charges follows the jobs exactly. sprio and sshare show
what ``priority_factors``, ``priority_weights`` and ``priority_shares`` answer.

Phases: submission (``priority_job_set``), recovery (``priority_state_load``,
``priority_jobs_recovered``), periodic recalculation (``priority_calc_period``,
``priority_recalc``), usage (``priority_job_end``), saved state (``priority_state_save``),
display (``priority_weights``, ``priority_factors``,
``priority_shares``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from plurm._markers import hookspec

if TYPE_CHECKING:
    from plurm.model.cluster import Cluster
    from plurm.model.job import Job
    from plurm.model.priority import PriorityFactors, PriorityWeights, ShareRow


# ----------------------------------------------------------------------------- submission


@hookspec(firstresult=True)
def priority_job_set(job: Job, cluster: Cluster) -> int | None:
    """The priority ``job`` gets now: a new submission (its account, QOS, partition and
    request are set), a job an administrator released from a hold, or one scontrol
    resumed from an administrator's suspension.

    When called: at submission (also for a job refused with a FAILED record, as Slurm
    gives it a priority too), at release, at scontrol resume; ``cluster.now`` is the
    time.

    :returns: a priority of at least 1 (0 means held; the core never asks for a held
        job), with the job's ``--nice`` already applied. Exclusive; required.
    :Purity: may change the plugin's own state (priority/basic counts down); MUST NOT
        change the job or the cluster.
    :Slurm equivalent: ``priority_p_set``.

    .. versionadded:: 1.9
    """


@hookspec
def priority_jobs_recovered(jobs: Sequence[Job], cluster: Cluster) -> None:
    """The controller restored ``jobs`` from its saved state (a live restart), with the
    priorities they had.

    When called: once, after recovery, before any new submission.

    :returns: nothing (every implementation is called).
    :Purity: may change the plugin's own state only.
    :Slurm equivalent: none (slurmctld's job state load keeps ``lowest_prio`` for
        priority/basic).

    .. versionadded:: 1.9
    """


# ----------------------------------------------------------------------------- recalculation


@hookspec(firstresult=True)
def priority_calc_period(cluster: Cluster) -> int | None:
    """Seconds between two calls of ``priority_recalc`` (PriorityCalcPeriod).

    When called: when the controller starts.

    :returns: seconds; None or 0 (the default when no plugin implements it): never. The
        core calls ``priority_recalc`` on ticks of this period counted from the
        controller's start, only while some job is pending or holds resources (decay over
        an idle stretch is the plugin's to work out from the time that passed). Exclusive.
    :Purity: pure.
    :Slurm equivalent: the sleep of priority/multifactor's decay thread.

    .. versionadded:: 1.9
    """


@hookspec(firstresult=True)
def priority_recalc(cluster: Cluster) -> Mapping[int, int] | None:
    """New priorities for jobs, worked out at ``cluster.now``; the plugin also brings its
    usage up to date here (charges the running jobs, decays, resets).

    When called: on every tick of ``priority_calc_period``.

    :returns: job id -> new priority (at least 1) for the jobs whose priority changes;
        the core applies them to pending, running and suspended jobs that are not held and
        whose priority no administrator set, and refiles the pending ones in the queue.
        None: nothing changes.
        Exclusive.
    :Purity: may change the plugin's own state; MUST NOT change jobs or the cluster.
    :Slurm equivalent: priority/multifactor's ``_decay_thread`` and ``_set_priorities``.

    .. versionadded:: 1.9
    """


# ----------------------------------------------------------------------------- usage


@hookspec
def priority_job_end(job: Job, cluster: Cluster) -> None:
    """``job`` stopped running: it ended, was requeued or preempted, or was suspended
    (``job.state`` is already the new one; ``job.run_time(cluster.now)`` is all the time it
    ran, suspended stretches left out).

    When called: right after every change of a job's state away from RUNNING.

    :returns: nothing (every implementation is called).
    :Purity: may change the plugin's own state only.
    :Slurm equivalent: ``priority_p_job_end``.

    .. versionadded:: 1.9
    """


# ----------------------------------------------------------------------------- saved state


@hookspec(firstresult=True)
def priority_state_save(cluster: Cluster) -> Mapping[str, Any] | None:
    """The plugin's own state to keep across a restart of the live controller (the usage
    priority/multifactor charges, as slurmctld keeps it in its StateSaveLocation), as JSON
    values: strings, numbers, lists and mappings with string keys.

    When called: by plurmctld, as it saves its state (every second when the answer changed,
    and at shutdown); never in a simulation.

    :returns: the state, or None: nothing to keep. Exclusive.
    :Purity: MUST NOT change the plugin's state, the jobs or the cluster.
    :Slurm equivalent: the ``assoc_usage`` and ``priority_last_decay_ran`` state files.

    .. versionadded:: 1.9
    """


@hookspec
def priority_state_load(state: Mapping[str, Any], cluster: Cluster) -> None:
    """Take back ``state``, what ``priority_state_save`` answered before plurmctld stopped
    (a plugin should check what it reads: the file may come from another version).

    When called: at plurmctld's start, before ``priority_jobs_recovered`` and any
    submission, when a state was saved.

    :returns: nothing (every implementation is called).
    :Purity: may change the plugin's own state only.
    :Slurm equivalent: slurmctld loading ``assoc_usage`` and ``priority_last_decay_ran``.

    .. versionadded:: 1.9
    """


# ----------------------------------------------------------------------------- display


@hookspec(firstresult=True)
def priority_weights(cluster: Cluster) -> PriorityWeights | None:
    """The factor weights, for ``sprio -w`` and sprio's choice of columns.

    When called: when sprio runs.

    :returns: the weights; None (the default when no plugin implements it): this policy
        has no factors, and sprio says it is not supported, as Slurm's sprio does for
        priority/basic. Exclusive.
    :Purity: pure.
    :Slurm equivalent: sprio reads ``PriorityWeight*`` from the configuration.

    .. versionadded:: 1.9
    """


@hookspec(firstresult=True)
def priority_factors(job: Job, cluster: Cluster) -> PriorityFactors | None:
    """What ``job``'s priority is made of, at ``cluster.now``.

    When called: when sprio runs, for each pending job that is not held.

    :returns: its factors, each multiplied by its weight; None: none to show. Exclusive.
    :Purity: pure (as of the last ``priority_recalc``).
    :Slurm equivalent: ``priority_p_get_priority_factors_list``.

    .. versionadded:: 1.9
    """


@hookspec(firstresult=True)
def priority_shares(cluster: Cluster) -> Sequence[ShareRow] | None:
    """The fair-share tree, root first, depth first, for sshare.

    When called: when sshare runs.

    :returns: every association with its shares, usage and factors; None: this policy
        keeps no shares. Exclusive.
    :Purity: pure (as of the last ``priority_recalc``).
    :Slurm equivalent: ``assoc_mgr_get_shares`` with ``priority_p_set_assoc_usage``.

    .. versionadded:: 1.9
    """
