"""squeue: the job queue, in Slurm's default format or a ``-o/--format`` of your own.

A format is literal text and fields ``%[.][width]X``: a width pads (left-justified, or right
with ``.``) and truncates; literal text between fields is copied as it is.
"""

from __future__ import annotations

import pwd
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import attrs

from plurm import hostlist
from plurm.commands.base import SIMULATED, CommandError, CommandResult, Invocation
from plurm.commands.client import ClusterClient, ClusterView
from plurm.commands.options import Option, parse_options
from plurm.commands.timefmt import clock_time, date_line, elapsed, limit
from plurm.model.job import Job, JobState, dependency_text
from plurm.numbers import is_digits

__all__ = ["DEFAULT_FORMAT", "LONG_FORMAT", "START_FORMAT", "format_jobs", "run"]

DEFAULT_FORMAT = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R"
LONG_FORMAT = "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R"
#: --start: the pending jobs' expected starts (and the nodes a plan would give, unknown).
START_FORMAT = "%.18i %.9P %.8j %.8u %.2t %.19S %.6D %20Y %R"

# States squeue shows without -t (Slurm: pending, running, suspended, completing, ...).
_DEFAULT_STATES = frozenset(
    {JobState.PENDING, JobState.RUNNING, JobState.SUSPENDED, JobState.COMPLETING}
)
OPTIONS = (
    Option("noheader", "h", ("noheader",), takes_value=False),
    Option("format", "o", ("format",)),
    Option("Format", "O", ("Format",)),
    Option("states", "t", ("states", "state")),
    Option("sort", "S", ("sort",)),
    Option("jobs", "j", ("jobs", "job")),
    Option("partition", "p", ("partition",)),
    Option("user", "u", ("user",)),
    Option("name", "n", ("name",)),
    Option("long", "l", ("long",), takes_value=False),
    Option("all", "a", ("all",), takes_value=False),
    Option("me", None, ("me",), takes_value=False),
    Option("start", None, ("start",), takes_value=False),
)


@attrs.frozen
class _Field:
    header: str
    value: Callable[[Job, float], str]


def _nodes(job: Job) -> str:
    return str(len(job.held_nodes) if job.nodes else job.wanted_nodes)


def _time_left(job: Job, now: float) -> str:
    """%L: the time limit less the run time (all of it while pending), or UNLIMITED."""
    if job.time_limit is None:
        return "UNLIMITED"
    return elapsed(max(0.0, job.time_limit * 60 - job.run_time(now)))


def _array_task(job: Job) -> str:
    if job.array_job_id is None:
        return "N/A"
    pending = job.array_tasks_text
    return pending if pending is not None else str(job.array_task_id)


def _nodelist_reason(job: Job) -> str:
    """The reason in parentheses for pending, failed and timed-out jobs, else the nodes."""
    if job.state in (JobState.PENDING, JobState.FAILED, JobState.TIMEOUT):
        return f"({job.reason_text})"
    return hostlist.compress(job.held_nodes) if job.nodes else ""


