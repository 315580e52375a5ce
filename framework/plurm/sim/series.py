"""The time series a trace replay's report draws, from its records and transitions.

* run intervals: each stretch a job spent RUNNING (a requeued job runs more than once, a
  suspended one resumes later), with the job's CPUs;
* utilization: CPUs of running jobs / all CPUs, a step function over time;
* queue length: pending jobs (submitted or requeued, not yet started), a step function;
* preemptions: when each happened and how (``requeue``, ``cancel``, ``suspend``);
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
    "accepted",
    "preemptions",
    "queue_length",
    "run_intervals",
    "utilization",
    "wait_classes",
]


@attrs.frozen
class Interval:
    """A stretch of time one job spent running."""

    job_id: int
    start: float
    end: float
    cpus: int


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


def run_intervals(
    records: Sequence[JobRecord], transitions: Iterable[Transition]
) -> list[Interval]:
    """Every running stretch, in the order they ended (a job still running at the last
    transition is cut there)."""
    jobs = accepted(records)
    since: dict[int, float] = {}
    intervals: list[Interval] = []
    last = 0.0
    for change in transitions:
        last = change.time
        record = jobs.get(change.job_id)
        if record is None:
            continue
        if change.old == "RUNNING" and change.job_id in since:
            begun = since.pop(change.job_id)
            intervals.append(Interval(change.job_id, begun, change.time, record.cpus))
        if change.new == "RUNNING":
            since[change.job_id] = change.time
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
