"""The report's plots, drawn with matplotlib's Agg renderer into PNG bytes.

matplotlib is imported only when a plot is drawn (``plurm conf check`` never pays for it), no
pyplot state is touched, and every figure is drawn under matplotlib's default style and saved
without the Software tag, so the same series give the same bytes whatever the user's
matplotlibrc says.
"""

from __future__ import annotations

import io
import math
import statistics
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from plurm.sim.series import Interval, Step, Victim, bin_width, binned_means
from plurm.sim.trace import JobRecord

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "bin_name",
    "gantt_png",
    "preemptions_png",
    "queue_png",
    "time_unit",
    "utilization_png",
    "victims_png",
    "waits_png",
]

WIDTH = 9.0
DPI = 100
MODES = ("requeue", "cancel", "suspend")
MODE_COLORS = {"requeue": "tab:orange", "cancel": "tab:red", "suspend": "tab:purple"}


def time_unit(span: float) -> tuple[float, str]:
    """The divisor and name of the unit that suits a run of ``span`` seconds."""
    if span <= 3 * 3600:
        return 1.0, "s"
    if span <= 3 * 86400:
        return 3600.0, "h"
    return 86400.0, "days"


@contextmanager
def _figure(height: float = 3.4) -> Iterator[tuple[Figure, Axes]]:
    import matplotlib.style
    from matplotlib.figure import Figure

    with matplotlib.style.context("default"):
        figure = Figure(figsize=(WIDTH, height), dpi=DPI, layout="constrained")
        yield figure, figure.add_subplot()


def _png(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None})
    return buffer.getvalue()


def _draw(height: float, draw: Callable[[Axes], None]) -> bytes:
    with _figure(height) as (figure, axes):
        draw(axes)
        return _png(figure)


def _step_xy(step: Step, end: float, unit: float) -> tuple[list[float], list[float]]:
    """The points of a step function drawn until ``end``."""
    times = [t / unit for t in step.times]
    values = list(step.values)
    if not times or end > step.times[-1]:
        times.append(end / unit)
        values.append(values[-1] if values else 0.0)
    return times, values


def bin_name(width: float) -> str:
    """How the legend names means over bins of ``width`` seconds."""
    if width == 86400:
        return "daily means"
    if width == 3600:
        return "hourly means"
    return f"{width / 60:g}-minute means"


def _bins_xy(
    means: Sequence[tuple[float, float]], end: float, unit: float
) -> tuple[list[float], list[float]]:
    """Binned means as the points of a step drawn ``where="post"`` (the last bin to ``end``)."""
    xs = [left / unit for left, _ in means] + [end / unit]
    ys = [value for _, value in means]
    return xs, [*ys, ys[-1] if ys else 0.0]


def utilization_png(
    total: Step, lost: Step, window: tuple[float, float], width: float | None = None
) -> bytes:
    """The share of CPUs in use: the raw step function faint behind its means per bin, the
    means split into useful work and work later thrown away (requeue, cancel)."""
    start, end = window
    unit, name = time_unit(end - start)
    width = width or bin_width(end - start)
    mean = total.mean(start, end)
    used = binned_means(total, start, end, width)
    wasted = binned_means(lost, start, end, width)

    def draw(axes: Axes) -> None:
        times, values = _step_xy(total, end, unit)
        axes.step(
            times,
            [100 * v for v in values],
            where="post",
            linewidth=0.5,
            color="0.55",
            alpha=0.35,
            label="in use (raw)",
        )
        xs, all_ys = _bins_xy(used, end, unit)
        _, lost_ys = _bins_xy(wasted, end, unit)
        useful_ys = [100 * (a - b) for a, b in zip(all_ys, lost_ys, strict=True)]
        top_ys = [100 * a for a in all_ys]
        axes.fill_between(
            xs,
            0,
            useful_ys,
            step="post",
            color="tab:blue",
            alpha=0.55,
            linewidth=0,
            label=f"useful ({bin_name(width)})",
        )
        if any(lost_ys):
            axes.fill_between(
                xs,
                useful_ys,
                top_ys,
                step="post",
                color="tab:orange",
                alpha=0.8,
                linewidth=0,
                label="later thrown away (requeue, cancel)",
            )
        axes.step(xs, top_ys, where="post", color="tab:blue", linewidth=1.2)
        label = f"mean {100 * mean:.1f} %"
        axes.axhline(100 * mean, color="tab:red", linestyle="--", linewidth=1, label=label)
        # Below the axes: inside, it hides a corner of the series.
        axes.figure.legend(loc="outside lower center", ncols=4, fontsize="small")
        axes.set_ylim(0, max(105.0, 105 * max(total.values, default=0.0)))
        axes.set_xlim(start / unit, max(end, start + 1) / unit)
        axes.set_xlabel(f"time since the first submission ({name})")
        axes.set_ylabel("CPUs in use (%)")
        axes.set_title(f"Utilization: {bin_name(width)} over the raw series")

    return _draw(3.9, draw)


