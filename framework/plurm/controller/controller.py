"""The controller: a synchronous, deterministic state machine that asks plugins and applies.

Events come in as method calls: a command (:meth:`submit`, :meth:`cancel`, :meth:`suspend`,
:meth:`resume`, :meth:`requeue`, :meth:`update_partition`, :meth:`update_nodes`), a job's
end reported by the executor (:meth:`job_ended`), or a timer the controller set itself.
Actions go out through the executor (start, suspend, resume, signal, kill). Nothing here
knows a policy by name.

One scheduling pass (:meth:`schedule`) runs this hook sequence:

1. ``sched_queue_order`` orders the eligible pending jobs (with ``preempt_job_preempt_check``
   as the "may preempt" relation), or, when the sched plugin gave a sort key for that order
   (``sched_queue_key``), the pass reads the queue kept in that order (:mod:`.queue`);
2. for each job, in that order, unless its partition is already blocked in this pass (a job
   of it waits; that job's partition nodes are then withheld from every later job of the
   pass, whatever its partition, as Slurm does):

   a. ``select_job_test`` (RUN_NOW, no candidates) on the job's usable nodes, one weight tier
      at a time, lightest first (Slurm adds whole tiers and lets select place within them);
   b. if that fails and preemption is enabled: the core builds the candidates, running or
      suspended jobs that ``preempt_preemptable`` allows, that overlap the job's partition and
      are not exempt, in ``preempt_priority`` order (or youngest first), each with its
      ``preempt_mode``; then ``select_job_test`` with every tier and the candidates;
   c. the core applies the answer: victims whose mode is SUSPEND under gang scheduling are
      only marked (gang suspends them); CANCEL and REQUEUE victims are killed and the job
      waits (reason Resources) until their resources are free, Slurm's two phases; with no
      blocking victim the job starts: ``select_job_begin``, ``select_job_resources`` (under
      gang scheduling, kept on the job for it), the executor's start, then
      ``sched_gang_job_start`` and its suspend/resume decision.

A killed job (scancel, time limit, preemption, requeue) shows COMPLETING and keeps its nodes
until the executor reports its processes gone from them. As in Slurm, that is per node: nodes
that ran nothing of the job but its allocation (all but the batch host, for a batch script
without steps) are released almost at once (``select_job_resized``,
``sched_gang_job_resized``, then a pass), the batch host at the job's end. A job's end runs
``select_job_fini`` and ``sched_gang_job_fini`` and then a new pass. At each gang time slice
and partition update the gang plugin catches up with the job list first:
``sched_gang_job_fini`` for COMPLETING jobs, ``sched_gang_job_start`` for jobs an admin
resumed since.

The controller is one class composed of a mixin per part, each in its own module:

- :mod:`.submission`: :meth:`submit`, its checks and refusals, the job's partition, priority
  and node count, and the filing of pending jobs in the queue's indexes;
- :mod:`.passes`: :meth:`schedule` (the hook sequence above), :meth:`backfill`, the reading of
  the queue, a job's trial (usable nodes, weight gate) and the reasons of the jobs skipped;
- :mod:`.preemption`: whether jobs may preempt, the candidates (walked, or read from the victim
  pool of :mod:`.victims`), backfill's preemption questions, and the carrying out of victims;
- :mod:`.lifecycle`: every change of a job's state, the commands on a job (:meth:`cancel`,
  :meth:`suspend`, :meth:`resume`, :meth:`requeue`), node failure, the executor's reports
  (:meth:`job_ended`, :meth:`nodes_released`), start, kill, suspend, resume and gang
  scheduling's decisions;
- :mod:`.updates`: :meth:`update_partition`, :meth:`update_nodes` and node health's changes;
- :mod:`.jobupdate`: :meth:`update_job` (scontrol update JobId=...);
- :mod:`.estimates`: :meth:`will_run` (sbatch --test-only) and :meth:`expected_starts`
  (squeue --start);
- :mod:`.arrays`: job arrays, split into tasks as they start, and their throttle;
- :mod:`.dependencies`: the jobs kept out of the queue (holds, dependencies, throttled
  arrays) and their review before each pass;
- :mod:`.timers`: when passes run, the time-limit check (and the --signal warning before
  it), the gang time slice and the backfill period;
- :mod:`.base`: the state they share, declared with its types, and the constants of the hot
  paths. This module keeps :meth:`Controller.__init__`, which sets that state.
"""

