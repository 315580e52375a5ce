"""The cleaning rules every replay of an SWF trace applies, and the report of what they did.

Raw SWF records are not all replayable: some never ran, some lack a processor count or a
requested time, some ask for more processors than the machine has, and some traces store
absolute Unix submit times. :func:`clean` applies the rules of the project's reference
(``workloads-and-metrics.md`` §1.5) to a :class:`~plurm.workload.swf.SwfTrace` and returns
the replayable :class:`CleanJob` records with a :class:`CleaningReport` that counts, for each
rule, the jobs it dropped or changed, with up to five example line numbers.

The rules, in the order they apply (each sees only the jobs the earlier ones kept):

1. ``run-time``: a job whose run time is missing or <= 0 is dropped (mostly status 5 jobs,
   cancelled before they started). With ``keep_nonpositive_run_time`` it is kept with run
   time 0 and counted as changed instead.
2. ``processors``: the processor count is the requested one (field 8), or the allocated one
   (field 5) when no positive request is given (counted as changed); ``no-processors``: a job
   with neither is dropped.
3. ``requested-time``: a missing or non-positive requested time (field 9) is imputed, by the
   method :class:`RequestedTime` names: the job's own run time (the default), or the site
   maximum (the header's ``MaxRuntime`` or ``max_runtime``), raised to the run time where
   the job ran longer. The report names the method.
4. ``clamp``: a processor count above the machine size (``machine_size``, else the header's
   ``MaxProcs``) is lowered to it. With no size known, nothing is clamped and the report says
   so.
5. ``absolute-submit``: when the first submit time is at or past both ``UnixStartTime`` and
   1973 (10**8 s), the trace stores absolute Unix times (Theta's does, with
   ``UnixStartTime: 0``); the times are rebased to ``UnixStartTime``, or to the first submit
   when that is 0, and :attr:`CleanedTrace.unix_start_time` says which instant time 0 is.

The reference's other two rules are about meaning, not values, and the report states them as
notes: whether the processor fields count processors or nodes (the header decides: MaxProcs
against MaxNodes), and that field 16 is the partition (with the header's partition names).
The header's notices (``Preemption: Double``, values that did not read) are notes too.
"""

from __future__ import annotations

import enum

import attrs

from plurm.errors import SourceLocation, TraceError
from plurm.workload.header import SwfHeader
from plurm.workload.swf import Seconds, SwfJob, SwfTrace, gc_paused

__all__ = [
    "CleanJob",
    "CleanedTrace",
    "CleaningReport",
    "RequestedTime",
    "RuleOutcome",
    "clean",
]

#: How many example line numbers the report keeps per rule.
EXAMPLES = 5
# A relative trace starts near 0; one whose first job comes 10**8 s (3.2 years, early 1973)
# after its start is taken to hold absolute Unix times.
_ABSOLUTE_AFTER = 100_000_000


class RequestedTime(enum.Enum):
    """How :func:`clean` fills in a missing requested time (field 9)."""

    #: The job's own run time: a perfect estimate, which flatters backfilling.
    RUN_TIME = "run-time"
    #: The site maximum (header ``MaxRuntime`` or ``max_runtime=``), or the run time if longer.
    SITE_MAX = "site-max"


@attrs.frozen
class CleanJob:
    """A job ready to replay: the values the rules settled, and the record they came from.

    ``submit_time`` is seconds after :attr:`CleanedTrace.unix_start_time`; ``run_time`` is
    positive (0 only when the cleaner was told to keep such jobs); ``processors`` is positive
    and at most the machine size; ``requested_time`` is positive unless the run time is 0.
    """

    record: SwfJob
    submit_time: Seconds
    run_time: Seconds
    processors: int
    requested_time: Seconds

    @property
    def number(self) -> int:
        """The job number (field 1)."""
        return self.record.number

    @property
    def line(self) -> int:
        """The record's 1-based line in its file."""
        return self.record.line

    @property
    def user(self) -> int | None:
        return self.record.user

    @property
    def group(self) -> int | None:
        return self.record.group

    @property
    def queue(self) -> int | None:
        """The queue number (field 15); 0 is interactive."""
        return self.record.queue

    @property
    def partition(self) -> int | None:
        """The partition number (field 16): the Slurm partition, in Slurm traces."""
        return self.record.partition

    @property
    def status(self) -> int | None:
        return self.record.status


@attrs.frozen
class RuleOutcome:
    """What one rule did: ``count`` jobs ``action`` ("dropped" or "changed"), and why."""

    rule: str
    action: str
    count: int
    #: The 1-based lines of the first jobs (up to five) the rule applied to.
    examples: tuple[int, ...]
    #: What the rule does, with the method or machine size it used.
    detail: str


