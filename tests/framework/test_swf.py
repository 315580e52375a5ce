"""The SWF reader (plurm.workload): fields, header keys, input kinds, errors with their lines,
the cleaning rules and their report, fuzzing, and the real traces in ../shared/traces."""

from __future__ import annotations

import gzip
import io
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plurm.errors import PlurmError, TraceError, TraceErrorGroup
from plurm.workload import (
    FIELD_NAMES,
    TIME_FIELDS,
    AllowOveruse,
    Preemption,
    RequestedTime,
    SwfJob,
    SwfStatus,
    SwfTrace,
    clean,
    parse_swf,
    read_swf,
)
from tests.conftest import SHARED

# The attribute of each SWF field, in field order.
ATTRIBUTES = [field.name for field in SwfJob.__attrs_attrs__][:18]
DEFAULTS = {
    "number": 1,
    "submit_time": 0,
    "wait_time": 5,
    "run_time": 100,
    "allocated_processors": 4,
    "average_cpu_time": 90,
    "used_memory": -1,
    "requested_processors": 4,
    "requested_time": 200,
    "requested_memory": -1,
    "status": 1,
    "user": 3,
    "group": 2,
    "executable": -1,
    "queue": 1,
    "partition": -1,
    "preceding_job": -1,
    "think_time": -1,
}


def line(**fields: object) -> str:
    """One job line: the defaults above, with ``fields`` (by attribute name) changed."""
    values = DEFAULTS | fields
    assert set(values) == set(ATTRIBUTES)
    return " ".join(str(values[name]) for name in ATTRIBUTES)


def lines(*rows: str) -> str:
    return "\n".join(rows) + "\n"


def error_of(text: str, **options: int) -> TraceError:
    with pytest.raises(TraceError) as caught:
        parse_swf(text, "t.swf", **options)
    return caught.value


# --- reading the fields ---------------------------------------------------------------


def test_the_eighteen_fields_in_order() -> None:
    values = list(range(1, 19))
    trace = parse_swf(" ".join(map(str, values)) + "\n")
    (job,) = trace.jobs
    assert [getattr(job, name) for name in ATTRIBUTES] == values
    assert job.line == 1
    assert len(FIELD_NAMES) == 18 and FIELD_NAMES[3] == "run time"


def test_minus_one_means_does_not_apply() -> None:
    optional = {name: -1 for name in ATTRIBUTES[2:]}
    (job,) = parse_swf(line(**optional)).jobs
    assert all(getattr(job, name) is None for name in ATTRIBUTES[2:])
    assert (job.number, job.submit_time) == (1, 0)


def test_zero_is_a_value_not_an_absence() -> None:
    (job,) = parse_swf(line(run_time=0, queue=0, status=0)).jobs
    assert (job.run_time, job.queue, job.status) == (0, 0, SwfStatus.FAILED)


def test_time_fields_may_be_decimals() -> None:
    text = line(submit_time="0.25", wait_time="1.5", run_time="2e3", average_cpu_time="7.75")
    first, second = parse_swf(lines(text, line(submit_time=1, think_time="0.5"))).jobs
    assert (first.submit_time, first.wait_time, first.run_time, first.average_cpu_time) == (
        0.25,
        1.5,
        2000,
        7.75,
    )
    assert second.think_time == 0.5
    assert sorted(TIME_FIELDS) == [2, 3, 4, 6, 9, 18]


def test_whole_decimals_read_as_ints() -> None:
    (job,) = parse_swf(line(run_time="60.0", requested_time="7.5")).jobs
    assert job.run_time == 60 and isinstance(job.run_time, int)
    assert job.requested_time == 7.5


def test_comments_blank_lines_and_line_numbers() -> None:
    text = lines("; Version: 2.2", "", line(), "   ", "; a comment", line(number=2, submit_time=9))
    trace = parse_swf(text)
    assert [job.line for job in trace.jobs] == [3, 6]
    assert [job.number for job in trace.jobs] == [1, 2]


def test_whitespace_and_line_endings() -> None:
    text = "\t" + line().replace(" ", " \t ") + "\r\n" + line(number=2) + "\r\n"
    trace = parse_swf(text)
    assert len(trace.jobs) == 2 and trace.jobs[1].line == 2


def test_equal_submit_times_are_in_order() -> None:
    trace = parse_swf(lines(line(submit_time=5), line(number=2, submit_time=5)))
    assert len(trace.jobs) == 2


def test_an_empty_trace_has_no_jobs() -> None:
    assert parse_swf("").jobs == ()
    assert parse_swf("; Version: 2.2\n;\n").jobs == ()


def test_status_codes() -> None:
    assert (int(SwfStatus.CANCELLED), int(SwfStatus.LAST_PARTIAL_FAILED)) == (5, 4)
    (job,) = parse_swf(line(status=5)).jobs
    assert job.status == SwfStatus.CANCELLED


# --- the header -----------------------------------------------------------------------