from __future__ import annotations

import logging

from plurm.conf.model import PartitionSpec, SlurmConfig
from plurm.controller.arrays import ArraysMixin
from plurm.controller.base import ControllerBase, RequestError, _Ending, _Usable
from plurm.controller.busy import BusyAnswers
from plurm.controller.dependencies import WaitingMixin
from plurm.controller.estimates import EstimatesMixin
from plurm.controller.explain import ExplainMixin, PreemptDecision
from plurm.controller.health import NodeHealth
from plurm.controller.jobupdate import JobUpdateMixin
from plurm.controller.lifecycle import REQUEUE_DELAY, LifecycleMixin
from plurm.controller.limits import AssociationLimits, allocated_cpus
from plurm.controller.passes import PassesMixin
from plurm.controller.preemption import PreemptionMixin
from plurm.controller.queue import PendingByPartition, PendingQueue
from plurm.controller.recovery import RecoveryMixin
from plurm.controller.runtime import Executor, Timer, TimerHandle
from plurm.controller.submission import SubmissionMixin
from plurm.controller.timers import TIME_LIMIT_CHECK, TimersMixin
from plurm.controller.updates import UpdatesMixin
from plurm.manager import Plugins
from plurm.model.bitmap import NodeBitmap
from plurm.model.cluster import Cluster
from plurm.model.job import Job, JobRequest, PendingReason
from plurm.model.select import SelectResult, SelectStatus

__all__ = ["REQUEUE_DELAY", "TIME_LIMIT_CHECK", "Controller", "RequestError"]

logger = logging.getLogger(__name__)


