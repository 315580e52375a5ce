"""A live cluster's accounting as an SWF trace (``plurm trace export``), replayable by
``plurm simulate --trace`` under the same slurm.conf.

:func:`read_history` reads plurmctld's accounting store (a read-only connection, which may
run while plurmctld writes); :func:`swf_lines` turns its records into the Standard Workload
Format (v2.2) that :func:`plurm.workload.read_swf` reads. One line per job that has ended,
in submit order:

==  =========================  ==================================================
 1  job number                 the Slurm job id
 2  submit time                seconds from ``UnixStartTime`` (the whole second at or
                               before the first submission)
 3  wait time                  start - submit; -1 for a job that never started
 4  run time                   end - start, less the time spent suspended; -1 if it
                               never started
 5  allocated processors       the CPUs it was given; -1 if it never started
 6  average CPU time           the steps' user + system CPU / allocated, when gathered
 7  used memory                the largest step MaxRSS in KB, when gathered
 8  requested processors       the CPUs it asked for
 9  requested time             its time limit in seconds; -1 for UNLIMITED
10  requested memory           KB per processor; -1 if none asked for
11  status                     1 COMPLETED; 5 CANCELLED or PREEMPTED; 0 any other end
12  user                       numbered in the order users first appear
13  group                      likewise
14  executable                 the job name, numbered likewise
15  queue                      the QOS, numbered in configuration order from 1
16  partition                  the partition, numbered in configuration order from 1
17  preceding job, 18 think    -1
==  =========================  ==================================================

Times keep milliseconds (SWF allows decimals), so that a replay starts jobs where they
started: the controller's passes fall on whole seconds of its clock, and a submission's
fraction of a second decides how soon the next one comes. ``whole_seconds`` rounds them
for tools that read integers only.

The header names the partitions and QOS in the format's ``; Partition:`` and ``; Queue:``
lines, and users, groups, job names and the controller's start in ``; Note:`` lines of the
forms :mod:`plurm.workload.names` reads back.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Sequence

import attrs

from plurm import __version__
from plurm.conf.model import SlurmConfig
from plurm.live.store import CONTROLLER_STARTS, StateStore
from plurm.live.wallclock import unix_seconds
from plurm.model.acct import JobRecord
from plurm.workload.names import NamedId, name_notes

__all__ = ["History", "read_history", "swf_lines", "swf_status"]

#: Accounting states that are not an end.
_UNFINISHED = frozenset({"PENDING", "RUNNING", "SUSPENDED", "REQUEUED", "RESIZING"})


@attrs.frozen
class History:
    """What the accounting store holds: every job record, and when plurmctld started."""

    records: tuple[JobRecord, ...]
    controller_starts: tuple[float, ...] = ()


def read_history(path: str) -> History:
    """The records and controller starts of the accounting store at ``path``, read over a
    read-only connection (a StoreError if it is not a state file)."""
    with StateStore(path, readonly=True) as store:
        records = store.all_records()
        starts = store.load_value(CONTROLLER_STARTS, [])
    if not isinstance(starts, list):
        starts = []
    clean = tuple(float(s) for s in starts if isinstance(s, int | float))
    return History(tuple(records), clean)


def swf_status(state: str) -> int:
    """The SWF status (field 11) of a finished job's accounting state."""
    word = state.split()[0] if state else ""
    if word == "COMPLETED":
        return 1
    if word in ("CANCELLED", "PREEMPTED"):
        return 5
    return 0


def _ran(record: JobRecord) -> bool:
    # A job cancelled while pending has its start set to its end, but nothing allocated.
    return record.start is not None and (record.alloc_cpus > 0 or bool(record.nodes))


def _time(seconds: float, whole: bool) -> str:
    if whole:
        return str(round(seconds))
    # Truncated (not rounded) to milliseconds: a submission just before a whole second
    # stays before it, where the controller's pass grid put it.
    millis = math.floor(seconds * 1000 + 1e-6)
    whole_part, fraction = divmod(millis, 1000)
    return str(whole_part) if not fraction else f"{whole_part}.{fraction:03d}".rstrip("0")


def _date(seconds: float) -> str:
    moment = dt.datetime.fromtimestamp(unix_seconds(seconds), dt.UTC)
    return moment.strftime("%a %b %d %H:%M:%S UTC %Y")


class _Numbers:
    """Numbers names in the order they are given, from 1."""

    def __init__(self, names: Iterable[str] = ()) -> None:
        self.numbers: dict[str, int] = {}
        for name in names:
            self.number(name)

    def number(self, name: str) -> int:
        return self.numbers.setdefault(name, len(self.numbers) + 1)