FIELDS: dict[str, _Field] = {
    # %i: an array's task as 123_4, its tasks not started yet as 123_[5-9%2]; %A: the
    # job's own id; %F: its array's id; %K: its task id(s) (N/A: not an array).
    "i": _Field("JOBID", lambda job, now: job.display_id),
    "A": _Field("JOBID", lambda job, now: str(job.job_id)),
    "F": _Field(
        "ARRAY_JOB_ID",
        lambda job, now: str(job.array_job_id if job.array_job_id is not None else job.job_id),
    ),
    "K": _Field("ARRAY_TASK_ID", lambda job, now: _array_task(job)),
    "a": _Field("ACCOUNT", lambda job, now: job.account or "(null)"),
    "E": _Field("DEPENDENCY", lambda job, now: dependency_text(job.dependencies)),
    "P": _Field("PARTITION", lambda job, now: job.partition),
    "j": _Field("NAME", lambda job, now: job.name),
    "u": _Field("USER", lambda job, now: job.request.user),
    "T": _Field("STATE", lambda job, now: job.state.name),
    "t": _Field("ST", lambda job, now: job.state.code),
    "M": _Field("TIME", lambda job, now: elapsed(job.run_time(now))),
    "l": _Field("TIME_LIMIT", lambda job, now: limit(job.time_limit)),
    "L": _Field("TIME_LEFT", _time_left),
    "D": _Field("NODES", lambda job, now: _nodes(job)),
    "R": _Field("NODELIST(REASON)", lambda job, now: _nodelist_reason(job)),
    "N": _Field(
        "NODELIST", lambda job, now: hostlist.compress(job.held_nodes) if job.nodes else ""
    ),
    "r": _Field("REASON", lambda job, now: job.reason_text),
    "Q": _Field("PRIORITY", lambda job, now: str(job.priority)),
    # %p: the priority normalized to [0, 1] (over the 32-bit maximum), as Slurm prints it
    "p": _Field("PRIORITY", lambda job, now: f"{job.priority / 0xFFFF_FFFF:.14f}"),
    "C": _Field("CPUS", lambda job, now: str(job.request.cpus)),
    "z": _Field("S:C:T", lambda job, now: "*:*:*"),
    "q": _Field("QOS", lambda job, now: job.qos or "(null)"),
    "S": _Field("START_TIME", lambda job, now: _start_time(job, now, {})),
    "Y": _Field("SCHEDNODES", lambda job, now: "(null)"),
}

#: Fields only -O names (no -o letter stands for them).
_NAMED: dict[str, _Field] = {
    "submittime": _Field("SUBMIT_TIME", lambda job, now: clock_time(job.submit_time)),
    "endtime": _Field("END_TIME", lambda job, now: _end_time(job, now)),
    "workdir": _Field("WORK_DIR", lambda job, now: job.request.work_dir),
    "stdout": _Field("STDOUT", lambda job, now: _path(job, job.request.stdout)),
    "stderr": _Field(
        "STDERR", lambda job, now: _path(job, job.request.stderr or job.request.stdout)
    ),
    "command": _Field(
        "COMMAND",
        lambda job, now: "(null)" if job.request.wrapped else job.request.command or "(null)",
    ),
    "comment": _Field("COMMENT", lambda job, now: job.request.comment or "(null)"),
    "numtasks": _Field("TASKS", lambda job, now: str(job.request.tasks)),
    "userid": _Field("UID", lambda job, now: str(job.request.uid)),
    # (worked out with the cluster view: see _view_fields)
    "tres-alloc": _Field("TRES_ALLOC", lambda job, now: ""),
}


def _path(job: Job, pattern: str | None) -> str:
    return (pattern or "").replace("%j", str(job.job_id)) or "(null)"


def _start_time(job: Job, now: float, expected: Mapping[int, float]) -> str:
    """%S: when a started job started; a pending job's expected start (its begin time, or
    the controller's plan), else N/A."""
    if job.start_time is not None:
        return clock_time(job.start_time)
    if job.state is JobState.PENDING:
        start = expected.get(job.job_id)
        if start is None and job.eligible_time > now:
            start = job.eligible_time
        return clock_time(start) if start is not None else "N/A"
    return clock_time(job.end_time) if job.end_time is not None else "N/A"


def _end_time(job: Job, now: float) -> str:
    """END_TIME: a finished job's end; a running one's start plus its limit; a job waiting
    for its begin time, that time plus its limit; else N/A."""
    if job.end_time is not None:
        return clock_time(job.end_time)
    limit = job.time_limit
    if limit is None:
        return "N/A"
    if job.start_time is not None:
        return clock_time(job.start_time + limit * 60)
    if job.state is JobState.PENDING and job.eligible_time > now:
        return clock_time(job.eligible_time + limit * 60)
    return "N/A"