HEADER = """\
; Version: 2.2
; Computer: Linux cluster (Atlas)
; Information: https://example.org/atlas
;              http://www.cs.huji.ac.il/labs/parallel/workload/
; Copyright: some agreement:
;   line two of it
; MaxJobs: 60332
; MaxRecords: 60332
; Preemption: No
; UnixStartTime: 1163199901
; TimeZone: 3600
; TimeZoneString: US/Pacific
; StartTime: Fri Nov 10 15:05:01 PST 2006
; EndTime:   Fri Jun 29 14:02:41 PDT 2007
; MaxNodes: 1152
; MaxProcs: 9216
; MaxRuntime: 86400
; MaxMemory: 1048576
; AllowOveruse: Yes
; Note: Scheduler is Slurm
; MaxQueues: 2
; Queues: two queues, described in words
; Queue:  0  interactive
; Queue:  1  batch
; MaxPartitions: 2
; Partitions: two partitions
; Partition:  1  pbatch
; Partition:  2  pdebug
;
; Note: THIS IS A CLEANED VERSION OF THE LOG!
;       The filters used to produce it were
;         submit<=2006-12-18 00:00:00 (1434 jobs removed)
;
"""


def test_header_keys_are_typed() -> None:
    header = parse_swf(HEADER + line()).header
    assert header.version == "2.2"
    assert header.computer == "Linux cluster (Atlas)"
    assert (header.max_jobs, header.max_records) == (60332, 60332)
    assert header.preemption is Preemption.NO
    assert header.unix_start_time == 1163199901
    assert (header.time_zone, header.time_zone_string) == (3600, "US/Pacific")
    assert header.start_time == "Fri Nov 10 15:05:01 PST 2006"
    assert header.end_time == "Fri Jun 29 14:02:41 PDT 2007"
    assert (header.max_nodes, header.max_procs, header.procs_per_node) == (1152, 9216, 8)
    assert (header.max_runtime, header.max_memory) == (86400, 1048576)
    assert header.allow_overuse is AllowOveruse.YES
    assert (header.max_queues, header.queues) == (2, "two queues, described in words")
    assert (header.max_partitions, header.partitions) == (2, "two partitions")
    assert header.queue_names == {0: "interactive", 1: "batch"}
    assert header.partition_names == {1: "pbatch", 2: "pdebug"}
    assert header.notices == ()


def test_header_keeps_every_key_raw_in_order_with_repeats() -> None:
    header = parse_swf(HEADER).header
    assert list(header.keys)[:5] == ["Version", "Computer", "Information", "Copyright", "MaxJobs"]
    assert header.keys["Queue"] == ("0  interactive", "1  batch")
    assert header.keys["Copyright"] == ("some agreement:\nline two of it",)  # unknown, kept
    assert header.keys["MaxProcs"] == ("9216",)
    assert header.get("maxprocs") == "9216"
    assert header.get("Nothing") is None


def test_header_values_continue_over_indented_comment_lines() -> None:
    header = parse_swf(HEADER).header
    assert header.information == (
        "https://example.org/atlas\nhttp://www.cs.huji.ac.il/labs/parallel/workload/"
    )
    assert header.notes == (
        "Scheduler is Slurm",
        "THIS IS A CLEANED VERSION OF THE LOG!\nThe filters used to produce it were\n"
        "submit<=2006-12-18 00:00:00 (1434 jobs removed)",
    )


def test_a_blank_comment_or_a_job_line_ends_a_value() -> None:
    text = lines("; Note: one", ";", ";   not part of it", "; Note: two", line(), ";   nor this")
    header = parse_swf(text).header
    assert header.notes == ("one", "two")


def test_header_keys_match_case_insensitively() -> None:
    header = parse_swf("; maxprocs: 64\n;PREEMPTION: double\n").header
    assert header.max_procs == 64
    assert header.preemption is Preemption.DOUBLE


def test_header_is_lenient_values_that_do_not_read_become_notices() -> None:
    text = lines(
        "; MaxProcs: many",
        "; MaxNodes: 0",
        "; Preemption: Sometimes",
        "; MaxRuntime: forever",
        "; Queue: batch",
        "; Version: 2.1",
        "; Version: 2.2",
        "; Preemption: Double",
    )
    trace = parse_swf(text, "h.swf")
    header = trace.header
    assert header.max_procs is None and header.max_nodes is None and header.max_runtime is None
    assert header.version == "2.2"
    assert header.preemption is Preemption.DOUBLE
    assert header.queue_names == {}
    messages = [str(notice) for notice in trace.notices]
    assert messages[0] == "h.swf:1: MaxProcs: 'many' is not an integer; ignored"
    assert "0 is not a positive count" in messages[1]
    assert "'Sometimes' is not one of No, Yes, Double, TS" in messages[2]
    assert "'forever' is not a number of seconds" in messages[3]
    assert "is not 'number name'" in messages[4]
    assert messages[5] == "h.swf:7: Version given again (first on line 6); the last wins"
    assert messages[6] == "h.swf:8: Preemption given again (first on line 3); the last wins"
    assert messages[7].startswith("h.swf:8: Preemption: Double: each job has a summary line")


