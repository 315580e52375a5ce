"""Reading Standard Workload Format (SWF v2.2) traces into :class:`SwfJob` records.

An SWF file has one job per line, 18 whitespace-separated numeric fields each; ``-1`` marks a
field that does not apply, and lines starting with ``;`` are comments (the header, see
:mod:`plurm.workload.header`). Time fields (2, 3, 4, 6, 9 and 18) may be decimals; the others
are integers. Job lines are sorted by submit time.

The reader is strict about job lines and lenient about the header. A job line with the wrong
number of fields, a field that is not a number (or not an integer where one is due), a
negative value other than -1, a missing or negative job number or submit time, or a submit
time earlier than the line before is a :class:`~plurm.errors.TraceError` naming the file, the
1-based line and the field. The reader does not stop at the first bad line: it collects up
to ``max_errors`` of them (the first ones in file order) and raises them together as a
:class:`~plurm.errors.TraceErrorGroup` (a single error is raised as itself). A missing or
unreadable file, or a corrupt gzip stream, is a TraceError for the file as a whole (line 0).
Nothing else escapes, whatever the bytes.

The reading is column-wise for speed: each line is split once, and then each of the 18
columns is converted with one ``map(int, ...)`` over all the jobs; only a column that holds
decimals or bad values is looked at value by value.
"""

from __future__ import annotations

import contextlib
import enum
import gc
import math
import os
import sys
import zlib
from collections.abc import Iterator, Sequence
from itertools import islice
from operator import le
from pathlib import Path
from typing import Protocol, TypeAlias

import attrs

from plurm.errors import InputFileError, SourceLocation, TraceError, TraceErrorGroup
from plurm.inputfile import MAX_TRACE_BYTES, gunzip, read_input
from plurm.numbers import UINT32_MAX
from plurm.workload.header import HeaderLines, SwfHeader, TraceNotice

__all__ = [
    "FIELD_NAMES",
    "TIME_FIELDS",
    "Readable",
    "Seconds",
    "SwfJob",
    "SwfStatus",
    "SwfTrace",
    "parse_swf",
    "read_swf",
]

#: A time in seconds: an int when it is a whole number, else a float (SWF allows decimals).
Seconds: TypeAlias = int | float

#: The 18 SWF fields by 1-based number (index 0 is field 1), as messages name them.
FIELD_NAMES = (
    "job number",
    "submit time",
    "wait time",
    "run time",
    "allocated processors",
    "average CPU time",
    "used memory",
    "requested processors",
    "requested time",
    "requested memory",
    "status",
    "user",
    "group",
    "executable",
    "queue",
    "partition",
    "preceding job",
    "think time",
)
#: The 1-based numbers of the fields that may hold decimals (seconds).
TIME_FIELDS = frozenset({2, 3, 4, 6, 9, 18})
#: Fields that always apply: -1 is not "does not apply" there but an error.
_REQUIRED = frozenset({1, 2})
_CHUNK_ROWS = 16384
#: The largest value a field may hold: Slurm keeps counts, times and sizes in 32 bits.
_FIELD_MAX = UINT32_MAX
_FIELD_COUNT = len(FIELD_NAMES)
_GZIP_MAGIC = b"\x1f\x8b"
#: How long a quoted line may be in a message before it is cut.
_QUOTE_LIMIT = 300
# dict.get(value, value) maps -1 (and -1.0) to None and keeps everything else; run through
# map() it does a whole column at C speed.
_ABSENT: dict[Seconds, None] = {-1: None}


class Readable(Protocol):
    """A stream :func:`read_swf` can read: text or bytes, plain or decompressing itself."""

    def read(self, size: int = -1, /) -> str | bytes: ...


class SwfStatus(enum.IntEnum):
    """The status codes of field 11 (SWF v2.2). ``SwfJob.status`` holds the plain int."""

    FAILED = 0
    COMPLETED = 1
    #: Partial execution; the job goes on in a later record (checkpoint or swap logs only).
    PARTIAL = 2
    #: The last partial execution of a job that completed.
    LAST_PARTIAL_COMPLETED = 3
    #: The last partial execution of a job that failed.
    LAST_PARTIAL_FAILED = 4
    #: Cancelled, before it started or while it ran (SWF 2.1).
    CANCELLED = 5


