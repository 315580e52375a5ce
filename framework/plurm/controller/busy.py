"""BUSY answers kept while nothing changes on the nodes they were given.

A pending job that select found BUSY is tested again at every pass that reaches it, and a
replay's passes come after every start and end anywhere on the cluster: most of those tests
repeat the last one on nodes where nothing changed. When the select plugin answers from the
job and its nodes alone (``select_answers_by_nodes``) and the test has no preemption
candidates, the answer cannot change before select is told of a change on those nodes, so
the controller keeps it instead of asking again.

:class:`~plurm.model.changes.ChangeLog` (kept by the plugins' facade,
``Plugins.select_changes``) has the node bitmaps of the latest changes select was told of
(a job started, ended, was suspended or resumed, or released nodes; a reconfiguration);
:class:`BusyAnswers` keeps, per job, what its last BUSY test was asked (a key the caller
makes: the request, the nodes, the configuration...) and how many changes there were then.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Generic, TypeVar

from plurm.model.changes import KEPT_CHANGES, ChangeLog

__all__ = ["KEPT_CHANGES", "BusyAnswers", "ChangeLog"]

_Answer = TypeVar("_Answer")


class BusyAnswers(Generic[_Answer]):
    """The BUSY answers of pending jobs to one kind of test, kept while no change of
    ``log`` touches their nodes."""

    def __init__(self, log: ChangeLog) -> None:
        self.log = log
        #: job id -> (key, answer, the number of changes when it was last known to hold)
        self._kept: dict[int, tuple[Hashable, _Answer, int]] = {}

    def answer(self, job_id: int, key: Hashable, nodes: int) -> _Answer | None:
        """The job's last answer, if its test was asked ``key`` on ``nodes`` (a bitmap) and
        no change since touched those nodes: the test would answer it again (and it is
        known to hold from now on). None otherwise."""
        known = self._kept.get(job_id)
        if known is None or known[0] != key or not self.log.untouched_since(known[2], nodes):
            return None
        self._kept[job_id] = (known[0], known[1], self.log.count())
        return known[1]

    def keep(self, job_id: int, key: Hashable, answer: _Answer, pending: int) -> None:
        """The job's test, asked ``key``, said BUSY now (``answer``, not None). ``pending``:
        how many jobs are pending, to bound what is kept (the answers of jobs no longer
        pending are let go together when they outnumber those)."""
        kept = self._kept
        if len(kept) > 2 * pending + KEPT_CHANGES:
            kept.clear()
        kept[job_id] = (key, answer, self.log.count())

    def forget(self, job_id: int) -> None:
        """The job was tested and did not stay BUSY."""
        self._kept.pop(job_id, None)