def test_numeric_header_values_read_their_first_word() -> None:
    header = parse_swf("; MaxProcs: 93312 (80640 thin + 11520 fat + 1152 hybrid)\n").header
    assert header.max_procs == 93312


def test_a_header_of_nothing() -> None:
    header = parse_swf(line()).header
    assert header.keys == {} and header.max_procs is None and header.procs_per_node is None


# --- input kinds ----------------------------------------------------------------------

TEXT = lines("; MaxProcs: 8", line(), line(number=2, submit_time=10))


@pytest.mark.parametrize("suffix", [".swf", ".swf.gz", ".log"])
def test_gzip_is_read_by_its_magic_bytes(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"trace{suffix}"
    path.write_bytes(gzip.compress(TEXT.encode()))
    trace = read_swf(path)
    assert len(trace.jobs) == 2 and trace.header.max_procs == 8
    assert trace.source == str(path)


def test_plain_text_from_a_path_string_or_path(tmp_path: Path) -> None:
    path = tmp_path / "trace.swf"
    path.write_text(TEXT)
    assert read_swf(str(path)).jobs == read_swf(path).jobs == parse_swf(TEXT).jobs


def test_streams_text_binary_and_gzip(tmp_path: Path) -> None:
    assert len(read_swf(io.StringIO(TEXT)).jobs) == 2
    assert read_swf(io.StringIO(TEXT)).source == "<stream>"
    assert len(read_swf(io.BytesIO(TEXT.encode()), name="b").jobs) == 2
    assert len(read_swf(io.BytesIO(gzip.compress(TEXT.encode()))).jobs) == 2
    path = tmp_path / "t.swf.gz"
    path.write_bytes(gzip.compress(TEXT.encode()))
    with gzip.open(path, "rt") as stream:
        assert read_swf(stream).source == str(path)
    with gzip.open(path, "rb") as stream:
        assert len(read_swf(stream).jobs) == 2
    with path.open("rb") as stream:
        assert len(read_swf(stream).jobs) == 2


def test_latin1_comments_are_read() -> None:
    data = b"; Installation: Universit\xe9\n" + line().encode()
    trace = read_swf(io.BytesIO(data))
    assert trace.header.installation == "Universit\u00e9"


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"\x1f\x8bnot really gzip", "not a readable gzip file"),
        (gzip.compress(TEXT.encode())[:-6], "not a readable gzip file"),
        (gzip.compress(TEXT.encode())[:20] + b"\x00" * 30, "not a readable gzip file"),
    ],
)
def test_a_corrupt_gzip_is_a_trace_error(tmp_path: Path, data: bytes, problem: str) -> None:
    path = tmp_path / "bad.swf.gz"
    path.write_bytes(data)
    with pytest.raises(TraceError, match=problem) as caught:
        read_swf(path)
    assert caught.value.location is not None
    assert (caught.value.location.file, caught.value.location.line) == (str(path), 0)
    with pytest.raises(TraceError, match=problem):
        read_swf(io.BytesIO(data))


def test_a_gz_file_that_is_not_gzip_is_a_trace_error(tmp_path: Path) -> None:
    path = tmp_path / "plain.swf.gz"
    path.write_text(TEXT)
    with pytest.raises(TraceError, match="not a readable gzip file"):
        read_swf(path)


def test_a_corrupt_gzip_stream_is_a_trace_error(tmp_path: Path) -> None:
    path = tmp_path / "cut.swf.gz"
    path.write_bytes(gzip.compress(TEXT.encode())[:-6])
    with gzip.open(path, "rb") as stream, pytest.raises(TraceError, match="cannot read"):
        read_swf(stream)


def test_a_missing_file_is_a_trace_error(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match="cannot read") as caught:
        read_swf(tmp_path / "nothing.swf")
    assert str(caught.value).startswith(str(tmp_path / "nothing.swf") + ": cannot read")
    with pytest.raises(TraceError):
        read_swf(tmp_path)  # a directory
    with pytest.raises(TraceError, match="cannot read"):
        read_swf("bad\x00name.swf")


# --- errors, each with its line -------------------------------------------------------

GOOD = line()