@attrs.frozen
class SwfJob:
    """One job line of an SWF file, field for field (numbered as in the format).

    None stands for -1, "does not apply". Times are seconds, relative to the header's
    ``UnixStartTime`` (see :func:`plurm.workload.clean` for traces that store absolute times);
    memory is KB per processor. ``line`` is the 1-based line of the record in its file.
    """

    number: int  #: 1
    submit_time: Seconds  #: 2
    wait_time: Seconds | None  #: 3
    run_time: Seconds | None  #: 4
    allocated_processors: int | None  #: 5
    average_cpu_time: Seconds | None  #: 6
    used_memory: int | None  #: 7
    requested_processors: int | None  #: 8
    requested_time: Seconds | None  #: 9
    requested_memory: int | None  #: 10
    status: int | None  #: 11, see SwfStatus
    user: int | None  #: 12
    group: int | None  #: 13
    executable: int | None  #: 14
    queue: int | None  #: 15 (0 is interactive)
    partition: int | None  #: 16 (the Slurm partition, in Slurm traces)
    preceding_job: int | None  #: 17
    think_time: Seconds | None  #: 18
    line: int = attrs.field(default=0, eq=False)


@attrs.frozen
class SwfTrace:
    """A whole SWF file as written: its header and every job line, in file order."""

    source: str
    header: SwfHeader
    jobs: tuple[SwfJob, ...]
    #: The bad lines left out when the trace was read with ``strict=False``, in line order.
    skipped: tuple[TraceError, ...] = attrs.field(default=(), eq=False)

    @property
    def notices(self) -> tuple[TraceNotice, ...]:
        """The header's warnings (values that did not read, ``Preemption: Double``...)."""
        return self.header.notices


def read_swf(
    source: str | os.PathLike[str] | Readable,
    *,
    name: str | None = None,
    max_errors: int = 20,
    strict: bool = True,
    limit: int = MAX_TRACE_BYTES,
) -> SwfTrace:
    """Read an SWF trace from a path or an open stream, text or binary.

    Gzip is recognised by its magic bytes or a ``.gz`` suffix (a ``.gz`` file that is not gzip
    is an error); a stream that decompresses itself (``gzip.open``) is read as it comes. Bytes
    are read as UTF-8, or Latin-1 when they are not UTF-8. ``name`` is what messages call the
    source (default: the path, or the stream's ``name``). Raises only
    :class:`~plurm.errors.TraceError` (see the module's doc for what it covers).

    A path must name a regular file of at most ``limit`` bytes, and a gzip file may inflate
    to at most ``limit`` bytes (``plurm.inputfile``); a stream is read up to ``limit``
    bytes or characters (as it comes, so a decompressing stream too) and refused past it.
    With ``strict=False`` bad job lines are left out and listed on :attr:`SwfTrace.skipped`
    instead of refusing the trace.
    """
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        label = name or str(source)
        try:
            data: str | bytes = read_input(path, limit=limit)
        except OSError as problem:
            raise TraceError(f"cannot read: {problem.strerror or problem}", _file(label)) from None
        except ValueError as problem:  # a path with a NUL in it
            raise TraceError(f"cannot read: {problem}", _file(label)) from None
        expect_gzip = path.suffix.lower() == ".gz"
    else:
        label = name or str(getattr(source, "name", "<stream>"))
        try:
            # One byte past the cap tells a stream that is too long (or, from gzip.open,
            # inflates too far) without reading it all.
            data = source.read(limit + 1)
        except (OSError, EOFError, zlib.error, UnicodeDecodeError) as problem:
            # A gzip.GzipFile stream decompresses as it reads, and fails as _gunzip does.
            raise TraceError(f"cannot read: {problem}", _file(label)) from None
        if len(data) > limit:
            raise TraceError(f"cannot read: is larger than the cap of {limit} bytes", _file(label))
        # A stream may already be decompressing (gzip.open), so only the bytes decide.
        expect_gzip = False
    if isinstance(data, bytes):
        if expect_gzip or data[:2] == _GZIP_MAGIC:
            data = _gunzip(data, label, limit)
        data = _decode(data)
    return parse_swf(data, label, max_errors=max_errors, strict=strict)


def skipped_message(skipped: Sequence[TraceError], shown: int = 20) -> str:
    """What a lenient reader prints about the lines it skipped: the first ``shown`` errors
    (file:line:column), how many more, and the count."""
    listed = skipped[:shown]
    more = f"\n(and {len(skipped) - len(listed)} more)" if len(skipped) > len(listed) else ""
    return (
        "\n".join(str(error) for error in listed)
        + more
        + f"\nplurm: {len(skipped)} bad trace lines skipped (--strict refuses the trace)"
    )