_SPEC = re.compile(r"%(\.?)([0-9]*)(.)", re.ASCII)
#: The widest field a format may ask for (Plurm's cap: squeue would pad to any width).
MAX_WIDTH = 4096
# Times and node lists are never cut when right-justified with ".N" (1-00:00:00 in %.9l
# prints whole, so does computenode[01-02] in %.5N).
_UNCUT_VALUES = frozenset("MlLN")
# Headers are cut too, except a right-justified %R's and %N's (both observed on 22.05).
_UNCUT_HEADERS = frozenset("RN")

Piece = str | tuple[bool, int | None, str]


def _width(width: str) -> int | None:
    """A field width of a format specification: none, or 1 to MAX_WIDTH."""
    if not width:
        return None
    if len(width) > 6 or int(width) > MAX_WIDTH:
        raise CommandError(f"squeue: error: field width {width} is above {MAX_WIDTH}")
    return int(width) or None


def _pieces(fmt: str) -> tuple[list[Piece], list[str]]:
    """Literal text and (right-justified, width, field letter), plus the error lines for
    specifications squeue does not know (whose text it prints as it is, as Slurm does)."""
    pieces: list[Piece] = []
    errors: list[str] = []
    position = 0
    while position < len(fmt):
        if fmt[position] != "%":
            pieces.append(fmt[position])
            position += 1
            continue
        match = _SPEC.match(fmt, position)
        if match is not None and match.group(3) in FIELDS:
            dot, width, letter = match.groups()
            size = _width(width)
            pieces.append((bool(dot), size, letter))
            position = match.end()
            continue
        if fmt.startswith("%%", position):
            # Slurm prints "%" and still complains about the specification.
            pieces.append("%")
            line = "squeue: error: Invalid job format specification:  \n"
            if line not in errors:
                errors.append(line)
            position += 2
            continue
        letter = match.group(3) if match is not None else ""
        line = f"squeue: error: Invalid job format specification: {letter}\n"
        if line not in errors:
            errors.append(line)
        pieces.append("%")
        position += 1
    return pieces, errors


def _cell(text: str, right: bool, width: int | None, letter: str) -> str:
    if width is None:
        return text
    if not (right and letter in _UNCUT_VALUES):
        text = text[:width]
    return text.rjust(width) if right else text.ljust(width)


def format_jobs(
    jobs: Sequence[Job],
    fmt: str | tuple[list[Piece], list[str]],
    now: float,
    *,
    header: bool = True,
    fields: Mapping[str, _Field] | None = None,
) -> tuple[str, str]:
    """The lines squeue prints for ``jobs`` with format ``fmt`` (an -o text, or the
    pieces of an -O list), and its error lines. ``fields`` may stand in for some fields."""
    pieces, errors = _pieces(fmt) if isinstance(fmt, str) else fmt
    known = {**FIELDS, **_NAMED, **(fields or {})}
    lines = []
    rows: list[Job | None] = ([None] if header else []) + list(jobs)
    for job in rows:
        out = []
        for piece in pieces:
            if isinstance(piece, str):
                out.append(piece)
                continue
            right, width, letter = piece
            field = known[letter]
            if job is None:
                uncut = right and letter in _UNCUT_HEADERS
                out.append(_cell(field.header, right, width, "M" if uncut else ""))
            else:
                out.append(_cell(field.value(job, now), right, width, letter))
        lines.append("".join(out))
    return "".join(line + "\n" for line in lines), "".join(errors)


_VALID_STATES = (
    "PENDING,RUNNING,SUSPENDED,COMPLETED,CANCELLED,FAILED,TIMEOUT,NODE_FAIL,PREEMPTED,"
    "BOOT_FAIL,DEADLINE,OUT_OF_MEMORY,COMPLETING,CONFIGURING,RESIZING,RESV_DEL_HOLD,REQUEUED,"
    "REQUEUE_FED,REQUEUE_HOLD,REVOKED,SIGNALING,SPECIAL_EXIT,STAGE_OUT,STOPPED"
)


