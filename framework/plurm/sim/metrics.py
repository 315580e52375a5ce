"""The figures a trace replay is judged by, with the shared definitions of
../shared/reference/workloads-and-metrics.md.

* wait = first start - submit; bounded slowdown = max(1, (wait + run) / max(run, tau)), with
  tau = 10 s and run the job's total run time;
* utilization = CPU-seconds used / (CPUs x window), the window running from the first submit
  to the last end;
* makespan = last end - first submit; throughput = ended jobs per hour of makespan;
* lost work = CPU-hours thrown away by requeue and cancel preemptions; suspended CPU-hours.
* on a cluster with GPUs only (``total_gpus`` > 0): GPU utilization = GPU-seconds held by
  running jobs / (GPUs x the same window), lost GPU-hours = GPU-hours of the runs thrown away
  by requeue and cancel preemptions, and the GPU jobs; jobs.csv then has each job's GPUs,
  GPU-seconds and lost GPU-seconds. A cluster without GPUs gets none of these keys.

:func:`summarize` gives the whole run and, under ``by_partition`` and ``by_qos``, the same
figures per partition and per QOS; :func:`write_jobs_csv` writes one row per job.

When the jobs have users (a mapping's ``[associations]``), ``by_user_class`` gives the wait
and bounded slowdown of two classes of users: *heavy*, the fewest users whose jobs make up at
least half of the trace's work (CPU-seconds of the jobs that ran, the biggest users first),
and *light*, every other user. ``fairshare_factor`` sums up the fair-share factor each job
had when it first started (p5, median, p95, standard deviation: how far fair-share set the
jobs apart), when the priority plugin weighs fair-share. Both are None where they do not
apply.
"""

from __future__ import annotations

import csv
import statistics
from collections.abc import Iterable, Sequence
from typing import Any, TextIO

from plurm.sim.trace import JobRecord

__all__ = [
    "GPU_CSV_FIELDS",
    "TAU",
    "by_user_class",
    "fairshare_spread",
    "summarize",
    "write_jobs_csv",
]

#: The bounded-slowdown threshold, seconds.
TAU = 10.0

CSV_FIELDS = (
    "job_id",
    "trace_number",
    "partition",
    "qos",
    "high_priority",
    "state",
    "submit",
    "start",
    "end",
    "wait",
    "run",
    "nodes",
    "cpus",
    "preempted_requeue",
    "preempted_cancel",
    "preempted_suspend",
    "suspended",
    "lost_cpu_seconds",
    "rejected",
    "user",
    "account",
    "fairshare",
)
#: jobs.csv's columns on a cluster with GPUs, after the others.
GPU_CSV_FIELDS = ("gpus", "gpu_seconds", "lost_gpu_seconds")


