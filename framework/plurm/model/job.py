"""Jobs: what a user asked for (frozen), and the job the controller owns (mutable)."""

from __future__ import annotations

import enum
from collections.abc import Callable

import attrs

from plurm import hostlist
from plurm.model.gres import GresHeld, GresRequest

__all__ = [
    "Dependency",
    "Job",
    "JobRequest",
    "JobState",
    "PendingReason",
    "PreemptsByTier",
    "dependency_text",
    "min_cpus_per_node",
    "never_preempts",
    "task_ranges",
]


class JobState(enum.Enum):
    """Slurm's base job states; ``code`` is the compact form squeue's %t prints."""

    PENDING = "PD"
    RUNNING = "R"
    SUSPENDED = "S"
    COMPLETING = "CG"
    COMPLETED = "CD"
    CANCELLED = "CA"
    FAILED = "F"
    TIMEOUT = "TO"
    PREEMPTED = "PR"
    NODE_FAIL = "NF"
    OUT_OF_MEMORY = "OOM"

    # Members are singletons that compare by identity: hash them by identity too, in C.
    # (Enum's own __hash__ is Python code, and states key dicts at every state change.)
    __hash__ = object.__hash__

    @property
    def code(self) -> str:
        return self.value

    @property
    def finished(self) -> bool:
        """The job will not run again (in this attempt)."""
        return self not in _UNFINISHED

    @property
    def holds_resources(self) -> bool:
        """The job has an allocation (running, suspended or completing)."""
        return self in _HOLDING_RESOURCES


# (Sets of members for the properties above: on Python 3.11 a member read through its enum
# class goes through the class's __getattr__ hook, some ten times the cost of a global.)
_UNFINISHED = frozenset(
    {JobState.PENDING, JobState.RUNNING, JobState.SUSPENDED, JobState.COMPLETING}
)
_HOLDING_RESOURCES = frozenset({JobState.RUNNING, JobState.SUSPENDED, JobState.COMPLETING})
#: The states in which a job's run time still counts up (or has not begun).
_UNSTOPPED = frozenset({JobState.PENDING, JobState.RUNNING, JobState.SUSPENDED})


class PendingReason(enum.Enum):
    """Why a job waits (or None), spelled as Slurm spells it."""

    NONE = "None"
    PRIORITY = "Priority"
    RESOURCES = "Resources"
    BEGIN_TIME = "BeginTime"
    DEPENDENCY = "Dependency"
    JOB_HELD_ADMIN = "JobHeldAdmin"
    JOB_HELD_USER = "JobHeldUser"
    REQ_NODE_NOT_AVAIL = "ReqNodeNotAvail"
    #: Slurm's text when the nodes a job could use are held for a waiting job of a partition
    #: scheduled before it (or are down or drained).
    NODES_RESERVED = (
        "Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority "
        "partitions"
    )
    PARTITION_DOWN = "PartitionDown"
    PARTITION_CONFIG = "PartitionConfig"
    PARTITION_NODE_LIMIT = "PartitionNodeLimit"
    PARTITION_TIME_LIMIT = "PartitionTimeLimit"
    PARTITION_INACTIVE = "PartitionInactive"
    INVALID_QOS = "InvalidQOS"
    QOS_NOT_ALLOWED = "QOSNotAllowed"
    BAD_CONSTRAINTS = "BadConstraints"
    NODE_DOWN = "NodeDown"
    NON_ZERO_EXIT_CODE = "NonZeroExitCode"
    OUT_OF_MEMORY = "OutOfMemory"
    TIME_LIMIT = "TimeLimit"
    #: A dependency that can never be satisfied (Slurm 22.05 keeps such a job pending unless
    #: DependencyParameters=kill_invalid_depend).
    DEPENDENCY_NEVER_SATISFIED = "DependencyNeverSatisfied"
    #: An array's task waits because ``--array=...%K`` tasks already run.
    JOB_ARRAY_TASK_LIMIT = "JobArrayTaskLimit"
    #: accounts.conf's association limits (AccountingStorageEnforce=limits): GrpTRES cpu=
    #: and node=, GrpJobs, MaxJobs, MaxWall (plurm.controller.limits).
    ASSOC_GRP_CPU_LIMIT = "AssocGrpCpuLimit"
    ASSOC_GRP_NODE_LIMIT = "AssocGrpNodeLimit"
    ASSOC_GRP_JOBS_LIMIT = "AssocGrpJobsLimit"
    ASSOC_MAX_JOBS_LIMIT = "AssocMaxJobsLimit"
    ASSOC_MAX_WALL_LIMIT = "AssocMaxWallDurationPerJobLimit"


