"""The comparison page's plots, one figure each with every run in it, drawn with matplotlib's
Agg renderer into PNG bytes (as :mod:`plurm.sim.plots`: default style, no pyplot state, no
Software tag, so the same runs give the same bytes).

* :func:`scatter_png`: lost CPU-hours against high-priority p95 wait, one labelled point per run;
* :func:`utilization_grid_png`: one panel per run, side by side on shared axes: the useful
  and the later thrown-away utilization as means per bin over the faint raw series;
* :func:`overlaid_png`: one line per run on shared axes (queue length, lost work so far);
* :func:`waits_png`: the wait distributions of everyone and of the high-priority class;
* :func:`victims_grid_png`: one panel per run, each preemption's victim run time over time.

Each takes :class:`RunSeries`-like values already reduced to plain lists by the caller.
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from plurm.sim.plots import MODE_COLORS, MODES, bin_name, time_unit
from plurm.sim.series import Step, Victim, binned_means

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "COLUMNS",
    "overlaid_png",
    "run_color",
    "run_style",
    "scatter_png",
    "utilization_grid_png",
    "victims_grid_png",
    "waits_png",
]

WIDTH = 12.0
DPI = 100
#: Panels per row of a side-by-side figure.
COLUMNS = 3


def run_color(index: int) -> str:
    """The colour of the ``index``-th run, the same in every plot of the page."""
    return f"C{index % 10}"


def run_style(index: int) -> str:
    """The line style of the ``index``-th run: runs whose lines coincide stay apart."""
    return ("-", "--", ":", "-.")[index % 4]


@contextmanager
def _figure(height: float) -> Iterator[Figure]:
    import matplotlib.style
    from matplotlib.figure import Figure

    with matplotlib.style.context("default"):
        yield Figure(figsize=(WIDTH, height), dpi=DPI, layout="constrained")


def _png(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None})
    return buffer.getvalue()


#: Roughly how many pixels a character of a small label takes, and a label's height.
_CHAR_PX = 6.5
_LINE_PX = 12.0


def _label_offsets(
    anchors: Sequence[tuple[float, float, str]], size: tuple[float, float]
) -> list[float]:
    """Vertical offsets (points) for the labels at ``anchors`` (x and y as fractions of the
    axes, the label): each label goes right of its point, raised until it overlaps none
    placed before it (points taken left to right)."""
    width, height = size
    placed: list[tuple[float, float, float]] = []  # left, bottom, right in pixels
    offsets = [0.0] * len(anchors)
    for index in sorted(range(len(anchors)), key=lambda i: (anchors[i][0], anchors[i][1])):
        fx, fy, text = anchors[index]
        left = fx * width + 7
        right = left + _CHAR_PX * len(text)
        rise = 5.0
        while any(
            left < other_right
            and other_left < right
            and abs(fy * height + rise - bottom) < _LINE_PX
            for other_left, bottom, other_right in placed
        ):
            rise += _LINE_PX
        placed.append((left, fy * height + rise, right))
        offsets[index] = rise
    return offsets


def scatter_png(points: Sequence[tuple[str, float, float]]) -> bytes:
    """(run, lost CPU-hours, high-priority p95 wait in seconds) per run. Runs at the same
    point share one label, their names joined; labels that would overlap are raised, with a
    line to their point. The wait axis is logarithmic above 1 s when the waits span more
    than a hundredfold."""
    groups: dict[tuple[float, float], list[int]] = {}
    for index, (_, lost, wait) in enumerate(points):
        groups.setdefault((lost, wait), []).append(index)
    waits = [p[2] for p in points if p[2] > 0]
    logarithmic = bool(waits) and max(waits) > 100 * max(1.0, min(waits))
    with _figure(4.6) as figure:
        axes = figure.add_subplot()
        right = 1.3 * max((p[1] for p in points), default=0.0) or 1.0
        top = max((p[2] for p in points), default=0.0)
        # A little room below 0 on each axis, so that a point at 0 shows whole.
        if logarithmic:
            axes.set_yscale("symlog", linthresh=1.0)
            axes.set_ylim(-0.1, top * 4)
        else:
            axes.set_ylim(-0.03 * (top or 1.0), 1.2 * top or 1.0)
        axes.set_xlim(-0.02 * right, right)
        left = axes.get_xlim()[0]
        low, high = axes.get_ylim()
        scale = axes.yaxis.get_transform()
        span = scale.transform(high) - scale.transform(low)
        anchors = [
            (
                (lost - left) / (right - left),
                (scale.transform(wait) - scale.transform(low)) / span,
                " = ".join(points[i][0] for i in indices),
            )
            for (lost, wait), indices in groups.items()
        ]
        offsets = _label_offsets(anchors, (WIDTH * DPI * 0.88, 4.6 * DPI * 0.75))
        for ((lost, wait), indices), (_, _, text), rise in zip(
            groups.items(), anchors, offsets, strict=True
        ):
            for index in indices:
                axes.scatter([lost], [wait], s=60, color=run_color(index), zorder=3)
            axes.annotate(
                text,
                (lost, wait),
                xytext=(7, rise),
                textcoords="offset points",
                fontsize="small",
                color=run_color(indices[0]),
                arrowprops={"arrowstyle": "-", "color": "0.6", "linewidth": 0.6}
                if rise > 5
                else None,
            )
        axes.set_xlabel("work lost to requeue and cancel (CPU-hours)")
        scale_note = ", logarithmic above 1 s" if logarithmic else ""
        axes.set_ylabel(f"high-priority p95 wait (s{scale_note})")
        axes.set_title("Lost work against high-priority wait: lower left is better")
        axes.grid(True, linewidth=0.3)
        return _png(figure)


def _grid(figure: Figure, count: int) -> list[Axes]:
    columns = min(COLUMNS, max(1, count))
    rows = math.ceil(count / columns)
    axes = figure.subplots(rows, columns, sharex=True, sharey=True, squeeze=False)
    flat = [a for row in axes for a in row]
    for extra in flat[count:]:
        extra.set_visible(False)
    return flat[:count]


def _grid_height(count: int, per_row: float) -> float:
    return 0.8 + per_row * math.ceil(count / min(COLUMNS, max(1, count)))


def utilization_grid_png(
    runs: Sequence[tuple[str, Step, Step, tuple[float, float]]],
    window: tuple[float, float],
    width: float,
) -> bytes:
    """(run, CPUs in use, CPUs on work later thrown away, the run's own window) per run, as
    shares of all CPUs, on the common ``window``; each title gives the run's means over its
    own window (as its summary does)."""
    start, end = window
    unit, name = time_unit(end - start)
    with _figure(_grid_height(len(runs), 2.6)) as figure:
        for axes, (run, used, lost, own) in zip(_grid(figure, len(runs)), runs, strict=True):
            times = [t / unit for t in used.times] + [end / unit]
            values = [100 * v for v in used.values]
            axes.step(
                times, [*values, values[-1]], where="post", linewidth=0.4, color="0.55", alpha=0.35
            )
            total = binned_means(used, start, end, width)
            wasted = binned_means(lost, start, end, width)
            xs = [left / unit for left, _ in total] + [end / unit]
            top = [100 * v for _, v in total]
            useful = [100 * (a - b) for (_, a), (_, b) in zip(total, wasted, strict=True)]
            top, useful = [*top, top[-1]], [*useful, useful[-1]]
            # No edges: a bin without lost work must show no orange at all.
            axes.fill_between(xs, 0, useful, step="post", color="tab:blue", alpha=0.5, linewidth=0)
            axes.fill_between(
                xs, useful, top, step="post", color="tab:orange", alpha=0.85, linewidth=0
            )
            mean = used.mean(*own)
            kept = mean - lost.mean(*own)
            axes.set_title(
                f"{run}: {100 * mean:.1f} % used, {100 * kept:.1f} % useful", fontsize=10
            )
            axes.set_ylim(0, 105)
            axes.set_xlim(start / unit, max(end, start + 1) / unit)
        figure.supxlabel(f"time since the first submission ({name})", fontsize=10)
        figure.supylabel("CPUs in use (%)", fontsize=10)
        figure.suptitle(
            f"Utilization per run: {bin_name(width)} (useful in blue, later thrown away in "
            "orange) over the faint raw series"
        )
        return _png(figure)


def overlaid_png(
    runs: Sequence[tuple[str, Sequence[float], Sequence[float]]],
    window: tuple[float, float],
    *,
    title: str,
    ylabel: str,
) -> bytes:
    """(run, xs in seconds, ys) per run, drawn as steps, one colour per run."""
    start, end = window
    unit, name = time_unit(end - start)
    with _figure(3.8 + 0.2 * math.ceil(len(runs) / 6)) as figure:
        axes = figure.add_subplot()
        for index, (run, xs, ys) in enumerate(runs):
            axes.step(
                [x / unit for x in xs],
                ys,
                where="post",
                linewidth=1.4,
                color=run_color(index),
                linestyle=run_style(index),
                label=run,
            )
        axes.set_xlim(start / unit, max(end, start + 1) / unit)
        axes.set_ylim(bottom=0)
        axes.set_xlabel(f"time since the first submission ({name})")
        axes.set_ylabel(ylabel)
        axes.set_title(title)
        axes.grid(True, linewidth=0.3)
        if runs:  # below the axes: inside, it hides the start of the lines
            figure.legend(loc="outside lower center", ncols=min(len(runs), 6), fontsize="small")
        return _png(figure)


def waits_png(runs: Sequence[tuple[str, Sequence[float], Sequence[float]]]) -> bytes:
    """(run, everyone's waits, the high-priority class's waits) per run: two panels of
    cumulative distributions."""
    with _figure(4.2) as figure:
        panels = figure.subplots(1, 2, sharey=True)
        for panel, which, title in (
            (panels[0], 1, "everyone"),
            (panels[1], 2, "high-priority class"),
        ):
            drawn = 0
            for index, run in enumerate(runs):
                waits = sorted(run[1] if which == 1 else run[2])
                if not waits:
                    continue
                drawn += 1
                shares = [(i + 1) / len(waits) for i in range(len(waits))]
                panel.step(
                    [0.0, *waits],
                    [0.0, *shares],
                    where="post",
                    color=run_color(index),
                    linestyle=run_style(index),
                    label=run[0],
                )
            panel.set_xscale("symlog", linthresh=1.0)
            panel.set_xlim(left=0)
            panel.set_ylim(0, 1.02)
            panel.set_xlabel("wait (s, logarithmic above 1 s)")
            panel.set_title(f"Wait-time distribution: {title}")
            panel.grid(True, linewidth=0.3)
            if drawn:
                panel.legend(loc="lower right", fontsize="small")
            else:
                panel.text(0.5, 0.5, "no such job started", ha="center", transform=panel.transAxes)
        panels[0].set_ylabel("share of jobs waiting at most this long")
        return _png(figure)


def victims_grid_png(
    runs: Sequence[tuple[str, Sequence[Victim]]], window: tuple[float, float]
) -> bytes:
    """(run, its preemptions) per run: each victim's run time in the attempt it cut."""
    start, end = window
    unit, name = time_unit(end - start)
    with _figure(_grid_height(len(runs), 2.4)) as figure:
        for axes, (run, found) in zip(_grid(figure, len(runs)), runs, strict=True):
            for mode in MODES:
                chosen = [v for v in found if v.mode == mode]
                if chosen:
                    axes.scatter(
                        [v.time / unit for v in chosen],
                        [v.run / 3600 for v in chosen],
                        s=6,
                        color=MODE_COLORS[mode],
                        label=f"{mode} ({len(chosen)})",
                    )
            if found:
                axes.legend(loc="upper right", fontsize="x-small", framealpha=0.9)
            else:
                axes.text(0.5, 0.5, "no preemptions", ha="center", transform=axes.transAxes)
            lost = sum(v.lost_cpu_seconds for v in found) / 3600
            axes.set_title(
                f"{run}: {len(found):,} preemptions, {lost:,.0f} CPU-h lost", fontsize=10
            )
            axes.set_xlim(start / unit, max(end, start + 1) / unit)
        figure.supxlabel(f"time since the first submission ({name})", fontsize=10)
        figure.supylabel("victim's run time (h)", fontsize=10)
        figure.suptitle("Per preemption: how long the victim had run since it last left the queue")
        return _png(figure)
