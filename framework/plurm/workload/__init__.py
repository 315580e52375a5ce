"""Workload traces for the simulator: the Standard Workload Format (SWF v2.2), read and cleaned.

``swf``     a trace file (plain, gzip, or a stream) -> :class:`SwfTrace`: the typed header and one
            frozen :class:`SwfJob` per job line, -1 read as None
``header``  the ``; Key: value`` comment lines -> :class:`SwfHeader` (raw and typed)
``clean``   the reference's cleaning rules -> :class:`CleanedTrace`: replayable
            :class:`CleanJob` records and a :class:`CleaningReport` of what each rule did

Reading and cleaning are separate so that the raw records stay available::

    trace = read_swf("SDSC-SP2-1998-4.2-cln.swf.gz")
    cleaned = clean(trace)
    print(cleaned.report)

Bad input raises only :class:`~plurm.errors.TraceError` (with the file, line and field).
"""

from __future__ import annotations

from plurm.errors import TraceError, TraceErrorGroup
from plurm.workload.clean import (
    CleanedTrace,
    CleaningReport,
    CleanJob,
    RequestedTime,
    RuleOutcome,
    clean,
)
from plurm.workload.header import AllowOveruse, Preemption, SwfHeader, TraceNotice
from plurm.workload.swf import (
    FIELD_NAMES,
    TIME_FIELDS,
    Seconds,
    SwfJob,
    SwfStatus,
    SwfTrace,
    parse_swf,
    read_swf,
    skipped_message,
)

__all__ = [
    "FIELD_NAMES",
    "TIME_FIELDS",
    "AllowOveruse",
    "CleanJob",
    "CleanedTrace",
    "CleaningReport",
    "Preemption",
    "RequestedTime",
    "RuleOutcome",
    "Seconds",
    "SwfHeader",
    "SwfJob",
    "SwfStatus",
    "SwfTrace",
    "TraceError",
    "TraceErrorGroup",
    "TraceNotice",
    "clean",
    "parse_swf",
    "read_swf",
    "skipped_message",
]
