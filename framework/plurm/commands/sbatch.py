"""sbatch: submit a batch job, with Slurm's options, #SBATCH lines and output.

Simulation adds two options of its own: ``--sim-runtime=SECONDS`` (how long the job runs)
and ``--sim-ignore-sigterm`` (the job runs on through SIGTERM until SIGKILL). Without
``--sim-runtime`` a job runs for N seconds when its ``--wrap`` command is ``sleep N``, else
for its time limit. Suspension pauses a ``--sim-runtime``, but not a ``sleep``: that job ends
N seconds after its start, or at its resume if it was suspended then.
"""

from __future__ import annotations

import datetime as dt
import pwd
import re
import shlex
import signal as signal_mod
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from plurm import hostlist
from plurm.commands.base import SIMULATED, CommandError, CommandResult, Invocation
from plurm.commands.gres_options import gres_request
from plurm.commands.options import Option, parse_options
from plurm.commands.timefmt import EPOCH, clock_time
from plurm.conf.model import SlurmConfig
from plurm.errors import HostlistError, NumberError, RequestError
from plurm.inputfile import MAX_SCRIPT_BYTES, decode, read_text
from plurm.model.job import JobRequest
from plurm.numbers import (
    INT32_MAX,
    MAX_BEGIN_SECONDS,
    MAX_TIME_MINUTES,
    is_digits,
    leading_int,
    parse_float,
    parse_time_limit,
)

if TYPE_CHECKING:
    from plurm.commands.client import ClusterClient

__all__ = ["begin_time", "parse_request", "run"]

OPTIONS = (
    Option("nodes", "N", ("nodes",)),
    Option("ntasks", "n", ("ntasks",)),
    Option("cpus_per_task", "c", ("cpus-per-task",)),
    Option("mem", None, ("mem",)),
    Option("mem_per_cpu", None, ("mem-per-cpu",)),
    Option("time", "t", ("time",)),
    Option("partition", "p", ("partition",)),
    Option("qos", "q", ("qos",)),
    Option("account", "A", ("account",)),
    Option("nodelist", "w", ("nodelist",)),
    Option("exclude", "x", ("exclude",)),
    Option("exclusive", None, ("exclusive",), takes_value=False),
    Option("oversubscribe", "s", ("oversubscribe", "share"), takes_value=False),
    Option("contiguous", None, ("contiguous",), takes_value=False),
    Option("requeue", None, ("requeue",), takes_value=False),
    Option("no_requeue", None, ("no-requeue",), takes_value=False),
    Option("job_name", "J", ("job-name",)),
    Option("output", "o", ("output",)),
    Option("error", "e", ("error",)),
    Option("wrap", None, ("wrap",)),
    Option("export", None, ("export",)),
    Option("open_mode", None, ("open-mode",)),
    Option("parsable", None, ("parsable",), takes_value=False),
    Option("chdir", "D", ("chdir",)),
    Option("begin", "b", ("begin",)),
    Option("nice", None, ("nice",)),
    Option("uid", None, ("uid",)),
    Option("test_only", None, ("test-only",), takes_value=False),
    Option("wait", "W", ("wait",), takes_value=False),
    Option("signal", None, ("signal",)),
    Option("ntasks_per_node", None, ("ntasks-per-node",)),
    Option("comment", None, ("comment",)),
    Option("gres", None, ("gres",)),
    Option("gpus", "G", ("gpus",)),
    Option("gpus_per_node", None, ("gpus-per-node",)),
    Option("gpus_per_task", None, ("gpus-per-task",)),
    Option("gpus_per_socket", None, ("gpus-per-socket",)),
    Option("cpus_per_gpu", None, ("cpus-per-gpu",)),
    Option("mem_per_gpu", None, ("mem-per-gpu",)),
    Option("gres_flags", None, ("gres-flags",)),
    Option("mail_type", None, ("mail-type",)),
    Option("mail_user", None, ("mail-user",)),
    Option("wckey", None, ("wckey",)),
    Option("array", "a", ("array",)),
    Option("dependency", "d", ("dependency",)),
    Option("hold", "H", ("hold",), takes_value=False),
    Option("sim_runtime", None, ("sim-runtime",)),
    Option("sim_ignore_sigterm", None, ("sim-ignore-sigterm",), takes_value=False),
)