def parse_swf(
    text: str, name: str = "<text>", *, max_errors: int = 20, strict: bool = True
) -> SwfTrace:
    """Read an SWF trace from ``text`` in hand; ``name`` is what messages call it.

    With ``strict`` (the default) a bad job line refuses the trace (a TraceError, or a
    TraceErrorGroup of the first ``max_errors``); without, bad lines are left out and listed
    on :attr:`SwfTrace.skipped`, and the valid jobs are kept.
    """
    with gc_paused():
        try:
            return _Reader(name, max(1, max_errors)).read(text)
        except TraceError:
            if strict:
                raise
        return _lenient(text, name)


def _lenient(text: str, name: str) -> SwfTrace:
    """The trace without its bad lines: every line with an error is blanked (so line
    numbers stay), then a job whose submit time is earlier than the last kept one's is left
    out too, as the order rule would refuse it."""
    finder = _Reader(name, sys.maxsize, check_order=False)
    try:
        finder.read(text)
        bad: list[TraceError] = []
    except TraceError as problem:
        bad = list(problem.errors)
    lines = text.split("\n")
    for error in bad:
        if error.location is not None and error.location.line:
            lines[error.location.line - 1] = ""
    reader = _Reader(name, 1, check_order=False)
    trace = reader.read("\n".join(lines))
    reader.lines = text.split("\n")  # quote the lines as they were
    kept: list[SwfJob] = []
    for job in trace.jobs:
        if kept and job.submit_time < kept[-1].submit_time:
            last = kept[-1]
            bad.append(
                reader._field_error(
                    job.line,
                    2,
                    f"{job.submit_time} is earlier than {last.submit_time} on line "
                    f"{last.line}; SWF job lines are sorted by submit time",
                )
            )
            continue
        kept.append(job)
    bad.sort(key=lambda error: (error.location.line if error.location else 0, error.field or 0))
    return attrs.evolve(trace, jobs=tuple(kept), skipped=tuple(bad))


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a trace's records are built.

    Every collection walks all the objects it tracks, and a trace adds tens of thousands of
    them (lists of fields, records), none in a cycle: with the collector on, reading
    SDSC-SP2 took a third longer and freed nothing. It is switched back on after, if it was.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _file(name: str) -> SourceLocation:
    return SourceLocation(name, 0)


def _gunzip(data: bytes, name: str, limit: int) -> bytes:
    try:
        return gunzip(data, limit=limit)
    except InputFileError as problem:
        raise TraceError(f"cannot read: {problem}", _file(name)) from None
    except (OSError, EOFError, zlib.error) as problem:
        # BadGzipFile (an OSError) for a bad header or CRC, EOFError for a cut stream,
        # zlib.error for corrupt deflate data.
        raise TraceError(f"not a readable gzip file: {problem}", _file(name)) from None


def _decode(data: bytes) -> str:
    # SWF is ASCII; comments written elsewhere may be Latin-1, and every byte must survive so
    # that a bad one is reported where it stands rather than failing the whole file.
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


