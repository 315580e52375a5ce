"""What the numbers of an SWF trace stand for, as its header names them.

SWF numbers partitions (field 16), queues (15), users (12), groups (13) and executables
(14); the header may say what each number is. ``; Partition: 1 debug`` and ``; Queue: 1
normal`` are the format's own lines (:mod:`plurm.workload.header` reads them). Users,
groups and executables have no key of their own, so ``plurm trace export`` names them in
``; Note:`` lines, one each, of a fixed form that :func:`read_names` reads back::

    ; Note: User 1 is alice (uid 1000)
    ; Note: Group 1 is alice (gid 1000)
    ; Note: Executable 1 is the job named sleeper
    ; Note: Controller started at -85.125 s

The last says when the controller that ran the jobs started, in seconds from the trace's
time 0 (``UnixStartTime``): Slurm's periodic threads (backfill, time-limit checks, gang time
slices) tick in phase with that moment, so a replay that starts its controller there makes
its periodic passes where the recorded ones were.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import attrs

from plurm.workload.header import SwfHeader

__all__ = ["NamedId", "TraceNames", "name_notes", "read_names"]


@attrs.frozen
class NamedId:
    """A user or group: its name and its numeric id (None when the note gives none)."""

    name: str
    id: int | None = None


@attrs.frozen
class TraceNames:
    """The names behind a trace's numbers (empty where the header names none)."""

    partitions: Mapping[int, str] = attrs.field(factory=dict)
    queues: Mapping[int, str] = attrs.field(factory=dict)
    users: Mapping[int, NamedId] = attrs.field(factory=dict)
    groups: Mapping[int, NamedId] = attrs.field(factory=dict)
    executables: Mapping[int, str] = attrs.field(factory=dict)
    #: Seconds from the trace's time 0 at which its controller started, if the header says.
    controller_start: float | None = None


_USER = re.compile(r"User ([0-9]{1,9}) is (\S+) \(uid ([0-9]{1,10})\)", re.ASCII)
_GROUP = re.compile(r"Group ([0-9]{1,9}) is (\S+) \(gid ([0-9]{1,10})\)", re.ASCII)
_EXECUTABLE = re.compile(r"Executable ([0-9]{1,9}) is the job named (.+)", re.ASCII | re.DOTALL)
_START = re.compile(r"Controller started at (-?[0-9]{1,12}(?:\.[0-9]{1,9})?) s\b", re.ASCII)
# Control characters (a job name may hold any) would break the one-line form.
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _clean(text: str) -> str:
    return _CONTROL.sub("?", text)


def name_notes(
    users: Mapping[int, NamedId],
    groups: Mapping[int, NamedId],
    executables: Mapping[int, str],
    controller_start: float | None,
) -> list[str]:
    """The ``; Note:`` lines (without the ``; Note: `` prefix) that name users, groups and
    executables, and say when the controller started, as :func:`read_names` reads them."""
    notes = [
        f"User {number} is {_clean(user.name).replace(' ', '_')} (uid {user.id})"
        for number, user in sorted(users.items())
    ]
    notes += [
        f"Group {number} is {_clean(group.name).replace(' ', '_')} (gid {group.id})"
        for number, group in sorted(groups.items())
    ]
    notes += [
        f"Executable {number} is the job named {_clean(name)}"
        for number, name in sorted(executables.items())
    ]
    if controller_start is not None:
        notes.append(
            f"Controller started at {controller_start:.3f} s (its periodic passes, backfill, "
            "time-limit checks and gang time slices, tick in phase with that moment)"
        )
    return notes


def read_names(header: SwfHeader) -> TraceNames:
    """The names ``header`` gives to the trace's numbers. Notes of other forms are not
    names and are passed over; a number named twice keeps its last name."""
    users: dict[int, NamedId] = {}
    groups: dict[int, NamedId] = {}
    executables: dict[int, str] = {}
    start: float | None = None
    for note in header.notes:
        text = note.strip()
        if match := _USER.fullmatch(text):
            users[int(match[1])] = NamedId(match[2], int(match[3]))
        elif match := _GROUP.fullmatch(text):
            groups[int(match[1])] = NamedId(match[2], int(match[3]))
        elif match := _EXECUTABLE.fullmatch(text):
            executables[int(match[1])] = match[2]
        elif match := _START.match(text):
            start = float(match[1])
    return TraceNames(
        partitions=dict(header.partition_names),
        queues=dict(header.queue_names),
        users=users,
        groups=groups,
        executables=executables,
        controller_start=start,
    )