_EXIT = re.compile(r"\s*exit\s+([0-9]{1,64})\s*;?\s*", re.ASCII)
_SLEEP = re.compile(r"(?:^|[;&|]|\s)sleep\s+([0-9]{1,12}(?:\.[0-9]{1,12})?)\b", re.ASCII)
_MEMORY_UNITS = {"": 1, "K": 1 / 1024, "M": 1, "G": 1024, "T": 1024 * 1024}


#: sbatch's exit status for a bad command line (Slurm exits 255); submission failures exit 1.
USAGE = 255


def _error(text: str, status: int = USAGE) -> CommandError:
    return CommandError(f"sbatch: error: {text}", status)


def _memory(option: str, text: str) -> int:
    match = re.fullmatch(r"([0-9]{1,20})([KMGTkmgt]?)[Bb]?", text, re.ASCII)
    if match is None:
        raise _error(f"Invalid --{option} specification")
    return max(1, int(int(match.group(1)) * _MEMORY_UNITS[match.group(2).upper()]))


def _positive(option: str, text: str) -> int:
    # ASCII digits only, and within Slurm's int: -n and -c above INT_MAX are refused.
    if not is_digits(text) or not 1 <= int(text) <= INT32_MAX:
        raise _error(f'Invalid numeric value "{text}" for --{option}.')
    return int(text)


def _nodes(text: str) -> tuple[int, int | None]:
    low, dash, high = text.partition("-")
    if not is_digits(low) or (dash and not is_digits(high)):
        raise _error(f'"{text}" is not a valid node count')
    if max(int(low), int(high) if dash else 0) > INT32_MAX:
        raise _error(f'"{text}" is not a valid node count')
    most = int(high) if dash else int(low)
    if most < int(low):
        raise _error(f"Maximum node count {most} is less than minimum node count {low}")
    return int(low), most


_BEGIN_UNITS = {"": 1, "seconds": 1, "minutes": 60, "hours": 3600, "days": 86400, "weeks": 604800}


def _begin(text: str, now: float) -> float:
    """--begin: ``now[+N[units]]``, ``HH:MM[:SS]`` (today, or tomorrow once past),
    ``YYYY-MM-DD[THH:MM[:SS]]``, ``midnight``, ``noon``, ``today``, ``tomorrow``; as
    seconds on the controller's clock."""
    word = text.strip().lower()
    moment = EPOCH + dt.timedelta(seconds=now)
    try:
        seconds = _begin_seconds(text, word, now, moment)
    except (ValueError, OverflowError):  # hour 25, minute 99, a year past 9999
        raise _begin_error(text) from None
    if not -MAX_BEGIN_SECONDS <= seconds <= MAX_BEGIN_SECONDS:
        raise _begin_error(text)
    return seconds


def begin_time(text: str, now: float) -> float:
    """A --begin (or scontrol's StartTime) as seconds on the controller's clock; a
    CommandError if it is not a time."""
    return _begin(text, now)


def _begin_seconds(text: str, word: str, now: float, moment: dt.datetime) -> float:
    relative = re.fullmatch(r"now(?:\+([0-9]{1,12})([a-z]*))?", word, re.ASCII)
    if relative:
        count = int(relative.group(1) or 0)
        unit = relative.group(2)
        unit = next((u for u in _BEGIN_UNITS if u and unit and u.startswith(unit)), unit)
        if unit not in _BEGIN_UNITS:
            raise _begin_error(text)
        return now + count * _BEGIN_UNITS[unit]
    day = moment.replace(hour=0, minute=0, second=0, microsecond=0)
    named = {
        "today": day,
        "midnight": day + dt.timedelta(days=1),
        "tomorrow": day + dt.timedelta(days=1),
        "noon": day + dt.timedelta(hours=12),
    }
    if word in named:
        target = named[word]
        if word == "noon" and target < moment:
            target += dt.timedelta(days=1)
        return (target - EPOCH).total_seconds()
    clock = re.fullmatch(r"([0-9]{1,2}):([0-9]{2})(?::([0-9]{2}))?", word, re.ASCII)
    if clock:
        target = day.replace(
            hour=int(clock.group(1)), minute=int(clock.group(2)), second=int(clock.group(3) or 0)
        )
        if target < moment:
            target += dt.timedelta(days=1)
        return (target - EPOCH).total_seconds()
    if not text.strip().isascii():
        raise _begin_error(text)
    stamp = dt.datetime.fromisoformat(text.strip())
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=EPOCH.tzinfo)
    return (stamp - EPOCH).total_seconds()


