"""What the core lends a backfill plugin for one pass, and what the plugin answers."""

from __future__ import annotations

from collections.abc import Callable, Sequence

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
    """

    now: float
    usable_nodes: Callable[[Job], Sequence[str]]
    test_only: Callable[[Job, Sequence[str]], SelectResult]
    expected_end: Callable[[Job], float | None]


@attrs.frozen
class BackfillStart:
    """Start ``job_id`` now on ``nodes``: it ends before any reservation it would touch."""

    job_id: int
    nodes: tuple[str, ...]
