"""sacct: accounting records of jobs and their steps, as Slurm 22.05's sacct prints them.

The heart is :func:`render` (options and formatting over :class:`JobRecord`s, no I/O);
:func:`run` feeds it the records of a controller's in-memory jobs. Behaviour follows
sacct(1): fields ``name[%[-]width]`` (prefixes of the names, any case), a fixed-width table
with a dashed rule under the header, each cell followed by one space; text longer than its
column ends in ``+`` (dates are cut short without it; numbers and durations are never cut);
``-p``/``-P`` give ``|``-separated lines with or without a trailing ``|``. The time window
defaults as the man page's DEFAULT TIME WINDOW says.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Sequence
from pathlib import Path

import attrs

from plurm import hostlist
from plurm.commands.base import SIMULATED, CommandError, CommandResult, Invocation
from plurm.commands.client import ClusterClient
from plurm.commands.options import Option, parse_options
from plurm.commands.timefmt import EPOCH
from plurm.commands.usagefmt import USAGE_FIELDS, cpu_time, usage_value
from plurm.model.acct import (
    STATE_CODES,
    AcctQuery,
    JobRecord,
    JobSelector,
    StepRecord,
)

__all__ = [
    "DEFAULT_FORMAT",
    "SacctArgs",
    "format_records",
    "parse_args",
    "parse_moment",
    "render",
    "run",
]

DEFAULT_FORMAT = "jobid,jobname,partition,account,alloccpus,state,exitcode"
BRIEF_FORMAT = "jobid,state,exitcode"
LONG_FORMAT = (
    "jobid,jobidraw,jobname,partition,maxvmsize,maxvmsizenode,maxvmsizetask,avevmsize,maxrss,"
    "maxrssnode,maxrsstask,averss,maxpages,maxpagesnode,maxpagestask,avepages,mincpu,"
    "mincpunode,mincputask,avecpu,ntasks,alloccpus,elapsed,state,exitcode,avecpufreq,"
    "reqcpufreqmin,reqcpufreqmax,reqcpufreqgov,reqmem,consumedenergy,maxdiskread,"
    "maxdiskreadnode,maxdiskreadtask,avediskread,maxdiskwrite,maxdiskwritenode,"
    "maxdiskwritetask,avediskwrite,reqtres,alloctres,tresusageinave,tresusageinmax,"
    "tresusageinmaxn,tresusageinmaxt,tresusageinmin,tresusageinminn,tresusageinmint,"
    "tresusageintot,tresusageoutmax,tresusageoutmaxn,tresusageoutmaxt,tresusageoutave,"
    "tresusageouttot"
)

OPTIONS = (
    Option("accounts", "A", ("accounts",)),
    Option("allocations", "X", ("allocations",), takes_value=False),
    Option("allusers", "a", ("allusers",), takes_value=False),
    Option("allclusters", "L", ("allclusters",), takes_value=False),
    Option("array", None, ("array",), takes_value=False),
    Option("brief", "b", ("brief",), takes_value=False),
    Option("clusters", "M", ("clusters", "cluster")),
    Option("delimiter", None, ("delimiter",)),
    Option("duplicates", "D", ("duplicates",), takes_value=False),
    Option("endtime", "E", ("endtime",)),
    Option("format", "o", ("format", "fields")),
    Option("helpformat", "e", ("helpformat",), takes_value=False),
    Option("jobs", "j", ("jobs", "job")),
    Option("local", None, ("local",), takes_value=False),
    Option("long", "l", ("long",), takes_value=False),
    Option("name", None, ("name",)),
    Option("noconvert", None, ("noconvert",), takes_value=False),
    Option("noheader", "n", ("noheader",), takes_value=False),
    Option("parsable", "p", ("parsable",), takes_value=False),
    Option("parsable2", "P", ("parsable2",), takes_value=False),
    Option("partition", "r", ("partition",)),
    Option("starttime", "S", ("starttime",)),
    Option("state", "s", ("state",)),
    Option("units", None, ("units",)),
    Option("user", "u", ("user", "uid")),
    Option("verbose", "v", ("verbose",), takes_value=False),
)

# ----------------------------------------------------------------------------- value formats

_STR, _UINT, _TIME, _DATE = "str", "uint", "time", "date"

Raw = str | int | float | None
Value = Callable[[JobRecord, StepRecord | None, float], Raw]


@attrs.frozen
class _Field:
    name: str
    width: int  # negative: left-justified
    kind: str
    value: Value | None = None  # None: nothing Plurm gathers (printed empty)


def _duration(seconds: int) -> str:
    """``[D-]HH:MM:SS``, as sacct prints Elapsed, Suspended, CPUTime and time limits."""
    days, rest = divmod(max(0, seconds), 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    clock = f"{hours:02d}:{minutes:02d}:{secs:02d}"
    return f"{days}-{clock}" if days else clock


def _date(seconds: float | None) -> str:
    if seconds is None:
        return "Unknown"
    return (EPOCH + dt.timedelta(seconds=int(seconds))).strftime("%Y-%m-%dT%H:%M:%S")


def _units(value: float, first: int = 0) -> str:
    """A size with a unit letter, divided by 1024 while it is that large: ``1000M``,
    ``3.91G``; ``first`` is the unit of ``value`` (0 none, 1 K, 2 M, ...)."""
    letters = ["", "K", "M", "G", "T", "P", "E"]
    unit = first
    while value >= 1024 and unit < len(letters) - 1:
        value /= 1024
        unit += 1
    if value == int(value):
        return f"{int(value)}{letters[unit]}"
    return f"{value:.2f}{letters[unit]}"


def _step_usage(name: str) -> Value:
    """A usage field: the step's figure, empty on the job's line (as sacct prints them)."""
    show = usage_value(name)

    def value(record: JobRecord, part: StepRecord | None, now: float) -> Raw:
        return None if part is None else show(part)

    return value


def _tres(
    cpus: int, mem: int, nodes: int, *, billing: bool, gres: tuple[tuple[str, int], ...] = ()
) -> str:
    parts = [f"billing={cpus}"] if billing else []
    parts.append(f"cpu={cpus}")
    parts += [f"gres/{name}={count}" for name, count in gres]  # (sorted by name, as sacct)
    if mem:
        parts.append(f"mem={_units(mem, 2)}")
    parts.append(f"node={nodes}")
    return ",".join(parts)


def _job_id(job: JobRecord) -> str:
    if job.array_job_id is not None and job.array_task_id is not None:
        return f"{job.array_job_id}_{job.array_task_id}"
    if job.array_job_id is not None and job.array_tasks is not None:
        return f"{job.array_job_id}_[{job.array_tasks}]"
    return str(job.job_id)


def _step_elapsed(step: StepRecord, now: float) -> int:
    if step.start is None:
        return 0
    until = step.end if step.end is not None else now
    return max(0, int(until - step.start - step.suspended))


def _state(state: str, cancelled_by: int | None) -> str:
    if state == "CANCELLED" and cancelled_by is not None:
        return f"CANCELLED by {cancelled_by}"
    return state


def _exit(code: int, signal: int) -> str:
    if signal:
        return f"0:{signal}"
    return f"{code - 128 if code >= 128 else code}:0"


def _either(
    job: Callable[[JobRecord, float], Raw],
    step: Callable[[StepRecord, float], Raw],
) -> Value:
    def value(record: JobRecord, part: StepRecord | None, now: float) -> Raw:
        return job(record, now) if part is None else step(part, now)

    return value


def _job_only(job: Callable[[JobRecord, float], Raw]) -> Value:
    def value(record: JobRecord, part: StepRecord | None, now: float) -> Raw:
        return job(record, now) if part is None else None

    return value


def _both(job: Callable[[JobRecord, float], Raw]) -> Value:
    """The job's value, on its steps' lines too."""

    def value(record: JobRecord, part: StepRecord | None, now: float) -> Raw:
        return job(record, now)

    return value


def _job_cpu_total(job: JobRecord, attribute: str) -> float:
    """A job's CPU time of one kind: its steps' summed, as Slurm derives the job's."""
    return sum(getattr(step, attribute) or 0.0 for step in job.steps)