def _begin_error(text: str) -> CommandError:
    return CommandError(
        f"Invalid time specification (pos=0): {text}\nsbatch: error: Invalid --begin specification",
        USAGE,
    )


#: The most tasks Plurm reads from one --array before the controller's MaxArraySize check
#: (Slurm's MaxArraySize is at most 4000001).
_ARRAY_TASKS_LIMIT = 4_000_001


def _array(text: str) -> tuple[tuple[int, ...], int]:
    """--array: ``1-10``, ``1-10:2``, ``1,3,5-7``, each with an optional ``%K`` throttle at
    the end; the task ids, ascending, and the throttle (0: none)."""
    spec, percent, limit = text.partition("%")
    if percent and not (is_digits(limit) and int(limit) <= INT32_MAX):
        raise _error("Invalid --array specification")
    tasks: set[int] = set()
    for part in spec.split(","):
        bounds, colon, step_text = part.partition(":")
        first, dash, last = bounds.partition("-")
        if not is_digits(first) or (dash and not is_digits(last)):
            raise _error("Invalid --array specification")
        if colon and not (is_digits(step_text) and int(step_text) >= 1):
            raise _error("Invalid --array specification")
        low = int(first)
        high = int(last) if dash else low
        step = int(step_text) if colon else 1
        if high < low or (high - low) // step + len(tasks) >= _ARRAY_TASKS_LIMIT:
            raise _error("Invalid --array specification")
        tasks.update(range(low, high + 1, step))
    return tuple(sorted(tasks)), int(limit) if percent else 0


def _user(text: str) -> tuple[str, int]:
    """--uid: a user name or number the local user database knows, as (name, uid)."""
    try:
        entry = pwd.getpwuid(int(text)) if is_digits(text) else pwd.getpwnam(text)
    except (KeyError, OverflowError):
        raise _error("Invalid --uid specification") from None
    return entry.pw_name, entry.pw_uid


def _names(option: str, text: str) -> tuple[str, ...]:
    try:
        return tuple(hostlist.expand(text))
    except HostlistError:
        raise _error(f"Invalid node name specified for --{option}: {text}") from None


def _script_options(script: str) -> list[str]:
    """The words of the #SBATCH lines before the first command."""
    words: list[str] = []
    for line in script.splitlines()[1:] if script.startswith("#!") else script.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if not stripped.startswith("#"):
            break
        if stripped.startswith("#SBATCH"):
            words += shlex.split(stripped[len("#SBATCH") :], comments=True)
    return words