@pytest.mark.parametrize(
    ("bad", "field", "column", "message"),
    [
        (GOOD + " 7", None, len(GOOD) + 2, "expected 18 fields, found 19"),
        (GOOD.rsplit(" ", 1)[0], None, len(GOOD) - 2, "expected 18 fields, found 17"),
        ("1 2 3", None, 6, "expected 18 fields, found 3"),
        (line(run_time="1x0"), 4, 7, "field 4 (run time): '1x0' is not a number"),
        (line(allocated_processors="4.0"), 5, 11, "field 5 (allocated processors): '4.0' is "),
        (line(user="abc"), 12, None, "field 12 (user): 'abc' is not an integer"),
        (line(allocated_processors=-4), 5, 11, "-4 is negative; only -1 (does not apply)"),
        (line(wait_time="-0.5"), 3, 5, "field 3 (wait time): -0.5 is negative"),
        (line(submit_time=-1), 2, 3, "field 2 (submit time): -1 is negative; the submit time"),
        (line(submit_time=-30), 2, 3, "-30 is negative"),
        (line(number=-1), 1, 1, "field 1 (job number): -1 is negative"),
        (line(run_time="nan"), 4, 7, "'nan' is not a finite number"),
        (line(run_time="inf"), 4, 7, "'inf' is not a finite number"),
        (line(requested_time="1e999"), 9, None, "'1e999' is not a finite number"),
        (line(allocated_processors="1_0"), 5, 11, "'1_0' is not a number"),
        (line(run_time="1_0.5"), 4, 7, "'1_0.5' is not a number"),
        (line(allocated_processors="\u0663"), 5, 11, "'\u0663' is not a number"),
        (line(allocated_processors="\uff14"), 5, 11, "is not a number"),
        (GOOD.replace(" ", "\u00a0", 1), None, 2, "non-ASCII character '\\xa0' between fields"),
        (line(status="\x00"), 11, None, "is not an integer"),
    ],
)
def test_each_bad_line_names_file_line_field_and_column(
    bad: str, field: int | None, column: int | None, message: str
) -> None:
    error = error_of(lines("; Version: 2.2", GOOD, bad))
    assert type(error) is TraceError
    assert isinstance(error, PlurmError)
    assert error.location is not None
    assert (error.location.file, error.location.line) == ("t.swf", 3)
    assert error.field == field
    if column is not None:
        assert error.location.column == column
    assert message in error.message
    rendered = str(error)
    assert rendered.startswith(f"t.swf:3:{error.location.column}: ")
    assert rendered.splitlines()[1] == "    " + bad.expandtabs(1)


def test_decreasing_submit_times_are_errors() -> None:
    text = lines(line(submit_time=100), line(number=2, submit_time=50))
    error = error_of(text)
    assert error.location is not None and error.location.line == 2 and error.field == 2
    assert error.message == (
        "field 2 (submit time): 50 is earlier than 100 on line 1; "
        "SWF job lines are sorted by submit time"
    )


def test_several_bad_lines_are_raised_together_in_line_order() -> None:
    text = lines(
        line(submit_time=0),
        line(run_time="x"),  # 2: not a number
        "just words",  # 3: the field count
        line(number=4, submit_time=5),  # 4: good
        line(allocated_processors=-3, submit_time=20),  # 5: negative
    )
    error = error_of(text)
    assert isinstance(error, TraceErrorGroup)
    assert [(e.location.line, e.field) for e in error.errors if e.location] == [
        (2, 4),
        (3, None),
        (5, 5),
    ]
    assert error.message == "3 errors in t.swf"
    assert error.location is not None and (error.location.file, error.location.line) == ("t.swf", 0)
    assert not error.truncated
    assert str(error).count("t.swf:") == 3


def test_an_out_of_order_line_is_reported_by_line() -> None:
    text = lines(line(submit_time=10), line(number=2, submit_time=5), line(number=3, submit_time=7))
    error = error_of(text)
    assert error.location is not None and error.location.line == 2  # 7 after 5 is in order


def test_collecting_stops_at_max_errors() -> None:
    text = lines(*(line(run_time="x") for _ in range(30)))
    error = error_of(text, max_errors=5)
    assert isinstance(error, TraceErrorGroup)
    assert [e.location.line for e in error.errors if e.location] == [1, 2, 3, 4, 5]
    assert error.truncated
    assert "stopped after 5 errors; there are more" in str(error)
    single = error_of(text, max_errors=1)
    assert isinstance(single, TraceErrorGroup) and len(single.errors) == 1
    assert single.truncated


def test_a_single_bad_line_is_raised_as_itself() -> None:
    error = error_of(lines(GOOD, "x"))
    assert type(error) is TraceError and error.errors == (error,)


def test_a_very_long_bad_line_is_quoted_cut() -> None:
    error = error_of("1 " * 5000)
    assert error.location is not None
    assert len(error.location.text) < 400 and error.location.text.endswith(" ...")
    assert error.location.column == 37  # field 19, the first one too many
    past_the_cut = error_of(line(user="0" * 400, group="x"))
    assert past_the_cut.field == 13
    assert past_the_cut.location is not None and past_the_cut.location.column == 0


# --- cleaning -------------------------------------------------------------------------


def trace_of(*rows: str, header: str = "") -> SwfTrace:
    return parse_swf(header + lines(*rows), "c.swf")


def test_jobs_that_did_not_run_are_dropped_and_counted() -> None:
    trace = trace_of(
        line(run_time=-1, status=5),
        line(number=2, run_time=0),
        line(number=3, run_time=7),
        line(number=4, run_time="0.4"),
    )
    cleaned = clean(trace)
    assert [job.number for job in cleaned.jobs] == [3, 4]
    outcome = cleaned.report.outcome("run-time")
    assert (outcome.action, outcome.count, outcome.examples) == ("dropped", 2, (1, 2))
    assert cleaned.report.jobs_read == 4 and cleaned.report.jobs_kept == 2