def _job_alloc_tres(job: JobRecord, now: float) -> str | None:
    if not job.alloc_cpus:
        return None
    return _tres(job.alloc_cpus, job.total_mem, len(job.nodes), billing=True, gres=job.alloc_gres)


def _step_alloc_tres(step: StepRecord, now: float) -> str | None:
    return _tres(step.alloc_cpus, step.alloc_mem or 0, len(step.nodes), billing=False)


_VALUES: dict[str, Value] = {
    "Account": _both(lambda j, now: j.account),
    "AllocCPUS": _either(lambda j, now: j.alloc_cpus, lambda s, now: s.alloc_cpus),
    "AllocNodes": _either(lambda j, now: str(len(j.nodes)), lambda s, now: str(len(s.nodes))),
    "AllocTRES": _either(_job_alloc_tres, _step_alloc_tres),
    "CPUTime": _either(
        lambda j, now: j.elapsed(now) * j.alloc_cpus,
        lambda s, now: _step_elapsed(s, now) * s.alloc_cpus,
    ),
    "CPUTimeRAW": _either(
        lambda j, now: j.elapsed(now) * j.alloc_cpus,
        lambda s, now: _step_elapsed(s, now) * s.alloc_cpus,
    ),
    "DerivedExitCode": _job_only(lambda j, now: f"{j.derived_exit_code}:{j.derived_exit_signal}"),
    "Elapsed": _either(lambda j, now: j.elapsed(now), _step_elapsed),
    "ElapsedRaw": _either(lambda j, now: j.elapsed(now), _step_elapsed),
    "Eligible": _either(lambda j, now: j.eligible, lambda s, now: s.start),
    "End": _either(lambda j, now: j.end, lambda s, now: s.end),
    "ExitCode": _either(
        lambda j, now: _exit(j.exit_code, j.exit_signal),
        lambda s, now: _exit(s.exit_code, s.exit_signal),
    ),
    "GID": _job_only(lambda j, now: j.gid),
    "Group": _job_only(lambda j, now: j.group),
    "JobID": _either(lambda j, now: _job_id(j), lambda s, now: f"{s.job_id}.{s.step}"),
    "JobIDRaw": _either(lambda j, now: str(j.job_id), lambda s, now: f"{s.job_id}.{s.step}"),
    "JobName": _either(lambda j, now: j.name, lambda s, now: s.name),
    "NCPUS": _either(lambda j, now: j.alloc_cpus, lambda s, now: s.alloc_cpus),
    "NNodes": _either(
        lambda j, now: len(j.nodes) if j.nodes else j.req_nodes, lambda s, now: len(s.nodes)
    ),
    "NodeList": _either(
        lambda j, now: hostlist.compress(j.nodes) if j.nodes else "None assigned",
        lambda s, now: hostlist.compress(s.nodes),
    ),
    "NTasks": _either(lambda j, now: None, lambda s, now: s.ntasks),
    "Partition": _job_only(lambda j, now: j.partition),
    "Priority": _job_only(lambda j, now: j.priority),
    "QOS": _job_only(lambda j, now: j.qos),
    "Reason": _job_only(lambda j, now: j.reason),
    "ReqCPUS": _either(lambda j, now: j.req_cpus, lambda s, now: s.alloc_cpus),
    "ReqMem": _job_only(lambda j, now: _units(j.total_mem, 2) if j.total_mem else "0"),
    "ReqNodes": _either(lambda j, now: str(j.req_nodes), lambda s, now: str(len(s.nodes))),
    "ReqTRES": _job_only(
        lambda j, now: _tres(
            j.req_cpus,
            j.req_mem * (j.req_cpus if j.req_mem_per_cpu else j.req_nodes) if j.req_mem else 0,
            j.req_nodes,
            billing=True,
        )
    ),
    "Restarts": _job_only(lambda j, now: j.restarts),
    "Start": _either(lambda j, now: j.start, lambda s, now: s.start),
    "State": _either(
        lambda j, now: _state(j.state, j.cancelled_by),
        lambda s, now: _state(s.state, s.cancelled_by),
    ),
    "Submit": _either(lambda j, now: j.submit, lambda s, now: s.start),
    "Suspended": _either(lambda j, now: int(j.suspended), lambda s, now: int(s.suspended)),
    "Timelimit": _job_only(
        lambda j, now: "UNLIMITED" if j.timelimit is None else _duration(j.timelimit * 60)
    ),
    "TimelimitRaw": _job_only(
        lambda j, now: "UNLIMITED" if j.timelimit is None else str(j.timelimit)
    ),
    "TotalCPU": _either(
        lambda j, now: cpu_time(_job_cpu_total(j, "total_cpu")),
        lambda s, now: cpu_time(s.total_cpu or 0.0),
    ),
    "UserCPU": _either(
        lambda j, now: cpu_time(_job_cpu_total(j, "user_cpu")),
        lambda s, now: cpu_time(s.user_cpu or 0.0),
    ),
    "SystemCPU": _either(
        lambda j, now: cpu_time(_job_cpu_total(j, "system_cpu")),
        lambda s, now: cpu_time(s.system_cpu or 0.0),
    ),
    **{
        name: _step_usage(name)
        for name in USAGE_FIELDS
        if name not in ("TotalCPU", "UserCPU", "SystemCPU")
    },
    "UID": _job_only(lambda j, now: j.uid),
    "User": _job_only(lambda j, now: j.user),
    "WorkDir": _job_only(lambda j, now: j.work_dir),
}