@attrs.frozen
class CleaningReport:
    """The counts of every cleaning rule over one trace, and notes on its meaning."""

    source: str
    jobs_read: int
    jobs_kept: int
    outcomes: tuple[RuleOutcome, ...]
    notes: tuple[str, ...] = ()

    def outcome(self, rule: str) -> RuleOutcome:
        """The outcome of ``rule`` (``run-time``, ``processors``, ``no-processors``,
        ``requested-time``, ``clamp``, ``absolute-submit``); KeyError if there is none."""
        for outcome in self.outcomes:
            if outcome.rule == rule:
                return outcome
        raise KeyError(rule)

    def count(self, rule: str) -> int:
        """How many jobs ``rule`` dropped or changed."""
        return self.outcome(rule).count

    def render(self) -> str:
        """The report as text: a summary line, a line per rule, then the notes."""
        dropped = self.jobs_read - self.jobs_kept
        lines = [
            f"{self.source}: {self.jobs_read:,} jobs read, {self.jobs_kept:,} kept, "
            f"{dropped:,} dropped"
        ]
        rule_width = max((len(outcome.rule) for outcome in self.outcomes), default=0)
        count_width = max((len(f"{outcome.count:,}") for outcome in self.outcomes), default=0)
        for outcome in self.outcomes:
            text = (
                f"  {outcome.rule:<{rule_width}}  {outcome.action:<7}  "
                f"{outcome.count:>{count_width},}  {outcome.detail}"
            )
            if outcome.examples:
                text += " (lines " + ", ".join(map(str, outcome.examples))
                text += ", ...)" if outcome.count > len(outcome.examples) else ")"
            lines.append(text)
        if self.notes:
            lines.append("notes:")
            lines += [f"  {note}" for note in self.notes]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.render()


@attrs.frozen
class CleanedTrace:
    """A trace after :func:`clean`: the jobs to replay, in submit order, and the report."""

    source: str
    header: SwfHeader
    jobs: tuple[CleanJob, ...]
    report: CleaningReport
    #: The Unix time of submit time 0 (None when the header does not say).
    unix_start_time: int | float | None
    #: The processor count jobs were clamped to (None when unknown).
    machine_size: int | None
    #: The trace's bad lines a lenient read left out (``SwfTrace.skipped``).
    skipped: tuple[TraceError, ...] = attrs.field(default=(), eq=False)


@attrs.define
class _Tally:
    """Counts the jobs one rule applies to and keeps the first few lines (mutable, internal)."""

    rule: str
    action: str
    count: int = 0
    examples: list[int] = attrs.Factory(list)

    def add(self, line: int) -> None:
        self.count += 1
        if len(self.examples) < EXAMPLES:
            self.examples.append(line)

    def outcome(self, detail: str) -> RuleOutcome:
        return RuleOutcome(self.rule, self.action, self.count, tuple(self.examples), detail)


def clean(
    trace: SwfTrace,
    *,
    machine_size: int | None = None,
    requested_time: RequestedTime = RequestedTime.RUN_TIME,
    max_runtime: Seconds | None = None,
    keep_nonpositive_run_time: bool = False,
    rebase_submit_times: bool = True,
) -> CleanedTrace:
    """Apply the cleaning rules (see the module's doc) to ``trace``; the trace is unchanged.

    ``machine_size`` overrides the header's ``MaxProcs`` and ``max_runtime`` its
    ``MaxRuntime``. Raises :class:`~plurm.errors.TraceError` when ``requested_time`` is
    ``SITE_MAX`` and no site maximum is known, or a given size or maximum is not positive.
    """
    header = trace.header
    whole_file = SourceLocation(trace.source, 0)
    if machine_size is not None and machine_size <= 0:
        raise TraceError(f"machine size {machine_size} is not positive", whole_file)
    if max_runtime is not None and max_runtime <= 0:
        raise TraceError(f"maximum run time {max_runtime} is not positive", whole_file)
    site_max = max_runtime if max_runtime is not None else header.max_runtime
    if requested_time is RequestedTime.SITE_MAX and site_max is None:
        raise TraceError(
            "requested times are to be imputed from the site maximum, but the header has no "
            "MaxRuntime and no max_runtime was given",
            whole_file,
        )
    offset, unix_start, submit_detail = _submit_base(trace, rebase_submit_times)
    rules = _Rules(
        size=machine_size if machine_size is not None else header.max_procs,
        site_max=site_max if requested_time is RequestedTime.SITE_MAX else None,
        keep_nonpositive=keep_nonpositive_run_time,
        offset=offset,
    )
    with gc_paused():
        kept = rules.apply(trace.jobs)

    rebase = _Tally("absolute-submit", "changed")
    if offset:
        rebase.count = len(kept)
        rebase.examples = [job.line for job in kept[:EXAMPLES]]
    if rules.site_max is not None:
        method = f"set to the site maximum, {rules.site_max} s"
        method += " (as given)" if max_runtime is not None else " (header MaxRuntime)"
        method += ", or the run time where longer"
    else:
        method = "set to the run time"
    size_source = "as given" if machine_size is not None else "header MaxProcs"
    outcomes = (
        rules.run_time.outcome(
            "run time missing or <= 0: kept with run time 0"
            if keep_nonpositive_run_time
            else "run time missing or <= 0"
        ),
        rules.fallback.outcome("no requested processors: the allocated count used"),
        rules.no_processors.outcome("neither requested nor allocated processors"),
        rules.requested_time.outcome(f"requested time missing: {method}"),
        rules.clamp.outcome(
            f"processors above {rules.size:,} ({size_source}): clamped to it"
            if rules.size is not None
            else "not applied: no machine size (no MaxProcs in the header, none given)"
        ),
        rebase.outcome(submit_detail),
    )
    notes = (
        _units_note(header),
        _partition_note(header, kept),
        *(str(notice) for notice in header.notices),
    )
    report = CleaningReport(trace.source, len(trace.jobs), len(kept), outcomes, notes)
    return CleanedTrace(
        trace.source, header, tuple(kept), report, unix_start, rules.size, trace.skipped
    )