def test_jobs_that_did_not_run_can_be_kept_with_run_time_zero() -> None:
    trace = trace_of(line(run_time=-1), line(number=2, run_time=5))
    cleaned = clean(trace, keep_nonpositive_run_time=True)
    assert [job.run_time for job in cleaned.jobs] == [0, 5]
    outcome = cleaned.report.outcome("run-time")
    assert (outcome.action, outcome.count) == ("changed", 1)


def test_processors_are_requested_else_allocated_else_dropped() -> None:
    trace = trace_of(
        line(requested_processors=8, allocated_processors=4),
        line(number=2, requested_processors=-1, allocated_processors=4),
        line(number=3, requested_processors=0, allocated_processors=2),
        line(number=4, requested_processors=-1, allocated_processors=-1),
        line(number=5, requested_processors=0, allocated_processors=0),
    )
    cleaned = clean(trace)
    assert [(job.number, job.processors) for job in cleaned.jobs] == [(1, 8), (2, 4), (3, 2)]
    assert cleaned.report.outcome("processors").examples == (2, 3)
    assert cleaned.report.outcome("no-processors").examples == (4, 5)
    assert cleaned.report.outcome("no-processors").action == "dropped"


def test_missing_requested_time_is_the_run_time_by_default() -> None:
    trace = trace_of(
        line(requested_time=-1, run_time=50),
        line(number=2, requested_time=0, run_time="7.5"),
        line(number=3, requested_time=300, run_time=50),
    )
    cleaned = clean(trace)
    assert [job.requested_time for job in cleaned.jobs] == [50, 7.5, 300]
    outcome = cleaned.report.outcome("requested-time")
    assert outcome.count == 2
    assert outcome.detail == "requested time missing: set to the run time"


def test_missing_requested_time_from_the_site_maximum() -> None:
    header = "; MaxRuntime: 3600\n"
    trace = trace_of(
        line(requested_time=-1, run_time=50),
        line(number=2, requested_time=-1, run_time=5000),  # ran longer than the maximum
        header=header,
    )
    cleaned = clean(trace, requested_time=RequestedTime.SITE_MAX)
    assert [job.requested_time for job in cleaned.jobs] == [3600, 5000]
    detail = cleaned.report.outcome("requested-time").detail
    assert detail == (
        "requested time missing: set to the site maximum, 3600 s (header MaxRuntime), "
        "or the run time where longer"
    )
    given_max = clean(trace, requested_time=RequestedTime.SITE_MAX, max_runtime=60)
    assert [job.requested_time for job in given_max.jobs] == [60, 5000]
    assert "(as given)" in given_max.report.outcome("requested-time").detail
    # The maximum only matters when it is the method.
    assert [job.requested_time for job in clean(trace).jobs] == [50, 5000]


def test_the_site_maximum_must_be_known_to_be_used() -> None:
    trace = trace_of(line())
    with pytest.raises(TraceError, match="no MaxRuntime"):
        clean(trace, requested_time=RequestedTime.SITE_MAX)
    with pytest.raises(TraceError, match="not positive"):
        clean(trace, machine_size=0)
    with pytest.raises(TraceError, match="not positive"):
        clean(trace, max_runtime=-5)


def test_processors_are_clamped_to_max_procs_or_a_given_size() -> None:
    rows = (
        line(requested_processors=200),
        line(number=2, requested_processors=64),
        line(number=3, requested_processors=-1, allocated_processors=300),
    )
    cleaned = clean(trace_of(*rows, header="; MaxProcs: 128\n"))
    assert [job.processors for job in cleaned.jobs] == [128, 64, 128]
    outcome = cleaned.report.outcome("clamp")
    assert (outcome.count, outcome.examples) == (2, (2, 4))
    assert outcome.detail == "processors above 128 (header MaxProcs): clamped to it"
    assert cleaned.machine_size == 128
    smaller = clean(trace_of(*rows, header="; MaxProcs: 128\n"), machine_size=32)
    assert [job.processors for job in smaller.jobs] == [32, 32, 32]
    assert "(as given)" in smaller.report.outcome("clamp").detail


def test_without_a_machine_size_nothing_is_clamped() -> None:
    cleaned = clean(trace_of(line(requested_processors=10**6)))
    assert cleaned.jobs[0].processors == 10**6
    assert cleaned.machine_size is None
    assert cleaned.report.outcome("clamp").detail.startswith("not applied: no machine size")