#: Slurm 22.05's fields, in its table's order, with its widths (negative: left-justified)
#: and how each prints. Fields Plurm does not gather print empty, as they do where
#: nothing gathers them.
_TABLE: tuple[tuple[str, int, str], ...] = (
    ("Account", 10, _STR),
    ("AdminComment", 15, _STR),
    ("AllocCPUS", 10, _UINT),
    ("AllocNodes", 10, _STR),
    ("AllocTRES", 10, _STR),
    ("AssocID", 7, _UINT),
    ("AveCPU", 10, _STR),
    ("AveCPUFreq", 10, _STR),
    ("AveDiskRead", 14, _STR),
    ("AveDiskWrite", 14, _STR),
    ("AvePages", 10, _STR),
    ("AveRSS", 10, _STR),
    ("AveVMSize", 10, _STR),
    ("BlockID", 16, _STR),
    ("Cluster", 10, _STR),
    ("Comment", 14, _STR),
    ("Constraints", 19, _STR),
    ("ConsumedEnergy", 14, _STR),
    ("ConsumedEnergyRaw", 17, _UINT),
    ("Container", 19, _STR),
    ("CPUTime", 10, _TIME),
    ("CPUTimeRAW", 10, _UINT),
    ("DBIndex", -21, _UINT),
    ("DerivedExitCode", 15, _STR),
    ("Elapsed", 10, _TIME),
    ("ElapsedRaw", 10, _UINT),
    ("Eligible", 19, _DATE),
    ("End", 19, _DATE),
    ("ExitCode", 8, _STR),
    ("Flags", 19, _STR),
    ("GID", 6, _UINT),
    ("Group", 9, _STR),
    ("JobID", -12, _STR),
    ("JobIDRaw", -12, _STR),
    ("JobName", 10, _STR),
    ("Layout", 9, _STR),
    ("MaxDiskRead", 12, _STR),
    ("MaxDiskReadNode", 15, _STR),
    ("MaxDiskReadTask", 15, _UINT),
    ("MaxDiskWrite", 12, _STR),
    ("MaxDiskWriteNode", 16, _STR),
    ("MaxDiskWriteTask", 16, _UINT),
    ("MaxPages", 8, _STR),
    ("MaxPagesNode", 12, _STR),
    ("MaxPagesTask", 14, _UINT),
    ("MaxRSS", 10, _STR),
    ("MaxRSSNode", 10, _STR),
    ("MaxRSSTask", 10, _UINT),
    ("MaxVMSize", 10, _STR),
    ("MaxVMSizeNode", 14, _STR),
    ("MaxVMSizeTask", 14, _UINT),
    ("McsLabel", 12, _STR),
    ("MinCPU", 10, _STR),
    ("MinCPUNode", 10, _STR),
    ("MinCPUTask", 10, _UINT),
    ("NCPUS", 10, _UINT),
    ("NNodes", 8, _UINT),
    ("NodeList", 15, _STR),
    ("NTasks", 8, _UINT),
    ("Partition", 10, _STR),
    ("Priority", 10, _UINT),
    ("QOS", 10, _STR),
    ("QOSRAW", 6, _UINT),
    ("Reason", 22, _STR),
    ("ReqCPUFreq", 10, _STR),
    ("ReqCPUFreqGov", 13, _STR),
    ("ReqCPUFreqMax", 13, _STR),
    ("ReqCPUFreqMin", 13, _STR),
    ("ReqCPUS", 8, _UINT),
    ("ReqMem", 10, _STR),
    ("ReqNodes", 8, _STR),
    ("ReqTRES", 10, _STR),
    ("Reservation", 20, _STR),
    ("ReservationId", 8, _UINT),
    ("Reserved", 10, _TIME),
    ("ResvCPU", 10, _TIME),
    ("ResvCPURAW", 10, _UINT),
    ("Restarts", 8, _UINT),
    ("Start", 19, _DATE),
    ("State", 10, _STR),
    ("Submit", 19, _DATE),
    ("SubmitLine", 20, _STR),
    ("Suspended", 10, _TIME),
    ("SystemComment", 15, _STR),
    ("SystemCPU", 10, _STR),
    ("Timelimit", 10, _STR),
    ("TimelimitRaw", 10, _STR),
    ("TotalCPU", 10, _STR),
    ("TRESUsageInAve", 14, _STR),
    ("TRESUsageInMax", 14, _STR),
    ("TRESUsageInMaxNode", 18, _STR),
    ("TRESUsageInMaxTask", 18, _STR),
    ("TRESUsageInMin", 14, _STR),
    ("TRESUsageInMinNode", 18, _STR),
    ("TRESUsageInMinTask", 18, _STR),
    ("TRESUsageInTot", 14, _STR),
    ("TRESUsageOutAve", 15, _STR),
    ("TRESUsageOutMax", 15, _STR),
    ("TRESUsageOutMaxNode", 19, _STR),
    ("TRESUsageOutMaxTask", 19, _STR),
    ("TRESUsageOutMin", 15, _STR),
    ("TRESUsageOutMinNode", 19, _STR),
    ("TRESUsageOutMinTask", 19, _STR),
    ("TRESUsageOutTot", 15, _STR),
    ("UID", 6, _UINT),
    ("User", 9, _STR),
    ("UserCPU", 10, _STR),
    ("WCKey", 10, _STR),
    ("WCKeyID", 10, _UINT),
    ("WorkDir", 20, _STR),
)

