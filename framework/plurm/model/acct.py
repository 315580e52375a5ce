"""Accounting records: what slurmdbd keeps of each job and job step, and what sacct asks.

A :class:`JobRecord` is one job (one attempt: a requeued job's record is replaced by its
next run, as sacct shows without ``--duplicates``) with its :class:`StepRecord`s. Times are
seconds on the controller's clock (``commands.timefmt.EPOCH`` is time 0), None when not
known yet (a pending job's start, a running job's end). States are spelled as sacct prints
them.

:class:`AcctQuery` is a sacct selection; :meth:`AcctQuery.matches` is the one place that
decides whether a record is listed, for the SQLite store and for records built from a
simulated controller's jobs alike (:func:`records_from_jobs`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import attrs

from plurm.model.job import Job, JobState, task_ranges

__all__ = [
    "AcctQuery",
    "JobRecord",
    "JobSelector",
    "StepRecord",
    "records_from_jobs",
]

#: sacct's state names, long form, and their short codes (``-s`` takes either).
STATE_CODES: dict[str, str] = {
    "BOOT_FAIL": "BF",
    "CANCELLED": "CA",
    "COMPLETED": "CD",
    "DEADLINE": "DL",
    "FAILED": "F",
    "NODE_FAIL": "NF",
    "OUT_OF_MEMORY": "OOM",
    "PENDING": "PD",
    "PREEMPTED": "PR",
    "RUNNING": "R",
    "REQUEUED": "RQ",
    "RESIZING": "RS",
    "REVOKED": "RV",
    "SUSPENDED": "S",
    "TIMEOUT": "TO",
}


@attrs.frozen
class StepRecord:
    """One job step: ``step`` is ``"batch"``, ``"extern"`` or the step number. Usage
    fields are None when nothing gathered them (jobacct_gather/none): sizes (``max_rss``,
    ``ave_rss``, ``max_vmsize``, ``ave_vmsize``) in bytes, pages as counts of major page
    faults, CPU times in seconds; the ``_node``/``_task`` fields say where a maximum (or
    MinCPU's minimum) was seen (:class:`plurm.model.usage.StepUsage`)."""

    job_id: int
    step: str | int
    name: str
    state: str
    exit_code: int = 0
    exit_signal: int = 0
    start: float | None = None
    end: float | None = None
    nodes: tuple[str, ...] = ()
    ntasks: int = 1
    alloc_cpus: int = 0
    #: Memory the step holds, MiB (for AllocTRES); None: none tracked.
    alloc_mem: int | None = None
    suspended: float = 0.0
    cancelled_by: int | None = None
    max_rss: int | None = None
    ave_cpu: float | None = None
    total_cpu: float | None = None
    max_rss_node: str | None = None
    max_rss_task: int | None = None
    ave_rss: float | None = None
    max_vmsize: int | None = None
    max_vmsize_node: str | None = None
    max_vmsize_task: int | None = None
    ave_vmsize: float | None = None
    max_pages: int | None = None
    max_pages_node: str | None = None
    max_pages_task: int | None = None
    ave_pages: float | None = None
    min_cpu: float | None = None
    min_cpu_node: str | None = None
    min_cpu_task: int | None = None
    user_cpu: float | None = None
    system_cpu: float | None = None

    @property
    def step_key(self) -> str:
        return str(self.step)


@attrs.frozen
class JobRecord:
    """One job as accounting keeps it.

    ``array_job_id``/``array_task_id``: a task of a job array; a pending array's record
    has ``array_tasks`` (its pending task ids, as ``1-3,5``) and no task id. ``req_mem``
    is MiB per node, or per CPU when ``req_mem_per_cpu``; ``timelimit`` minutes (None:
    UNLIMITED). ``cancelled_by`` is the uid that cancelled the job (sacct's ``CANCELLED by
    <uid>``). ``suspended`` is the seconds the job spent suspended.
    """

    job_id: int
    name: str
    user: str
    uid: int
    group: str
    gid: int
    account: str | None
    partition: str
    qos: str | None
    state: str
    exit_code: int = 0
    exit_signal: int = 0
    submit: float | None = None
    eligible: float | None = None
    start: float | None = None
    end: float | None = None
    nodes: tuple[str, ...] = ()
    alloc_cpus: int = 0
    #: The tracked GRES the job was given (AccountingStorageTRES's ``gres/NAME``):
    #: (``gpu`` or ``gpu:a100``, count) pairs; empty for most jobs.
    alloc_gres: tuple[tuple[str, int], ...] = ()
    req_cpus: int = 1
    req_nodes: int = 1
    req_mem: int | None = None
    req_mem_per_cpu: bool = False
    timelimit: int | None = None
    work_dir: str = ""
    restarts: int = 0
    cancelled_by: int | None = None
    derived_exit_code: int = 0
    derived_exit_signal: int = 0
    array_job_id: int | None = None
    array_task_id: int | None = None
    array_tasks: str | None = None
    priority: int | None = None
    suspended: float = 0.0
    reason: str = "None"
    steps: tuple[StepRecord, ...] = ()

    def elapsed(self, now: float) -> int:
        """Seconds run (suspended time left out): to the end, or to ``now`` while running."""
        if self.start is None:
            return 0
        until = self.end if self.end is not None else now
        return max(0, int(until - self.start - self.suspended))

    @property
    def total_mem(self) -> int:
        """The memory asked for, MiB, over the whole job (22.05's ReqMem, from its TRES)."""
        if not self.req_mem:
            return 0
        if self.req_mem_per_cpu:
            return self.req_mem * self.req_cpus
        return self.req_mem * max(1, len(self.nodes) or self.req_nodes)


@attrs.frozen
class JobSelector:
    """One item of ``sacct -j``: a job id, or an array's id with a task (``123_4``) or
    every task (``123``); ``step`` keeps only that step (``123.batch``)."""

    job_id: int
    task: int | None = None
    step: str | None = None

    def matches(self, record: JobRecord) -> bool:
        if self.task is None:
            return record.job_id == self.job_id or record.array_job_id == self.job_id
        if record.array_job_id != self.job_id:
            return False
        if record.array_task_id is not None:
            return record.array_task_id == self.task
        return record.array_tasks is not None and self.task in _ranges(record.array_tasks)


def _ranges(text: str) -> set[int]:
    found: set[int] = set()
    for part in text.split(","):
        first, _, last = part.partition("-")
        first = first.split(":")[0]
        last = (last or first).split(":")[0]
        if first.isascii() and first.isdigit() and last.isascii() and last.isdigit():
            found.update(range(int(first), int(last) + 1))
    return found


@attrs.frozen
class AcctQuery:
    """A sacct selection. None: no restriction on that item.

    The window [``start``, ``end``] (None: unbounded) works as sacct(1) describes it:
    without ``states``, a job is listed if it was eligible to run at some time in the
    window (with ``jobs``, jobs never eligible are listed too); with ``states``, if it was
    in one of them at some time in the window: PENDING from eligibility to its start,
    RUNNING from its start to its end, SUSPENDED while suspended, and a final state
    (COMPLETED, CANCELLED, ...) if it ended in it within the window.
    """

    jobs: tuple[JobSelector, ...] | None = None
    start: float | None = None
    end: float | None = None
    states: frozenset[str] | None = None
    names: frozenset[str] | None = None
    users: frozenset[str] | None = None
    uids: frozenset[int] | None = None
    partitions: frozenset[str] | None = None

    def matches(self, record: JobRecord) -> bool:
        if self.jobs is not None and not any(s.matches(record) for s in self.jobs):
            return False
        if self.names is not None and record.name not in self.names:
            return False
        if self.partitions is not None and record.partition not in self.partitions:
            return False
        if self.users is not None or self.uids is not None:
            by_name = self.users is not None and record.user in self.users
            by_uid = self.uids is not None and record.uid in self.uids
            if not (by_name or by_uid):
                return False
        if self.states is None:
            return self._in_window(record)
        return any(self._in_state(record, state) for state in self.states)

    def _before_end(self, moment: float | None) -> bool:
        return moment is not None and (self.end is None or moment <= self.end)

    def _after_start(self, moment: float | None) -> bool:
        return moment is None or self.start is None or moment >= self.start

    def _in_window(self, record: JobRecord) -> bool:
        if record.eligible is None:
            # never eligible (held): listed only when asked for by id, and not after -E
            return (
                self.jobs is not None
                and self._before_end(record.submit)
                and self._after_start(record.end)
            )
        return self._before_end(record.eligible) and self._after_start(record.end)

    def _in_state(self, record: JobRecord, state: str) -> bool:
        if state == "PENDING":
            return self._before_end(record.eligible) and self._after_start(
                record.start if record.start is not None else record.end
            )
        if state == "RUNNING":
            return self._before_end(record.start) and self._after_start(record.end)
        if state == "SUSPENDED":
            return record.state == "SUSPENDED" and self._before_end(record.start)
        if record.state.split()[0] != state or record.end is None:
            return False
        return self._before_end(record.end) and self._after_start(record.end)


# ----------------------------------------------------------------------------- from jobs

_FINAL = {
    JobState.PENDING: "PENDING",
    JobState.RUNNING: "RUNNING",
    JobState.SUSPENDED: "SUSPENDED",
    JobState.COMPLETED: "COMPLETED",
    JobState.CANCELLED: "CANCELLED",
    JobState.FAILED: "FAILED",
    JobState.TIMEOUT: "TIMEOUT",
    JobState.PREEMPTED: "PREEMPTED",
    JobState.NODE_FAIL: "NODE_FAIL",
    JobState.OUT_OF_MEMORY: "OUT_OF_MEMORY",
}
#: Endings by the controller's kill: the job line shows 0:0, its batch step CANCELLED
#: with the signal that ended the script (Slurm 22.05: ``TIMEOUT 0:0``, ``.batch
#: CANCELLED 0:15``).
_KILLED = frozenset({"CANCELLED", "TIMEOUT", "PREEMPTED", "NODE_FAIL", "REQUEUED"})


def _state(job: Job) -> str:
    """The state accounting has for a job. A COMPLETING job was already recorded with the
    state its kill gives it (slurmctld tells slurmdbd at the kill): told apart here by
    what the kill left on the job."""
    if job.state is not JobState.COMPLETING:
        return _FINAL[job.state]
    if job.requeued:
        return "REQUEUED"
    if job.preempt_time is not None:
        return "PREEMPTED"
    if job.reason.value == "TimeLimit":
        return "TIMEOUT"
    return "CANCELLED"


def _tracked_gres(job: Job, tracked: tuple[str, ...]) -> tuple[tuple[str, int], ...]:
    if not job.gres_alloc or not tracked:
        return ()
    totals: dict[str, int] = {}
    for unit in job.gres_alloc:
        for key in (unit.name, f"{unit.name}:{unit.type}" if unit.type else None):
            if key in tracked:
                totals[key] = totals.get(key, 0) + len(unit.indexes)
    return tuple(sorted(totals.items()))


def records_from_jobs(
    jobs: Iterable[Job],
    now: float,
    *,
    alloc_cpus: Callable[[Job], int] | None = None,
    cancelled_by: int = 0,
    gres_tracked: tuple[str, ...] = (),
) -> list[JobRecord]:
    """Accounting records for a controller's in-memory jobs (a simulation keeps no
    accounting store), in job-id order. ``alloc_cpus`` gives a started job's CPUs (default:
    what it asked for) and ``cancelled_by`` the uid of scancel's caller (a session's
    commands run as root). A simulated job runs no steps but its batch script: a job that
    started has its ``batch`` step, on its first node. ``gres_tracked`` names the GRES
    AccountingStorageTRES tracks (``gpu``, ``gpu:a100``)."""
    records = []
    for job in sorted(jobs, key=lambda j: j.job_id):
        request = job.request
        state = _state(job)
        started = job.start_time is not None
        cpus = (alloc_cpus(job) if alloc_cpus is not None else request.cpus) if started else 0
        end = job.end_time if state not in ("PENDING", "RUNNING", "SUSPENDED") else None
        start = job.start_time
        if start is None and end is not None:
            start = end  # cancelled while pending: Slurm sets its start to its end
        suspended = 0.0
        if started and job.start_time is not None:
            wall = (end if end is not None else now) - job.start_time
            suspended = max(0.0, wall - job.run_time(now))
        killed = state in _KILLED
        steps: tuple[StepRecord, ...] = ()
        if started and job.nodes:
            per_node = cpus // max(1, len(job.nodes))
            steps = (
                StepRecord(
                    job_id=job.job_id,
                    step="batch",
                    name="batch",
                    state="CANCELLED" if killed else state,
                    exit_code=job.exit_code,
                    exit_signal=job.exit_signal,
                    start=job.start_time,
                    end=end,
                    nodes=job.nodes[:1],
                    ntasks=1,
                    alloc_cpus=per_node if len(job.nodes) > 1 else cpus,
                    suspended=suspended,
                ),
            )
        records.append(
            JobRecord(
                job_id=job.job_id,
                name=request.name,
                user=request.user,
                uid=request.uid,
                group=request.group,
                gid=request.gid,
                account=job.account,
                partition=job.partition,
                qos=job.qos,
                state=state,
                exit_code=0 if killed else job.exit_code,
                exit_signal=0 if killed else job.exit_signal,
                submit=job.submit_time,
                eligible=job.eligible_time,
                start=start,
                end=end,
                nodes=job.nodes if started else (),
                alloc_cpus=cpus,
                alloc_gres=_tracked_gres(job, gres_tracked) if started else (),
                req_cpus=request.cpus,
                req_nodes=request.min_nodes,
                req_mem=request.mem_per_cpu or request.mem_per_node,
                req_mem_per_cpu=request.mem_per_cpu is not None,
                timelimit=job.time_limit,
                work_dir=request.work_dir,
                restarts=job.restarts,
                cancelled_by=cancelled_by if state == "CANCELLED" else None,
                priority=job.priority,
                suspended=suspended,
                reason=job.reason.value,
                steps=steps,
                array_job_id=job.array_job_id,
                array_task_id=job.array_task_id,
                array_tasks=task_ranges(job.array_pending) if job.array_pending else None,
            )
        )
    return records