@attrs.frozen
class Dependency:
    """One item of a job's ``--dependency``: ``kind`` (after, afterany, afterok, afternotok,
    singleton) on job ``job_id`` (0 for singleton), one task of its array (``task``) or all
    of its tasks (``whole_array``: the job is an array's id), with the item's ``state``
    (unfulfilled, fulfilled, failed) and whether it was joined by ``?`` (``any``: one
    fulfilled item is enough) rather than ``,`` (all must be)."""

    kind: str
    job_id: int = 0
    task: int | None = None
    whole_array: bool = False
    state: str = "unfulfilled"
    any: bool = False

    @property
    def text(self) -> str:
        """The item as scontrol and squeue show it (Slurm 22.05's form)."""
        if self.kind == "singleton":
            return f"singleton({self.state})"
        if self.whole_array:
            target = f"{self.job_id}_*"
        elif self.task is not None:
            target = f"{self.job_id}_{self.task}"
        else:
            target = str(self.job_id)
        return f"{self.kind}:{target}({self.state})"


def dependency_text(items: tuple[Dependency, ...]) -> str:
    """A job's dependencies as Slurm shows them: the items not fulfilled yet, each followed
    by its separator (``?`` for any, ``,`` for all); ``(null)`` when none is left."""
    shown = [item for item in items if item.state != "fulfilled"]
    if not shown:
        return "(null)"
    parts = []
    for index, item in enumerate(shown):
        if index:
            parts.append("?" if shown[index - 1].any else ",")
        parts.append(item.text)
    return "".join(parts)


def task_ranges(tasks: tuple[int, ...]) -> str:
    """Array task ids as Slurm prints a task bitmap: ``1-3,5,7-8``."""
    parts: list[str] = []
    index = 0
    while index < len(tasks):
        first = last = tasks[index]
        while index + 1 < len(tasks) and tasks[index + 1] == last + 1:
            index += 1
            last = tasks[index]
        parts.append(str(first) if first == last else f"{first}-{last}")
        index += 1
    return ",".join(parts)