FIELDS: tuple[_Field, ...] = tuple(
    _Field(name, width, kind, _VALUES.get(name)) for name, width, kind in _TABLE
)


def _field(spec: str) -> _Field:
    """One item of -o: ``name[%[-]width]``; the name is matched as sacct matches it: the
    first field of the table whose name begins with it, in any case."""
    name, percent, width = spec.partition("%")
    lowered = name.lower()
    found = next((f for f in FIELDS if lowered and f.name.lower().startswith(lowered)), None)
    if found is None:
        raise CommandError(f'sacct: error: Invalid field requested: "{name}"')
    if not percent:
        return found
    left = width.startswith("-")
    digits = width[1:] if left else width
    if not re.fullmatch(r"[0-9]{1,6}", digits, flags=re.ASCII) or int(digits) == 0:
        raise CommandError(f'sacct: error: Invalid field requested: "{spec}"')
    size = int(digits)
    return attrs.evolve(found, width=-size if left else size)


def _fields(text: str) -> list[_Field]:
    out: list[_Field] = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        if item.lower() == "all":
            out.extend(FIELDS)
            continue
        out.append(_field(item))
    return out


# ----------------------------------------------------------------------------- time options

_UNITS = {
    "": 1,
    "s": 1,
    "sec": 1,
    "secs": 1,
    "second": 1,
    "seconds": 1,
    "m": 60,
    "min": 60,
    "mins": 60,
    "minute": 60,
    "minutes": 60,
    "h": 3600,
    "hour": 3600,
    "hours": 3600,
    "d": 86400,
    "day": 86400,
    "days": 86400,
    "w": 604800,
    "week": 604800,
    "weeks": 604800,
}
_NAMED = {"today": 0, "midnight": 0, "noon": 12, "elevenses": 11, "fika": 15, "teatime": 16}


