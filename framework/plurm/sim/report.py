"""A trace replay's report: one self-contained HTML file with the configuration's plugins and
preemption settings at the top, the summary as tables and the plots (utilization, useful and
later thrown away, and queue length as hourly or daily means over the raw series; waits per
class; preemptions; each preemption's victim run time and lost work; a Gantt chart for small
runs) embedded as base64 PNGs. On a cluster with GPUs the summary also gives the GPU jobs,
GPU utilization and the GPU-hours lost to requeue and cancel preemptions. Nothing in it
points outside the file, and nothing in it depends on when or where it was made, so the
same replay gives the same bytes.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from plurm.sim import plots, series
from plurm.sim.trace import JobRecord, Transition

__all__ = ["GANTT_MAX_JOBS", "image", "render_report", "useful_utilization", "write_report"]

#: Above this many jobs the Gantt chart is left out (one row per job stops being readable).
GANTT_MAX_JOBS = 200

STYLE = """
body { font-family: sans-serif; max-width: 60rem; margin: 1rem auto; padding: 0 1rem;
       color: #222; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; font-size: 0.9rem; }
th, td { border: 1px solid #ccc; padding: 0.2rem 0.5rem; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #f0f0f0; text-align: left; }
img { max-width: 100%; }
dt { font-weight: bold; float: left; clear: left; width: 9rem; }
dd { margin-left: 10rem; }
"""


def _seconds(value: float) -> str:
    return f"{value:,.0f} s"


def _duration(value: float) -> str:
    """Seconds, with days or hours beside a long span."""
    if value >= 3 * 86400:
        return f"{value:,.0f} s ({value / 86400:,.1f} days)"
    if value >= 3 * 3600:
        return f"{value:,.0f} s ({value / 3600:,.1f} h)"
    return _seconds(value)


def _hours(value: float) -> str:
    return f"{value:,.2f}"


def _percent(value: float) -> str:
    return f"{100 * value:.1f} %"


def _number(value: float) -> str:
    return f"{value:,.2f}"


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], numeric_from: int = 1) -> str:
    out = ["<table>", "<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>"]
    for row in rows:
        cells = [
            f'<td class="n">{html.escape(c)}</td>'
            if i >= numeric_from
            else f"<td>{html.escape(c)}</td>"
            for i, c in enumerate(row)
        ]
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def useful_utilization(summary: Mapping[str, Any], total_cpus: int) -> float:
    """The utilization less the work later thrown away (requeue and cancel preemptions):
    the share of the CPUs' time spent on work that was kept."""
    first, last = summary["utilization_window"]
    span = (last - first) * total_cpus
    lost = summary["lost_cpu_hours"] * 3600 / span if span > 0 else 0.0
    return float(summary["utilization"]) - lost


def _overall(summary: Mapping[str, Any], total_cpus: int) -> str:
    first, last = summary["utilization_window"]
    preempted = summary["preemptions"]
    rows = [
        (
            "jobs (ended, rejected)",
            f"{summary['jobs']} ({summary['ended']}, {summary['rejected']})",
        ),
        (
            "wait: mean, median, p95",
            ", ".join(_seconds(summary[k]) for k in ("wait_mean", "wait_median", "wait_p95")),
        ),
        (
            "bounded slowdown: mean, p95",
            f"{_number(summary['bounded_slowdown_mean'])}, "
            f"{_number(summary['bounded_slowdown_p95'])}",
        ),
        ("utilization", f"{_percent(summary['utilization'])} of {_duration(last - first)}"),
        (
            "useful utilization",
            f"{_percent(useful_utilization(summary, total_cpus))} "
            "(less the work requeues and cancels threw away)",
        ),
        ("makespan", _duration(summary["makespan"])),
        ("throughput", f"{_number(summary['throughput_per_hour'])} jobs/h"),
        (
            "preemptions: requeue, cancel, suspend",
            f"{preempted['requeue']}, {preempted['cancel']}, {preempted['suspend']}",
        ),
        ("lost work", f"{_hours(summary['lost_cpu_hours'])} CPU-h"),
        ("suspended", f"{_hours(summary['suspended_cpu_hours'])} CPU-h"),
    ]
    if "gpu_utilization" in summary:  # (a cluster with GPUs only)
        rows += [
            ("GPU jobs", f"{summary['gpu_jobs']:,}"),
            ("GPU utilization", _percent(summary["gpu_utilization"])),
            ("lost GPU work", f"{_hours(summary['lost_gpu_hours'])} GPU-h"),
        ]
    return _table(("figure", "value"), rows)


GROUP_HEAD = (
    "jobs",
    "ended",
    "rejected",
    "mean wait",
    "p95 wait",
    "mean bsld",
    "p95 bsld",
    "utilization",
    "preemptions (rq/ca/su)",
    "lost CPU-h",
)


def _group_row(name: str, figures: Mapping[str, Any]) -> list[str]:
    preempted = figures["preemptions"]
    return [
        name,
        str(figures["jobs"]),
        str(figures["ended"]),
        str(figures["rejected"]),
        _seconds(figures["wait_mean"]),
        _seconds(figures["wait_p95"]),
        _number(figures["bounded_slowdown_mean"]),
        _number(figures["bounded_slowdown_p95"]),
        _percent(figures["utilization"]),
        f"{preempted['requeue']}/{preempted['cancel']}/{preempted['suspend']}",
        _hours(figures["lost_cpu_hours"]),
    ]


def _groups(title: str, groups: Mapping[str, Mapping[str, Any]]) -> str:
    rows = [_group_row(name or "-", figures) for name, figures in groups.items()]
    return _table((title, *GROUP_HEAD), rows)


def _high_priority(summary: Mapping[str, Any]) -> str:
    high = summary["high_priority"]
    if not high["jobs"]:
        return (
            "<p>No job was marked high priority "
            "(see the mapping's <code>[high_priority]</code>).</p>"
        )
    rows = [
        (
            "high priority",
            str(high["jobs"]),
            _seconds(high["wait_mean"]),
            _seconds(high["wait_p95"]),
        ),
        (
            "all jobs",
            str(summary["jobs"]),
            _seconds(summary["wait_mean"]),
            _seconds(summary["wait_p95"]),
        ),
    ]
    return _table(("class", "jobs", "mean wait", "p95 wait"), rows)


def image(png: bytes, alt: str) -> str:
    """An ``<img>`` of PNG bytes, inline as a data: URI."""
    data = base64.b64encode(png).decode("ascii")
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'


def render_report(
    records: Sequence[JobRecord],
    transitions: Sequence[Transition],
    summary: Mapping[str, Any],
    total_cpus: int,
    *,
    title: str = "Plurm trace replay",
    details: Sequence[tuple[str, str]] = (),
    settings: Sequence[tuple[str, str]] = (),
    partitions: Sequence[Sequence[str]] = (),
) -> str:
    """The report as HTML text. ``details`` are (label, value) pairs shown under the title
    (the trace, the configuration, ...); ``settings`` the configuration's plugin and
    preemption settings and ``partitions`` its partitions' (name, nodes, PriorityTier,
    PreemptMode) (see :mod:`plurm.sim.settings`), shown next."""
    first, last = summary["utilization_window"]
    window = (float(first), float(last))
    intervals = series.run_intervals(records, transitions)
    preempted = series.preemptions(transitions)
    total = series.utilization(intervals, total_cpus, window[0])
    lost = series.utilization([i for i in intervals if i.lost], total_cpus, window[0])
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        '<head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title>",
        f"<style>{STYLE}</style></head>",
        "<body>",
        f"<h1>{html.escape(title)}</h1>",
    ]
    if details:
        parts.append("<dl>")
        parts += [f"<dt>{html.escape(k)}</dt><dd>{html.escape(v)}</dd>" for k, v in details]
        parts.append("</dl>")
    if settings:
        parts += ["<h2>Configuration</h2>", _table(("setting", "value"), settings, 2)]
    if partitions:
        parts.append(_table(("partition", "nodes", "PriorityTier", "PreemptMode"), partitions, 1))
    parts += [
        "<h2>Summary</h2>",
        "<p>Definitions: wait = first start &minus; submit; bounded slowdown = "
        "max(1, (wait + run) / max(run, 10 s)); utilization = CPU-seconds used / "
        f"({total_cpus} CPUs &times; the window from the first submission to the last end)"
        + (
            "; GPU utilization = GPU-seconds held by running jobs / (the cluster's GPUs "
            "&times; the same window); lost GPU work = GPU-hours of the runs requeue and "
            "cancel preemptions threw away"
            if "gpu_utilization" in summary
            else ""
        )
        + ".</p>",
        _overall(summary, total_cpus),
        "<h3>Per partition</h3>",
        _groups("partition", summary["by_partition"]),
        "<h3>Per QOS</h3>",
        _groups("QOS", summary["by_qos"]),
        "<h3>High-priority class</h3>",
        _high_priority(summary),
        "<h2>Utilization over time</h2>",
        "<p>The faint line is the raw series; the filled steps its means over each bin, the "
        "orange part the running time of attempts later thrown away by a requeue or a "
        "cancel.</p>",
        image(plots.utilization_png(total, lost, window), "utilization over time"),
        "<h2>Queue length over time</h2>",
        image(plots.queue_png(series.queue_length(records, transitions), window), "queue length"),
        "<h2>Wait-time distribution per class</h2>",
        image(plots.waits_png(series.wait_classes(records)), "wait-time distribution"),
        "<h2>Preemptions over time</h2>",
        image(plots.preemptions_png(preempted, window), "preemptions over time"),
        "<h2>Victims: run time and lost work</h2>",
        "<p>Each dot is one preemption: above, how long its victim had run since it last left "
        "the queue; below, the CPU-hours that run lost (none for a suspension), with their "
        "running total.</p>",
        image(
            plots.victims_png(series.victims(records, transitions), window),
            "victim run time and lost work",
        ),
        "<h2>Gantt chart</h2>",
    ]
    if len(records) <= GANTT_MAX_JOBS:
        parts.append(image(plots.gantt_png(records, intervals, preempted, window), "Gantt chart"))
    else:
        parts.append(
            f"<p>Left out: this run has {len(records):,} jobs, and the Gantt chart is drawn "
            f"only for runs of at most {GANTT_MAX_JOBS} (one row per job).</p>"
        )
    parts += ["</body>", "</html>", ""]
    return "\n".join(parts)


def write_report(
    path: str | Path,
    records: Sequence[JobRecord],
    transitions: Sequence[Transition],
    summary: Mapping[str, Any],
    total_cpus: int,
    *,
    title: str = "Plurm trace replay",
    details: Sequence[tuple[str, str]] = (),
    settings: Sequence[tuple[str, str]] = (),
    partitions: Sequence[Sequence[str]] = (),
) -> Path:
    """Write the report to ``path``; returns the path."""
    target = Path(path)
    text = render_report(
        records,
        transitions,
        summary,
        total_cpus,
        title=title,
        details=details,
        settings=settings,
        partitions=partitions,
    )
    target.write_text(text, encoding="utf-8")
    return target