@attrs.frozen
class JobRequest:
    """What a job asks for, as sbatch's options and #SBATCH lines give it.

    ``partitions`` empty means the default partition; ``max_nodes`` None means no upper bound
    (sbatch without -N); ``time_limit`` is minutes (None: the
    partition's default); ``requeue`` None means the cluster's JobRequeue; memory is MiB
    (None: the configured default). ``sim_runtime`` is how long the job runs in a simulation,
    in seconds (None: until it is stopped or times out).
    """

    name: str = "sbatch"
    #: Whom the job runs as (sbatch --uid; else the submitter) and its group.
    user: str = "root"
    uid: int = 0
    group: str = "root"
    gid: int = 0
    partitions: tuple[str, ...] = ()
    qos: str | None = None
    #: -A: the account to charge (None: the user's default account).
    account: str | None = None
    min_nodes: int = 1
    max_nodes: int | None = None
    ntasks: int | None = None
    cpus_per_task: int = 1
    mem_per_node: int | None = None
    mem_per_cpu: int | None = None
    time_limit: int | None = None
    #: --begin: not eligible before this time (controller clock seconds).
    begin_time: float | None = None
    requeue: bool | None = None
    nodelist: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    exclusive: bool = False
    contiguous: bool = False
    oversubscribe: bool = False
    sim_runtime: float | None = None
    #: Simulation: ``sim_runtime`` is a wall-clock deadline from the start, as for
    #: ``--wrap='sleep N'``: a stopped ``sleep`` keeps its deadline, so a job suspended past
    #: it ends when it is resumed (Slurm 22.05, tests/data/scenarios/PREEMPTION.md).
    #: Otherwise suspension pauses the run time, as for work that needs the CPU.
    sim_wall_clock: bool = False
    #: Simulation: the job's command ignores SIGTERM (runs on until SIGKILL).
    ignore_sigterm: bool = False
    #: Simulation: the job runs its work as job steps (``srun``), which receive the SIGTERM
    #: that starts a preemption GraceTime; a plain batch script does not.
    runs_steps: bool = False
    #: --nice: lowers the job's priority by this much (negative raises it).
    nice: int = 0
    #: Simulation: the exit code when the job ends by itself (``--wrap='exit N'``).
    sim_exit_code: int = 0
    #: Simulation: the memory the job uses, MiB per CPU (a trace's used memory), for
    #: jobacct_gather plugins to sample (None: not known).
    sim_mem_per_cpu: int | None = None
    command: str = ""
    #: The command came from --wrap (scontrol shows Command=(null) then).
    wrapped: bool = False
    work_dir: str = "/"
    stdout: str | None = None
    #: -e: the standard error file pattern (None: with standard output).
    stderr: str | None = None
    #: --open-mode: "truncate" or "append" the output files.
    open_mode: str = "truncate"
    #: Live mode: the batch script's text (a --wrap command is wrapped in ``#!/bin/sh``),
    #: its arguments, the environment it starts with (``NAME=value``, as --export says)
    #: and the host it was submitted from. A simulation leaves them empty.
    script: str = ""
    script_args: tuple[str, ...] = ()
    environment: tuple[str, ...] = ()
    submit_host: str = ""
    #: --comment (scontrol update Comment=); empty: none.
    comment: str = ""
    #: --ntasks-per-node (None: not asked).
    ntasks_per_node: int | None = None
    #: --gres and --gpus* as given (``gpu:2``, ``gpus=2``, ``gpus-per-node=1``), for display.
    gres: tuple[str, ...] = ()
    #: What the job asks of generic resources, typed (None: nothing, the common case).
    gres_request: GresRequest | None = None
    #: --wckey (accepted and kept; Plurm does no WCKey accounting).
    wckey: str | None = None
    #: --signal=[{R|B}:]SIG[@SECS]: the signal the controller sends ``warn_time`` seconds
    #: before the job's time limit (None: none); to the batch shell only with
    #: ``warn_batch_only``, else to the job's steps.
    warn_signal: str | None = None
    warn_time: int = 0
    warn_batch_only: bool = False
    #: --array: the task ids, ascending (empty: not an array), and its ``%K`` throttle
    #: (0: no limit).
    array_tasks: tuple[int, ...] = ()
    array_throttle: int = 0
    #: --dependency as written (the controller reads it at submission).
    dependency: str | None = None
    #: --hold: submitted held.
    hold: bool = False

    def with_runtime(self, seconds: float | None) -> JobRequest:
        """The same request with a simulated run time."""
        return attrs.evolve(self, sim_runtime=seconds)

    @property
    def resources(self) -> tuple[object, ...]:
        """What the job asks of the cluster's resources, and nothing else (not who asks,
        when, or what runs): two requests equal in these fit the same nodes."""
        return (
            self.min_nodes,
            self.max_nodes,
            self.ntasks,
            self.cpus_per_task,
            self.ntasks_per_node,
            self.mem_per_node,
            self.mem_per_cpu,
            tuple(self.nodelist),  # (the Python API may give lists)
            tuple(self.exclude),
            self.exclusive,
            self.contiguous,
            self.oversubscribe,
            self.gres_request,
        )

    @property
    def tasks(self) -> int:
        """Tasks to run: --ntasks, else one per node."""
        return self.ntasks if self.ntasks is not None else self.min_nodes

    @property
    def cpus(self) -> int:
        """CPUs the whole job needs."""
        return self.tasks * self.cpus_per_task