@attrs.define
class _Rules:
    """Rules 1 to 4 with their settings, and the tallies they keep (mutable, internal)."""

    size: int | None
    #: The site maximum when requested times are imputed from it, else None (the run time).
    site_max: Seconds | None
    keep_nonpositive: bool
    offset: Seconds
    run_time: _Tally = attrs.Factory(
        lambda self: _Tally("run-time", "changed" if self.keep_nonpositive else "dropped"),
        takes_self=True,
    )
    fallback: _Tally = attrs.Factory(lambda: _Tally("processors", "changed"))
    no_processors: _Tally = attrs.Factory(lambda: _Tally("no-processors", "dropped"))
    requested_time: _Tally = attrs.Factory(lambda: _Tally("requested-time", "changed"))
    clamp: _Tally = attrs.Factory(lambda: _Tally("clamp", "changed"))

    def apply(self, jobs: tuple[SwfJob, ...]) -> list[CleanJob]:
        """The jobs that the rules keep, with the values they settle."""
        size, site_max, offset = self.size, self.site_max, self.offset
        kept: list[CleanJob] = []
        for job in jobs:
            run = job.run_time
            if run is None or run <= 0:
                self.run_time.add(job.line)
                if not self.keep_nonpositive:
                    continue
                run = 0
            processors = job.requested_processors
            if processors is None or processors <= 0:
                processors = job.allocated_processors
                if processors is None or processors <= 0:
                    self.no_processors.add(job.line)
                    continue
                self.fallback.add(job.line)
            wanted = job.requested_time
            if wanted is None or wanted <= 0:
                wanted = run if site_max is None else max(site_max, run)
                self.requested_time.add(job.line)
            if size is not None and processors > size:
                processors = size
                self.clamp.add(job.line)
            kept.append(CleanJob(job, job.submit_time - offset, run, processors, wanted))
        return kept


def _submit_base(trace: SwfTrace, rebase: bool) -> tuple[Seconds, int | float | None, str]:
    """The offset to subtract from submit times, the Unix time of the new 0, and the detail."""
    declared = trace.header.unix_start_time
    first = trace.jobs[0].submit_time if trace.jobs else 0
    if first < max(declared or 0, _ABSOLUTE_AFTER):
        return 0, declared, f"submit times are relative to UnixStartTime ({declared})"
    where = f"field 2 holds absolute Unix times (first {first}, UnixStartTime {declared})"
    if not rebase:
        return 0, 0, f"{where}: left as they are"
    offset = declared if declared else first
    base = "UnixStartTime" if declared else "the first submit time"
    return offset, offset, f"{where}: rebased to {base}"


def _units_note(header: SwfHeader) -> str:
    """Rule 5 of the reference: whether fields 5 and 8 count processors or nodes."""
    procs, nodes = header.max_procs, header.max_nodes
    if procs is None and nodes is None:
        return "units: the header gives no MaxProcs or MaxNodes; counts are taken as processors"
    if procs is None:
        return f"units: the header gives MaxNodes {nodes:,} but no MaxProcs"
    per_node = header.procs_per_node
    if per_node == 1:
        return (
            f"units: MaxProcs equals MaxNodes ({procs:,}): each processor in fields 5 and 8 "
            "is a whole node"
        )
    if per_node is not None:
        return f"units: fields 5 and 8 count processors: {procs:,} on {nodes:,} nodes of {per_node}"
    if nodes is not None:
        return f"units: fields 5 and 8 count processors: MaxProcs {procs:,}, MaxNodes {nodes:,}"
    return f"units: fields 5 and 8 count processors: MaxProcs {procs:,}"


def _partition_note(header: SwfHeader, jobs: list[CleanJob]) -> str:
    """Rule 6 of the reference: field 16 is the partition (the Slurm partition, for Slurm)."""
    count = sum(job.record.partition is not None for job in jobs)
    if not count:
        return "partitions: no job gives one (field 16)"
    text = f"partitions: field 16 gives the partition of {count:,} jobs"
    if header.partition_names:
        names = ", ".join(f"{number} {name}" for number, name in header.partition_names.items())
        text += f" (the header names {names})"
    return text