def swf_lines(
    history: History,
    config: SlurmConfig,
    *,
    since: float | None = None,
    whole_seconds: bool = False,
) -> list[str]:
    """The SWF file (header and job lines, without newlines) of the jobs submitted at or
    after ``since`` (controller clock; None: all) that have ended."""
    chosen = [
        r
        for r in history.records
        if r.submit is not None
        and (since is None or r.submit >= since)
        # a pending array's record stands for tasks not yet split off: not a job run
        and not (r.array_tasks is not None and r.array_task_id is None)
    ]
    ended = [r for r in chosen if r.end is not None and r.state.split()[0] not in _UNFINISHED]
    unfinished = len(chosen) - len(ended)
    ended.sort(key=lambda r: (r.submit or 0.0, r.job_id))
    if ended:
        base = math.floor(unix_seconds(ended[0].submit or 0.0))
    else:
        base = math.floor(unix_seconds(since if since is not None else 0.0))
    origin = base - unix_seconds(0.0)  # time 0 of the trace on the controller's clock

    partitions = _Numbers(spec.name for spec in config.partitions)
    queues = _Numbers(spec.name for spec in config.qos)
    users, groups, executables = _Numbers(), _Numbers(), _Numbers()
    uids: dict[str, int] = {}
    gids: dict[str, int] = {}
    body = []
    for record in ended:
        body.append(
            _job_line(
                record,
                origin,
                whole_seconds,
                user=users.number(record.user),
                group=groups.number(record.group),
                executable=executables.number(record.name),
                queue=queues.number(record.qos) if record.qos else -1,
                partition=partitions.number(record.partition) if record.partition else -1,
            )
        )
        uids.setdefault(record.user, record.uid)
        gids.setdefault(record.group, record.gid)

    starts = [s for s in history.controller_starts if not ended or s <= (ended[0].submit or 0.0)]
    start = starts[-1] - origin if starts else None
    cpus = sum(node.cpus * len(node.names) for node in config.nodes)
    node_count = sum(len(node.names) for node in config.nodes)
    header = [
        "Version: 2.2",
        f"Computer: Plurm cluster {config.cluster_name} ({node_count} nodes, {cpus} CPUs)",
        f"Conversion: plurm trace export (Plurm {__version__})",
        f"MaxJobs: {len(ended)}" if ended else None,
        f"MaxRecords: {len(ended)}" if ended else None,
        "Preemption: No",
        f"UnixStartTime: {base}",
        "TimeZoneString: UTC",
        f"StartTime: {_date(origin)}",
        f"EndTime: {_date(max(r.end or 0.0 for r in ended))}" if ended else None,
        f"MaxNodes: {node_count}" if node_count else None,
        f"MaxProcs: {cpus}" if cpus else None,
        "AllowOveruse: No",
        f"MaxQueues: {len(queues.numbers)}" if queues.numbers else None,
        *(f"Queue: {number} {name}" for name, number in queues.numbers.items()),
        f"MaxPartitions: {len(partitions.numbers)}" if partitions.numbers else None,
        *(f"Partition: {number} {name}" for name, number in partitions.numbers.items()),
        "Note: Scheduler is Plurm (plurmctld); job numbers are Slurm job ids, queue "
        "numbers QOS and partition numbers Slurm partitions",
        "Note: Run time is end - start less the time spent suspended; a requeued job's "
        "line is its last run",
        *(
            f"Note: {text}"
            for text in name_notes(
                {n: NamedId(name, uids[name]) for name, n in users.numbers.items()},
                {n: NamedId(name, gids[name]) for name, n in groups.numbers.items()},
                {n: name for name, n in executables.numbers.items()},
                start,
            )
        ),
        f"Note: {unfinished} jobs not ended at the export were left out" if unfinished else None,
    ]
    lines = [f"; {item}" for item in header if item is not None]
    lines.append(";")
    return lines + body


def _job_line(
    record: JobRecord,
    origin: float,
    whole: bool,
    *,
    user: int,
    group: int,
    executable: int,
    queue: int,
    partition: int,
) -> str:
    submit = record.submit or 0.0
    ran = _ran(record)
    start = record.start if ran and record.start is not None else None
    end = record.end if record.end is not None else submit
    wait = run = "-1"
    alloc = -1
    if start is not None:
        wait = _time(max(0.0, start - submit), whole)
        run = _time(max(0.0, end - start - record.suspended), whole)
        alloc = record.alloc_cpus or -1
    cpu = "-1"
    totals = [s.total_cpu for s in record.steps if s.total_cpu is not None]
    if totals and alloc > 0:
        cpu = _time(sum(totals) / alloc, whole)
    rss = [s.max_rss for s in record.steps if s.max_rss is not None]
    used_memory = max(rss) // 1024 if rss else -1
    requested_time = record.timelimit * 60 if record.timelimit is not None else -1
    requested_memory = -1
    if record.total_mem and record.req_cpus > 0:
        requested_memory = record.total_mem * 1024 // record.req_cpus
    fields: Sequence[object] = (
        record.job_id,
        _time(max(0.0, submit - origin), whole),
        wait,
        run,
        alloc,
        cpu,
        used_memory,
        record.req_cpus or -1,
        requested_time,
        requested_memory,
        swf_status(record.state),
        user,
        group,
        executable,
        queue,
        partition,
        -1,
        -1,
    )
    return " ".join(str(field) for field in fields)
