"""What the core lends a backfill plugin for one pass, and what the plugin answers."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import attrs

from plurm.model.job import Job
from plurm.model.select import SelectResult

__all__ = ["BackfillStart", "BackfillView"]


@attrs.frozen
class BackfillView:
    """A read-only window on the cluster for one backfill pass.

    ``usable_nodes(job)`` are the nodes of the job's partition that may take new work (up,
    not drained, not excluded), busy or not. ``test_only(job, nodes)`` asks the select plugin
    whether the job could run on ``nodes`` if they were idle, and on which of them (Slurm's
    TEST_ONLY / WILL_RUN on a node bitmap). ``expected_end(job)`` is when a running or
    suspended job will have ended at the latest (None: no time limit).

    ``preempt_test(job, nodes)``, present when preemption is enabled, asks whether the job
    could start now on ``nodes`` by preempting: the core builds the job's candidates, as for
    the main scheduler, and select answers with the nodes and victims (Slurm's WILL_RUN with
    the preemptable jobs). It changes nothing. ``may_preempt(job)``, present with it, is
    False when the job has no preemption candidate at all now, so that ``preempt_test``
    would find it busy whatever the nodes; it changes nothing either.
    ``may_preempt_in(partition)``, present with them, is False when no job of the partition
    can have a candidate (no partition may hold its victims): ``may_preempt`` is then False
    for each of its jobs, which a pass need not ask one by one.

    ``test_now(job, nodes)`` and ``partly_free()``, optional (since 1.12), let a pass start
    a job beside running ones, as Slurm's backfill does under select/cons_res and cons_tres
    (it tests each job on the nodes no earlier job of the pass reserved within its run, with
    their current use). ``test_now`` asks the select plugin whether the job could start now
    on ``nodes`` as they are (their running jobs' resources counted), and on which of them;
    it changes nothing. For a request of nodes and CPUs only, the pass takes that answer to
    get no better with fewer nodes offered or more nodes or CPUs asked (within a pass nothing
    changes select's state): it does not ask again for such a job after a refusal that
    covers it. ``partly_free()`` is the bitmap (``Cluster.mask_of``) of the nodes
    holding jobs that still have CPUs free: only there can a job share a node (a plugin that
    plans whole nodes reads every other node holding jobs as busy). A node whose CPUs are
    all allocated is left out even where OverSubscribe would let a job share it.

    ``held_ends()``, optional, gives every job holding nodes (running, suspended or
    completing) with its ``expected_end`` and the bitmap of its ``held_nodes``
    (``Cluster.mask_of``), as one pass over the jobs; an end before ``now`` stands for
    ``now``. The core keeps running jobs' ends and bitmaps as they start, so that a pass over
    thousands of running jobs does not work them out in turn. Without it, a plugin asks
    ``expected_end`` of each job it finds in those states.
    """

    now: float
    usable_nodes: Callable[[Job], Sequence[str]]
    test_only: Callable[[Job, Sequence[str]], SelectResult]
    expected_end: Callable[[Job], float | None]
    preempt_test: Callable[[Job, Sequence[str]], SelectResult] | None = None
    may_preempt: Callable[[Job], bool] | None = None
    may_preempt_in: Callable[[str], bool] | None = None
    held_ends: Callable[[], Iterable[tuple[Job, float | None, int]]] | None = None
    test_now: Callable[[Job, Sequence[str]], SelectResult] | None = None
    partly_free: Callable[[], int] | None = None


@attrs.frozen
class BackfillStart:
    """Start ``job_id`` now on ``nodes``: it ends before any reservation it would touch.
    With ``preempts``, the job starts by preempting, through the main scheduler's path (its
    victims go first, as they would for the main scheduler).

    ``allowed`` (since 1.12): the nodes the pass left the job (those no earlier job's
    reservation takes within its run). For a start by preempting, the core then places the
    job and searches its victims among them only, so that a victim choice other than
    Slurm's (``PreemptParameters=victims=``) cannot take a victim on nodes reserved for a
    job ahead. For a start beside running jobs (``BackfillView.test_now``), the core asks
    select to place the job among them as the nodes are when it starts (the starts before
    it in the list counted), rather than on ``nodes`` exactly. None (the default, and what
    a plugin written before 1.12 gives): ``nodes`` exactly, or for a start by preempting all
    the job's usable nodes."""

    job_id: int
    nodes: tuple[str, ...]
    preempts: bool = False
    allowed: tuple[str, ...] | None = None
