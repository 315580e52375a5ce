"""Node states, as sinfo and scontrol name them, and what an administrator sets on a node."""

from __future__ import annotations

import enum

import attrs

from plurm.errors import PlurmError

__all__ = [
    "NOT_RESPONDING_REASON",
    "InvalidNodeState",
    "NodeCondition",
    "NodeState",
    "NodeStatus",
    "admin_update",
    "after_contact",
    "configured",
    "not_responding_down",
]

#: The reason the controller gives a node it sets DOWN because its slurmd went silent.
NOT_RESPONDING_REASON = "Not responding"


class NodeState(enum.Enum):
    """A node's base state; ``compact`` is sinfo's short, lower-case form."""

    IDLE = "IDLE"
    ALLOCATED = "ALLOCATED"
    MIXED = "MIXED"
    DOWN = "DOWN"
    DRAIN = "DRAIN"
    FUTURE = "FUTURE"
    UNKNOWN = "UNKNOWN"

    @property
    def compact(self) -> str:
        return _COMPACT[self]


_COMPACT = {
    NodeState.IDLE: "idle",
    NodeState.ALLOCATED: "alloc",
    NodeState.MIXED: "mix",
    NodeState.DOWN: "down",
    NodeState.DRAIN: "drain",
    NodeState.FUTURE: "futr",
    NodeState.UNKNOWN: "unk",
}


@attrs.frozen
class NodeCondition:
    """What takes a node out of service, set by the configuration or an administrator.

    ``down``: no job may run on it (the jobs it ran are gone); ``drain``: no new job may
    start on it, the running ones go on. Both may hold at once (Slurm's DOWN+DRAIN).
    ``reason`` is the administrator's text and ``since`` when it was set (sinfo -R's
    TIMESTAMP, the time in scontrol's ``Reason=... [root@time]``). ``unresponsive``: the
    controller set the node DOWN because its slurmd stopped answering (ReturnToService=1
    brings back only such nodes). ``failed``: the configuration set the node FAIL, "expected
    to fail soon" and out of service at an administrator's request (sinfo(1)); it shows DOWN
    here, but ReturnToService, which is about DOWN nodes, never brings it back.
    """

    down: bool = False
    drain: bool = False
    reason: str | None = None
    since: float = 0.0
    unresponsive: bool = False
    failed: bool = False

    @property
    def state(self) -> NodeState:
        """The state this condition alone gives the node (drain wins, as in sinfo)."""
        return NodeState.DRAIN if self.drain else NodeState.DOWN


@attrs.frozen
class NodeStatus:
    """What a command shows of one node at one moment: its base state (DOWN, or IDLE,
    MIXED or ALLOCATED by its CPUs in use), whether it is drained, and whether its slurmd
    does not respond. Each command prints it its own way: scontrol as ``DOWN+DRAIN``, sinfo
    as ``drain`` (drain wins there) or ``drng`` while jobs still hold the node, slurmrestd
    as a lower-case base and a list of flags."""

    base: NodeState
    drain: bool
    not_responding: bool
    in_use: bool


class InvalidNodeState(PlurmError):
    """The requested state does not apply to the node as it is (Slurm: "Invalid node state
    specified")."""


def admin_update(
    current: NodeCondition | None,
    state: str | None,
    reason: str | None,
    *,
    busy: bool,
    now: float,
) -> NodeCondition | None:
    """A node's condition after ``scontrol update NodeName=... [State=state] [Reason=reason]``
    (None: in service). ``state`` is DOWN, DRAIN, RESUME, UNDRAIN or IDLE, upper case;
    ``busy`` says whether jobs hold resources on the node.

    As Slurm 22.05 does (tests/data/oracle/cli): DOWN and DRAIN add to each other (DOWN+DRAIN);
    RESUME takes a down or drained node back into service and refuses any other; UNDRAIN
    lifts the drain only, keeping a DOWN and its reason, and does nothing on an undrained
    node; IDLE takes a node without jobs back into service, whatever it was, and refuses a
    busy one. A reason alone replaces the reason of a node out of service and is ignored on
    one in service.
    """
    if state is None:
        if current is None or reason is None:
            return current
        return attrs.evolve(current, reason=reason, since=now)
    if state in ("DOWN", "DRAIN"):
        was = current or NodeCondition()
        return NodeCondition(
            down=was.down or state == "DOWN",
            drain=was.drain or state == "DRAIN",
            reason=reason,
            since=now,
            failed=was.failed,
        )
    if state == "RESUME":
        if current is None:
            raise InvalidNodeState(state)
        return None
    if state == "UNDRAIN":
        if current is None or not current.drain:
            return current
        return attrs.evolve(current, drain=False) if current.down else None
    if state == "IDLE":
        if busy:
            raise InvalidNodeState(state)
        return None
    raise InvalidNodeState(state)


def configured(state: str, reason: str | None) -> NodeCondition | None:
    """A node's condition as slurm.conf sets it (``State=`` on its NodeName line or a
    DownNodes line), before its slurmd registers: DOWN, FAIL (down, see ``failed``), or
    DRAIN, FAILING and FUTURE (no new jobs); in service otherwise."""
    if state in ("DOWN", "FAIL"):
        return NodeCondition(down=True, reason=reason, failed=state == "FAIL")
    if state in ("DRAIN", "FAILING", "FUTURE"):
        return NodeCondition(drain=True, reason=reason)
    return None


def not_responding_down(current: NodeCondition | None, *, now: float) -> NodeCondition:
    """A node's condition once the controller sets it DOWN for not responding: DOWN with
    reason "Not responding", keeping a drain and an administrator's reason if it had them."""
    was = current or NodeCondition()
    if was.reason:
        return attrs.evolve(was, down=True, unresponsive=True)
    return attrs.evolve(was, down=True, unresponsive=True, reason=NOT_RESPONDING_REASON, since=now)


def after_contact(current: NodeCondition | None, return_to_service: int) -> NodeCondition | None:
    """A node's condition once its slurmd is heard from (registration, a ping answer).

    ReturnToService (slurm.conf): 2 brings a DOWN node back into service whatever set it
    DOWN, 1 only a node the controller set DOWN for not responding, 0 none; none brings
    back a FAIL node. A drain stays, with its reason (the node is then drained); otherwise
    the node is back in service.
    """
    if current is None or not current.down or current.failed:
        return current
    if return_to_service == 2 or (return_to_service == 1 and current.unresponsive):
        if current.drain:
            return attrs.evolve(current, down=False, unresponsive=False)
        return None
    return current
