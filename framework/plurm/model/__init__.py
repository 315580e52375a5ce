"""The controller's data: frozen requests and results, and the few mutable owners."""

from __future__ import annotations

from plurm.model.job import Job, JobRequest, JobState, PendingReason
from plurm.model.node import NodeState
from plurm.model.select import Candidate, GangDecision, SelectMode, SelectResult, SelectStatus
from plurm.model.traits import PreemptTraits

__all__ = [
    "Candidate",
    "GangDecision",
    "Job",
    "JobRequest",
    "JobState",
    "NodeState",
    "PendingReason",
    "PreemptTraits",
    "SelectMode",
    "SelectResult",
    "SelectStatus",
]
