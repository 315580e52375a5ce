"""Updates of the cluster: scontrol's updates of partitions and nodes, and the changes of a
node's condition that node health (:mod:`.health`) reports.

Part of :class:`~plurm.controller.controller.Controller` (see :mod:`.base`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from plurm.controller.base import ControllerBase, RequestError
from plurm.model.job import JobState
from plurm.model.node import (
    InvalidNodeState,
    NodeCondition,
    admin_update,
)

__all__ = ["UpdatesMixin"]


class UpdatesMixin(ControllerBase):
    """The controller's partition and node updates."""

    def update_partition(self, name: str, **changes: Any) -> None:
        """scontrol update PartitionName=NAME key=value...: changes take effect at once."""
        self._tick()
        if name not in self.cluster.partitions:
            raise RequestError("Invalid partition name specified")
        try:
            updated = attrs.evolve(self.cluster.partitions[name], **changes)
        except TypeError as error:
            raise RequestError(f"Invalid partition update: {error}") from None
        self.cluster.partitions[name] = updated
        self._check_preemption()
        self.plugins.select_reconfigure(self.cluster)
        self._gang_scan()
        self._apply(self.plugins.sched_gang_reconfig(self.cluster))
        self._request_pass()

    def update_nodes(self, names: Sequence[str], state: str | None, reason: str | None) -> None:
        """scontrol update NodeName=NAMES [State=state] [Reason=reason]: see
        :func:`plurm.model.node.admin_update` for the states. As in Slurm, every known node
        is updated even when the list also names unknown ones, which then make it fail.

        Jobs on a node set DOWN lose their processes at once: each is requeued if it may
        be, else it ends NODE_FAIL (:meth:`_node_failed`).
        """
        self._tick()
        cluster = self.cluster
        busy = self.plugins.select_node_alloc(cluster)
        error = None
        for name in names:
            if name not in cluster.node_index:
                error = error or "Invalid node name specified"
                continue
            current = cluster.node_down.get(name)
            try:
                updated = admin_update(
                    current, state, reason, busy=busy.get(name, 0) > 0, now=self.now
                )
            except InvalidNodeState:
                error = error or "Invalid node state specified"
                continue
            self._set_condition(name, updated)
        self._request_pass()
        self.health.wake()  # under ReturnToService=2 a DOWN node returns at its next ping
        if error is not None:
            raise RequestError(error)

    def _set_condition(self, name: str, updated: NodeCondition | None) -> None:
        """Put a node in or out of service; the jobs of a node that goes DOWN are lost."""
        cluster = self.cluster
        current = cluster.node_down.get(name)
        cluster.set_condition(name, updated)
        if updated is not None and updated.down and not (current and current.down):
            for job in list(cluster.allocated()):
                if name in job.nodes and job.state is not JobState.COMPLETING:
                    self._node_failed(job)

    def _node_condition(self, name: str, updated: NodeCondition | None) -> None:
        """Node health changes a node's condition: a silent node goes DOWN, one heard from
        again may come back (ReturnToService)."""
        self._tick()
        self._set_condition(name, updated)
        self._request_pass()

    def node_registered(self, name: str) -> None:
        """The node's slurmd started and registered: the controller hears from it again."""
        self._tick()
        self.health.contact([name])

    def nodes_may_be_silent(self) -> None:
        """A slurmd may have stopped: the next ping rounds will tell."""
        self._tick()
        self.health.wake()