def _states(text: str) -> frozenset[JobState]:
    wanted: set[JobState] = set()
    for word in text.split(","):
        name = word.strip().upper()
        if name == "ALL":
            return frozenset(JobState)
        matches = [state for state in JobState if name in (state.name, state.code)]
        if not matches and name not in _VALID_STATES.split(","):
            raise CommandError(
                f"squeue: error: Invalid job state specified: {word}\n"
                f"squeue: error: Valid job states include: {_VALID_STATES}\n\n"
            )
        wanted.update(matches)
    return frozenset(wanted)


_SORT_KEYS: dict[str, Callable[[Job, float], object]] = {
    "i": lambda job, now: job.job_id,
    "A": lambda job, now: job.job_id,
    "p": lambda job, now: job.priority,
    "Q": lambda job, now: job.priority,
    # Slurm 22.05 orders states by their compact code, alphabetically (CD < PD < R).
    "t": lambda job, now: job.state.code,
    "T": lambda job, now: job.state.code,
    "M": lambda job, now: job.run_time(now),
    "D": lambda job, now: len(job.held_nodes) if job.nodes else job.wanted_nodes,
    "l": lambda job, now: job.time_limit if job.time_limit is not None else float("inf"),
    "C": lambda job, now: job.request.cpus,
    # Empty node lists sort after the others.
    "N": lambda job, now: (not job.nodes, hostlist.compress(job.held_nodes)),
}


def _sort(jobs: list[Job], keys: str, now: float) -> list[Job]:
    """Slurm's -S: comma-separated field letters, '-' for descending, the first key first.
    Ties keep job-id order (Slurm leaves them in no particular order)."""
    ordered = sorted(jobs, key=lambda job: job.job_id)
    for key in reversed([k for k in keys.split(",") if k]):
        descending = key.startswith("-")
        letter = key.lstrip("+-")
        if letter in _SORT_KEYS:
            function = _SORT_KEYS[letter]
            ordered.sort(key=lambda job: function(job, now), reverse=descending)  # type: ignore[arg-type,return-value]
        elif letter in FIELDS:
            field = FIELDS[letter]
            ordered.sort(key=lambda job: field.value(job, now), reverse=descending)
        else:
            raise CommandError(f"squeue: error: Invalid sort specification: {key}")
    return ordered


#: squeue -O field names and the -o letters they print as.
_LONG_FIELDS = {
    "jobid": "i",
    "jobarrayid": "i",
    "partition": "P",
    "name": "j",
    "username": "u",
    "state": "T",
    "statecompact": "t",
    "timeused": "M",
    "timelimit": "l",
    "timeleft": "L",
    "numnodes": "D",
    "numcpus": "C",
    "nodelist": "N",
    "reason": "r",
    "reasonlist": "R",
    "priority": "p",
    "prioritylong": "Q",
    "account": "a",
    "qos": "q",
    "starttime": "S",
    "schednodes": "Y",
    "arrayjobid": "F",
    "arraytaskid": "K",
    "dependency": "E",
}
#: -O's default width: 20 columns, left-justified.
_LONG_WIDTH = 20


def _long_pieces(spec: str) -> tuple[list[Piece], list[str]]:
    """-O/--Format ``name[:[.]width],...``: fields run together with no separator, each
    20 columns wide and left-justified by default (``name:`` is unpadded); an unknown name
    prints nothing and is reported, as Slurm does."""
    pieces: list[Piece] = []
    errors: list[str] = []
    for item in spec.split(","):
        name, colon, width = item.strip().partition(":")
        key = _LONG_FIELDS.get(name.lower(), name.lower())
        if key not in FIELDS and key not in _NAMED:
            errors.append(f"squeue: error: Invalid job format specification: {name}\n")
            continue
        size = width.lstrip(".")
        if size and (not is_digits(size) or int(size) > MAX_WIDTH):
            raise CommandError(f"squeue: error: Invalid job format specification: {item}")
        chosen = (int(size) or None) if size else (None if colon else _LONG_WIDTH)
        pieces.append((width.startswith("."), chosen, key))
    return pieces, errors


