"""The time series a trace replay's report draws, from its records and transitions.

* run intervals: each stretch a job spent RUNNING (a requeued job runs more than once, a
  suspended one resumes later), with the job's CPUs;
* utilization: CPUs of running jobs / all CPUs, a step function over time;
* queue length: pending jobs (submitted or requeued, not yet started), a step function;
* preemptions: when each happened and how (``requeue``, ``cancel``, ``suspend``), and per
  preemption the victim's run time in the attempt it cut and the work that attempt lost;
* lost work: the running stretches of attempts later thrown away (a requeue sends the job
  back to the queue, a cancel ends it), apart from the useful ones;
* binned means: a step function's time-weighted mean per hour or per day (by the span), to
  draw over the raw series;
* waits per class: everyone, high priority and the rest, each partition, each QOS.

CPUs are the jobs' requested CPUs, as :mod:`plurm.sim.metrics` counts them, so the mean of the
utilization series over the metrics' window is the summary's utilization.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

import attrs

from plurm.sim.trace import JobRecord, Transition

__all__ = [
    "Interval",
    "Step",
    "Victim",
    "accepted",
    "bin_width",
    "binned_means",
    "preemptions",
    "queue_length",
    "run_intervals",
    "utilization",
    "victims",
    "wait_classes",
]


@attrs.frozen
class Interval:
    """A stretch of time one job spent running; ``lost`` when its attempt was later thrown
    away (the job requeued or cancelled by a preemption, or requeued otherwise)."""

    job_id: int
    start: float
    end: float
    cpus: int
    lost: bool = False


@attrs.frozen
class Step:
    """A step function: ``values[i]`` holds from ``times[i]`` until ``times[i + 1]`` (the last
    one until the end of the run)."""

    times: tuple[float, ...]
    values: tuple[float, ...]

    def mean(self, start: float, end: float) -> float:
        """The time-weighted mean over [start, end] (0 before the first step)."""
        if end <= start:
            return 0.0
        total = 0.0
        for i, (time, value) in enumerate(zip(self.times, self.values, strict=True)):
            until = self.times[i + 1] if i + 1 < len(self.times) else end
            low, high = max(time, start), min(until, end)
            if high > low:
                total += value * (high - low)
        return total / (end - start)


def accepted(records: Iterable[JobRecord]) -> dict[int, JobRecord]:
    """The records of the jobs the controller accepted, by job id."""
    return {r.job_id: r for r in records if r.rejected is None}


#: Jobs in these states hold their allocation: leaving one for PENDING is a requeue.
_HOLDING = frozenset({"RUNNING", "SUSPENDED", "COMPLETING"})


def _thrown_away(change: Transition) -> bool:
    """The change ends an attempt whose work is lost, as the job's record counts it."""
    return change.new == "PREEMPTED" or (change.new == "PENDING" and change.old in _HOLDING)


def run_intervals(
    records: Sequence[JobRecord], transitions: Iterable[Transition]
) -> list[Interval]:
    """Every running stretch, in the order they ended (a job still running at the last
    transition is cut there), each marked ``lost`` when its attempt was thrown away."""
    jobs = accepted(records)
    since: dict[int, float] = {}
    intervals: list[Interval] = []
    attempt: dict[int, list[int]] = {}  # the current attempt's intervals, by index
    last = 0.0
    for change in transitions:
        last = change.time
        record = jobs.get(change.job_id)
        if record is None:
            continue
        if change.old == "RUNNING" and change.job_id in since:
            begun = since.pop(change.job_id)
            attempt.setdefault(change.job_id, []).append(len(intervals))
            intervals.append(Interval(change.job_id, begun, change.time, record.cpus))
        if change.new == "RUNNING":
            since[change.job_id] = change.time
            if change.old == "PENDING":
                attempt[change.job_id] = []
        elif _thrown_away(change):
            for index in attempt.pop(change.job_id, []):
                intervals[index] = attrs.evolve(intervals[index], lost=True)
    for job_id, begun in since.items():
        intervals.append(Interval(job_id, begun, last, jobs[job_id].cpus))
    return intervals


def _steps(changes: dict[float, float], start: float) -> Step:
    """Accumulate net changes per instant into a step function starting at 0 at ``start``."""
    times = [start]
    values = [0.0]
    level = 0.0
    for time in sorted(changes):
        if changes[time] == 0:
            continue
        level += changes[time]
        if time == times[-1]:
            values[-1] = level
        else:
            times.append(time)
            values.append(level)
    return Step(tuple(times), tuple(values))


def _window_start(records: Sequence[JobRecord]) -> float:
    return min((r.submit for r in records), default=0.0)


def utilization(intervals: Iterable[Interval], total_cpus: int, start: float = 0.0) -> Step:
    """The fraction of all CPUs held by running jobs."""
    changes: dict[float, float] = defaultdict(float)
    for interval in intervals:
        changes[interval.start] += interval.cpus
        changes[interval.end] -= interval.cpus
    steps = _steps(changes, start)
    share = 1.0 / total_cpus if total_cpus else 0.0
    return Step(steps.times, tuple(value * share for value in steps.values))