@attrs.define
class _Reader:
    """One pass over one file's text (mutable, internal)."""

    name: str
    max_errors: int
    lines: list[str] = attrs.Factory(list)
    errors: list[TraceError] = attrs.Factory(list)
    truncated: bool = False
    #: Whether the job rows being converted hold underscores (set by :meth:`read` per chunk).
    underscores: bool = True
    #: Whether submit times must not go down (the lenient reader checks it itself).
    check_order: bool = True

    def read(self, text: str) -> SwfTrace:
        # split("\n") rather than splitlines(): line numbers then agree with editors, which
        # do not break lines at \v, \f or \x1c-\x1e as splitlines() does.
        self.lines = lines = text.split("\n")
        # int() takes non-ASCII digits, which SWF does not have; one check of the whole text
        # spares the per-line check in the usual, all-ASCII file.
        ascii_only = text.isascii()
        header = HeaderLines(self.name)
        rows: list[list[str]] = []  # the job rows of the current chunk, split
        numbers: list[int] = []  # every job row's line number
        line_errors: list[TraceError] = []
        count = _FIELD_COUNT
        # int() and float() take "1_000" too. Comments often hold underscores (queue names,
        # file names), job rows almost never: only a chunk with some in its rows has its
        # columns searched for them.
        anywhere = "_" in text
        in_chunk = False
        # Rows are converted a chunk at a time, so that the split fields of only one chunk
        # are held at once (a 300,000-job trace's fields take hundreds of MB as strings).
        values: list[list[Seconds] | None] = [[] for _ in range(count)]
        decimals = [False] * count  # whether each column has decimals
        for number, parts in enumerate(map(str.split, lines), 1):
            if (
                len(parts) == count
                and parts[0][0] != ";"
                and (ascii_only or lines[number - 1].isascii())
            ):
                rows.append(parts)
                numbers.append(number)
                if anywhere and not in_chunk:
                    in_chunk = "_" in lines[number - 1]
                if len(rows) == _CHUNK_ROWS:
                    self.underscores, in_chunk = in_chunk, False
                    self._convert_rows(rows, numbers[-len(rows) :], values, decimals)
                    rows = []
                continue
            if not parts:
                continue
            line = lines[number - 1]
            if parts[0][0] == ";":
                header.add(number, line)
            elif len(line_errors) < self.max_errors:
                line_errors.append(self._line_error(number, parts))
            else:
                self.truncated = True
        if rows:
            self.underscores = in_chunk
            self._convert_rows(rows, numbers[-len(rows) :], values, decimals)
        self.errors += line_errors
        for index, column in enumerate(values):
            if column is not None and not self._check_signs(
                index + 1, column, decimals[index], numbers
            ):
                values[index] = None
        if values[1] is not None and self.check_order:
            self._check_order(values[1], numbers)
        if self.errors:
            self._raise()
        columns_out = [
            column if field in _REQUIRED else list(map(_ABSENT.get, column, column))
            for field, column in enumerate(values, 1)
            if column is not None
        ]
        jobs = tuple(map(SwfJob, *columns_out, numbers))
        return SwfTrace(self.name, header.build(), jobs)

    def _convert_rows(
        self,
        rows: list[list[str]],
        numbers: list[int],
        values: list[list[Seconds] | None],
        decimals: list[bool],
    ) -> None:
        """Convert one chunk of job rows column by column onto ``values``; a column with a
        bad value in any chunk becomes None (its errors are kept). Errors are sorted and cut
        to ``max_errors`` at the end, so converting by chunks reports the same ones."""
        for index, column in enumerate(zip(*rows, strict=True)):
            errors: list[TraceError] = []
            converted = self._convert(index + 1, column)
            if converted is None:
                converted = self._slow_column(index + 1, column, numbers, errors)
            self.errors += errors
            done = values[index]
            if errors:
                values[index] = None
            elif done is not None:
                done += converted[0]
                decimals[index] = decimals[index] or converted[1]

    def _check_signs(
        self, field: int, values: list[Seconds], decimals: bool, numbers: list[int]
    ) -> bool:
        """Whether the column's values are all allowed: -1 is the only negative value SWF
        allows, and not even that in required fields (errors say where it is broken)."""
        if max(values, default=0) > _FIELD_MAX:
            return self._check_high(field, values, numbers)
        lowest = min(values, default=0)
        if lowest >= 0 or not (field in _REQUIRED or lowest < -1 or decimals):
            return True
        rule = (
            f"the {FIELD_NAMES[field - 1]} always applies and is 0 or more"
            if field in _REQUIRED
            else "only -1 (does not apply) may be"
        )
        found = 0
        for index, value in enumerate(values):
            if value < 0 and (field in _REQUIRED or value != -1):
                if found >= self.max_errors:
                    self.truncated = True
                    break
                self.errors.append(
                    self._field_error(numbers[index], field, f"{value} is negative; {rule}")
                )
                found += 1
        return not found

    def _check_high(self, field: int, values: list[Seconds], numbers: list[int]) -> bool:
        for index, value in enumerate(values):
            if value > _FIELD_MAX:
                if len(self.errors) >= self.max_errors:
                    self.truncated = True
                    break
                self.errors.append(
                    self._field_error(numbers[index], field, f"{value} is larger than {_FIELD_MAX}")
                )
        return False

    def _convert(self, field: int, column: Sequence[str]) -> tuple[list[Seconds], bool] | None:
        """The column converted a whole at a time, and whether it has decimals; None when
        some value needs a closer look (then :meth:`_slow_column` finds it)."""
        if self.underscores and "_" in "".join(column):
            return None
        try:
            return list(map(int, column)), False
        except ValueError:
            if field not in TIME_FIELDS:
                return None
        try:
            decimals = list(map(float, column))
        except ValueError:
            return None
        # float() takes "nan" and "inf", and "1e999" overflows to inf.
        if not all(map(math.isfinite, decimals)):
            return None
        return list(map(_whole, decimals)), True

    def _slow_column(
        self, field: int, column: Sequence[str], numbers: list[int], errors: list[TraceError]
    ) -> tuple[list[Seconds], bool]:
        """Convert value by value: decimals where the field allows them, errors elsewhere."""
        values: list[Seconds] = []
        decimals = False
        for index, text in enumerate(column):
            problem = "is not a number"
            if "_" not in text:
                try:
                    values.append(int(text))
                    continue
                except ValueError:
                    problem = "is not an integer"
                if field in TIME_FIELDS:
                    try:
                        number = float(text)
                    except ValueError:
                        problem = "is not a number"
                    else:
                        if math.isfinite(number):
                            values.append(_whole(number))
                            decimals = True
                            continue
                        problem = "is not a finite number"
            values.append(0)
            if len(errors) < self.max_errors:
                errors.append(self._field_error(numbers[index], field, f"{text!r} {problem}"))
            else:
                self.truncated = True
                break
        return values, decimals

    def _check_order(self, submits: list[Seconds], numbers: list[int]) -> None:
        if all(map(le, submits, islice(submits, 1, None))):
            return
        found = 0
        for index in range(1, len(submits)):
            if submits[index] < submits[index - 1]:
                self.errors.append(
                    self._field_error(
                        numbers[index],
                        2,
                        f"{submits[index]} is earlier than {submits[index - 1]} on line "
                        f"{numbers[index - 1]}; SWF job lines are sorted by submit time",
                    )
                )
                found += 1
                if found >= self.max_errors:
                    break

    def _raise(self) -> None:
        errors = sorted(
            self.errors,
            key=lambda error: (error.location.line if error.location else 0, error.field or 0),
        )
        truncated = self.truncated or len(errors) > self.max_errors
        errors = errors[: self.max_errors]
        if len(errors) == 1 and not truncated:
            raise errors[0]
        raise TraceErrorGroup(errors, truncated=truncated)

    def _location(self, number: int, column: int = 0) -> SourceLocation:
        text = self.lines[number - 1].rstrip("\r")
        if len(text) > _QUOTE_LIMIT:
            text = text[:_QUOTE_LIMIT] + " ..."
            if column > _QUOTE_LIMIT:
                column = 0
        return SourceLocation(self.name, number, column, text)

    def _field_error(self, number: int, field: int, problem: str) -> TraceError:
        column = _field_column(self.lines[number - 1], field)
        message = f"field {field} ({FIELD_NAMES[field - 1]}): {problem}"
        return TraceError(message, self._location(number, column), field=field)

    def _line_error(self, number: int, parts: list[str]) -> TraceError:
        """The error of a line the fast path refused: a wrong field count, or non-ASCII."""
        line = self.lines[number - 1]
        if len(parts) != _FIELD_COUNT:
            # Point at the first extra field, or at the end of a short line.
            column = (
                _field_column(line, _FIELD_COUNT + 1)
                if len(parts) > _FIELD_COUNT
                else len(line.rstrip()) + 1
            )
            return TraceError(
                f"expected {_FIELD_COUNT} fields, found {len(parts)}",
                self._location(number, column),
            )
        for field, text in enumerate(parts, 1):
            if not text.isascii():
                return self._field_error(number, field, f"{text!r} is not a number")
        # Every field is clean, so a non-ASCII blank (which split() took as a separator) is.
        column = next(index for index, char in enumerate(line, 1) if not char.isascii())
        return TraceError(
            f"non-ASCII character {line[column - 1]!r} between fields",
            self._location(number, column),
        )


def _whole(value: float) -> Seconds:
    """A decimal time as an int when it is a whole number, so that 60.0 reads as 60 does."""
    return int(value) if value.is_integer() else value


def _field_column(line: str, field: int) -> int:
    """The 1-based column where whitespace-separated ``field`` (1-based) starts, or 0."""
    position = start = 0
    length = len(line)
    for _ in range(field):
        while position < length and line[position].isspace():
            position += 1
        start = position
        while position < length and not line[position].isspace():
            position += 1
        if start == length:
            return 0
    return start + 1
