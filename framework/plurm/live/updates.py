"""``scontrol update PartitionName=...`` on the wire: the typed changes the command parsed, as
JSON and back, each field checked on arrival."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from plurm.conf.values import BadValue, parse_oversubscribe, parse_preempt_mode
from plurm.live.rpc import RpcError

__all__ = ["partition_changes", "partition_changes_to_dict"]

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