def _moment(text: str, now: float) -> float:
    """A -S/-E time on the controller's clock, in Slurm's formats: ``now[{+|-}N[unit]]``,
    today, midnight, noon, elevenses, fika, teatime, ``YYYY-MM-DD[THH:MM[:SS]]``,
    ``MMDD[YY][-HH:MM[:SS]]``, ``MM/DD[/YY]...``, ``MM.DD[.YY]...``, ``HH:MM[:SS][AM|PM]``."""
    word = text.strip().lower()
    wall = EPOCH + dt.timedelta(seconds=now)
    midnight = wall.replace(hour=0, minute=0, second=0, microsecond=0)

    def back(moment: dt.datetime) -> float:
        return (moment - EPOCH).total_seconds()

    relative = re.fullmatch(r"now(?:([+-])([0-9]{1,9})([a-z]*))?", word, flags=re.ASCII)
    if relative is not None:
        sign, count, unit = relative.groups()
        if sign is None:
            return now
        if unit not in _UNITS:
            raise _time_error(text)
        step = int(count) * _UNITS[unit]
        return now + step if sign == "+" else now - step
    if word in _NAMED:
        return back(midnight + dt.timedelta(hours=_NAMED[word]))
    try:
        return back(_absolute(word, wall, midnight))
    except ValueError:
        raise _time_error(text) from None


