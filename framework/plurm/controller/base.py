"""What the parts of the controller share: the hot paths' enum constants, :class:`RequestError`,
a job's ending, and :class:`ControllerBase`, which declares the controller's state with its
types.

:class:`~plurm.controller.controller.Controller` is composed of one mixin per part, each in its
own module and a subclass of :class:`ControllerBase` (see :mod:`.controller`).
``Controller.__init__`` sets every attribute declared here (those of preemption in
``_check_preemption``). The methods one part calls in another are declared here for type
checking only: at run time each is found on its own class, so nothing here stands between a
call and its method.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

import attrs

from plurm.conf.model import PartitionSpec, SlurmConfig
from plurm.controller.busy import BusyAnswers
from plurm.controller.health import NodeHealth
from plurm.controller.limits import AssociationLimits
from plurm.controller.queue import PendingByPartition, PendingQueue
from plurm.controller.runtime import Executor, Timer, TimerHandle
from plurm.controller.victims import VictimPool
from plurm.errors import RequestError
from plurm.manager import Plugins
from plurm.model.bitmap import NodeBitmap
from plurm.model.cluster import Cluster
from plurm.model.job import Job, JobRequest, JobState, PendingReason
from plurm.model.select import SelectMode, SelectStatus

if TYPE_CHECKING:
    from collections.abc import Iterator

    from plurm.conf.values import PreemptBase
    from plurm.controller.accounting import Charge
    from plurm.controller.explain import PreemptDecision
    from plurm.model.job import Dependency
    from plurm.model.select import Candidate, GangDecision, PreemptMethod, SelectResult

__all__ = ["ControllerBase", "RequestError"]

#: The states in which a job holds its nodes and may be a preemption victim.
_HOLDING = (JobState.RUNNING, JobState.SUSPENDED)

# Enum members for the hot paths: on Python 3.11 a member read through its enum class goes
# through the class's __getattr__ hook (some ten times the cost of reading a global).
_RUNNING = JobState.RUNNING
_PENDING = JobState.PENDING
_SUSPENDED = JobState.SUSPENDED
_COMPLETING = JobState.COMPLETING
_SUCCESS = SelectStatus.SUCCESS
_BUSY_STATUS = SelectStatus.BUSY
_NEVER = SelectStatus.NEVER
_RUN_NOW = SelectMode.RUN_NOW
_TEST_ONLY = SelectMode.TEST_ONLY
_COMPLETED = JobState.COMPLETED
_FAILED = JobState.FAILED
_PRIORITY = PendingReason.PRIORITY
_RESOURCES = PendingReason.RESOURCES
_NODES_RESERVED = PendingReason.NODES_RESERVED
_NO_REASON = PendingReason.NONE


@attrs.define
class _Ending:
    """Why the controller is ending a job, so that its end gets the right state.

    A preemption victim in its GraceTime has an ending before it is killed (``grace_end``
    set, ``killed`` False); if its processes end by themselves first, its end is an ordinary
    one (FAILED or COMPLETED), as on real Slurm.
    """

    state: JobState
    requeue: bool = False
    #: A CHECKPOINT preemption: requeued keeping the work done (``Job.checkpointed``).
    checkpoint: bool = False
    #: Seconds a requeued job waits before it may run again (None: Slurm's requeue delay).
    delay: int | None = None
    grace_end: float | None = None
    killed: bool = False


#: Usable nodes as computed for a partition (that very object) and out-of-service nodes.
_Usable = tuple[PartitionSpec, int, NodeBitmap]


class ControllerBase:
    """The controller's state, declared with its types (``Controller.__init__`` documents and
    sets it), and the helpers every part uses."""

    config: SlurmConfig
    plugins: Plugins
    timer: Timer
    _clock: Callable[[], float]
    executor: Executor
    cluster: Cluster
    health: NodeHealth
    _epoch: float
    # submission
    _next_id: int
    keep_finished_units: bool
    _fixed_priority: set[int]
    _priority_period: int | None
    _priority_timer: TimerHandle | None
    _capacities: dict[tuple[str, ...], tuple[int, int]]
    _last_capacity: tuple[tuple[str, ...], tuple[int, int]] | None
    _largest_cpus: dict[str, tuple[tuple[str, ...], int]]
    _node_cpus: tuple[object, dict[str, int]] | None
    _never_known: dict[str, tuple[tuple[str, ...], dict[tuple[object, ...], bool]]]
    # the pending jobs' indexes and the passes
    _pending: PendingQueue
    _by_partition: PendingByPartition
    _pinned: dict[int, Job]
    _unsettled: dict[int, Job]
    _refusals: dict[int, tuple[PartitionSpec, JobRequest, PendingReason | None]]
    _usable: dict[tuple[str, tuple[str, ...]], _Usable]
    _pools: dict[int, tuple[NodeBitmap, ...]]
    _running_ends: dict[int, tuple[Job, float | None, int]]
    _busy: BusyAnswers[SelectStatus]
    _busy_now: BusyAnswers[SelectResult]
    _busy_kept: tuple[SlurmConfig, bool] | None
    _limits: AssociationLimits | None
    # job lifecycle
    _ending: dict[int, _Ending]
    _resumed_unseen: set[int]
    _gang: bool
    # preemption (set by _check_preemption)
    _preempting: dict[int, float]
    _preemption: bool
    _walk_candidates: bool
    _exemptions: bool
    _by_tier: bool
    _keep_victims: bool
    _ladder: bool
    _filter: bool
    _trim: bool
    _choose: bool
    _choose_stacked: bool
    _releases: bool
    _reserve_parked: bool
    _parked: dict[int, Job]
    _victims: VictimPool | None
    _victim_parts: dict[str, tuple[str, ...]]
    # timers
    _limit_timers: dict[int, TimerHandle]
    _warn_timers: dict[int, TimerHandle]
    _warned: dict[int, int]
    _pass_at: dict[float, bool]
    _event_pass_armed: bool
    _slice_timer: TimerHandle | None
    _slice_interval: int | None
    _backfill_timer: TimerHandle | None
    _backfill_interval: int | None
    # jobs kept out of the queue (holds, dependencies, array throttles) and the arrays
    _waiting: dict[int, Job]
    _arrays: dict[int, dict[int, Job]]
    _last_split: Job | None

    # ----------------------------------------------------------------------------- helpers

    @property
    def now(self) -> float:
        return self._clock()

    @property
    def started(self) -> float:
        """When the controller started: its periodic passes tick in phase with it."""
        return self._epoch

    def _tick(self) -> None:
        self.cluster.now = self._clock()

    def job(self, job_id: int) -> Job:
        try:
            return self.cluster.job(job_id)
        except KeyError:
            raise RequestError("Invalid job id specified") from None

    if TYPE_CHECKING:
        # ------------------------------------------------- what one part calls in another

        # submission.py
        def _file(self, job: Job) -> None: ...
        def _new_priority(self, job: Job) -> int: ...
        def _arm_priority_recalc(self) -> None: ...
        def _beyond_node_limits(self, request: JobRequest, partition: str) -> bool: ...
        def _beyond_time_limit(self, request: JobRequest, partition: str) -> bool: ...
        def _wanted_nodes(self, request: JobRequest, part: PartitionSpec) -> int: ...
        def _time_limit_of(self, request: JobRequest, part: PartitionSpec) -> int | None: ...
        def _partition_for(self, request: JobRequest) -> str: ...
        def _validate(self, request: JobRequest, partition: str) -> Charge: ...

        # passes.py
        def schedule(self, *, full: bool = True) -> None: ...
        def backfill(self) -> None: ...
        def _refused(self, job: Job) -> bool: ...
        def _usable_nodes(self, job: Job) -> NodeBitmap: ...
        def _held_ends(self) -> Iterator[tuple[Job, float | None, int]]: ...
        @staticmethod
        def _limit_end(job: Job) -> float | None: ...

        # preemption.py
        def _check_preemption(self) -> None: ...
        def _preempts(self) -> Callable[[Job, Job], bool]: ...
        def _preempt_test(self, job: Job, nodes: Sequence[str]) -> SelectResult: ...
        def _may_preempt_in(self, partition: str) -> bool: ...
        def _may_preempt(self, job: Job) -> bool: ...
        def _candidates(self, preemptor: Job) -> Sequence[Candidate]: ...
        def _preempt(self, preemptor: Job, result: SelectResult) -> bool: ...
        def _resume_parked(self) -> None: ...
        def _parked_reserved_for(self, job: Job) -> int: ...
        def _trimmed(
            self,
            job: Job,
            nodes: NodeBitmap,
            result: SelectResult,
            candidates: Sequence[Candidate],
        ) -> SelectResult: ...
        def _chosen(self, job: Job, nodes: NodeBitmap, result: SelectResult) -> SelectResult: ...
        def _preempt_ending(self, job: Job, mode: PreemptBase) -> _Ending: ...
        def _rung(self, job: Job) -> tuple[PreemptBase, PreemptMethod | None] | None: ...
        def _victim_partitions(self, name: str) -> tuple[str, ...]: ...

        # estimates.py, explain.py
        def expected_starts(self) -> dict[int, float]: ...
        def _record_decision(self, decision: PreemptDecision) -> None: ...

        # lifecycle.py
        def _set_state(self, job: Job, state: JobState) -> None: ...
        def _node_failed(self, job: Job) -> None: ...
        def _start(self, job: Job, nodes: Iterable[str]) -> None: ...
        def _kill(self, job: Job, ending: _Ending) -> None: ...
        def _suspend(self, job: Job, *, indefinite: bool) -> None: ...
        def _resume(self, job: Job, *, indefinite: bool) -> None: ...
        def _apply(self, decision: GangDecision) -> None: ...

        # arrays.py
        def _array_members(self, array_job_id: int) -> list[Job]: ...
        def _array_task(self, array_job_id: int, task: int) -> Job | None: ...
        def _at_throttle(self, job: Job) -> bool: ...
        def _check_array(self, request: JobRequest) -> None: ...
        def _new_array(self, job: Job) -> None: ...
        def _split_task(self, job: Job, task: int | None = None) -> Job | None: ...
        def _next_task(self, rest: Job | None) -> Job | None: ...
        def _cancel_targets(self, job_id: int, task: int | None) -> list[Job]: ...

        # dependencies.py
        def _parse_dependency(self, text: str) -> tuple[Dependency, ...]: ...
        def _wait_at_submission(self, job: Job) -> None: ...
        def _review_waiting(self) -> None: ...
        def _still_waits(self, job: Job) -> bool: ...

        # timers.py
        def _periodic_pass(self) -> None: ...
        def _pass_after(self, when: float) -> None: ...
        def _request_pass(self) -> None: ...
        def _pass_at_time(self, at: float, *, full: bool = False) -> None: ...
        def _arm_limit(self, job: Job, grace_end: float | None = None) -> None: ...
        def _cancel_limit(self, job_id: int) -> None: ...
        def _arm_timeslice(self) -> None: ...
        def _next_tick(self, interval: float, after: float | None = None) -> float: ...
        def _gang_scan(self) -> None: ...
        def _arm_backfill(self) -> None: ...
