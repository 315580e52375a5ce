"""``scontrol update PartitionName=...`` and ``scontrol update JobId=...`` on the wire: the
typed changes the command parsed, as JSON and back, each field checked on arrival."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from plurm.conf.values import BadValue, parse_oversubscribe, parse_preempt_mode
from plurm.live.rpc import RpcError
from plurm.numbers import INT32_MAX, MAX_BEGIN_SECONDS, MAX_TIME_MINUTES, UINT32_MAX

__all__ = [
    "job_changes",
    "job_changes_to_dict",
    "partition_changes",
    "partition_changes_to_dict",
]

#: Slurm keeps these partition fields in 32 bits (PriorityTier, PriorityJobFactor in 16).
_LIMITS = {"priority_tier": 0xFFFF, "priority_job_factor": 0xFFFF, "grace_time": 0xFFFFFFFF}


def _number(field: str) -> Callable[[object], object]:
    def check(value: object) -> object:
        if type(value) is not int or not 0 <= value <= _LIMITS[field]:
            raise RpcError(f"{field}: not an integer from 0 to {_LIMITS[field]}")
        return value

    return check


def _minutes(value: object) -> object:
    if value is None:
        return None
    if type(value) is not int or not 0 <= value <= 0xFFFFFFFF:
        raise RpcError("max_time: not a number of minutes")
    return value


def _state(value: object) -> object:
    if value not in ("UP", "DOWN", "DRAIN", "INACTIVE"):
        raise RpcError("state: not UP, DOWN, DRAIN or INACTIVE")
    return value


def _text(parse: Callable[[str], object]) -> Callable[[object], object]:
    def read(value: object) -> object:
        if not isinstance(value, str) or len(value) > 200:
            raise RpcError(f"not a valid setting: {value!r}")
        try:
            return parse(value)
        except BadValue as error:
            raise RpcError(str(error)) from None

    return read


_DECODERS: dict[str, Callable[[object], object]] = {
    "priority_tier": _number("priority_tier"),
    "priority_job_factor": _number("priority_job_factor"),
    "grace_time": _number("grace_time"),
    "max_time": _minutes,
    "state": _state,
    "oversubscribe": _text(lambda text: parse_oversubscribe(text)[0]),
    "preempt_mode": _text(parse_preempt_mode),
}
#: Fields sent as the text scontrol would print (and parse back the same way).
_AS_TEXT = frozenset({"oversubscribe", "preempt_mode"})


def partition_changes_to_dict(changes: Mapping[str, Any]) -> dict[str, Any]:
    return {key: str(value) if key in _AS_TEXT else value for key, value in changes.items()}


def partition_changes(data: object) -> dict[str, Any]:
    """The changes a message carries, each decoded and checked; RpcError otherwise."""
    if not isinstance(data, dict):
        raise RpcError("changes: not an object")
    changes = {}
    for key, value in data.items():
        decoder = _DECODERS.get(key)
        if decoder is None:
            raise RpcError(f"changes: {key!r} is not a partition field scontrol updates")
        changes[key] = decoder(value)
    return changes


# ----------------------------------------------------------------------------- job updates

#: Slurm's bound on a nice value (NICE_OFFSET - 3).
_NICE_LIMIT = 2147483645
#: The longest text field an update may carry (names, comments, accounts).
_MAX_TEXT = 1024


def _job_text(field: str) -> Callable[[object], object]:
    def check(value: object) -> object:
        if not isinstance(value, str) or len(value) > _MAX_TEXT or "\0" in value:
            raise RpcError(f"{field}: not a text of at most {_MAX_TEXT} characters")
        return value

    return check


def _job_int(field: str, low: int, high: int) -> Callable[[object], object]:
    def check(value: object) -> object:
        if type(value) is not int or not low <= value <= high:
            raise RpcError(f"{field}: not an integer from {low} to {high}")
        return value

    return check


def _job_limit(value: object) -> object:
    if value is None:
        return None
    return _job_int("time_limit", 0, MAX_TIME_MINUTES)(value)


def _job_max_nodes(value: object) -> object:
    if value is None:
        return None
    return _job_int("max_nodes", 1, INT32_MAX)(value)


def _job_begin(value: object) -> object:
    if type(value) not in (int, float) or not math.isfinite(float(value)):  # type: ignore[arg-type]
        raise RpcError("begin_time: not a finite number of seconds")
    seconds = float(value)  # type: ignore[arg-type]
    if abs(seconds) > MAX_BEGIN_SECONDS:
        raise RpcError("begin_time: out of range")
    return seconds


def _job_flag(value: object) -> object:
    if type(value) is not bool:
        raise RpcError("requeue: not true or false")
    return value


_JOB_DECODERS: dict[str, Callable[[object], object]] = {
    "time_limit": _job_limit,
    "partition": _job_text("partition"),
    "nice": _job_int("nice", -_NICE_LIMIT, _NICE_LIMIT),
    "priority": _job_int("priority", 0, UINT32_MAX - 1),
    "qos": _job_text("qos"),
    "account": _job_text("account"),
    "name": _job_text("name"),
    "min_nodes": _job_int("min_nodes", 1, INT32_MAX),
    "max_nodes": _job_max_nodes,
    "ntasks": _job_int("ntasks", 1, INT32_MAX),
    "begin_time": _job_begin,
    "requeue": _job_flag,
    "comment": _job_text("comment"),
}


def job_changes_to_dict(changes: Mapping[str, Any]) -> dict[str, Any]:
    """A job update's changes as JSON (every field is already a JSON value)."""
    return dict(changes)


def job_changes(data: object) -> dict[str, Any]:
    """The job changes a message carries, each checked; RpcError otherwise."""
    if not isinstance(data, dict):
        raise RpcError("changes: not an object")
    changes = {}
    for key, value in data.items():
        decoder = _JOB_DECODERS.get(key)
        if decoder is None:
            raise RpcError(f"changes: {key!r} is not a job field scontrol updates")
        changes[key] = decoder(value)
    if "max_nodes" in changes and "min_nodes" not in changes:
        raise RpcError("changes: max_nodes without min_nodes")
    return changes