def queue_length(records: Sequence[JobRecord], transitions: Iterable[Transition]) -> Step:
    """Jobs pending: in at submission and on each return to the queue, out when they leave
    it (to run, or cancelled)."""
    jobs = accepted(records)
    changes: dict[float, float] = defaultdict(float)
    for record in jobs.values():
        changes[record.submit] += 1
    for change in transitions:
        if change.job_id not in jobs or change.old == change.new:
            continue
        if change.old == "PENDING":
            changes[change.time] -= 1
        elif change.new == "PENDING":
            changes[change.time] += 1
    return _steps(changes, _window_start(records))


@attrs.frozen
class Victim:
    """One preemption: when it took effect, the victim, how (``requeue``, ``cancel``,
    ``suspend``), the seconds the victim had run in the attempt it cut (since it last left
    the queue; suspended time excluded) and the CPU-seconds that attempt lost (0 for a
    suspension, whose work is kept)."""

    time: float
    job_id: int
    mode: str
    run: float
    lost_cpu_seconds: float


def victims(records: Sequence[JobRecord], transitions: Iterable[Transition]) -> list[Victim]:
    """Every preemption with its victim's run time and lost work, in time order. The lost
    work of requeues and cancels adds up to the records' ``lost_cpu_seconds`` (every requeue
    of a trace replay is a preemption)."""
    jobs = accepted(records)
    since: dict[int, float] = {}
    ran: dict[int, float] = {}
    found: list[Victim] = []
    for change in transitions:
        record = jobs.get(change.job_id)
        if record is None:
            continue
        job = change.job_id
        if change.old == "RUNNING" and job in since:
            ran[job] = ran.get(job, 0.0) + change.time - since.pop(job)
        if change.new == "RUNNING":
            since[job] = change.time
            if change.old == "PENDING":
                ran[job] = 0.0
        if change.preempted is not None:
            run = ran.get(job, 0.0)
            lost = 0.0 if change.preempted == "suspend" else run * record.cpus
            found.append(Victim(change.time, job, change.preempted, run, lost))
        if _thrown_away(change):
            ran.pop(job, None)
    return found


def bin_width(span: float) -> float:
    """The width of the bins to average a series of ``span`` seconds over: 10 minutes up to
    12 hours, an hour up to 7 days, a day beyond."""
    if span <= 12 * 3600:
        return 600.0
    if span <= 7 * 86400:
        return 3600.0
    return 86400.0


def binned_means(step: Step, start: float, end: float, width: float) -> list[tuple[float, float]]:
    """(bin start, time-weighted mean of ``step`` over the bin) for the bins of ``width``
    seconds from ``start``; the last bin stops at ``end``. One pass over the steps, so a
    year of changes takes no longer than drawing them."""
    if end <= start or width <= 0:
        return []
    count = max(1, -int(-(end - start) // width))
    sums = [0.0] * count
    times, values = step.times, step.values
    for i, value in enumerate(values):
        low = max(times[i], start)
        high = min(times[i + 1] if i + 1 < len(times) else end, end)
        if high <= low or not value:
            continue
        first = int((low - start) // width)
        while low < high:
            until = min(high, start + (first + 1) * width)
            sums[min(first, count - 1)] += value * (until - low)
            low = until
            first += 1
    out = []
    for i, total in enumerate(sums):
        left = start + i * width
        out.append((left, total / (min(left + width, end) - left)))
    return out


def preemptions(transitions: Iterable[Transition]) -> list[tuple[float, int, str]]:
    """(time, job id, mode) of every preemption, in time order."""
    return [(c.time, c.job_id, c.preempted) for c in transitions if c.preempted is not None]


def wait_classes(records: Sequence[JobRecord]) -> dict[str, list[float]]:
    """Waits of the jobs that started, per class: ``all``; ``high priority`` and ``normal``
    when some jobs are high priority; ``partition P`` when there are several partitions;
    ``QOS Q`` when there are several QOS (``QOS -`` for none). A class holding the same jobs
    as one before it is left out."""
    started = [r for r in records if r.wait is not None]
    classes: dict[str, list[float]] = {}
    seen: set[tuple[int, ...]] = set()

    def add(name: str, chosen: Iterable[JobRecord]) -> None:
        members = [r for r in chosen if r.wait is not None]
        key = tuple(id(r) for r in members)
        if key not in seen:  # the same jobs under another name: drawn once
            seen.add(key)
            classes[name] = [r.wait for r in members if r.wait is not None]

    add("all", started)

    if any(r.high_priority for r in records):
        add("high priority", (r for r in started if r.high_priority))
        add("normal", (r for r in started if not r.high_priority))
    partitions = sorted({r.partition for r in records if r.rejected is None})
    if len(partitions) > 1:
        for name in partitions:
            add(f"partition {name}", (r for r in started if r.partition == name))
    qos = sorted({r.qos or "" for r in records if r.rejected is None})
    if len(qos) > 1:
        for name in qos:
            add(f"QOS {name or '-'}", (r for r in started if (r.qos or "") == name))
    return classes