def parse_moment(text: str, now: float) -> float:
    """A time given in sacct -S/-E's forms, on the controller's clock (``now`` is the
    present), for the other commands that take one (``plurm trace export --since``); an
    unreadable one is a CommandError with sacct's words."""
    return _moment(text, now)


def _absolute(word: str, wall: dt.datetime, midnight: dt.datetime) -> dt.datetime:
    day = r"(?:[Tt-](?P<H>[0-9]{1,2}):(?P<M>[0-9]{2})(?::(?P<S>[0-9]{2}))?)?"
    forms = (
        r"(?P<y>[0-9]{4})-(?P<m>[0-9]{1,2})-(?P<d>[0-9]{1,2})" + day,
        r"(?P<m>[0-9]{2})(?P<d>[0-9]{2})(?P<yy>[0-9]{2})?" + day,
        r"(?P<m>[0-9]{1,2})/(?P<d>[0-9]{1,2})(?:/(?P<yy>[0-9]{2}))?" + day,
        r"(?P<m>[0-9]{1,2})\.(?P<d>[0-9]{1,2})(?:\.(?P<yy>[0-9]{2}))?" + day,
    )
    for form in forms:
        match = re.fullmatch(form, word, flags=re.ASCII)
        if match is None:
            continue
        parts = match.groupdict()
        year = int(parts["y"]) if parts.get("y") else wall.year
        if parts.get("yy"):
            year = 2000 + int(parts["yy"])
        return wall.replace(
            year=year,
            month=int(parts["m"]),
            day=int(parts["d"]),
            hour=int(parts["H"] or 0),
            minute=int(parts["M"] or 0),
            second=int(parts["S"] or 0),
            microsecond=0,
        )
    clock = re.fullmatch(r"([0-9]{1,2}):([0-9]{2})(?::([0-9]{2}))?(am|pm)?", word, flags=re.ASCII)
    if clock is None:
        raise ValueError(word)
    hour, minute = int(clock.group(1)), int(clock.group(2))
    second = int(clock.group(3) or 0)
    if clock.group(4):
        if not 1 <= hour <= 12:
            raise ValueError(word)
        hour = hour % 12 + (12 if clock.group(4) == "pm" else 0)
    return midnight.replace(hour=hour, minute=minute, second=second)


def _time_error(text: str) -> CommandError:
    return CommandError(f"sacct: error: Invalid time specification (pos=0): {text}")


# ----------------------------------------------------------------------------- selections


def _split_ids(text: str) -> list[str]:
    """-j's comma list, keeping ``123_[1,3-5]`` whole."""
    items, depth, current = [], 0, ""
    for char in text:
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
        if char == "," and depth <= 0:
            items.append(current)
            current = ""
        else:
            current += char
    items.append(current)
    return [item for item in items if item]


_MAX_ID = (1 << 32) - 3  # job and task ids are 32-bit, less Slurm's NO_VAL and INFINITE


def _number(text: str, spec: str) -> int:
    if not re.fullmatch(r"[0-9]{1,10}", text, flags=re.ASCII) or int(text) > _MAX_ID:
        raise CommandError(f"sacct: fatal: Bad job/step specified: {spec}")
    return int(text)