def test_absolute_submit_times_are_rebased() -> None:
    rows = (line(submit_time=1641021254), line(number=2, submit_time=1641022430))
    cleaned = clean(trace_of(*rows, header="; UnixStartTime: 0\n"))
    assert [job.submit_time for job in cleaned.jobs] == [0, 1176]
    assert cleaned.unix_start_time == 1641021254
    outcome = cleaned.report.outcome("absolute-submit")
    assert (outcome.count, outcome.examples) == (2, (2, 3))
    assert outcome.detail == (
        "field 2 holds absolute Unix times (first 1641021254, UnixStartTime 0): "
        "rebased to the first submit time"
    )
    kept_absolute = clean(trace_of(*rows), rebase_submit_times=False)
    assert [job.submit_time for job in kept_absolute.jobs] == [1641021254, 1641022430]
    assert kept_absolute.unix_start_time == 0
    assert kept_absolute.report.count("absolute-submit") == 0


def test_absolute_submit_times_rebase_to_a_declared_start() -> None:
    rows = (line(submit_time=1_600_000_100),)
    cleaned = clean(trace_of(*rows, header="; UnixStartTime: 1600000000\n"))
    assert cleaned.jobs[0].submit_time == 100 and cleaned.unix_start_time == 1_600_000_000
    assert "rebased to UnixStartTime" in cleaned.report.outcome("absolute-submit").detail


def test_relative_submit_times_stay() -> None:
    rows = (line(submit_time=566129),)
    cleaned = clean(trace_of(*rows, header="; UnixStartTime: 893466664\n"))
    assert cleaned.jobs[0].submit_time == 566129 and cleaned.unix_start_time == 893466664
    outcome = cleaned.report.outcome("absolute-submit")
    assert outcome.count == 0
    assert outcome.detail == "submit times are relative to UnixStartTime (893466664)"


def test_rules_apply_in_order_and_count_a_job_once() -> None:
    # Run time -1 and no processors: dropped by the first rule only.
    trace = trace_of(line(run_time=-1, requested_processors=-1, allocated_processors=-1))
    report = clean(trace).report
    assert report.count("run-time") == 1 and report.count("no-processors") == 0


def test_examples_are_the_first_five_lines() -> None:
    trace = trace_of(*(line(number=n, run_time=0) for n in range(1, 9)))
    outcome = clean(trace).report.outcome("run-time")
    assert outcome.count == 8 and outcome.examples == (1, 2, 3, 4, 5)


def test_cleaning_leaves_the_raw_trace_alone() -> None:
    trace = trace_of(line(requested_time=-1, requested_processors=-1), header="; MaxProcs: 2\n")
    cleaned = clean(trace)
    (job,) = cleaned.jobs
    assert job.record is trace.jobs[0]
    assert (job.record.requested_time, job.record.requested_processors) == (None, None)
    assert (job.requested_time, job.processors) == (100, 2)
    assert (job.number, job.line, job.user, job.group, job.queue, job.status) == (1, 2, 3, 2, 1, 1)
    assert job.partition is None


def test_the_report_renders_as_text() -> None:
    header = "; MaxProcs: 8\n; MaxNodes: 4\n; UnixStartTime: 100\n; Partition: 1 batch\n"
    trace = trace_of(
        line(run_time=-1),
        line(number=2, requested_processors=16, partition=1),
        line(number=3, requested_time=-1, partition=1),
        header=header,
    )
    report = clean(trace).report
    assert str(report) == report.render()
    assert report.render() == "\n".join(
        [
            "c.swf: 3 jobs read, 2 kept, 1 dropped",
            "  run-time         dropped  1  run time missing or <= 0 (lines 5)",
            "  processors       changed  0  no requested processors: the allocated count used",
            "  no-processors    dropped  0  neither requested nor allocated processors",
            "  requested-time   changed  1  requested time missing: set to the run time (lines 7)",
            "  clamp            changed  1  processors above 8 (header MaxProcs): clamped to it "
            "(lines 6)",
            "  absolute-submit  changed  0  submit times are relative to UnixStartTime (100)",
            "notes:",
            "  units: fields 5 and 8 count processors: 8 on 4 nodes of 2",
            "  partitions: field 16 gives the partition of 2 jobs (the header names 1 batch)",
        ]
    )


def test_the_report_says_more_when_lines_were_left_out() -> None:
    trace = trace_of(*(line(number=n, run_time=0) for n in range(1, 8)))
    text = clean(trace).report.render()
    assert "run time missing or <= 0 (lines 1, 2, 3, 4, 5, ...)" in text
    with pytest.raises(KeyError):
        clean(trace).report.outcome("nothing")


@pytest.mark.parametrize(
    ("header", "note"),
    [
        ("", "units: the header gives no MaxProcs or MaxNodes; counts are taken as processors"),
        ("; MaxNodes: 4\n", "units: the header gives MaxNodes 4 but no MaxProcs"),
        ("; MaxProcs: 4360\n; MaxNodes: 4360\n", "units: MaxProcs equals MaxNodes (4,360): "),
        ("; MaxProcs: 10\n; MaxNodes: 4\n", "units: fields 5 and 8 count processors: MaxProcs 10,"),
        ("; MaxProcs: 10\n", "units: fields 5 and 8 count processors: MaxProcs 10"),
    ],
)
def test_the_report_states_what_processor_counts_count(header: str, note: str) -> None:
    report = clean(trace_of(line(), header=header)).report
    assert report.notes[0].startswith(note)
    assert report.notes[1] == "partitions: no job gives one (field 16)"


