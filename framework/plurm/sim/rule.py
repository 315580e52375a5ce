"""Which trace jobs a rule picks: the ``[high_priority.match]`` table of a trace mapping.

A rule is a set of conditions on a job's trace fields, all of which must hold::

    [high_priority.match]
    user = [3, 17]                 # the field is one of these numbers (or one number: queue = 2)
    processors = { min = 64 }      # the field lies in this range, both ends included
    requested_time = { min = 600, max = 7200 }

The fields are the SWF record's identities (``user``, ``group``, ``executable``, ``queue``,
``partition``: -1 in the trace, "does not apply", matches no number) and the cleaned job's
sizes (``processors``, ``requested_time``, ``run_time``, in processors and seconds, as the
replay uses them). Rules let a trace recorded without preemption give it a realistic
high-priority class: one user's jobs, the wide jobs, a queue.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from plurm.errors import TraceError
from plurm.workload import CleanJob

__all__ = ["FIELDS", "JobRule"]

#: The fields a rule may test, and how each is read off a cleaned job.
FIELDS: Mapping[str, Callable[[CleanJob], float | None]] = {
    "user": lambda job: job.record.user,
    "group": lambda job: job.record.group,
    "executable": lambda job: job.record.executable,
    "queue": lambda job: job.record.queue,
    "partition": lambda job: job.record.partition,
    "processors": lambda job: job.processors,
    "requested_time": lambda job: job.requested_time,
    "run_time": lambda job: job.run_time,
}


@attrs.frozen
class _Condition:
    """One field's test: its value is one of ``values``, or (no values) lies in
    ``[low, high]``."""

    field: str
    values: frozenset[int] | None = None
    low: float = -math.inf
    high: float = math.inf

    def holds(self, job: CleanJob) -> bool:
        value = FIELDS[self.field](job)
        if value is None:
            return False
        if self.values is not None:
            return value in self.values
        return self.low <= value <= self.high


def _number(value: object, where: str) -> int:
    # bool is an int in Python, never a field value in a trace
    if isinstance(value, bool) or not isinstance(value, int):
        raise TraceError(f"{where}: expected a whole number, got {value!r}")
    return value


def _condition(field: str, value: object, where: str) -> _Condition:
    if field not in FIELDS:
        known = ", ".join(FIELDS)
        raise TraceError(f"{where}: unknown field {field!r} (known: {known})")
    where = f"{where}.{field}"
    if isinstance(value, list):
        if not value:
            raise TraceError(f"{where}: an empty list matches no job")
        return _Condition(field, values=frozenset(_number(v, where) for v in value))
    if isinstance(value, dict):
        unknown = sorted(set(value) - {"min", "max"})
        if unknown:
            raise TraceError(f"{where}: unknown bound {unknown[0]!r} (use min and max)")
        if not value:
            raise TraceError(f"{where}: a range needs min, max or both")
        low = _number(value["min"], f"{where}.min") if "min" in value else -math.inf
        high = _number(value["max"], f"{where}.max") if "max" in value else math.inf
        if low > high:
            raise TraceError(f"{where}: min {low} is greater than max {high}")
        return _Condition(field, low=low, high=high)
    return _Condition(field, values=frozenset({_number(value, where)}))


@attrs.frozen
class JobRule:
    """Conditions on a trace job's fields, all of which must hold (no conditions: every job)."""

    conditions: tuple[_Condition, ...] = ()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str) -> JobRule:
        """A rule from its TOML table; ``where`` names it in errors ("m.toml:
        high_priority.match")."""
        if not isinstance(data, Mapping):
            raise TraceError(f"{where}: expected a table of fields, got {data!r}")
        return cls(tuple(_condition(str(k), v, where) for k, v in sorted(data.items())))

    def matches(self, job: CleanJob) -> bool:
        return all(condition.holds(job) for condition in self.conditions)
