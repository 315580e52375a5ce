"""The nodes of the latest changes the select plugin was told of.

:class:`~plurm.manager.Plugins` logs the nodes of every ``select_job_begin``,
``select_job_fini``, ``select_job_resized``, ``select_job_suspend`` and ``select_job_resume``
call (every node at ``select_reconfigure``), whoever makes it: an answer select gave on nodes
no logged change touched since is the answer it would give now, when it answers from the
nodes alone (``select_answers_by_nodes``; see ``plurm.controller.busy``).
"""

from __future__ import annotations

__all__ = ["KEPT_CHANGES", "ChangeLog"]

#: The changes kept: a BUSY answer older than that many changes is tested again.
KEPT_CHANGES = 256


class ChangeLog:
    """The nodes of the latest changes select was told of."""

    def __init__(self) -> None:
        #: Node bitmaps, oldest first: the change numbered ``n`` (counting from 0 since the
        #: start) is ``changes[n - dropped]``.
        self.changes: list[int] = []
        self.dropped = 0

    def changed(self, nodes: int) -> None:
        """Select was told of a change on ``nodes`` (a bitmap; -1 for every node)."""
        changes = self.changes
        changes.append(nodes)
        if len(changes) >= 2 * KEPT_CHANGES:
            del changes[:KEPT_CHANGES]
            self.dropped += KEPT_CHANGES

    def count(self) -> int:
        """How many changes there have been."""
        return self.dropped + len(self.changes)

    def untouched_since(self, count: int, nodes: int) -> bool:
        """Whether no change after the first ``count`` touched ``nodes`` (False when those
        changes are no longer kept)."""
        changes = self.changes
        since = count - self.dropped
        if since < 0:
            return False
        return not any(map(nodes.__and__, changes[since:]))  # (mostly a few changes)
