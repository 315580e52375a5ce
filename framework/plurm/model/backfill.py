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


@attrs.frozen
class BackfillStart:
    """Start ``job_id`` now on ``nodes``: it ends before any reservation it would touch.
    With ``preempts``, the job starts by preempting, through the main scheduler's path (its
    victims go first, as they would for the main scheduler)."""

    job_id: int
    nodes: tuple[str, ...]
    preempts: bool = False