def parse_request(
    argv: Sequence[str],
    client: ClusterClient,
    cwd: Path,
    invocation: Invocation = SIMULATED,
) -> tuple[JobRequest, bool]:
    """The job request an sbatch command line describes, and whether --parsable was given."""
    found, rest = parse_options("sbatch", argv, OPTIONS, stop_at_first_argument=True, status=USAGE)
    values = dict(found)
    script_text = ""
    name = "sbatch"
    if "wrap" in values:
        if rest:
            raise _error("Script arguments not permitted with --wrap option", 1)
        command = str(values["wrap"])
        name = "wrap"
        script_text = f"#!/bin/sh\n# This script was created by sbatch --wrap.\n\n{command}\n"
    elif not rest and invocation.stdin is not None:
        script_text = invocation.stdin().decode("utf-8", "surrogateescape")
        command = ""
        script_found, _ = parse_options(
            "sbatch", _script_options(script_text), OPTIONS, status=USAGE
        )
        found = script_found + found
        values = dict(found)
    elif rest:
        path = cwd / rest[0]
        try:
            if invocation.read_file is None:
                script_text = read_text(path, limit=MAX_SCRIPT_BYTES)
            else:
                script_text = decode(invocation.read_file(path))
        except (OSError, ValueError):
            raise _error(f"Unable to open file {rest[0]}", 1) from None
        name = Path(rest[0]).name
        command = str(path)
        script_found, _ = parse_options(
            "sbatch", _script_options(script_text), OPTIONS, status=USAGE
        )
        found = script_found + found
        values = dict(found)
    else:
        raise _error("Batch script is empty!", 1)
    if not script_text.strip():
        raise _error("Batch script is empty!", 1)
    if not script_text.startswith("#!") and "wrap" not in values:
        raise _error(
            "This does not look like a batch script.  The first\n"
            "sbatch: error: line must start with #! followed by the path to an interpreter.\n"
            "sbatch: error: For instance: #!/bin/sh",
            1,
        )
    # Without -N the node count follows from the tasks and CPUs (no upper bound).
    min_nodes, max_nodes = _nodes(str(values["nodes"])) if "nodes" in values else (1, None)
    time_limit = None
    if "time" in values:
        try:
            time_limit = parse_time_limit(str(values["time"]))
        except NumberError:
            raise _error("Invalid --time specification") from None
    begin = _begin(str(values["begin"]), client.now) if "begin" in values else None
    requeue = None
    for option, _ in found:
        if option == "requeue":
            requeue = True
        elif option == "no_requeue":
            requeue = False
    partitions = tuple(p for p in str(values.get("partition", "")).split(",") if p)
    warn = _signal(str(values["signal"])) if "signal" in values else None
    if "mail_type" in values:
        _mail_type(str(values["mail_type"]))  # checked, then ignored: Plurm sends no mail
    per_node = (
        _positive("ntasks-per-node", str(values["ntasks_per_node"]))
        if "ntasks_per_node" in values
        else None
    )
    ntasks = _positive("ntasks", str(values["ntasks"])) if "ntasks" in values else None
    if ntasks is None and per_node is not None and "nodes" in values:
        ntasks = per_node * min_nodes  # as Slurm derives the task count
    gres, gres_asked = gres_request(values, client.config)
    # --uid runs the job as another user; its group stays the submitter's.
    user, uid = _user(str(values["uid"])) if "uid" in values else (invocation.user, invocation.uid)
    request = JobRequest(
        name=str(values.get("job_name", name)),
        user=user,
        uid=uid,
        group=invocation.group,
        gid=invocation.gid,
        partitions=partitions,
        qos=values.get("qos"),
        account=values.get("account"),
        min_nodes=min_nodes,
        max_nodes=max_nodes,
        ntasks=ntasks,
        cpus_per_task=(
            _positive("cpus-per-task", str(values["cpus_per_task"]))
            if "cpus_per_task" in values
            else 1
        ),
        mem_per_node=_memory("mem", str(values["mem"])) if "mem" in values else None,
        mem_per_cpu=(
            _memory("mem-per-cpu", str(values["mem_per_cpu"])) if "mem_per_cpu" in values else None
        ),
        time_limit=time_limit,
        begin_time=begin,
        requeue=requeue,
        nodelist=_names("nodelist", str(values["nodelist"])) if "nodelist" in values else (),
        exclude=_names("exclude", str(values["exclude"])) if "exclude" in values else (),
        exclusive="exclusive" in values,
        contiguous="contiguous" in values,
        oversubscribe="oversubscribe" in values,
        ignore_sigterm="sim_ignore_sigterm" in values or _ignores_sigterm(values.get("wrap")),
        runs_steps=_runs_steps(values.get("wrap")),
        nice=_nice(values["nice"]) if "nice" in values else 0,
        command=command,
        wrapped="wrap" in values,
        work_dir=str(values.get("chdir", cwd)),
        stdout=values.get("output"),
        stderr=values.get("error"),
        open_mode=_open_mode(values.get("open_mode")),
        script=script_text,
        script_args=tuple(rest[1:]) if "wrap" not in values else (),
        environment=_export(values.get("export"), invocation.environ),
        submit_host=invocation.host,
        comment=str(values.get("comment") or ""),
        ntasks_per_node=per_node,
        gres=gres,
        gres_request=gres_asked,
        wckey=values.get("wckey"),
        warn_signal=warn[0] if warn else None,
        warn_time=warn[1] if warn else 0,
        warn_batch_only=warn[2] if warn else False,
    )
    if "array" in values:
        tasks, throttle = _array(str(values["array"]))
        request = attrs.evolve(request, array_tasks=tasks, array_throttle=throttle)
    if "dependency" in values and str(values["dependency"]):
        request = attrs.evolve(request, dependency=str(values["dependency"]))
    if "hold" in values:
        request = attrs.evolve(request, hold=True)
    # Slurm's default output file, in the working directory: slurm-<job id>.out, and
    # slurm-<array id>_<task id>.out for an array's task.
    if request.stdout is None:
        default = "slurm-%A_%a.out" if request.array_tasks else "slurm-%j.out"
        request = attrs.evolve(request, stdout=str(Path(request.work_dir) / default))
    exit_match = _EXIT.fullmatch(command) if "wrap" in values else None
    if exit_match is not None:
        # A job that only exits ends at once with that code, as its shell would.
        request = attrs.evolve(request, sim_exit_code=int(exit_match.group(1)) % 256)
        return request.with_runtime(0.0), "parsable" in values
    runtime = _runtime(values, command, request, client.config)
    request = request.with_runtime(runtime)
    if "sim_runtime" not in values and "wrap" in values and _SLEEP.search(command):
        # sleep's deadline is wall-clock time: it runs on while the job is suspended.
        request = attrs.evolve(request, sim_wall_clock=True)
    return request, "parsable" in values


