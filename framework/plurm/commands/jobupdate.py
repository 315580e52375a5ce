"""scontrol update JobId=N key=value...: the command line read as Slurm 22.05's scontrol reads
it, its changes sent to the controller (which decides who may make them), and Slurm's
messages (tests/data/oracle/jobcmds).

Keys are case-insensitive and may be shortened as scontrol allows (``TimeL``, ``Pa``);
``TimeLimit=+N`` and ``TimeLimit=-N`` change the current limit by N minutes. A refusal is
printed as ``<reason> for job <id>``, exit status 1.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from plurm.commands.base import CommandError, CommandResult
from plurm.commands.client import ClusterClient
from plurm.controller import RequestError
from plurm.errors import NumberError
from plurm.numbers import INT32_MAX, UINT32_MAX, is_digits, leading_int, parse_time_limit

__all__ = ["update_job"]

#: Slurm's bound on a nice value (NICE_OFFSET - 3).
_NICE_LIMIT = 2147483645

#: (name, shortest prefix scontrol takes, field) in the order scontrol tries them.
_KEYS: tuple[tuple[str, int, str], ...] = (
    ("comment", 3, "comment"),
    ("timelimit", 5, "time_limit"),
    ("priority", 2, "priority"),
    ("nice", 2, "nice"),
    ("numtasks", 8, "ntasks"),
    ("reqprocs", 8, "ntasks"),
    ("requeue", 4, "requeue"),
    ("reqnodes", 8, "nodes"),
    ("numnodes", 8, "nodes"),
    ("minnodes", 8, "nodes"),
    ("partition", 2, "partition"),
    ("qos", 2, "qos"),
    ("name", 2, "name"),
    ("jobname", 4, "name"),
    ("account", 1, "account"),
    ("eligibletime", 2, "begin_time"),
    ("starttime", 2, "begin_time"),
)


def _field(key: str) -> str | None:
    word = key.lower()
    for name, shortest, field in _KEYS:
        if len(word) >= shortest and name.startswith(word):
            return field
    return None


def _error(text: str) -> CommandError:
    return CommandError(f"scontrol: error: {text}")


class _Ignored(Exception):
    """A value scontrol reports and then skips, going on with exit status 0 (22.05 does so
    for a node count it cannot read)."""


def update_job(
    pairs: Sequence[tuple[str, str, str]],
    client: ClusterClient,
    begin: Callable[[str, float], float],
) -> CommandResult:
    """``pairs`` are the (key, "=", value) words of the command line; ``begin`` reads a
    StartTime as sbatch reads --begin."""
    job_ids: list[str] = []
    raw: list[tuple[str, str, str]] = []
    for key, _, value in pairs:
        if key.lower() in ("jobid", "job"):
            job_ids += value.split(",")
            continue
        field = _field(key)
        if field is None:
            raise CommandError(
                f"Update of this parameter is not supported: {key}={value}\nRequest aborted"
            )
        raw.append((field, key, value))
    if not raw:
        raise CommandError("No changes specified")
    if not job_ids:
        raise _error("No job ID specified")
    errors: list[str] = []
    notes: list[str] = []
    for job_id in job_ids:
        if not _number(job_id, UINT32_MAX):
            errors.append(f"Invalid job id specified for job {job_id}\n")
            continue
        try:
            changes = _changes(raw, int(job_id), client, begin)
        except _Ignored as ignored:
            notes.append(str(ignored))
            continue
        try:
            client.update_job(int(job_id), changes)
        except RequestError as error:
            errors.append(f"{error.message} for job {job_id}\n")
    return CommandResult(1 if errors else 0, "", "".join(notes + errors))


def _changes(
    raw: Sequence[tuple[str, str, str]],
    job_id: int,
    client: ClusterClient,
    begin: Callable[[str, float], float],
) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    for field, _key, value in raw:
        if field == "time_limit":
            changes[field] = _time_limit(value, job_id, client)
        elif field == "priority":
            if not _number(value, UINT32_MAX - 1):
                raise _error(f"Invalid Priority value: {value}")
            changes[field] = int(value)
        elif field == "nice":
            nice = leading_int(value, minimum=-(1 << 63), maximum=(1 << 63) - 1)
            if abs(nice) > _NICE_LIMIT:
                raise _error(f"Nice value out of range (+/- {_NICE_LIMIT}). Value ignored")
            changes[field] = nice
        elif field == "ntasks":
            if not _number(value, INT32_MAX) or int(value) < 1:
                raise _error(f"Invalid NumTasks value: {value}")
            changes[field] = int(value)
        elif field == "requeue":
            if not _number(value, 0xFFFF):
                raise _error(f"Invalid Requeue value: {value}")
            changes[field] = int(value) != 0
        elif field == "nodes":
            _known(job_id, client)
            low, high = _node_count(value)
            changes["min_nodes"], changes["max_nodes"] = low, high
        elif field == "begin_time":
            try:
                changes[field] = max(begin(value, client.now), client.now)
            except CommandError:
                raise CommandError(f"Invalid time specification (pos=0): {value}") from None
        else:
            changes[field] = value
    return changes


def _number(text: str, most: int) -> bool:
    """ASCII digits for a number of at most ``most``."""
    return is_digits(text) and len(text) <= 20 and int(text) <= most


def _known(job_id: int, client: ClusterClient) -> int | None:
    """The job's current time limit; scontrol loads the job first for a relative limit or
    a node count."""
    jobs = client.view().cluster.jobs
    if job_id not in jobs:
        raise _error(f"Could not load state information for job {job_id}: Invalid job id specified")
    return jobs[job_id].time_limit


def _time_limit(value: str, job_id: int, client: ClusterClient) -> int | None:
    sign = value[:1] if value[:1] in ("+", "-") else ""
    try:
        minutes = parse_time_limit(value[1:] if sign else value)
    except NumberError:
        raise _error("Invalid TimeLimit value") from None
    if not sign:
        return minutes
    if minutes is None:
        raise _error("Invalid TimeLimit value")
    current = _known(job_id, client)
    if current is None:
        return None  # an unlimited limit stays unlimited
    if sign == "+":
        return current + minutes
    if minutes > current:
        raise _error(f"TimeLimit decrement larger than current time limit ({minutes} > {current})")
    return current - minutes


def _node_count(value: str) -> tuple[int, int | None]:
    low, dash, high = value.partition("-")
    if not _number(low, 1 << 40) or (dash and not _number(high, 1 << 40)):
        raise _Ignored(
            f'scontrol: error: Invalid numeric value "{value}" for requested node count.\n'
        )
    if int(low) < 1 or int(low) > INT32_MAX or (dash and not int(low) <= int(high) <= INT32_MAX):
        raise _error(f"Invalid node count specification: {value}")
    return int(low), int(high) if dash else int(low)
