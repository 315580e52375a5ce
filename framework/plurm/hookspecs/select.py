"""select: which nodes a job gets, and which candidates must go to make room.

The select plugin owns the accounting of allocated resources (nodes, cores, memory, rows of
OverSubscribe). The core never counts resources itself: it asks ``select_job_test`` and, when
it starts or stops a job, tells the plugin through the other hooks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from plurm._markers import hookspec

if TYPE_CHECKING:
    from plurm.model.cluster import Cluster
    from plurm.model.gres import GresHeld
    from plurm.model.job import Job
    from plurm.model.select import Candidate, SelectMode, SelectResult

# ----------------------------------------------------------------------------- initialization


@hookspec(firstresult=True)
def select_node_init(cluster: Cluster) -> bool | None:
    """Build the plugin's per-node state from the configuration.

    When called: once when the controller starts, before any job is placed.

    :param cluster: the configuration and (empty) live state.
    :returns: True once initialised. Exclusive: first non-None result wins.
    :Purity: may set up the plugin's own state; must not change ``cluster``.
    :Slurm equivalent: ``select_p_node_init``.

    .. versionadded:: 1.0
    """


@hookspec(firstresult=True)
def select_reconfigure(cluster: Cluster) -> bool | None:
    """Partitions changed (``scontrol update``, reconfig): refresh what depends on them.

    When called: after the core applied the change to ``cluster.partitions``.

    :returns: True once done. Exclusive: first non-None result wins.
    :Purity: may update the plugin's own state only.
    :Slurm equivalent: ``select_p_reconfigure``.

    .. versionadded:: 1.0
    """


# ----------------------------------------------------------------------------- placement


@hookspec(firstresult=True)
def select_job_test(
    job: Job,
    nodes: Sequence[str],
    mode: SelectMode,
    candidates: Sequence[Candidate],
    cluster: Cluster,
) -> SelectResult | None:
    """Choose nodes for ``job`` among ``nodes``, preempting candidates if need be.

    When called: in each scheduling pass for each pending job the queue reaches, once per
    weight tier (growing ``nodes``, no candidates), then once more with every tier and the
    preemption candidates; by backfill in WILL_RUN mode; at submission in TEST_ONLY mode on
    all of the partition's nodes, whatever their state (NEVER refuses the job with "Requested
    node configuration is not available"; the core reuses that answer for requests of the
    same ``JobRequest.resources`` in the partition until its nodes change).

    :param job: the pending job; its request says nodes, tasks, CPUs, memory, sharing.
    :param nodes: the usable nodes of the job's partition, in node-table order (the core has
        removed down, drained and excluded nodes and applied the weight gate).
    :param mode: RUN_NOW, TEST_ONLY or WILL_RUN.
    :param candidates: jobs the job may preempt, most desirable victim first, with their
        PreemptMode. Empty when preemption is not allowed or not needed yet. Often a
        :class:`~plurm.model.select.Candidates`, read as the plugin goes: iterate it and
        stop once there is room, rather than taking ``len()`` or a list of it (1.5). Its
        ``nodes_bound()``, when not None, is a node bitmap holding every candidate's nodes:
        a job short of nodes even with those knows without reading a candidate.
    :param cluster: configuration and live state, to read.
    :returns: a SelectResult (SUCCESS with nodes and victims, BUSY or NEVER).
        Exclusive: first non-None result wins.
    :Purity: a dry run; MUST NOT change the plugin's state (the core calls
        ``select_job_begin`` if it starts the job).
    :Slurm equivalent: ``select_p_job_test``.

    .. versionadded:: 1.0
    .. versionchanged:: 1.12 also asked at submission (TEST_ONLY), and that answer reused.
    """


@hookspec(firstresult=True)
def select_node_alloc(cluster: Cluster) -> dict[str, int] | None:
    """The CPUs allocated on each node (running and suspended jobs), for sinfo and scontrol.

    When called: when a command shows node states (idle, mix, alloc).

    :returns: node name -> allocated CPUs (nodes left out have none). Exclusive.
    :Purity: pure.
    :Slurm equivalent: ``select_p_select_nodeinfo_set_all``.

    .. versionadded:: 1.0
    """


@hookspec(firstresult=True)
def select_partly_free(cluster: Cluster) -> int | None:
    """The nodes holding jobs that still have CPUs free, as a node bitmap
    (:meth:`~plurm.model.cluster.Cluster.mask_of`): those whose allocated CPUs
    (``select_node_alloc``) are more than none and fewer than the node's CPUs.

    When called: by each backfill pass that may start jobs beside running ones
    (``BackfillView.partly_free``).

    :returns: the bitmap, or None when the plugin does not keep it: the core then works it
        out from ``select_node_alloc``, a pass over every node. Exclusive: first non-None
        result wins.
    :Purity: pure.
    :Slurm equivalent: none (Slurm's backfill reads its node bitmaps directly).

    .. versionadded:: 1.13
    """


@hookspec(firstresult=True)
def select_answers_by_nodes(cluster: Cluster) -> bool | None:
    """Whether ``select_job_test`` without candidates (RUN_NOW or TEST_ONLY) answers from
    the job, the configuration and the nodes it is given alone: from what the lifecycle
    hooks (``select_job_begin``, ``select_job_fini``, ``select_job_resized``,
    ``select_job_suspend``, ``select_job_resume``) put on those nodes, never from the time or
    from other nodes.

    When called: once per configuration, by the core's scheduling pass. While the answer is
    True, a pending job that can have no preemption candidate and was found BUSY is not
    tested again until one of those hooks is called for a job on its usable nodes (or its
    request, its usable nodes, the nodes withheld from it or the configuration change): it
    keeps its BUSY answer and its reason. A trace replay tests each blocked job at every
    pass, and between two passes the nodes of most of them do not change.

    :returns: True to let the core keep BUSY answers so; False or None (the default) to be
        asked every time. Exclusive: first non-None result wins.
    :Purity: pure.
    :Slurm equivalent: none (Slurm's main scheduler tests each job it reaches, each pass).

    .. versionadded:: 1.14
    """


@hookspec(firstresult=True)
def select_node_alloc_mem(cluster: Cluster) -> dict[str, int] | None:
    """The memory (MiB) allocated on each node to the jobs holding it (running and
    suspended), for scontrol's ``AllocMem`` and sinfo's ``ALLOCMEM``.

    When called: when a command shows a node's allocated memory.

    :returns: node name -> allocated MiB (nodes left out have none), or None when the plugin
        does not count memory (Slurm then shows 0). Exclusive: first non-None result wins.
    :Purity: pure.
    :Slurm equivalent: ``select_p_select_nodeinfo_set_all``'s ``alloc_memory``, counted
        when memory is a consumable resource (``CR_*_Memory``).

    .. versionadded:: 1.11
    """


# ----------------------------------------------------------------------------- job lifecycle


@hookspec(firstresult=True)
def select_job_begin(job: Job, cluster: Cluster) -> bool | None:
    """Commit ``job``'s allocation (``job.nodes``) to the plugin's accounting.

    When called: when the core starts the job, after ``select_job_test`` chose its nodes.

    :returns: True once committed. Exclusive: first non-None result wins.
    :Purity: updates the plugin's state only.
    :Slurm equivalent: ``select_p_job_begin``.

    .. versionadded:: 1.0
    """


@hookspec(firstresult=True)
def select_job_resources(job: Job, cluster: Cluster) -> frozenset[tuple[str, int]] | None:
    """The resources ``job`` holds, finer than nodes: (node, core index) pairs.

    When called: after ``select_job_begin``, when a gang scheduler is loaded, so that it can
    time-slice what jobs really share (Slurm's gang works on cores under CR_Core and CR_CPU,
    on nodes otherwise).

    :returns: the pairs, or None when the plugin allocates whole nodes. Exclusive: first
        non-None result wins.
    :Purity: pure.
    :Slurm equivalent: the job's ``job_resrcs`` core bitmap, which ``gang.c`` reads.

    .. versionadded:: 1.2
    """


@hookspec(firstresult=True)
def select_job_gres(job: Job, cluster: Cluster) -> tuple[GresHeld, ...] | None:
    """The generic resources (GPUs) ``job`` holds: per node, the name, type and unit
    indexes.

    When called: after ``select_job_begin``, for a job that asks for generic resources
    (``job.request.gres_request`` is not None); the core keeps the answer on the job
    (``Job.gres_alloc``) for display, accounting and the node daemon's environment.

    :returns: the units, or None when the plugin does not place generic resources.
        Exclusive: first non-None result wins.
    :Purity: pure.
    :Slurm equivalent: the job's ``gres_list_alloc`` (``gres_job_state_t`` with its
        ``gres_bit_alloc`` per node), which slurmctld sends to slurmd.

    .. versionadded:: 1.10
    """


@hookspec(firstresult=True)
def select_job_fini(job: Job, cluster: Cluster) -> bool | None:
    """Release ``job``'s resources: it ended, was cancelled or requeued.

    When called: when the job leaves its nodes.

    :returns: True once released. Exclusive: first non-None result wins.
    :Purity: updates the plugin's state only.
    :Slurm equivalent: ``select_p_job_fini``.

    .. versionadded:: 1.0
    """


@hookspec(firstresult=True)
def select_job_resized(job: Job, nodes: Sequence[str], cluster: Cluster) -> bool | None:
    """``job`` gave up ``nodes``, some of its allocation, before its end: free what it
    holds there and keep the rest.

    When called: while the job is COMPLETING, when the executor reports its processes gone
    from some of its nodes (all but the batch host, for a batch script without steps);
    ``job.held_nodes`` is then what it keeps. ``select_job_fini`` follows at its end.

    :param nodes: the released nodes, in node-table order.
    :returns: True once released. Exclusive: first non-None result wins. A plugin that does
        not implement it keeps the nodes until ``select_job_fini``.
    :Purity: updates the plugin's state only.
    :Slurm equivalent: ``select_p_job_resized`` (one node at a time); as observed on 22.05,
        a completing job's nodes are freed one by one as their teardown ends.

    .. versionadded:: 1.4
    """


@hookspec(firstresult=True)
def select_job_suspend(job: Job, indefinite: bool, cluster: Cluster) -> bool | None:
    """``job`` was suspended.

    When called: after the core suspended the job, by gang scheduling (``indefinite`` False:
    the job still counts against OverSubscribe) or by an admin (True).

    :returns: True once recorded. Exclusive: first non-None result wins.
    :Purity: updates the plugin's state only.
    :Slurm equivalent: ``select_p_job_suspend``.

    .. versionadded:: 1.0
    """


@hookspec(firstresult=True)
def select_job_resume(job: Job, indefinite: bool, cluster: Cluster) -> bool | None:
    """``job`` resumed; ``indefinite`` as for :func:`select_job_suspend`.

    When called: after the core resumed the job.

    :returns: True once recorded. Exclusive: first non-None result wins.
    :Purity: updates the plugin's state only.
    :Slurm equivalent: ``select_p_job_resume``.

    .. versionadded:: 1.0
    """


@hookspec(firstresult=True)
def select_job_resumable(job: Job, cluster: Cluster) -> bool | None:
    """Could the suspended ``job`` resume now on the resources it holds, without going
    over what its nodes allow (OverSubscribe, cores taken by jobs started since)?

    When called: when the preempt policy suspends without gang scheduling
    (``preempt_suspend_releases``), for each job it suspended, at every scheduling pass,
    until the job resumes.

    :returns: True or False; None (the default when no plugin implements it) makes the
        core ask ``select_job_test`` RUN_NOW on the job's nodes instead, and resume the job
        when that places it on all of them. Exclusive.
    :Purity: pure; MUST NOT change anything.
    :Slurm equivalent: none (Slurm's gang scheduler resumes jobs by its own time slices).

    .. versionadded:: 1.8
    """