def queue_png(step: Step, window: tuple[float, float], width: float | None = None) -> bytes:
    start, end = window
    unit, name = time_unit(end - start)
    width = width or bin_width(end - start)
    means = binned_means(step, start, end, width)

    def draw(axes: Axes) -> None:
        times, values = _step_xy(step, end, unit)
        axes.step(
            times,
            values,
            where="post",
            linewidth=0.5,
            color="tab:green",
            alpha=0.3,
            label="pending jobs (raw)",
        )
        xs, ys = _bins_xy(means, end, unit)
        axes.step(xs, ys, where="post", linewidth=1.6, color="darkgreen", label=bin_name(width))
        axes.figure.legend(loc="outside lower center", ncols=2, fontsize="small")
        axes.set_ylim(0, max(1.0, 1.05 * max(step.values, default=0.0)))
        axes.set_xlim(start / unit, max(end, start + 1) / unit)
        axes.set_xlabel(f"time since the first submission ({name})")
        axes.set_ylabel("pending jobs")
        axes.set_title(f"Queue length: {bin_name(width)} over the raw series")

    return _draw(3.7, draw)


def victims_png(found: Sequence[Victim], window: tuple[float, float]) -> bytes:
    """Per preemption, over time: the victim's run time in the attempt it cut (top) and the
    CPU-hours that attempt lost, with their running total (bottom)."""
    import matplotlib.style
    from matplotlib.figure import Figure

    start, end = window
    unit, name = time_unit(end - start)
    with matplotlib.style.context("default"):
        figure = Figure(figsize=(WIDTH, 5.2), dpi=DPI, layout="constrained")
        top, bottom = figure.subplots(2, 1, sharex=True)
        for mode in MODES:
            chosen = [v for v in found if v.mode == mode]
            if not chosen:
                continue
            times = [v.time / unit for v in chosen]
            top.scatter(
                times,
                [v.run / 3600 for v in chosen],
                s=9,
                color=MODE_COLORS[mode],
                label=f"{mode} ({len(chosen)})",
            )
            if mode != "suspend":
                bottom.scatter(
                    times,
                    [v.lost_cpu_seconds / 3600 for v in chosen],
                    s=9,
                    color=MODE_COLORS[mode],
                )
        if found:
            top.legend(loc="upper left", fontsize="small", framealpha=0.9)
        else:
            top.text(0.5, 0.5, "no preemptions in this run", ha="center", transform=top.transAxes)
        top.set_ylabel("victim's run time (h)")
        top.set_title("Per preemption: the victim's run time and the work it lost")
        total = 0.0
        xs, ys = [start / unit], [0.0]
        for v in found:
            total += v.lost_cpu_seconds / 3600
            xs.append(v.time / unit)
            ys.append(total)
        xs.append(end / unit)
        ys.append(total)
        running = bottom.twinx()
        running.step(xs, ys, where="post", color="0.3", linewidth=1.2)
        running.set_ylabel("lost so far (CPU-h, line)")
        # The same share of each axis below its 0, so that both zeros are one line.
        worst = max((v.lost_cpu_seconds / 3600 for v in found), default=0.0) or 1.0
        bottom.set_ylim(-0.04 * worst, 1.06 * worst)
        running.set_ylim(-0.04 * (total or 1.0), 1.06 * (total or 1.0))
        bottom.set_ylabel("lost per preemption (CPU-h, dots)")
        bottom.set_xlim(start / unit, max(end, start + 1) / unit)
        bottom.set_xlabel(f"time since the first submission ({name})")
        return _png(figure)


def waits_png(classes: dict[str, list[float]]) -> bytes:
    def draw(axes: Axes) -> None:
        for name, waits in classes.items():
            if not waits:
                continue
            ordered = sorted(waits)
            count = len(ordered)
            shares = [(i + 1) / count for i in range(count)]
            median = statistics.median(ordered)
            jobs = "1 job" if count == 1 else f"{count} jobs"
            label = f"{name} ({jobs}, median {median:,.0f} s)"
            axes.step([0.0, *ordered], [0.0, *shares], where="post", label=label)
        axes.set_xscale("symlog", linthresh=1.0)
        axes.set_xlim(left=0)
        axes.set_ylim(0, 1.02)
        axes.set_xlabel("wait (s, logarithmic above 1 s)")
        axes.set_ylabel("share of jobs waiting at most this long")
        axes.set_title("Wait-time distribution per class")
        axes.grid(True, linewidth=0.3)
        if not drawn:
            axes.text(0.5, 0.5, "no job started", ha="center", transform=axes.transAxes)
        elif drawn <= _LEGEND_INSIDE:
            axes.legend(loc="lower right", fontsize="small")
        else:  # one class per partition of a large cluster: the legend goes below, in columns
            axes.figure.legend(
                loc="outside lower center", ncols=_LEGEND_COLUMNS, fontsize="x-small"
            )

    drawn = sum(1 for waits in classes.values() if waits)
    rows = 0 if drawn <= _LEGEND_INSIDE else math.ceil(drawn / _LEGEND_COLUMNS)
    return _draw(3.8 + 0.17 * rows, draw)