def _runtime(
    values: dict[str, str | None], command: str, request: JobRequest, config: SlurmConfig
) -> float | None:
    if "sim_runtime" in values:
        try:
            # finite and at most the longest time limit: nan and inf would never end
            seconds = parse_float(
                str(values["sim_runtime"]), minimum=0.0, maximum=MAX_TIME_MINUTES * 60.0
            )
        except NumberError:
            seconds = -1.0
        if seconds < 0:
            raise _error(f"Invalid --sim-runtime specification: {values['sim_runtime']}")
        return seconds
    if "wrap" in values:
        sleep = _SLEEP.search(command)
        if sleep:
            return float(sleep.group(1))
    limit = request.time_limit
    if limit is None:
        # (DefaultTime is not a field scontrol updates: the configuration's is current)
        name = request.partitions[0] if request.partitions else None
        parts = {part.name: part for part in config.partitions}
        part = parts.get(name) if name else config.default_partition
        limit = part.default_time if part is not None else None
    return None if limit is None else float(limit * 60)


def _ignores_sigterm(wrap: str | bool | None) -> bool:
    """A ``--wrap`` that starts with ``trap "" TERM;`` (or ``trap '' TERM;``) runs on past
    SIGTERM, like a job that checkpoints through its grace time."""
    if not isinstance(wrap, str):
        return False
    if ";" not in wrap:
        return False
    try:
        return shlex.split(wrap.split(";", 1)[0]) == ["trap", "", "TERM"]
    except ValueError:  # unbalanced quotes: not a trap the shell would run
        return False


def _runs_steps(wrap: str | bool | None) -> bool:
    """A ``--wrap`` that runs ``srun`` does its work in job steps."""
    if not isinstance(wrap, str):
        return False
    return re.search(r"(?:^|[;&|(]|\s)srun\s", wrap) is not None


#: The signals --signal takes by name (with or without SIG), and their numbers.
_SIGNAL_NAMES = {
    member.name.removeprefix("SIG"): member.value
    for member in signal_mod.Signals
    if not member.name.startswith("SIG_")
}
_SIGNAL_BY_NUMBER = {number: name for name, number in sorted(_SIGNAL_NAMES.items())}


def _signal(text: str) -> tuple[str, int, bool]:
    """--signal=[{R|B}:]SIG[@SECS]: the signal's name, the seconds before the time limit it
    comes (default 60) and whether it goes to the batch shell only (B:). R: (reservation
    overlap) is taken and has no effect here."""
    flags, colon, rest = text.partition(":")
    if not colon:
        flags, rest = "", text
    if flags not in ("", "R", "B", "RB", "BR"):
        raise _error("Invalid --signal specification")
    name, at, seconds = rest.partition("@")
    word = name.upper().removeprefix("SIG")
    if is_digits(word) and len(word) <= 3 and int(word) in _SIGNAL_BY_NUMBER:
        word = _SIGNAL_BY_NUMBER[int(word)]
    if word not in _SIGNAL_NAMES or (at and not (is_digits(seconds) and len(seconds) <= 5)):
        raise _error("Invalid --signal specification")
    delay = int(seconds) if at else 60
    if delay > 0xFFFF:
        raise _error("Invalid --signal specification")
    return word, delay, "B" in flags


_MAIL_TYPES = frozenset(
    [
        "NONE",
        "BEGIN",
        "END",
        "FAIL",
        "REQUEUE",
        "ALL",
        "INVALID_DEPEND",
        "STAGE_OUT",
        "TIME_LIMIT",
        "TIME_LIMIT_90",
        "TIME_LIMIT_80",
        "TIME_LIMIT_50",
        "ARRAY_TASKS",
    ]
)