def _selectors(text: str) -> tuple[JobSelector, ...]:
    selectors: list[JobSelector] = []
    for spec in _split_ids(text):
        head, dot, step = spec.partition(".")
        if dot and not (step in ("batch", "extern") or re.fullmatch(r"[0-9]{1,9}", step)):
            raise CommandError(f"sacct: fatal: Bad job/step specified: {spec}")
        job, underscore, task = head.partition("_")
        job_id = _number(job, spec)
        if not underscore:
            selectors.append(JobSelector(job_id, None, step or None))
            continue
        if task.startswith("[") and task.endswith("]"):
            for part in task[1:-1].split(","):
                first, dash, last = part.partition("-")
                low = _number(first, spec)
                high = _number(last, spec) if dash else low
                if high < low or high - low > 1_000_000:
                    raise CommandError(f"sacct: fatal: Bad job/step specified: {spec}")
                selectors += [JobSelector(job_id, t, step or None) for t in range(low, high + 1)]
        else:
            selectors.append(JobSelector(job_id, _number(task, spec), step or None))
    if not selectors:
        raise CommandError(f"sacct: fatal: Bad job/step specified: {text}")
    return tuple(selectors)


_BY_CODE = {code: name for name, code in STATE_CODES.items()}


def _states(text: str) -> frozenset[str]:
    wanted = set()
    for word in text.split(","):
        name = word.strip().upper()
        if not name:
            continue
        if name in STATE_CODES:
            wanted.add(name)
        elif name in _BY_CODE:
            wanted.add(_BY_CODE[name])
        elif name in ("CANCELED", "CA"):
            wanted.add("CANCELLED")
        else:
            raise CommandError(f"sacct: error: Invalid state: {word}")
    return frozenset(wanted)


# ----------------------------------------------------------------------------- arguments


@attrs.frozen
class SacctArgs:
    """What a sacct command line asks: the records (``query``) and how to print them."""

    query: AcctQuery
    fields: tuple[_Field, ...]
    header: bool = True
    #: None: fixed-width columns; else the separator of -p/-P.
    delimiter: str | None = None
    trailing: bool = False
    allocations: bool = False
    steps: frozenset[tuple[int, str]] | None = None
    helpformat: bool = False


def parse_args(argv: Sequence[str], now: float, *, user: str | None) -> SacctArgs:
    """The selection and the format a sacct command line gives; ``user`` is who runs it
    (None or root: every user's jobs are listed by default, else only theirs)."""
    found, rest = parse_options("sacct", argv, OPTIONS)
    if rest:
        raise CommandError(f"sacct: error: Unknown arguments: {' '.join(rest)}")
    values: dict[str, str | None] = {}
    for name, value in found:
        values[name] = value
    if "helpformat" in values:
        return SacctArgs(AcctQuery(), (), helpformat=True)
    if "format" in values:
        fields = _fields(str(values["format"]))
    elif "brief" in values:
        fields = _fields(BRIEF_FORMAT)
    elif "long" in values:
        fields = _fields(LONG_FORMAT)
    else:
        fields = _fields(DEFAULT_FORMAT)
    jobs = _selectors(str(values["jobs"])) if "jobs" in values else None
    states = _states(str(values["state"])) if "state" in values else None
    start = _moment(str(values["starttime"]), now) if "starttime" in values else None
    end = _moment(str(values["endtime"]), now) if "endtime" in values else None
    if start is None:
        if jobs is not None:
            start = None  # Epoch 0: no lower bound
        elif states is not None:
            start = now
        else:
            wall = EPOCH + dt.timedelta(seconds=now)
            midnight = wall.replace(hour=0, minute=0, second=0, microsecond=0)
            start = (midnight - EPOCH).total_seconds()
    if end is None:
        end = start if states is not None and start is not None else now
    if start is not None and end < start:
        raise CommandError(
            f"sacct: error: Start time ({_date(start)}) requested is after end time ({_date(end)})."
        )
    users: frozenset[str] | None = None
    uids: frozenset[int] | None = None
    if "user" in values:
        by_name, by_uid = set(), set()
        for word in str(values["user"]).split(","):
            if re.fullmatch(r"[0-9]{1,10}", word, flags=re.ASCII) and int(word) < 1 << 32:
                by_uid.add(int(word))
            elif word:
                by_name.add(word)
        users, uids = frozenset(by_name), frozenset(by_uid)
    elif "allusers" not in values and user not in (None, "root"):
        users = frozenset({str(user)})
    names = frozenset(str(values["name"]).split(",")) if "name" in values else None
    partitions = frozenset(str(values["partition"]).split(",")) if "partition" in values else None
    steps = None
    if jobs is not None and any(s.step for s in jobs):
        steps = frozenset((s.job_id, s.step) for s in jobs if s.step)
    delimiter = None
    if "parsable" in values or "parsable2" in values:
        delimiter = str(values.get("delimiter") or "|")
    return SacctArgs(
        query=AcctQuery(
            jobs=jobs,
            start=start,
            end=end,
            states=states,
            names=names,
            users=users,
            uids=uids,
            partitions=partitions,
        ),
        fields=tuple(fields),
        header="noheader" not in values,
        delimiter=delimiter,
        trailing="parsable" in values and "parsable2" not in values,
        allocations="allocations" in values,
        steps=steps,
    )