#: Classes whose legend still fits inside the wait plot; more go below it, in columns.
_LEGEND_INSIDE = 8
_LEGEND_COLUMNS = 3


def preemptions_png(events: Sequence[tuple[float, int, str]], window: tuple[float, float]) -> bytes:
    start, end = window
    unit, name = time_unit(end - start)
    bins = 50
    width = max(end - start, 1.0) / bins

    def draw(axes: Axes) -> None:
        lefts = [(start + i * width) / unit for i in range(bins)]
        bottom = [0] * bins
        for mode in MODES:
            counts = [0] * bins
            for time, _, kind in events:
                if kind == mode:
                    counts[min(bins - 1, max(0, int((time - start) // width)))] += 1
            if any(counts):
                axes.bar(
                    lefts,
                    counts,
                    width=width / unit,
                    bottom=bottom,
                    align="edge",
                    color=MODE_COLORS[mode],
                    label=f"{mode} ({sum(counts)})",
                )
                bottom = [b + c for b, c in zip(bottom, counts, strict=True)]
        if events:
            axes.legend(loc="upper right", fontsize="small")
        else:
            axes.text(0.5, 0.5, "no preemptions in this run", ha="center", transform=axes.transAxes)
        axes.set_xlim(start / unit, (start + bins * width) / unit)
        axes.set_ylim(0, max(1, *bottom) * 1.1)
        axes.set_xlabel(f"time since the first submission ({name}; {bins} bins)")
        axes.set_ylabel("preemptions per bin")
        axes.set_title("Preemptions over time")

    return _draw(3.4, draw)


def gantt_png(
    records: Sequence[JobRecord],
    intervals: Sequence[Interval],
    events: Sequence[tuple[float, int, str]],
    window: tuple[float, float],
) -> bytes:
    """One row per accepted job, in trace order: a thin line from its submission to its end,
    a bar per run (red for high-priority jobs), a cross where it was preempted."""
    start, end = window
    unit, name = time_unit(end - start)
    rows = {r.job_id: i for i, r in enumerate(r for r in records if r.rejected is None)}
    by_job = {r.job_id: r for r in records if r.rejected is None}
    height = min(24.0, max(3.0, 0.09 * len(rows) + 1.5))

    def draw(axes: Axes) -> None:
        for job_id, row in rows.items():
            record = by_job[job_id]
            gone = record.end if record.end is not None else end
            axes.hlines(row, record.submit / unit, gone / unit, color="0.6", linewidth=0.8)
        for interval in intervals:
            if interval.job_id not in rows:
                continue
            high = by_job[interval.job_id].high_priority
            axes.broken_barh(
                [(interval.start / unit, (interval.end - interval.start) / unit)],
                (rows[interval.job_id] - 0.4, 0.8),
                color="tab:red" if high else "tab:blue",
            )
        for time, job_id, mode in events:
            if job_id in rows:
                axes.plot(
                    time / unit, rows[job_id], marker="x", color=MODE_COLORS[mode], markersize=5
                )
        axes.set_ylim(len(rows) - 0.5, -0.5)
        axes.set_xlim(start / unit, max(end, start + 1) / unit)
        labels = [str(r.trace_number) for r in by_job.values()]
        if len(rows) <= 40:
            axes.set_yticks(range(len(rows)), labels)
        else:
            from matplotlib.ticker import FuncFormatter, MaxNLocator

            def label(value: float, _: object) -> str:
                row = round(value)
                return labels[row] if row == value and 0 <= row < len(labels) else ""

            axes.yaxis.set_major_locator(MaxNLocator(integer=True))
            axes.yaxis.set_major_formatter(FuncFormatter(label))
        axes.set_ylabel("job (its number in the trace)")
        axes.set_xlabel(f"time since the first submission ({name})")
        axes.set_title(
            "Jobs: submitted to ended (grey), running (blue; red: high priority), preempted (x)"
        )

    return _draw(height, draw)
