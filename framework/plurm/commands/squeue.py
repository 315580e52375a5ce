"""squeue: the job queue, in Slurm's default format or a ``-o/--format`` of your own.

A format is literal text and fields ``%[.][width]X``: a width pads (left-justified, or right
with ``.``) and truncates; literal text between fields is copied as it is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

import attrs

from plurm import hostlist
from plurm.commands.base import CommandError, CommandResult
from plurm.commands.options import Option, parse_options
from plurm.commands.timefmt import elapsed, limit
from plurm.controller import Controller
from plurm.model.job import Job, JobState

__all__ = ["DEFAULT_FORMAT", "LONG_FORMAT", "format_jobs", "run"]

DEFAULT_FORMAT = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R"
LONG_FORMAT = "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R"

# States squeue shows without -t (Slurm: pending, running, suspended, completing, ...).
_DEFAULT_STATES = frozenset(
    {JobState.PENDING, JobState.RUNNING, JobState.SUSPENDED, JobState.COMPLETING}
)
# Slurm's numeric order of base states, for sorting by state.
_STATE_ORDER = {
    JobState.PENDING: 0,
    JobState.RUNNING: 1,
    JobState.SUSPENDED: 2,
    JobState.COMPLETED: 3,
    JobState.CANCELLED: 4,
    JobState.FAILED: 5,
    JobState.TIMEOUT: 6,
    JobState.NODE_FAIL: 7,
    JobState.PREEMPTED: 8,
    JobState.COMPLETING: 1,
}

OPTIONS = (
    Option("noheader", "h", ("noheader",), takes_value=False),
    Option("format", "o", ("format",)),
    Option("states", "t", ("states", "state")),
    Option("sort", "S", ("sort",)),
    Option("jobs", "j", ("jobs", "job")),
    Option("partition", "p", ("partition",)),
    Option("user", "u", ("user",)),
    Option("name", "n", ("name",)),
    Option("long", "l", ("long",), takes_value=False),
    Option("all", "a", ("all",), takes_value=False),
    Option("me", None, ("me",), takes_value=False),
)


@attrs.frozen
class _Field:
    header: str
    value: Callable[[Job, float], str]


def _nodes(job: Job) -> str:
    return str(len(job.nodes) if job.nodes else job.request.min_nodes)


def _nodelist_reason(job: Job) -> str:
    if job.state is JobState.PENDING:
        return f"({job.reason.value})"
    return hostlist.compress(job.nodes) if job.nodes else ""


FIELDS: dict[str, _Field] = {
    "i": _Field("JOBID", lambda job, now: str(job.job_id)),
    "A": _Field("JOBID", lambda job, now: str(job.job_id)),
    "P": _Field("PARTITION", lambda job, now: job.partition),
    "j": _Field("NAME", lambda job, now: job.name),
    "u": _Field("USER", lambda job, now: job.request.user),
    "T": _Field("STATE", lambda job, now: job.state.name),
    "t": _Field("ST", lambda job, now: job.state.code),
    "M": _Field("TIME", lambda job, now: elapsed(job.run_time(now))),
    "l": _Field("TIME_LIMIT", lambda job, now: limit(job.time_limit)),
    "D": _Field("NODES", lambda job, now: _nodes(job)),
    "R": _Field("NODELIST(REASON)", lambda job, now: _nodelist_reason(job)),
    "N": _Field("NODELIST", lambda job, now: hostlist.compress(job.nodes) if job.nodes else ""),
    "r": _Field("REASON", lambda job, now: job.reason.value),
    "Q": _Field("PRIORITY", lambda job, now: str(job.priority)),
    "p": _Field("PRIORITY", lambda job, now: str(job.priority)),
    "C": _Field("CPUS", lambda job, now: str(job.request.cpus)),
}

_SPEC = re.compile(r"%(\.?)(\d*)([A-Za-z%])")


def _pieces(fmt: str) -> list[str | tuple[bool, int | None, str]]:
    """Literal text and (right-justified, width, field letter) in order."""
    pieces: list[str | tuple[bool, int | None, str]] = []
    position = 0
    for match in _SPEC.finditer(fmt):
        if match.start() > position:
            pieces.append(fmt[position : match.start()])
        dot, width, letter = match.groups()
        if letter == "%":
            pieces.append("%")
        elif letter not in FIELDS:
            raise CommandError(f"squeue: error: Invalid job format specification: {letter}")
        else:
            pieces.append((bool(dot), int(width) if width else None, letter))
        position = match.end()
    if position < len(fmt):
        pieces.append(fmt[position:])
    return pieces


def _cell(text: str, right: bool, width: int | None) -> str:
    if width is None:
        return text
    text = text[:width]
    return text.rjust(width) if right else text.ljust(width)


def format_jobs(jobs: Sequence[Job], fmt: str, now: float, *, header: bool = True) -> str:
    """The lines squeue prints for ``jobs`` with format ``fmt``."""
    pieces = _pieces(fmt)
    lines = []
    rows: list[Job | None] = ([None] if header else []) + list(jobs)
    for job in rows:
        out = []
        for piece in pieces:
            if isinstance(piece, str):
                out.append(piece)
                continue
            right, width, letter = piece
            field = FIELDS[letter]
            text = field.header if job is None else field.value(job, now)
            out.append(_cell(text, right, width))
        lines.append("".join(out))
    return "".join(line + "\n" for line in lines)


def _states(text: str) -> frozenset[JobState]:
    wanted: set[JobState] = set()
    for word in text.split(","):
        word = word.strip().upper()
        if word == "ALL":
            return frozenset(JobState)
        matches = [s for s in JobState if word in (s.name, s.code)]
        if not matches:
            raise CommandError(
                f"Invalid job state specified: {word}\n"
                "Valid job states include: PENDING RUNNING SUSPENDED COMPLETED "
                "CANCELLED FAILED TIMEOUT NODE_FAIL PREEMPTED COMPLETING"
            )
        wanted.update(matches)
    return frozenset(wanted)


def _sort(jobs: list[Job], keys: str) -> list[Job]:
    """Slurm's -S: comma-separated field letters, '-' for descending, the first key first."""
    ordered = sorted(jobs, key=lambda job: job.job_id)
    for key in reversed([k for k in keys.split(",") if k]):
        descending = key.startswith("-")
        letter = key.lstrip("+-")
        if letter == "t":
            ordered.sort(key=lambda job: _STATE_ORDER[job.state], reverse=descending)
        elif letter in ("p", "Q"):
            ordered.sort(key=lambda job: job.priority, reverse=descending)
        elif letter in ("i", "A"):
            ordered.sort(key=lambda job: job.job_id, reverse=descending)
        elif letter in ("M",):
            ordered.sort(key=lambda job: job.run_time(0.0), reverse=descending)
        elif letter in FIELDS:
            field = FIELDS[letter]
            ordered.sort(key=lambda job: field.value(job, 0.0), reverse=descending)
        else:
            raise CommandError(f"squeue: error: Invalid sort specification: {key}")
    return ordered


