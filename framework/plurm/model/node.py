"""Node states, as sinfo and scontrol name them."""

from __future__ import annotations

import enum

__all__ = ["NodeState"]


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