class Controller(
    SubmissionMixin,
    PassesMixin,
    PreemptionMixin,
    LifecycleMixin,
    RecoveryMixin,
    UpdatesMixin,
    JobUpdateMixin,
    EstimatesMixin,
    ExplainMixin,
    TimersMixin,
    ArraysMixin,
    WaitingMixin,
    ControllerBase,
):
    """One cluster's controller. Build it with a configuration, loaded plugins, a timer and
    an executor; then feed it commands and the executor's reports."""

    def __init__(
        self, config: SlurmConfig, plugins: Plugins, timer: Timer, executor: Executor
    ) -> None:
        self.config = config
        self.plugins = plugins
        self.timer = timer
        self._clock = timer.now  # (bound once: ``now`` is read a dozen times per job)
        self.executor = executor
        self.cluster = Cluster.from_config(config)
        #: accounts.conf's limits when enforced (None: none to enforce).
        self._limits = AssociationLimits.of(
            config,
            lambda job: allocated_cpus(
                job, self.cluster, lambda j: plugins.select_job_resources(j, self.cluster)
            ),
            counts_suspended=(
                (lambda job, scope: plugins.preempt_suspended_counts(job, scope, self.cluster))
                if plugins.implements("preempt_suspended_counts")
                else None
            ),
        )
        self._next_id = config.first_job_id
        #: Whether a finished job keeps what select gave it (its TRES shows the cores, as
        #: Slurm's does); a trace replay, whose finished jobs no command asks about, turns
        #: it off and select is not asked at every end.
        self.keep_finished_units = True
        #: Jobs whose priority an administrator set (scontrol update Priority=): the
        #: priority plugin's recalculation leaves them alone, as Slurm's does.
        self._fixed_priority: set[int] = set()
        self._ending: dict[int, _Ending] = {}
        #: When each waiting preemptor first signalled victims (Slurm's back-off).
        self._preempting: dict[int, float] = {}
        #: Each preemptor's last preemption decision (scontrol explain), bounded.
        self._decisions: dict[int, PreemptDecision] = {}
        self._limit_timers: dict[int, TimerHandle] = {}
        #: The --signal warning timers of running jobs, and the attempt (restart count) of
        #: each job whose warning was sent (Slurm sends it once per run).
        self._warn_timers: dict[int, TimerHandle] = {}
        self._warned: dict[int, int] = {}
        #: Passes armed, by time: True for a periodic (full-queue) pass.
        self._pass_at: dict[float, bool] = {}
        #: An event pass is armed (SchedulerPassOn=event): the events until it runs share it.
        self._event_pass_armed = False
        self._slice_timer: TimerHandle | None = None
        #: Jobs resumed by scontrol that gang scheduling learns of at its next time slice.
        self._resumed_unseen: set[int] = set()
        self._backfill_timer: TimerHandle | None = None
        self._capacities: dict[tuple[str, ...], tuple[int, int]] = {}
        self._last_capacity: tuple[tuple[str, ...], tuple[int, int]] | None = None
        #: The most CPUs of any node of each partition, with the node list it is for.
        self._largest_cpus: dict[str, tuple[tuple[str, ...], int]] = {}
        #: Each node's CPUs, for the configuration they were read from (node sizes never
        #: change within one): backfill's partly-free nodes read them every pass.
        self._node_cpus: tuple[object, dict[str, int]] | None = None
        # select's TEST_ONLY answers at submission, by partition: (its nodes, answer by
        # request resources)
        self._never_known: dict[str, tuple[tuple[str, ...], dict[tuple[object, ...], bool]]] = {}
        #: Usable nodes per (partition, excluded nodes), with the partition and the
        #: out-of-service nodes they were computed for; the weight gate's pools per
        #: usable-node bitmap.
        self._usable: dict[tuple[str, tuple[str, ...]], _Usable] = {}
        self._pools: dict[int, tuple[NodeBitmap, ...]] = {}
        #: BUSY answers kept while their nodes do not change (see busy.py; the plugins'
        #: facade logs the changes select is told of): the answers of the pass's tests and
        #: of backfill's tests beside running jobs; whether select lets them be kept, for
        #: the configuration it answered for.
        self._busy: BusyAnswers[SelectStatus] = BusyAnswers(plugins.select_changes)
        self._busy_now: BusyAnswers[SelectResult] = BusyAnswers(plugins.select_changes)
        self._busy_kept: tuple[SlurmConfig, bool] | None = None
        #: _refused's answer per pending job, with the partition and request it is for.
        self._refusals: dict[int, tuple[PartitionSpec, JobRequest, PendingReason | None]] = {}
        #: Pending jobs kept out of the queue: held, waiting on dependencies, or records of
        #: an array at its throttle (see .dependencies); each array's records by job id.
        self._waiting: dict[int, Job] = {}
        self._arrays: dict[int, dict[int, Job]] = {}
        #: The array record the last start split off (see .arrays), for the pass to try.
        self._last_split: Job | None = None
        self.cluster.now = timer.now()
        #: When the controller started: periodic threads tick in phase with it.
        self._epoch = timer.now()
        plugins.select_node_init(self.cluster)
        self._pending = PendingQueue()
        self._by_partition = PendingByPartition()
        #: The pending jobs that require nodes (-w) (see _note_required_unavailable).
        self._pinned: dict[int, Job] = {}
        #: Jobs whose reason may be other than Priority: those filed or tried since a
        #: whole-queue pass last gave them Priority (see _settle_skipped). Whatever gives a
        #: pending job another reason or partition must go through _file or _try_start,
        #: or a whole-queue pass would leave that job's reason as it is.
        self._unsettled: dict[int, Job] = {}
        #: Each running job with the time it reaches its time limit (None: no limit) and
        #: its nodes as a bitmap, kept as it starts and resumes: neither moves with the
        #: clock, so backfill's pass need not work them out job by job (see _held_ends).
        #: Nothing changes a running job's start, suspension figures or nodes but _start,
        #: _suspend, _resume and _kill, which all change its state too; nothing changes its
        #: time limit but update_job (jobupdate.py), which updates its entry here.
        self._running_ends: dict[int, tuple[Job, float | None, int]] = {}
        #: Jobs suspended by a preemption that released their resources, to resume once
        #: those are free (see _resume_parked).
        self._parked: dict[int, Job] = {}
        self._preemption = True
        self._check_preemption()
        self._slice_interval = plugins.sched_gang_timeslice_interval(self.cluster)
        self._gang = plugins.implements("sched_gang_job_start")
        self._backfill_interval = plugins.sched_backfill_interval(self.cluster)
        self._priority_period = plugins.priority_calc_period(self.cluster)
        self._priority_timer: TimerHandle | None = None
        self.health = NodeHealth(
            self.cluster,
            timer,
            executor,
            epoch=self._epoch,
            set_condition=self._node_condition,
            changed=self._request_pass,
        )