def run(argv: Sequence[str], controller: Controller, cwd: Path) -> CommandResult:
    found, rest = parse_options("squeue", argv, OPTIONS)
    if rest:
        raise CommandError(f"squeue: error: Unrecognized option: {rest[0]}")
    values = dict(found)
    now = controller.now
    cluster = controller.cluster
    states = _states(str(values["states"])) if "states" in values else None
    ids = None
    if "jobs" in values:
        try:
            ids = {int(word) for word in str(values["jobs"]).split(",") if word}
        except ValueError:
            raise CommandError(f"Invalid job id: {values['jobs']}") from None
    age = controller.config.min_job_age
    jobs = []
    for job in cluster.jobs.values():
        if job.state.finished and job.end_time is not None and job.end_time + age < now:
            continue  # purged after MinJobAge, as slurmctld does
        if ids is not None:
            if job.job_id not in ids:
                continue
        elif job.state not in (states if states is not None else _DEFAULT_STATES):
            continue
        if "partition" in values and job.partition not in str(values["partition"]).split(","):
            continue
        if "user" in values and job.request.user not in str(values["user"]).split(","):
            continue
        if "name" in values and job.name not in str(values["name"]).split(","):
            continue
        jobs.append(job)
    jobs = _sort(jobs, str(values.get("sort", "P,t,-p")))
    fmt = (
        str(values["format"])
        if "format" in values
        else (LONG_FORMAT if "long" in values else DEFAULT_FORMAT)
    )
    return CommandResult(0, format_jobs(jobs, fmt, now, header="noheader" not in values))
