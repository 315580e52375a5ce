"""``compare.html``: a comparison as one self-contained page (inline style, PNGs as data: URIs,
no script, no link; the same runs give the same bytes).

In order: what was replayed and what each run changed; the configurations' plugin and
preemption settings, one column per run; the figures the comparison is judged by (lost
CPU-hours, preemptions, high-priority p95 wait, everyone's mean wait, bounded slowdown,
utilization and useful utilization), the best of each row in bold, then every figure of
``compare.md``; a scatter of lost work against high-priority p95 wait, one point per run (named
on the plot when there are few runs, numbered when more), with a key table of the runs'
numbers, names, colours and the two figures; each run's utilization side by side (means per
hour or day over the faint raw series, the work later thrown away apart); queue length and the
lost work so far, one line per run; the wait distributions; each run's preemptions with their
victims' run time; the failed runs.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from plurm.sim import compare_plots
from plurm.sim.compare import Comparison, RunResult, rows_for
from plurm.sim.plots import bin_name
from plurm.sim.report import image, useful_utilization
from plurm.sim.runseries import RunSeries
from plurm.sim.series import bin_width, binned_means
from plurm.workload import CleanedTrace

__all__ = ["GPU_HEADLINE", "HEADLINE", "headline_value", "render_page"]

STYLE = """
body { font-family: sans-serif; max-width: 78rem; margin: 1rem auto; padding: 0 1rem;
       color: #222; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; font-size: 0.9rem; }
th, td { border: 1px solid #ccc; padding: 0.2rem 0.5rem; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
span.dot { font-size: 1.1rem; }
th { background: #f0f0f0; text-align: left; }
tr.differs th { background: #fde8c8; }
img { max-width: 100%; }
div.wide { overflow-x: auto; }
div.wide td { max-width: 15rem; overflow-wrap: break-word; }
div.wide tr > :first-child { position: sticky; left: 0; z-index: 1; }
div.wide tr:first-child > :first-child { background: #fff; }
pre { background: #f6f6f6; padding: 0.5rem; overflow-x: auto; }
"""


def _preemptions(summary: Mapping[str, Any]) -> float:
    return float(sum(summary["preemptions"].values()))


#: The figures the comparison is judged by: (label, value of a summary and the run's CPUs,
#: format, whether lower is better).
HEADLINE: tuple[tuple[str, Callable[[Mapping[str, Any], int], float], str, bool], ...] = (
    ("lost CPU-hours", lambda s, _: s["lost_cpu_hours"], ",.2f", True),
    ("preemptions (all modes)", lambda s, _: _preemptions(s), ",.0f", True),
    ("high-priority p95 wait (s)", lambda s, _: s["high_priority"]["wait_p95"], ",.1f", True),
    ("high-priority mean wait (s)", lambda s, _: s["high_priority"]["wait_mean"], ",.1f", True),
    ("everyone's mean wait (s)", lambda s, _: s["wait_mean"], ",.1f", True),
    ("mean bounded slowdown", lambda s, _: s["bounded_slowdown_mean"], ",.2f", True),
    ("p95 bounded slowdown", lambda s, _: s["bounded_slowdown_p95"], ",.2f", True),
    ("utilization", lambda s, _: 100 * s["utilization"], ".1f", False),
    ("useful utilization", lambda s, cpus: 100 * useful_utilization(s, cpus), ".1f", False),
)


#: Headline figures of runs on a cluster with GPUs, after the others when a run had GPUs.
GPU_HEADLINE: tuple[tuple[str, Callable[[Mapping[str, Any], int], float], str, bool], ...] = (
    ("GPU utilization", lambda s, _: 100 * s.get("gpu_utilization", 0.0), ".1f", False),
    ("lost GPU-hours", lambda s, _: s.get("lost_gpu_hours", 0.0), ",.2f", True),
)


def headline_value(label: str, summary: Mapping[str, Any], total_cpus: int) -> float:
    """The headline figure ``label`` of one run (utilizations in per cent)."""
    for name, value, _, _ in HEADLINE:
        if name == label:
            return float(value(summary, total_cpus))
    raise KeyError(label)


def _escape(text: object) -> str:
    return html.escape(str(text))


def _breakable(text: object) -> str:
    """``text`` escaped, where a line may break after each ``,``, ``=``, ``/`` and ``_`` (a
    settings cell such as ``victims=least_lost_work,max_job_preempt=1`` then wraps at those
    and not in the middle of a word, as many runs' narrow columns need)."""
    escaped = _escape(text)
    for mark in (",", "=", "/", "_"):
        escaped = escaped.replace(mark, mark + "<wbr>")
    return escaped


def _head_row(names: Sequence[str]) -> str:
    return "<tr><th></th>" + "".join(f"<th>{_escape(n)}</th>" for n in names) + "</tr>"


def _headline_table(results: Sequence[RunResult]) -> str:
    ran = [r for r in results if r.summary is not None and r.series is not None]
    rows = ["<table>", _head_row([r.name for r in ran])]
    gpus = any(r.summary is not None and "gpu_utilization" in r.summary for r in ran)
    for label, value, fmt, lower in HEADLINE + (GPU_HEADLINE if gpus else ()):
        values = [
            float(value(r.summary, r.series.total_cpus))
            for r in ran
            if r.summary is not None and r.series is not None
        ]
        best = (min(values) if lower else max(values)) if values else None
        spread = len(set(values)) > 1
        cells = []
        for number in values:
            text = format(number, fmt) + (" %" if "utilization" in label else "")
            if spread and number == best:
                text = f"<strong>{_escape(text)}</strong>"
            else:
                text = _escape(text)
            cells.append(f'<td class="n">{text}</td>')
        rows.append(f"<tr><th>{_escape(label)}</th>{''.join(cells)}</tr>")
    rows.append("</table>")
    return "\n".join(rows)


def _full_table(results: Sequence[RunResult]) -> str:
    rows = ["<table>", _head_row([r.name for r in results])]
    left_out = []
    for row in rows_for(results):
        values = [None if r.summary is None else row.value(r.summary) for r in results]
        if all(value is None for value in values):
            left_out.append(row.label)
            continue
        cells = "".join(
            f'<td class="n">{_escape("failed" if r.summary is None else row.show(r.summary))}</td>'
            for r in results
        )
        rows.append(f"<tr><th>{_escape(row.label)}</th>{cells}</tr>")
    rows.append("</table>")
    if left_out:
        rows.append(
            "<p>Left out, n/a in every run (no users, or no fair-share weight): "
            + "; ".join(_escape(label) for label in left_out)
            + "</p>"
        )
    return "\n".join(rows)


def _settings_table(comparison: Comparison, results: Sequence[RunResult]) -> str:
    ran = [(r, dict(r.series.settings)) for r in results if r.series is not None]
    keys: list[str] = []
    for _, pairs in ran:
        keys += [key for key in pairs if key not in keys]
    values = [pairs for _, pairs in ran]
    names = [r.name for r, _ in ran]
    rows = ["<table>", _head_row(names)]
    changes = {run.name: run.describe() for run in comparison.runs}
    confs = {run.name: run.conf_path for run in comparison.runs}
    for label, cells in (
        ("slurm.conf", [confs.get(name, "") for name in names]),
        ("keys set", [changes.get(name, "") for name in names]),
    ):
        rows.append(
            f"<tr><th>{label}</th>" + "".join(f"<td>{_breakable(c)}</td>" for c in cells) + "</tr>"
        )
    for key in keys:
        cells = [pairs.get(key, "-") for pairs in values]
        marked = ' class="differs"' if len(set(cells)) > 1 else ""
        rows.append(
            f"<tr{marked}><th>{_escape(key)}</th>"
            + "".join(f"<td>{_breakable(c)}</td>" for c in cells)
            + "</tr>"
        )
    rows.append("</table>")
    return "\n".join(rows)


def _window(drawn: Sequence[RunSeries]) -> tuple[float, float]:
    return min(s.window[0] for s in drawn), max(s.window[1] for s in drawn)


def _key_table(points: Sequence[tuple[str, float, float]]) -> str:
    """The scatter's key: each run's number, colour, name and the two figures it plots."""
    rows = [
        '<table class="key">',
        "<tr><th>#</th><th>run</th><th>lost CPU-hours</th><th>high-priority p95 wait (s)</th></tr>",
    ]
    for index, (name, lost, wait) in enumerate(points):
        dot = f'<span class="dot" style="color: {compare_plots.run_color(index)}">&#9679;</span>'
        rows.append(
            f'<tr><td class="n">{dot} {index + 1}</td><td>{_escape(name)}</td>'
            f'<td class="n">{lost:,.2f}</td><td class="n">{wait:,.1f}</td></tr>'
        )
    rows.append("</table>")
    return "\n".join(rows)


def _plots(results: Sequence[RunResult]) -> list[str]:
    ran = [(r.name, r.series, r.summary) for r in results if r.series and r.summary]
    if not ran:
        return []
    drawn = [s for _, s, _ in ran]
    window = _window(drawn)
    start, end = window
    width = bin_width(end - start)
    points = [
        (name, summary["lost_cpu_hours"], summary["high_priority"]["wait_p95"])
        for name, _, summary in ran
    ]
    queues = []
    lost_so_far = []
    for name, run, _ in ran:
        means = binned_means(run.queue, start, end, width)
        ys = [value for _, value in means]
        queues.append((name, [left for left, _ in means] + [end], [*ys, ys[-1] if ys else 0.0]))
        total, xs, totals = 0.0, [start], [0.0]
        for victim in run.victims:
            total += victim.lost_cpu_seconds / 3600
            xs.append(victim.time)
            totals.append(total)
        lost_so_far.append((name, [*xs, end], [*totals, total]))
    unit = bin_name(width)
    labelled = (
        "named beside it"
        if compare_plots.scatter_named(len(points))
        else "numbered as in the key below"
    )
    return [
        "<h2>Lost work against high-priority wait</h2>",
        "<p>One point per run, " + labelled + ": the CPU-hours thrown away by requeue and "
        "cancel preemptions, against the 95th percentile of the high-priority class's waits. "
        "The numbers and colours are the runs' in every plot below.</p>",
        image(compare_plots.scatter_png(points), "lost work against high-priority p95 wait"),
        _key_table(points),
        "<h2>Utilization, side by side</h2>",
        image(
            compare_plots.utilization_grid_png(
                [(name, run.used, run.lost, run.window) for name, run, _ in ran], window, width
            ),
            "utilization per run",
        ),
        "<h2>Queue length and lost work over time</h2>",
        image(
            compare_plots.overlaid_png(
                queues, window, title=f"Queue length ({unit})", ylabel="pending jobs"
            ),
            "queue length per run",
        ),
        image(
            compare_plots.overlaid_png(
                lost_so_far,
                window,
                title="Work lost so far to requeue and cancel preemptions",
                ylabel="CPU-hours",
            ),
            "lost work so far per run",
        ),
        "<h2>Wait-time distributions</h2>",
        image(
            compare_plots.waits_png([(name, run.waits, run.high_waits) for name, run, _ in ran]),
            "wait-time distributions",
        ),
        "<h2>Preemptions and their victims, side by side</h2>",
        image(
            compare_plots.victims_grid_png([(name, run.victims) for name, run, _ in ran], window),
            "victims per run",
        ),
    ]


def render_page(comparison: Comparison, results: Sequence[RunResult], trace: CleanedTrace) -> str:
    """The page as HTML text (the runs without series, failed ones included, are in the
    tables and the failures section only)."""
    title = comparison.title or f"Comparison of {len(results)} runs"
    cut = f" (the first {comparison.jobs:,})" if comparison.jobs is not None else ""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        '<head><meta charset="utf-8">',
        f"<title>{_escape(title)}</title>",
        f"<style>{STYLE}</style></head>",
        "<body>",
        f"<h1>{_escape(title)}</h1>",
        f"<p>Trace <code>{_escape(comparison.trace)}</code>: {len(trace.jobs):,} cleaned jobs "
        f"replayed{cut}. Base configuration <code>{_escape(comparison.base_conf or '-')}</code>."
        "</p>",
        "<h2>Configurations</h2>",
        "<p>The plugins and preemption settings of each run; a row whose values differ is "
        "shaded.</p>",
        '<div class="wide">',
        _settings_table(comparison, results),
        "</div>",
        "<h2>Figures</h2>",
        "<p>The best of each row in bold. Useful utilization leaves out the work later thrown "
        "away by requeue and cancel.</p>",
        '<div class="wide">',
        _headline_table(results),
        "</div>",
        "<h3>Every figure (as compare.md)</h3>",
        '<div class="wide">',
        _full_table(results),
        "</div>",
        *_plots(results),
    ]
    failed = [r for r in results if r.error is not None]
    if failed:
        parts.append("<h2>Failed runs</h2>")
        for result in failed:
            parts += [f"<h3>{_escape(result.name)}</h3>", f"<pre>{_escape(result.error)}</pre>"]
    parts += ["</body>", "</html>", ""]
    return "\n".join(parts)