def _format(values: Mapping[str, str | None]) -> str | tuple[list[Piece], list[str]]:
    if "Format" in values:
        return _long_pieces(str(values["Format"]))
    if "format" in values:
        return str(values["format"])
    if "start" in values:
        return START_FORMAT
    return LONG_FORMAT if "long" in values else DEFAULT_FORMAT


_PENDING_ONLY = frozenset({JobState.PENDING})


def _view_fields(client: ClusterClient, view: ClusterView) -> dict[str, _Field]:
    """The fields that need more than the job: the expected starts (asked of the controller
    once, if a start time is printed) and the TRES a job holds or asks for."""
    asked: list[Mapping[int, float]] = []

    def start(job: Job, now: float) -> str:
        if job.state is JobState.PENDING and not asked:
            asked.append(client.expected_starts())
        return _start_time(job, now, asked[0] if asked else {})

    def tres(job: Job, now: float) -> str:
        from plurm.commands.scontrol import tres_text

        return tres_text(job, view)

    return {"S": _Field("START_TIME", start), "tres-alloc": _Field("TRES_ALLOC", tres)}


def _known_user(name: str) -> bool:
    """A user name or uid the local user database knows, as squeue checks -u."""
    try:
        if is_digits(name):
            pwd.getpwuid(int(name))
        else:
            pwd.getpwnam(name)
    except (KeyError, OverflowError):
        return False
    return True


def run(
    argv: Sequence[str], client: ClusterClient, cwd: Path, invocation: Invocation = SIMULATED
) -> CommandResult:
    found, rest = parse_options("squeue", argv, OPTIONS)
    if rest:
        raise CommandError(f"squeue: error: Unrecognized option: {rest[0]}")
    values = dict(found)
    view = client.view()
    now = view.now
    cluster = view.cluster
    states = _states(str(values["states"])) if "states" in values else None
    default_states = _PENDING_ONLY if "start" in values else _DEFAULT_STATES
    ids = None
    if "jobs" in values:
        ids = set()
        for word in str(values["jobs"]).split(","):
            if not is_digits(word):
                raise CommandError(f"squeue: error: Invalid job id: {word}")
            ids.add(int(word))
        arrays = {job.array_job_id for job in cluster.jobs.values()}
        if not ids & (set(cluster.jobs) | arrays):
            return CommandResult(1, "", "slurm_load_jobs error: Invalid job id specified\n")
    users = str(values["user"]).split(",") if "user" in values else None
    unknown = [name for name in users or () if not _known_user(name)]
    if unknown:
        # Slurm lists nothing (a header only) and still exits 0.
        text, _ = format_jobs([], _format(values), now, header="noheader" not in values)
        return CommandResult(0, text, f"squeue: error: Invalid user: {unknown[0]}\n\n")
    age = view.config.min_job_age
    jobs = []
    for job in cluster.jobs.values():
        if job.purged(now, age):
            continue  # purged after MinJobAge, as slurmctld does
        if ids is not None and job.job_id not in ids and job.array_job_id not in ids:
            continue
        # -j lists its jobs in every state unless -t names some, as squeue does
        if states is not None and job.state not in states:
            continue
        if states is None and ids is None and job.state not in default_states:
            continue
        if "partition" in values and job.partition not in str(values["partition"]).split(","):
            continue
        if users is not None and not {job.request.user, str(job.request.uid)} & set(users):
            continue
        if "name" in values and job.name not in str(values["name"]).split(","):
            continue
        jobs.append(job)
    fields = _view_fields(client, view)
    if "start" in values and "sort" not in values:
        # --start lists the earliest expected start first, jobs without one last
        start = fields["S"].value
        jobs = _sort(jobs, "P,t,-p", now)
        jobs.sort(key=lambda job: (start(job, now) == "N/A", start(job, now)))
    else:
        jobs = _sort(jobs, str(values.get("sort", "P,t,-p")), now)
    header = "noheader" not in values
    text, errors = format_jobs(jobs, _format(values), now, header=header, fields=fields)
    if "long" in values and header:
        text = date_line(now) + "\n" + text
    return CommandResult(0, text, errors)
