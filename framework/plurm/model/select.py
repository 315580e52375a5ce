"""What the core asks a select plugin, and what it answers."""

from __future__ import annotations

import enum

import attrs

from plurm.conf.values import PreemptBase
from plurm.model.job import Job

__all__ = ["Candidate", "GangDecision", "SelectMode", "SelectResult", "SelectStatus"]


class SelectMode(enum.Enum):
    """Slurm's job_test modes."""

    #: Allocate now, preempting candidates if that is what it takes.
    RUN_NOW = "RUN_NOW"
    #: Could the job ever run on these nodes, whatever is running now?
    TEST_ONLY = "TEST_ONLY"
    #: Where and when could it start (backfill, --test-only)?
    WILL_RUN = "WILL_RUN"


class SelectStatus(enum.Enum):
    """The answer of a job test. Only ERROR is a failure of the plugin itself."""

    #: Nodes were chosen (and perhaps victims).
    SUCCESS = "SUCCESS"
    #: Not now: the resources are busy; the job may run later.
    BUSY = "BUSY"
    #: Never on these nodes, whatever ends (too many nodes, too much memory, ...).
    NEVER = "NEVER"


@attrs.frozen
class Candidate:
    """A job the core offers as a preemption victim: its mode and ordering key come from
    the preempt plugin, its place in the tuple is its preference (first: most desirable)."""

    job: Job = attrs.field(eq=False)
    mode: PreemptBase
    priority: int

    @property
    def job_id(self) -> int:
        return self.job.job_id


@attrs.frozen
class SelectResult:
    """A select plugin's answer: the status, the chosen nodes (node-table order) and the
    victims (job ids, in the order they should be preempted)."""

    status: SelectStatus
    nodes: tuple[str, ...] = ()
    victims: tuple[int, ...] = ()
    #: For WILL_RUN: the earliest start time found.
    start_time: float | None = None

    @classmethod
    def busy(cls) -> SelectResult:
        return cls(SelectStatus.BUSY)

    @classmethod
    def never(cls) -> SelectResult:
        return cls(SelectStatus.NEVER)


@attrs.frozen
class GangDecision:
    """What gang scheduling wants done: jobs to suspend, to resume, and to preempt (jobs
    under a shadow whose mode is CANCEL or REQUEUE), each as job ids in order."""

    suspend: tuple[int, ...] = ()
    resume: tuple[int, ...] = ()
    preempt: tuple[int, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.suspend or self.resume or self.preempt)