def _mail_type(text: str) -> None:
    if not all(word.upper() in _MAIL_TYPES for word in text.split(",")):
        raise _error("Invalid --mail-type specification")


#: Slurm's bound on --nice (NICE_OFFSET - 3).
_NICE_LIMIT = 2147483645


def _nice(text: str | None) -> int:
    """--nice=N, read as Slurm reads it (strtoll: the leading integer, else 0)."""
    value = leading_int(str(text), minimum=-(1 << 63), maximum=(1 << 63) - 1)
    if abs(value) > _NICE_LIMIT:
        raise _error(f"Nice value out of range (+/- {_NICE_LIMIT})")
    return value


def _open_mode(text: str | None) -> str:
    """--open-mode: append or truncate (a prefix of either, as Slurm reads it)."""
    if text is None:
        return "truncate"
    word = text.strip().lower()
    for mode in ("append", "truncate"):
        if word and mode.startswith(word):
            return mode
    raise _error(f"Invalid --open-mode argument: {text}")


def _export(text: str | None, environ: Mapping[str, str]) -> tuple[str, ...]:
    """--export: the environment the job starts with. ALL (the default) passes the whole
    submission environment, NONE none of it, and a list its named variables (with ALL in
    the list, all of them), each ``NAME=value`` taking that value."""
    if text is None:
        text = environ.get("SBATCH_EXPORT", "ALL")
    words = [word for word in text.split(",") if word]
    chosen: dict[str, str] = {}
    if "ALL" in (word.upper() for word in words):
        chosen.update(environ)
    for word in words:
        if word.upper() in ("ALL", "NONE", "NIL"):
            continue
        name, equals, value = word.partition("=")
        if equals:
            chosen[name] = value
        elif name in environ:
            chosen[name] = environ[name]
    return tuple(f"{name}={value}" for name, value in chosen.items())


def _refused(error: RequestError, request: JobRequest) -> CommandError:
    lines = f"Batch job submission failed: {error.message}"
    if error.message == "Invalid partition name specified":
        lines = f"invalid partition specified: {request.partitions[0]}\nsbatch: error: {lines}"
    elif error.detail is not None:
        lines = f"{error.detail}\nsbatch: error: {lines}"
    return _error(lines, 1)


#: Seconds between sbatch --wait's looks at the job.
WAIT_POLL = 1.0


def run(
    argv: Sequence[str], client: ClusterClient, cwd: Path, invocation: Invocation = SIMULATED
) -> CommandResult:
    """Submit the job; with --test-only, only say when it would start (on stderr, as Slurm
    does; a job id is used up, nothing is queued); with --wait, return only once the job
    has ended, with its exit code (in a simulation the simulated clock moves on meanwhile,
    as the command blocks)."""
    found, _ = parse_options("sbatch", argv, OPTIONS, stop_at_first_argument=True, status=USAGE)
    options = {name for name, _ in found}
    request, parsable = parse_request(argv, client, cwd, invocation)
    if "test_only" in options:
        try:
            answer = client.will_run(request)
        except RequestError as error:
            raise _refused(error, request) from None
        nodes = hostlist.compress(answer.nodes)
        return CommandResult(
            0,
            "",
            f"sbatch: Job {answer.job_id} to start at {clock_time(answer.start)} using "
            f"{answer.cpus} processors on nodes {nodes} in partition {answer.partition}\n",
        )
    try:
        job_id = client.submit(request)
    except RequestError as error:
        raise _refused(error, request) from None
    out = f"{job_id}\n" if parsable else f"Submitted batch job {job_id}\n"
    if "wait" not in options:
        return CommandResult(0, out)
    try:
        status = _wait(client, job_id)
    except RequestError as error:
        return CommandResult(1, out, f"sbatch: error: --wait: {error.message}\n")
    return CommandResult(status, out)


def _wait(client: ClusterClient, job_id: int) -> int:
    """Poll until the job has finished; the exit status sbatch --wait gives: the job's exit
    code, or 128 plus the signal that ended it (as a shell reports a killed command)."""
    while True:
        job = client.view().cluster.jobs.get(job_id)
        if job is None:  # purged after MinJobAge: its end went unseen
            return 0
        if job.state.finished:
            return 128 + job.exit_signal if job.exit_signal else job.exit_code
        client.sleep(WAIT_POLL)