def _percentile(values: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile (no interpolation), 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * fraction // 1))
    return float(ordered[int(rank) - 1])


def _figures(records: Sequence[JobRecord], total_cpus: int, total_gpus: int = 0) -> dict[str, Any]:
    ran = [r for r in records if r.start is not None and r.end is not None]
    waits = [r.wait for r in ran if r.wait is not None]
    slowdowns = [max(1.0, ((r.wait or 0.0) + r.run) / max(r.run, TAU)) for r in ran]
    first = min((r.submit for r in records), default=0.0)
    last = max((r.end for r in ran if r.end is not None), default=first)
    makespan = last - first
    used = sum(r.run * r.cpus for r in ran)
    high = [r.wait for r in ran if r.high_priority and r.wait is not None]
    figures = {
        "jobs": len(records),
        "ended": len(ran),
        "rejected": sum(1 for r in records if r.rejected is not None),
        "wait_mean": statistics.fmean(waits) if waits else 0.0,
        "wait_median": statistics.median(waits) if waits else 0.0,
        "wait_p95": _percentile(waits, 0.95),
        "bounded_slowdown_mean": statistics.fmean(slowdowns) if slowdowns else 0.0,
        "bounded_slowdown_p95": _percentile(slowdowns, 0.95),
        "utilization": used / (total_cpus * makespan) if makespan > 0 and total_cpus else 0.0,
        "utilization_window": [first, last],
        "makespan": makespan,
        "throughput_per_hour": len(ran) / (makespan / 3600) if makespan > 0 else 0.0,
        "preemptions": {
            "requeue": sum(r.preempted_requeue for r in records),
            "cancel": sum(r.preempted_cancel for r in records),
            "suspend": sum(r.preempted_suspend for r in records),
        },
        "lost_cpu_hours": sum(r.lost_cpu_seconds for r in records) / 3600,
        "suspended_cpu_hours": sum(r.suspended * r.cpus for r in records) / 3600,
        "high_priority": {
            "jobs": sum(1 for r in records if r.high_priority),
            "wait_mean": statistics.fmean(high) if high else 0.0,
            "wait_p95": _percentile(high, 0.95),
        },
    }
    if total_gpus:
        gpu_used = sum(r.gpu_seconds for r in ran)
        figures["gpu_jobs"] = sum(1 for r in records if r.gpus)
        figures["gpu_utilization"] = gpu_used / (total_gpus * makespan) if makespan > 0 else 0.0
        figures["lost_gpu_hours"] = sum(r.lost_gpu_seconds for r in records) / 3600
    return figures


def _class_figures(records: Sequence[JobRecord], users: set[str]) -> dict[str, Any] | None:
    ran = [r for r in records if r.user in users and r.start is not None and r.end is not None]
    if not ran:
        return None
    waits = [r.wait or 0.0 for r in ran]
    slowdowns = [max(1.0, ((r.wait or 0.0) + r.run) / max(r.run, TAU)) for r in ran]
    return {
        "users": len(users),
        "jobs": len(ran),
        "wait_mean": statistics.fmean(waits),
        "wait_median": statistics.median(waits),
        "bounded_slowdown_mean": statistics.fmean(slowdowns),
    }


def by_user_class(records: Sequence[JobRecord]) -> dict[str, dict[str, Any] | None]:
    """The heavy and the light users' figures (see the module's doc); None where no job
    of the class ran (every class without users)."""
    work: dict[str, float] = {}
    for record in records:
        if record.user and record.start is not None and record.end is not None:
            work[record.user] = work.get(record.user, 0.0) + record.run * record.cpus
    heavy: set[str] = set()
    total = sum(work.values())
    done = 0.0
    for user, amount in sorted(work.items(), key=lambda item: (-item[1], item[0])):
        if done >= total / 2:
            break
        heavy.add(user)
        done += amount
    return {
        "heavy": _class_figures(records, heavy),
        "light": _class_figures(records, set(work) - heavy),
    }


def fairshare_spread(records: Sequence[JobRecord]) -> dict[str, float] | None:
    """The spread of the jobs' fair-share factors at their start (None: no factors)."""
    factors = [r.fairshare for r in records if r.fairshare is not None]
    if not factors:
        return None
    return {
        "jobs": len(factors),
        "p5": _percentile(factors, 0.05),
        "median": statistics.median(factors),
        "p95": _percentile(factors, 0.95),
        "stdev": statistics.pstdev(factors),
    }


def summarize(records: Sequence[JobRecord], total_cpus: int, total_gpus: int = 0) -> dict[str, Any]:
    """The whole run's figures, plus the same per partition and per QOS, per class of
    user and the spread of fair-share factors; GPU figures when ``total_gpus``."""
    summary = _figures(records, total_cpus, total_gpus)
    summary["by_user_class"] = by_user_class(records)
    summary["fairshare_factor"] = fairshare_spread(records)
    summary["by_partition"] = {
        name: _figures([r for r in records if r.partition == name], total_cpus, total_gpus)
        for name in sorted({r.partition for r in records})
    }
    summary["by_qos"] = {
        name: _figures([r for r in records if (r.qos or "") == name], total_cpus, total_gpus)
        for name in sorted({r.qos or "" for r in records})
    }
    return summary


def write_jobs_csv(records: Iterable[JobRecord], out: TextIO, gpus: bool = False) -> None:
    """jobs.csv: one row per job; with ``gpus`` (a cluster with GPUs), the GPU columns."""
    fields = CSV_FIELDS + GPU_CSV_FIELDS if gpus else CSV_FIELDS
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(fields)
    for record in records:
        row = []
        for field in fields:
            value = getattr(record, field)
            row.append("" if value is None else value)
        writer.writerow(row)