def test_header_notices_reach_the_report() -> None:
    report = clean(trace_of(line(), header="; Preemption: Double\n")).report
    assert "Preemption: Double" in report.notes[2]


# --- fuzzing: nothing but TraceError, whatever the input -------------------------------

FUZZ = settings(
    max_examples=int(os.environ.get("PLURM_FUZZ_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
# Characters SWF is made of, plus a few that should never appear.
CHARACTERS = st.sampled_from([*"0123456789-.; \t\n:eE_", "\r", "\x00", "\xa0", "\u0663", "é"])
CHUNKS = st.one_of(
    CHARACTERS,
    st.sampled_from(["-1 ", "; MaxProcs: ", "; Note: x\n", "nan ", "1e999 ", line() + "\n"]),
)


def _check(read: Callable[[], SwfTrace]) -> None:
    """Run ``read``; an error must be a TraceError with a file, and a trace must clean."""
    try:
        trace = read()
    except TraceError as error:
        assert error.errors
        for single in error.errors:
            assert single.location is not None and single.location.file
            assert single.field is None or 1 <= single.field <= 18
            str(single)
        return
    assert isinstance(trace, SwfTrace)
    for job in trace.jobs:
        assert job.number >= 0 and job.submit_time >= 0
    submits = [job.submit_time for job in trace.jobs]
    assert submits == sorted(submits)
    cleaned = clean(trace)
    assert cleaned.report.jobs_kept == len(cleaned.jobs)
    for clean_job in cleaned.jobs:
        assert clean_job.run_time > 0 and clean_job.processors > 0
    str(cleaned.report)


@FUZZ
@given(st.lists(CHUNKS, max_size=200).map("".join))
def test_random_text_raises_only_trace_errors(text: str) -> None:
    _check(lambda: parse_swf(text, "f.swf"))


@FUZZ
@given(st.binary(max_size=400))
def test_random_bytes_raise_only_trace_errors(data: bytes) -> None:
    _check(lambda: read_swf(io.BytesIO(data), name="f.swf"))
    _check(lambda: read_swf(io.BytesIO(b"\x1f\x8b" + data), name="f.swf"))


@FUZZ
@given(st.binary(max_size=300), st.integers(0, 400), st.binary(max_size=4))
def test_damaged_gzip_raises_only_trace_errors(data: bytes, cut: int, junk: bytes) -> None:
    packed = gzip.compress(data)
    _check(lambda: read_swf(io.BytesIO(packed[:cut] + junk), name="f.swf.gz"))


NUMBERS = st.one_of(
    st.integers(-2, 10**6),
    st.sampled_from([-1, 0, 1]),
    st.floats(-2, 1e6, allow_nan=False).map(lambda x: f"{x:.2f}"),
)


@st.composite
def numeric_lines(draw: st.DrawFn) -> str:
    """Lines of SWF-like numbers: sometimes valid, sometimes a field off or a value bad."""
    rows = []
    for _ in range(draw(st.integers(0, 8))):
        width = draw(st.sampled_from([18, 18, 18, 17, 19]))
        rows.append(" ".join(str(draw(NUMBERS)) for _ in range(width)))
    return "\n".join(rows)


@FUZZ
@given(numeric_lines())
def test_numeric_noise_raises_only_trace_errors(text: str) -> None:
    _check(lambda: parse_swf(text, "f.swf"))


def _outcome(text: str) -> object:
    """What reading ``text`` gives: its jobs, or its errors' messages and truncation."""
    try:
        return parse_swf(text, "f.swf", max_errors=3).jobs
    except TraceError as error:
        return [str(single) for single in error.errors], getattr(error, "truncated", False)


@FUZZ
@given(st.lists(numeric_lines(), min_size=1, max_size=4).map("\n".join), st.integers(1, 4))
def test_reading_by_chunks_changes_nothing(text: str, chunk: int) -> None:
    """Rows are converted a chunk at a time; chunks of a few rows give the same jobs, and
    the same errors (cut to max_errors), as one chunk of the whole file."""
    from plurm.workload import swf

    whole = _outcome(text)
    saved = swf._CHUNK_ROWS
    swf._CHUNK_ROWS = chunk
    try:
        assert _outcome(text) == whole
    finally:
        swf._CHUNK_ROWS = saved


@st.composite
def valid_jobs(draw: st.DrawFn) -> list[list[int | float]]:
    jobs = []
    submit: int | float = 0
    for number in range(1, draw(st.integers(1, 6)) + 1):
        submit += draw(st.one_of(st.integers(0, 1000), st.sampled_from([0.5, 2.25])))
        row: list[int | float] = [number, submit]
        for field in range(3, 19):
            choices = st.one_of(st.just(-1), st.integers(0, 10**7))
            if field in TIME_FIELDS:
                choices = st.one_of(choices, st.sampled_from([0.5, 12.75, 1e3 + 0.125]))
            row.append(draw(choices))
        jobs.append(row)
    return jobs


@FUZZ
@given(valid_jobs())
def test_valid_lines_read_back_exactly(jobs: list[list[int | float]]) -> None:
    text = "\n".join(" ".join(map(str, row)) for row in jobs)
    trace = parse_swf(text)
    for row, job in zip(jobs, trace.jobs, strict=True):
        expected = [None if value == -1 and index > 1 else value for index, value in enumerate(row)]
        assert [getattr(job, name) for name in ATTRIBUTES] == expected


# --- the real traces ------------------------------------------------------------------

TRACES = SHARED / "traces"
TRACE_FILES = sorted(TRACES.glob("*.swf.gz")) if TRACES.is_dir() else []
needs_traces = pytest.mark.skipif(not TRACE_FILES, reason="../shared/traces is not beside the repo")

# Jobs per file (traces/README.md), and what cleaning keeps of them (run time > 0, with a
# processor count: the same 54,034 SDSC-SP2 jobs and 36,600 Atlas jobs AccaSim used, per
# workloads-and-metrics.md §5.5).
EXPECTED = {
    "NASA-iPSC-1993-3.1-cln.swf.gz": (18_239, 18_066),
    "SDSC-SP2-1998-4.2-cln.swf.gz": (59_715, 54_034),
    "LLNL-Atlas-2006-2.1-cln.swf.gz": (43_778, 36_600),
    "theta_2022.swf.gz": (23_911, 23_911),
}


@needs_traces
@pytest.mark.parametrize("path", TRACE_FILES, ids=lambda path: path.name)
def test_every_real_trace_reads_and_cleans(path: Path) -> None:
    trace = read_swf(path)
    assert trace.jobs and trace.notices == ()
    cleaned = clean(trace)
    assert cleaned.report.jobs_read == len(trace.jobs)
    assert all(job.run_time > 0 and job.processors > 0 for job in cleaned.jobs)
    assert all(job.requested_time > 0 for job in cleaned.jobs)
    if cleaned.machine_size is not None:
        assert all(job.processors <= cleaned.machine_size for job in cleaned.jobs)
    assert cleaned.report.render().startswith(f"{path}: {len(trace.jobs):,} jobs read")
    if path.name in EXPECTED:
        assert (len(trace.jobs), len(cleaned.jobs)) == EXPECTED[path.name]


def _trace(name: str) -> SwfTrace:
    path = TRACES / name
    if not path.is_file():
        pytest.skip(f"{path} is not there")
    return read_swf(path)


@needs_traces
def test_sdsc_sp2_has_the_documented_records() -> None:
    trace = _trace("SDSC-SP2-1998-4.2-cln.swf.gz")
    jobs = trace.jobs
    assert sum(job.run_time is None for job in jobs) == 5_671
    assert sum(job.run_time == 0 for job in jobs) == 10
    assert sum(job.status == SwfStatus.CANCELLED for job in jobs) == 16_598
    assert sum(job.requested_time is None for job in jobs) == 66
    assert any(isinstance(job.average_cpu_time, float) for job in jobs)  # decimals in field 6
    header = trace.header
    assert (header.unix_start_time, header.max_procs, header.preemption) == (
        893466664,
        128,
        Preemption.NO,
    )
    assert header.queue_names[6] == "No_Class"
    assert "Copyright" in header.keys


@needs_traces
def test_llnl_atlas_has_the_documented_records() -> None:
    trace = _trace("LLNL-Atlas-2006-2.1-cln.swf.gz")
    jobs = trace.jobs
    no_processors = [
        job for job in jobs if job.requested_processors is None and job.allocated_processors is None
    ]
    assert len(no_processors) == 4_571
    assert sum(job.requested_time is None for job in jobs) == 8_233
    assert sum(job.run_time is None or job.run_time <= 0 for job in jobs) == 7_178
    assert trace.header.partition_names == {1: "pbatch", 2: "pdebug", 3: "pbroke", 4: "moody20"}
    assert trace.header.procs_per_node == 8


@needs_traces
def test_nasa_ipsc_has_no_requested_times() -> None:
    trace = _trace("NASA-iPSC-1993-3.1-cln.swf.gz")
    assert all(job.requested_time is None for job in trace.jobs)
    assert sum(job.run_time == 0 for job in trace.jobs) == 173
    cleaned = clean(trace)
    assert cleaned.report.count("requested-time") == 18_066


@needs_traces
def test_theta_submit_times_are_absolute_and_rebased() -> None:
    trace = _trace("theta_2022.swf.gz")
    assert trace.header.unix_start_time == 0 and trace.header.procs_per_node == 1
    cleaned = clean(trace)
    assert cleaned.jobs[0].submit_time == 0
    assert cleaned.unix_start_time == trace.jobs[0].submit_time == 1641021254
    assert cleaned.report.count("absolute-submit") == 23_911