@attrs.define
class Job:
    """A job as the controller owns it. Plugins get it to read, never to change.

    Times are seconds on the controller's clock. ``partition`` is where the job runs or will
    run; ``nodes`` its allocation in node-table order (empty while pending).
    """

    job_id: int
    request: JobRequest
    submit_time: float
    partition: str
    priority: int = 1
    #: The account and QOS the job was given at submission (None: none, as without
    #: accounting, where Slurm shows ``(null)``).
    account: str | None = None
    qos: str | None = None
    state: JobState = JobState.PENDING
    reason: PendingReason = PendingReason.NONE
    nodes: tuple[str, ...] = ()
    eligible_time: float = 0.0
    start_time: float | None = None
    end_time: float | None = None
    suspend_time: float | None = None
    #: Run time accumulated before the current suspension (or the last one).
    pre_suspend_time: float = 0.0
    preempt_time: float | None = None
    #: Suspended by an administrator (scontrol suspend); only scontrol resume ends it.
    admin_suspended: bool = False
    #: Suspended by a preemption that gave its resources to the preemptor (a policy that
    #: answers ``preempt_suspend_releases``): the core resumes it once they are free.
    preempt_suspended: bool = False
    #: Run time kept by CHECKPOINT preemptions: the job's work done before it went back to
    #: the queue, which it does not do again (the simulator runs it for the rest only).
    checkpointed: float = 0.0
    restarts: int = 0
    #: How many times the job was preempted: suspended, requeued, checkpointed or
    #: cancelled for a preemptor (counted by the core as it carries preemptions out; kept
    #: across requeues and controller restarts). Policies read it (LSF's MAX_JOB_PREEMPT).
    preemptions: int = 0
    #: The job whose preemption took this one last (None: never preempted); its time is
    #: ``preempt_time``. Shown by ``scontrol explain``.
    preempted_by: int | None = None
    #: How many scheduling decisions looked for victims for the job since it last went
    #: pending (the core asked select to place it with preemption candidates); 0 again when
    #: it starts. Policies read it (PBS's max_preempt_attempts).
    preempt_attempts: int = 0
    #: What the job was given, finer than nodes, while it holds anything: (node, core)
    #: pairs from the select plugin (None: whole nodes). A completing job keeps them all;
    #: it holds those on ``held_nodes``.
    units: frozenset[tuple[str, int]] | None = None
    #: The generic resources (GPUs) the job was given at its last start, per node (empty:
    #: none), from ``select_job_gres``; kept after its end for accounting.
    gres_alloc: tuple[GresHeld, ...] = ()
    exit_code: int = 0
    #: The signal that ended the job (0: it exited); scontrol shows ExitCode=code:signal.
    exit_signal: int = 0
    time_limit: int | None = None
    requeue: bool = True
    #: The allocation a finished job held when ``scontrol requeue`` sent it back to the
    #: queue: Slurm keeps that allocation's TRES record (and shows it) until the job
    #: starts again. A job requeued while it runs loses it.
    requeued_allocation: tuple[str, ...] = ()
    #: The node count the job waits for (squeue's NODES while pending): its -N minimum, or
    #: more when its CPUs need more of its partition's nodes (the controller's estimate).
    wanted_nodes: int = 1
    #: With reason ReqNodeNotAvail: the nodes it requires that are out of service.
    unavailable_nodes: tuple[str, ...] = ()
    #: While the job is COMPLETING: the nodes of ``nodes`` whose teardown is not over yet
    #: (Slurm frees each node as its processes there are gone, the batch host last); None
    #: otherwise. ``nodes`` keeps the whole allocation, which a finished job shows.
    completing_nodes: tuple[str, ...] | None = None
    #: Killed to go back to the queue (scontrol requeue, a REQUEUE preemption): it shows
    #: COMPLETING, with the restart already counted, until its teardown is over.
    requeued: bool = False
    #: While a job killed to be requeued completes: the seconds it will wait in the queue
    #: once its teardown is over, as its policy gave them (None: Slurm's requeue delay).
    #: Saved, so that a controller restarted during the teardown keeps the policy's delay.
    requeue_delay: int | None = None
    #: A job array's record: its array's id (the first task's job id) and its task id; an
    #: array's record of tasks not started yet has no task id but ``array_pending``, the
    #: ids of those tasks (Slurm's "meta" record, shown as ``123_[4-6]``).
    array_job_id: int | None = None
    array_task_id: int | None = None
    array_pending: tuple[int, ...] = ()
    #: What the job still waits for (--dependency), with each item's state; emptied once
    #: the dependencies are satisfied.
    dependencies: tuple[Dependency, ...] = ()

    @property
    def name(self) -> str:
        return self.request.name

    @property
    def held(self) -> bool:
        """Held (sbatch -H, scontrol hold): a pending job of priority 0, as in Slurm."""
        return self.priority == 0 and self.state is JobState.PENDING

    @property
    def array_tasks_text(self) -> str | None:
        """An array record's tasks not started yet, as ``4-6%2`` (with the array's
        throttle), or None for any other record."""
        if not self.array_pending:
            return None
        text = task_ranges(self.array_pending)
        throttle = self.request.array_throttle
        return f"{text}%{throttle}" if throttle else text

    @property
    def display_id(self) -> str:
        """The job's id as squeue's JOBID and sacct show it: ``123_4`` for an array task,
        ``123_[4-6%2]`` for an array's tasks not started yet, else the job id."""
        if self.array_job_id is None:
            return str(self.job_id)
        pending = self.array_tasks_text
        if pending is not None:
            return f"{self.array_job_id}_[{pending}]"
        return f"{self.array_job_id}_{self.array_task_id}"

    @property
    def reason_text(self) -> str:
        """The reason as squeue and scontrol print it: ReqNodeNotAvail names the required
        nodes that are unavailable, as Slurm 22.05 does (``ReqNodeNotAvail,
        UnavailableNodes:n[2-3]``)."""
        if self.reason is PendingReason.REQ_NODE_NOT_AVAIL and self.unavailable_nodes:
            nodes = hostlist.compress(self.unavailable_nodes)
            return f"{self.reason.value}, UnavailableNodes:{nodes}"
        return self.reason.value

    @property
    def held_nodes(self) -> tuple[str, ...]:
        """The nodes the job holds now: its allocation, less the nodes a completing job
        has already released. Slurm's squeue and scontrol list these."""
        return self.nodes if self.completing_nodes is None else self.completing_nodes

    def purged(self, now: float, min_job_age: int) -> bool:
        """Finished more than MinJobAge seconds ago: slurmctld has forgotten it, and the
        commands no longer show it (MinJobAge=0 keeps every job)."""
        return (
            min_job_age > 0
            and self.state.finished
            and self.end_time is not None
            and self.end_time + min_job_age < now
        )

    def run_time(self, now: float) -> float:
        """Seconds the job has run: its time before suspension plus the current stretch."""
        if self.start_time is None:
            return 0.0
        if self.state is JobState.SUSPENDED:
            return self.pre_suspend_time
        stopped = self.state not in _UNSTOPPED
        until = self.end_time if stopped and self.end_time is not None else now
        resumed = self.suspend_time if self.suspend_time is not None else self.start_time
        return self.pre_suspend_time + max(0.0, until - resumed)


def never_preempts(first: Job, second: Job) -> bool:
    """The ``preempts`` relation the core gives ``sched_queue_order`` when the preempt plugin
    says no job ever preempts another: always False. A sched plugin may test
    ``preempts is never_preempts`` and order the queue without calling it."""
    return False


@attrs.frozen
class PreemptsByTier:
    """The ``preempts`` relation the core gives ``sched_queue_order`` when the preempt plugin
    says a job preempts only jobs of lower-PriorityTier partitions (``preempt_by_tier``). It
    answers as ``check`` does. An order that puts higher tiers first may sort without
    calling it: the relation never puts a job ahead of one that the tier puts first, and
    never puts both of two jobs ahead of each other."""

    check: Callable[[Job, Job], bool]

    def __call__(self, first: Job, second: Job) -> bool:
        return self.check(first, second)


def min_cpus_per_node(request: JobRequest) -> int:
    """The CPUs each node of the job must give at least (scontrol's MinCPUsNode): a task's,
    or --ntasks-per-node tasks' (Slurm's pn_min_cpus)."""
    return request.cpus_per_task * (request.ntasks_per_node or 1)
