"""What the core asks a select plugin, and what it answers."""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import overload

import attrs

from plurm.conf.values import PreemptBase
from plurm.model.job import Job

__all__ = [
    "METHOD_MODES",
    "Candidate",
    "Candidates",
    "GangDecision",
    "PreemptMethod",
    "SelectMode",
    "SelectResult",
    "SelectStatus",
]


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


class PreemptMethod(enum.Enum):
    """One rung of a victim's preemption ladder (``preempt_methods``): how the core may
    preempt it. The core takes the first rung that applies to the job."""

    #: Stop it where it runs (applies to a running job).
    SUSPEND = "S"
    #: Back to the queue keeping the work done so far (applies to a requeueable job).
    CHECKPOINT = "C"
    #: Back to the queue, starting over (applies to a requeueable job).
    REQUEUE = "R"
    #: End it (always applies).
    CANCEL = "D"


#: How select simulates each method's removal (its ``Candidate.mode``).
METHOD_MODES = {
    PreemptMethod.SUSPEND: PreemptBase.SUSPEND,
    PreemptMethod.CHECKPOINT: PreemptBase.REQUEUE,
    PreemptMethod.REQUEUE: PreemptBase.REQUEUE,
    PreemptMethod.CANCEL: PreemptBase.CANCEL,
}


@attrs.frozen
class Candidate:
    """A job the core offers as a preemption victim: its mode and ordering key come from
    the preempt plugin, its place in the tuple is its preference (first: most desirable).

    ``mode`` is what select simulates (SUSPEND, REQUEUE or CANCEL); ``method``, when the
    policy gave a ladder (``preempt_methods``), is the rung the core will carry out
    (CHECKPOINT shows as REQUEUE to select)."""

    job: Job = attrs.field(eq=False)
    mode: PreemptBase
    priority: int
    method: PreemptMethod | None = None

    @property
    def job_id(self) -> int:
        return self.job.job_id


class Candidates(Sequence[Candidate]):
    """Preemption candidates read from ``source`` only as far as a reader goes.

    The core hands select its candidates this way: a select plugin that iterates and stops
    at the first candidates that make room never makes the core ask the preempt plugin
    about the others, so one decision costs what it reads, not one question per running
    job. It is a full :class:`~collections.abc.Sequence`: ``len()``, negative indices and
    slices read the rest first. Iterating it twice, or from several places, yields the same
    candidates in the same order.

    A plugin that walks the candidates again in another order (Slurm reorders them once
    after a first fit) reorders only those read so far (:meth:`read`) and continues with
    the unread ones through :meth:`reordered`, which is what sorting the whole sequence
    stably would give when the unread ones all sort as equals after the read ones.

    The core may also say, without reading any, where the candidates can be at most
    (:meth:`nodes_bound`): a plugin that needs more nodes than that bound and the free
    nodes hold knows that preempting every candidate would not make room, unread.
    """

    __slots__ = ("_bound", "_read", "_source")

    def __init__(
        self, source: Iterable[Candidate], *, nodes_bound: Callable[[], int] | None = None
    ) -> None:
        self._read: list[Candidate] = []
        self._source: Iterator[Candidate] | None = iter(source)
        self._bound = nodes_bound

    def nodes_bound(self) -> int | None:
        """A node bitmap (bit i: the i-th node of the node table) that holds every node of
        every candidate, read or not, when the core can tell one without reading them;
        None when it cannot. It may hold more nodes than the candidates have."""
        return None if self._bound is None else self._bound()

    @classmethod
    def of(cls, candidates: Sequence[Candidate]) -> Candidates:
        """``candidates`` itself when it is a :class:`Candidates`, else one reading it."""
        return candidates if isinstance(candidates, Candidates) else cls(candidates)

    def _read_to(self, count: int | None) -> bool:
        """Read until ``count`` candidates (None: all) are read; False if there are fewer."""
        read = self._read
        source = self._source
        while source is not None and (count is None or len(read) < count):
            try:
                read.append(next(source))
            except StopIteration:
                self._source = source = None
        return count is None or len(read) >= count

    def read(self) -> list[Candidate]:
        """The candidates read so far, in order (a copy)."""
        return list(self._read)

    def reordered(self, head: Sequence[Candidate]) -> Candidates:
        """A sequence of ``head`` (the candidates read so far, reordered), then the unread
        ones. This sequence hands its unread candidates on and must not be read further."""
        if len(head) != len(self._read):
            raise ValueError("reordered() takes exactly the candidates read so far")
        ahead = Candidates((), nodes_bound=self._bound)  # the same candidates
        ahead._read = list(head)
        ahead._source, self._source = self._source, _handed_on()
        return ahead

    def __bool__(self) -> bool:
        return self._read_to(1)

    def __len__(self) -> int:
        self._read_to(None)
        return len(self._read)

    @overload
    def __getitem__(self, index: int) -> Candidate: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Candidate]: ...

    def __getitem__(self, index: int | slice) -> Candidate | Sequence[Candidate]:
        if isinstance(index, slice) or index < 0:
            self._read_to(None)
        else:
            self._read_to(index + 1)
        return self._read[index]

    def __iter__(self) -> Iterator[Candidate]:
        position = 0
        read = self._read
        while position < len(read) or self._read_to(position + 1):
            yield read[position]
            position += 1

    def __repr__(self) -> str:
        more = "" if self._source is None else ", ..."
        return f"Candidates([{', '.join(str(c.job_id) for c in self._read)}{more}])"


def _handed_on() -> Iterator[Candidate]:
    raise RuntimeError("these candidates were handed on by reordered(); read those instead")
    yield  # pragma: no cover - makes this a generator


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
        """BUSY: one value, shared (a result is frozen; passes refuse jobs by the
        thousand)."""
        return _BUSY if cls is SelectResult else cls(SelectStatus.BUSY)

    @classmethod
    def never(cls) -> SelectResult:
        """NEVER: one value, shared, as ``busy``."""
        return _NEVER if cls is SelectResult else cls(SelectStatus.NEVER)


_BUSY = SelectResult(SelectStatus.BUSY)
_NEVER = SelectResult(SelectStatus.NEVER)


@attrs.frozen
class GangDecision:
    """What gang scheduling wants done: jobs to suspend, to resume, and to preempt (jobs
    stopped while a higher tier casts a shadow on their partition: suspended, or cancelled or
    requeued when their mode is CANCEL or REQUEUE), each as job ids in order.

    ``displaced_by`` names, for each job of ``preempt`` that was running on resources a
    higher tier's running job holds, that job: the one it was displaced by (its preemptor).
    A job of ``preempt`` that it does not name lost only its own partition's time slice."""

    suspend: tuple[int, ...] = ()
    resume: tuple[int, ...] = ()
    preempt: tuple[int, ...] = ()
    #: (displaced job id, the higher tier's job id whose resources it overlaps) pairs.
    displaced_by: tuple[tuple[int, int], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.suspend or self.resume or self.preempt)