# ----------------------------------------------------------------------------- printing


def _cell(field: _Field, raw: Raw, *, fixed: bool) -> str:
    if field.kind in (_TIME,) and isinstance(raw, int):
        text: str | None = _duration(raw)
    elif field.kind == _DATE:
        text = _date(raw if isinstance(raw, (int, float)) else None)
    else:
        text = None if raw is None else str(raw)
    if not fixed:
        return text or ""
    width = abs(field.width)
    if text is None:
        text = ""
    elif field.kind == _STR and len(text) > width:
        text = text[: width - 1] + "+"
    elif field.kind == _DATE:
        text = text[:width]
    return text.rjust(width) if field.width > 0 else text.ljust(width)


def _line(cells: list[str], args: SacctArgs) -> str:
    if args.delimiter is None:
        return "".join(cell + " " for cell in cells) + "\n"
    tail = args.delimiter if args.trailing else ""
    return args.delimiter.join(cells) + tail + "\n"


def format_records(args: SacctArgs, records: Sequence[JobRecord], now: float) -> str:
    """The lines sacct prints for ``records`` (already selected)."""
    fixed = args.delimiter is None
    lines = []
    if args.header:
        if fixed:
            heads = [
                f.name[: abs(f.width)].rjust(f.width)
                if f.width > 0
                else f.name[: abs(f.width)].ljust(-f.width)
                for f in args.fields
            ]
            lines.append(_line(heads, args))
            lines.append(_line(["-" * abs(f.width) for f in args.fields], args))
        else:
            lines.append(_line([f.name for f in args.fields], args))
    for record in records:
        rows: list[StepRecord | None] = [None]
        if not args.allocations:
            rows += [
                step
                for step in record.steps
                if args.steps is None or (record.job_id, str(step.step)) in args.steps
            ]
        for step in rows:
            cells = []
            for field in args.fields:
                raw = field.value(record, step, now) if field.value is not None else None
                if field.name == "JobID" and step is not None:
                    raw = f"{_job_id(record)}.{step.step}"
                cells.append(_cell(field, raw, fixed=fixed))
            lines.append(_line(cells, args))
    return "".join(lines)


def _helpformat() -> str:
    names = [field.name for field in FIELDS]
    lines = []
    for start in range(0, len(names), 4):
        lines.append("".join(f"{name:<20}" for name in names[start : start + 4]).rstrip())
    return "\n".join(lines) + "\n"


def render(
    argv: Sequence[str], records: Sequence[JobRecord], now: float, *, user: str | None
) -> CommandResult:
    """sacct over ``records`` (every record the store holds: the command selects), at
    time ``now``, run by ``user``. Errors come back as the result (exit 1, stderr)."""
    try:
        args = parse_args(argv, now, user=user)
    except CommandError as error:
        text = error.text if error.text.endswith("\n") else error.text + "\n"
        return CommandResult(error.status, "", text)
    if args.helpformat:
        return CommandResult(0, _helpformat())
    selected = [record for record in records if args.query.matches(record)]
    return CommandResult(0, format_records(args, selected, now))


# ----------------------------------------------------------------------------- client


def run(
    argv: Sequence[str], client: ClusterClient, cwd: Path, invocation: Invocation = SIMULATED
) -> CommandResult:
    """sacct against the accounting records of the cluster ``client`` talks to, run by the
    invocation's user (a simulation's: root)."""
    now = client.now
    args = parse_args(argv, now, user=invocation.user)
    if args.helpformat:
        return CommandResult(0, _helpformat())
    return CommandResult(0, format_records(args, client.records(args.query), now))
