"""The header of an SWF file: its ``; Key: value`` comment lines, kept raw and typed.

SWF v2.2 (the Parallel Workloads Archive's definition) describes the machine and the log in
comment lines at the top of the file, one ``; Key: value`` each. A value may go on over the
following comment lines, indented::

    ; Note: THIS IS A CLEANED VERSION OF THE LOG!
    ;       The filters used to produce it were
    ;         submit<=2006-12-18 00:00:00 (1434 jobs removed)

The reading is lenient, as the format's guidance asks: unknown keys are kept, ``Note``,
``Queue`` and ``Partition`` may repeat, and a value that does not parse (``MaxProcs: many``)
becomes a :class:`TraceNotice` instead of an error. :class:`SwfHeader` holds every key as
written, in file order, and the keys the format defines as typed values.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from plurm.errors import SourceLocation

__all__ = ["AllowOveruse", "HeaderLines", "Preemption", "SwfHeader", "TraceNotice"]


@attrs.frozen
class TraceNotice:
    """A warning about a trace: the reader (or the cleaner) says it and goes on."""

    message: str
    location: SourceLocation | None = None

    def __str__(self) -> str:
        return f"{self.location}: {self.message}" if self.location else self.message


class Preemption(enum.Enum):
    """The ``Preemption`` header: whether and how the log records preempted jobs."""

    NO = "No"
    #: Jobs may be split into partial-execution records (status 2, 3 and 4).
    YES = "Yes"
    #: A summary line plus part lines for each job: parsers that know only No and Yes misread it.
    DOUBLE = "Double"
    #: Time-sharing.
    TS = "TS"


class AllowOveruse(enum.Enum):
    """The ``AllowOveruse`` header: whether jobs may use more than they requested."""

    NO = "No"
    YES = "Yes"


def _text(value: str) -> str:
    return value


_INTEGER = re.compile(r"[+-]?[0-9]+", re.ASCII)
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)


def _first_word(value: str) -> str:
    words = value.split(maxsplit=1)
    return words[0] if words else ""


def _integer(value: str) -> int:
    # Only the first word counts, so that "MaxProcs: 93312 (80640 thin + ...)" still reads.
    word = _first_word(value)
    if not _INTEGER.fullmatch(word):
        raise ValueError(f"{word or value!r} is not an integer")
    return int(word)


def _count(value: str) -> int:
    number = _integer(value)
    if number <= 0:
        raise ValueError(f"{number} is not a positive count")
    return number


def _seconds(value: str) -> int | float:
    word = _first_word(value)
    if _INTEGER.fullmatch(word):
        number: int | float = int(word)
    elif _NUMBER.fullmatch(word) and float(word) != float("inf"):
        number = float(word)
    else:
        raise ValueError(f"{word or value!r} is not a number of seconds")
    if number <= 0:
        raise ValueError(f"{word} is not a positive number of seconds")
    return number


def _choice(kind: type[enum.Enum]) -> Callable[[str], enum.Enum]:
    by_name = {str(member.value).lower(): member for member in kind}
    # Yes/No headers are sometimes written True/False.
    if "yes" in by_name:
        by_name |= {"true": by_name["yes"], "false": by_name["no"]}

    def convert(value: str) -> enum.Enum:
        word = _first_word(value).lower()
        if word not in by_name:
            choices = ", ".join(str(member.value) for member in kind)
            raise ValueError(f"{_first_word(value)!r} is not one of {choices}")
        return by_name[word]

    return convert


#: The single-valued keys SWF v2.2 defines: the attribute each fills, and how its value reads.
_KEYS: dict[str, tuple[str, Callable[[str], Any]]] = {
    "Version": ("version", _text),
    "Computer": ("computer", _text),
    "Installation": ("installation", _text),
    "Acknowledge": ("acknowledge", _text),
    "Information": ("information", _text),
    "Conversion": ("conversion", _text),
    "MaxJobs": ("max_jobs", _count),
    "MaxRecords": ("max_records", _count),
    "Preemption": ("preemption", _choice(Preemption)),
    "UnixStartTime": ("unix_start_time", _integer),
    "TimeZone": ("time_zone", _integer),
    "TimeZoneString": ("time_zone_string", _text),
    "StartTime": ("start_time", _text),
    "EndTime": ("end_time", _text),
    "MaxNodes": ("max_nodes", _count),
    "MaxProcs": ("max_procs", _count),
    "MaxRuntime": ("max_runtime", _seconds),
    "MaxMemory": ("max_memory", _count),
    "AllowOveruse": ("allow_overuse", _choice(AllowOveruse)),
    "MaxQueues": ("max_queues", _count),
    "Queues": ("queues", _text),
    "MaxPartitions": ("max_partitions", _count),
    "Partitions": ("partitions", _text),
}
#: Keys that repeat by design: one line per note, per queue, per partition.
_REPEATED = ("Note", "Queue", "Partition")
_BY_LOWER = {key.lower(): key for key in (*_KEYS, *_REPEATED)}


@attrs.frozen
class SwfHeader:
    """The header comments of an SWF file.

    ``keys`` holds every key as written, in the order of first appearance, each with all its
    values in file order (one for most keys; ``Note``, ``Queue`` and ``Partition`` repeat).
    A value that went on over indented comment lines has them joined with newlines.

    The typed attributes are None when the key is absent or its value does not read (then a
    notice says so). Keys match case-insensitively; a single-valued key given twice takes its
    last value, with a notice. Counts (``Max*``) are positive; ``max_runtime`` is in seconds
    and ``max_memory`` in KB per processor. ``queue_names`` and ``partition_names`` map the
    numbers of fields 15 and 16 to the names the ``Queue: 1 batch`` lines give.
    """

    version: str | None = None
    computer: str | None = None
    installation: str | None = None
    acknowledge: str | None = None
    information: str | None = None
    conversion: str | None = None
    max_jobs: int | None = None
    max_records: int | None = None
    preemption: Preemption | None = None
    unix_start_time: int | None = None
    #: Deprecated in SWF 2.2 (buggy); ``time_zone_string`` replaces it.
    time_zone: int | None = None
    time_zone_string: str | None = None
    #: Formatted like date(1); kept as written.
    start_time: str | None = None
    end_time: str | None = None
    max_nodes: int | None = None
    max_procs: int | None = None
    max_runtime: int | float | None = None
    max_memory: int | None = None
    allow_overuse: AllowOveruse | None = None
    max_queues: int | None = None
    queues: str | None = None
    max_partitions: int | None = None
    partitions: str | None = None
    notes: tuple[str, ...] = ()
    queue_names: Mapping[int, str] = attrs.field(factory=dict)
    partition_names: Mapping[int, str] = attrs.field(factory=dict)
    keys: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict)
    notices: tuple[TraceNotice, ...] = attrs.field(default=(), eq=False)

    def get(self, key: str) -> str | None:
        """The raw value of ``key`` (case-insensitive; the last one if it repeats), or None."""
        found = None
        for name, values in self.keys.items():
            if name.lower() == key.lower():
                found = values[-1]
        return found

    @property
    def procs_per_node(self) -> int | None:
        """MaxProcs / MaxNodes when both are given and it divides evenly, else None.

        1 means a processor field counts whole nodes (as in Theta's trace, or a machine of
        single-processor nodes).
        """
        if self.max_procs is None or self.max_nodes is None:
            return None
        if self.max_procs % self.max_nodes:
            return None
        return self.max_procs // self.max_nodes


# A key line is ``;``, at most two blanks, a name and a colon; deeper indentation continues
# the value above (the archive's files indent continuation lines well past the key).
# ``(?!//)`` keeps an indented-but-shallow URL ("; http://...") from reading as key "http".
_KEY_LINE = re.compile(r"[ \t]*;[ \t]{0,2}([A-Za-z][A-Za-z0-9_]*)[ \t]*:(?!//)(.*)", re.ASCII)


@attrs.define
class _Entry:
    """One ``; Key: value`` line and the continuation lines under it (mutable, internal)."""

    key: str
    line: int
    text: str
    parts: list[str]


@attrs.define
class HeaderLines:
    """Collects comment lines while the reader goes through a file (mutable, internal)."""

    path: str
    entries: list[_Entry] = attrs.Factory(list)
    last_line: int = -1

    def add(self, number: int, line: str) -> None:
        """Take comment line ``number`` (1-based); ``line`` may end in ``\\r``."""
        line = line.rstrip("\r")
        match = _KEY_LINE.match(line)
        if match:
            value = match.group(2).strip()
            self.entries.append(_Entry(match.group(1), number, line, [value] if value else []))
            self.last_line = number
            return
        text = line.strip()[1:].strip()
        # A non-empty comment right below a key line (or its continuation) goes on with its
        # value; anything else in between (a blank ";", a free comment, a job line) ends it.
        if text and self.entries and self.last_line == number - 1:
            self.entries[-1].parts.append(text)
            self.last_line = number

    def build(self) -> SwfHeader:
        """The typed header, with a notice for each value that does not read."""
        return _build(self.path, self.entries)


def _build(path: str, entries: list[_Entry]) -> SwfHeader:
    """The :class:`SwfHeader` of a file's entries: raw keys, typed values and notices."""
    notices: list[TraceNotice] = []
    keys: dict[str, list[str]] = {}
    typed: dict[str, Any] = {}
    seen: dict[str, int] = {}
    notes: list[str] = []
    names: dict[str, dict[int, str]] = {"Queue": {}, "Partition": {}}

    for entry in entries:
        value = "\n".join(entry.parts)
        keys.setdefault(entry.key, []).append(value)
        canonical = _BY_LOWER.get(entry.key.lower())
        where = SourceLocation(path, entry.line, 0, entry.text)
        if canonical is None:
            continue  # kept in ``keys``; SWF has no user keys, but files do carry some
        if canonical == "Note":
            notes.append(value)
            continue
        if canonical in names:
            words = value.split()
            if len(words) >= 2 and _INTEGER.fullmatch(words[0]):
                names[canonical][int(words[0])] = words[1]
            else:
                notices.append(
                    TraceNotice(f"{entry.key}: {value!r} is not 'number name'; ignored", where)
                )
            continue
        if canonical in seen:
            notices.append(
                TraceNotice(
                    f"{entry.key} given again (first on line {seen[canonical]}); the last wins",
                    where,
                )
            )
        seen.setdefault(canonical, entry.line)
        attribute, convert = _KEYS[canonical]
        try:
            typed[attribute] = convert(value)
        except ValueError as problem:
            typed.pop(attribute, None)
            notices.append(TraceNotice(f"{entry.key}: {problem}; ignored", where))
            continue
        if typed[attribute] is Preemption.DOUBLE:
            notices.append(
                TraceNotice(
                    "Preemption: Double: each job has a summary line and part lines; Plurm "
                    "reads every line as a job record and does not pair them",
                    where,
                )
            )
    return SwfHeader(
        **typed,
        notes=tuple(notes),
        queue_names=names["Queue"],
        partition_names=names["Partition"],
        keys={key: tuple(values) for key, values in keys.items()},
        notices=tuple(notices),
    )
