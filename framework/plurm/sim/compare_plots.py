"""The comparison page's plots, one figure each with every run in it, drawn with matplotlib's
Agg renderer into PNG bytes (as :mod:`plurm.sim.plots`: default style, no pyplot state, no
Software tag, so the same runs give the same bytes).

* :func:`scatter_png`: lost CPU-hours against high-priority p95 wait, one point per run, named
  beside it when there are few runs, numbered (with a key below) when there are more;
* :func:`utilization_grid_png`: one panel per run, side by side on shared axes: the useful
  and the later thrown-away utilization as means per bin over the faint raw series;
* :func:`overlaid_png`: one line per run on shared axes (queue length, lost work so far);
* :func:`waits_png`: the wait distributions of everyone and of the high-priority class;
* :func:`victims_grid_png`: one panel per run, each preemption's victim run time over time.

Each takes :class:`RunSeries`-like values already reduced to plain lists by the caller. Runs
are numbered from 1 in the order given, the same number (and colour) in every plot: panel
titles and legends start with it, and the page's key (:func:`run_key`) gives the names. A panel
title gives the run on its first line and its figures on the second, so that titles of panels
side by side do not run into each other however long the names; legends go below the plots,
in as many columns as their longest entry allows.
"""

from __future__ import annotations

import io
import math
import textwrap
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from plurm.sim.plots import MODE_COLORS, MODES, bin_name, time_unit
from plurm.sim.series import Step, Victim, binned_means

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "COLUMNS",
    "NAMED_POINTS",
    "overlaid_png",
    "run_color",
    "run_label",
    "run_style",
    "scatter_named",
    "scatter_png",
    "utilization_grid_png",
    "victims_grid_png",
    "waits_png",
]

WIDTH = 12.0
DPI = 100
#: Panels per row of a side-by-side figure.
COLUMNS = 3
#: Up to this many runs the scatter names each point; beyond, it numbers them.
NAMED_POINTS = 4
#: The characters of a run's name a panel title's line holds (a third of the figure's width).
_TITLE_CHARS = 52


#: matplotlib's default colour cycle ("C0" to "C9"), as the page's key shows it too.
_CYCLE = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)


def run_color(index: int) -> str:
    """The colour of the ``index``-th run, the same in every plot of the page and its key."""
    return _CYCLE[index % len(_CYCLE)]


def run_style(index: int) -> str:
    """The line style of the ``index``-th run: runs whose lines coincide stay apart."""
    return ("-", "--", ":", "-.")[index % 4]


def run_label(index: int, run: str) -> str:
    """The ``index``-th run as legends name it: its number (from 1), then its name."""
    return f"{index + 1}  {run}"


def _name_lines(index: int, run: str) -> list[str]:
    """The numbered run's name as a panel title's lines (wrapped when long)."""
    return textwrap.wrap(run_label(index, run), _TITLE_CHARS, break_on_hyphens=False) or [""]


def _panel_title(index: int, run: str, figures: str) -> str:
    """A side-by-side panel's title: the numbered run (wrapped when long), then its figures."""
    return "\n".join([*_name_lines(index, run), figures])


def _legend_columns(labels: Sequence[str], width_px: float = WIDTH * DPI * 0.9) -> int:
    """How many legend entries of small text fit side by side across ``width_px``."""
    entry = _CHAR_PX * max((len(label) for label in labels), default=1) + 45
    return max(1, min(len(labels), int(width_px // entry)))


def _legend_below(
    figure: Figure,
    labels: Sequence[str],
    entries: tuple[Sequence[Any], Sequence[str]] | None = None,
) -> None:
    """The figure's legend below the plots: its axes' labelled lines, or ``entries``
    (handles and their names, each name one of ``labels``) in the order of ``labels``."""
    if entries is None:
        figure.legend(loc="outside lower center", ncols=_legend_columns(labels), fontsize="small")
        return
    handles, names = entries
    order = sorted(range(len(names)), key=lambda i: labels.index(names[i]))
    figure.legend(
        [handles[i] for i in order],
        [names[i] for i in order],
        loc="outside lower center",
        ncols=_legend_columns(labels),
        fontsize="small",
    )


def _legend_height(labels: Sequence[str]) -> float:
    """Inches a legend below the plots takes."""
    return 0.25 * math.ceil(len(labels) / _legend_columns(labels)) + 0.2


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
    anchors: Sequence[tuple[float, float, str]],
    size: tuple[float, float],
    char_px: float = _CHAR_PX,
) -> list[float]:
    """Vertical offsets (points) for the labels at ``anchors`` (x and y as fractions of the
    axes, the label): each label goes right of its point, raised until it overlaps no label
    placed before it (points taken left to right) and no other point (a label run through a
    neighbour's marker hides it)."""
    width, height = size
    # left, bottom, right, top in pixels: every marker (with a little room), then the labels
    mark = 7.0
    placed: list[tuple[float, float, float, float]] = [
        (fx * width - mark, fy * height - mark, fx * width + mark, fy * height + mark)
        for fx, fy, _ in anchors
    ]
    offsets = [0.0] * len(anchors)
    for index in sorted(range(len(anchors)), key=lambda i: (anchors[i][0], anchors[i][1])):
        fx, fy, text = anchors[index]
        left = fx * width + 7
        right = left + char_px * len(text)
        rise = 5.0
        while any(
            left < other_right
            and other_left < right
            and fy * height + rise < top
            and bottom < fy * height + rise + _LINE_PX
            for other_left, bottom, other_right, top in placed
        ):
            rise += _LINE_PX
        placed.append((left, fy * height + rise, right, fy * height + rise + _LINE_PX))
        offsets[index] = rise
    return offsets


def scatter_named(count: int) -> bool:
    """Whether the scatter of ``count`` runs names its points (else it numbers them)."""
    return count <= NAMED_POINTS


def scatter_png(points: Sequence[tuple[str, float, float]]) -> bytes:
    """(run, lost CPU-hours, high-priority p95 wait in seconds) per run. Up to
    :data:`NAMED_POINTS` runs, each point is labelled with its run's name; beyond, with its
    number, and a key below the plot gives each number's name (the page's key table too).
    Runs at the same point share one label (names joined with " = ", numbers with ", ");
    labels that would overlap are raised, with a line to their point. The wait axis is
    logarithmic above 1 s when the waits span more than a hundredfold."""
    named = scatter_named(len(points))
    groups: dict[tuple[float, float], list[int]] = {}
    for index, (_, lost, wait) in enumerate(points):
        groups.setdefault((lost, wait), []).append(index)
    waits = [p[2] for p in points if p[2] > 0]
    logarithmic = bool(waits) and max(waits) > 100 * max(1.0, min(waits))
    keys = [] if named else [run_label(i, p[0]) for i, p in enumerate(points)]
    height = 4.6 + (_legend_height(keys) if keys else 0.0)
    with _figure(height) as figure:
        axes = figure.add_subplot()
        right = 1.3 * max((p[1] for p in points), default=0.0) or 1.0
        top = max((p[2] for p in points), default=0.0)
        # A little room below 0 on each axis, so that a point at 0 shows whole, and room
        # above the highest point for the labels raised over it.
        if logarithmic:
            axes.set_yscale("symlog", linthresh=1.0)
            axes.set_ylim(-0.1, top * 6)
        else:
            axes.set_ylim(-0.03 * (top or 1.0), 1.3 * top or 1.0)
        axes.set_xlim(-0.02 * right, right)
        left = axes.get_xlim()[0]
        low, high = axes.get_ylim()
        scale = axes.yaxis.get_transform()
        span = scale.transform(high) - scale.transform(low)
        joiner = " = " if named else ", "
        anchors = [
            (
                (lost - left) / (right - left),
                (scale.transform(wait) - scale.transform(low)) / span,
                joiner.join(points[i][0] if named else str(i + 1) for i in indices),
            )
            for (lost, wait), indices in groups.items()
        ]
        # (numbers are bold: wider per character than the names)
        offsets = _label_offsets(
            anchors, (WIDTH * DPI * 0.88, 4.6 * DPI * 0.75), _CHAR_PX if named else 8.0
        )
        for ((lost, wait), indices), (_, _, text), rise in zip(
            groups.items(), anchors, offsets, strict=True
        ):
            for index in indices:
                axes.scatter(
                    [lost],
                    [wait],
                    s=60,
                    color=run_color(index),
                    zorder=3,
                    label=None if named else keys[index],
                )
            axes.annotate(
                text,
                (lost, wait),
                xytext=(7, rise),
                textcoords="offset points",
                fontsize="small" if named else "medium",
                fontweight="normal" if named else "bold",
                # (runs at one point: in black, as only the last one's colour shows)
                color=run_color(indices[0]) if len(indices) == 1 else "0.15",
                arrowprops={"arrowstyle": "-", "color": "0.6", "linewidth": 0.6}
                if rise > 5
                else None,
            )
        axes.set_xlabel("work lost to requeue and cancel (CPU-hours)")
        scale_note = ", logarithmic above 1 s" if logarithmic else ""
        axes.set_ylabel(f"high-priority p95 wait (s{scale_note})")
        axes.set_title("Lost work against high-priority wait: lower left is better")
        axes.grid(True, linewidth=0.3)
        if keys:
            # (one entry per run, in run order: the scatter calls above follow the groups)
            _legend_below(figure, keys, axes.get_legend_handles_labels())
        return _png(figure)


def _grid(figure: Figure, count: int) -> list[Axes]:
    columns = min(COLUMNS, max(1, count))
    rows = math.ceil(count / columns)
    axes = figure.subplots(rows, columns, sharex=True, sharey=True, squeeze=False)
    flat = [a for row in axes for a in row]
    for extra in flat[count:]:
        extra.set_visible(False)
    return flat[:count]


def _grid_height(count: int, per_row: float, runs: Sequence[str] = ()) -> float:
    """Inches for ``count`` panels in rows of :data:`COLUMNS`, each ``per_row`` high, plus a
    line per row for each line its longest wrapped run name takes beyond the first."""
    columns = min(COLUMNS, max(1, count))
    rows = math.ceil(count / columns)
    extra = 0
    for row in range(rows):
        first = row * columns
        names = runs[first : first + columns]
        extra += max((len(_name_lines(first + i, n)) for i, n in enumerate(names)), default=1) - 1
    return 0.8 + per_row * rows + 0.18 * extra


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
    with _figure(_grid_height(len(runs), 2.9, [r[0] for r in runs])) as figure:
        for index, (axes, (run, used, lost, own)) in enumerate(
            zip(_grid(figure, len(runs)), runs, strict=True)
        ):
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
                _panel_title(index, run, f"{100 * mean:.1f} % used, {100 * kept:.1f} % useful"),
                fontsize=9,
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
    labels = [run_label(index, run[0]) for index, run in enumerate(runs)]
    with _figure(3.6 + _legend_height(labels)) as figure:
        axes = figure.add_subplot()
        for index, (_, xs, ys) in enumerate(runs):
            axes.step(
                [x / unit for x in xs],
                ys,
                where="post",
                linewidth=1.4,
                color=run_color(index),
                linestyle=run_style(index),
                label=labels[index],
            )
        axes.set_xlim(start / unit, max(end, start + 1) / unit)
        axes.set_ylim(bottom=0)
        axes.set_xlabel(f"time since the first submission ({name})")
        axes.set_ylabel(ylabel)
        axes.set_title(title)
        axes.grid(True, linewidth=0.3)
        if runs:  # below the axes: inside, it hides the start of the lines
            _legend_below(figure, labels)
        return _png(figure)


def waits_png(runs: Sequence[tuple[str, Sequence[float], Sequence[float]]]) -> bytes:
    """(run, everyone's waits, the high-priority class's waits) per run: two panels of
    cumulative distributions, one legend below them (inside, nine runs' entries would hide
    half a panel)."""
    labels = [run_label(index, run[0]) for index, run in enumerate(runs)]
    with _figure(4.0 + _legend_height(labels)) as figure:
        panels = figure.subplots(1, 2, sharey=True)
        drawn_any: set[int] = set()
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
                    # (each run once in the legend: the panel that first draws it)
                    label=None if index in drawn_any else labels[index],
                )
                drawn_any.add(index)
            panel.set_xscale("symlog", linthresh=1.0)
            panel.set_xlim(left=0)
            panel.set_ylim(0, 1.02)
            panel.set_xlabel("wait (s, logarithmic above 1 s)")
            panel.set_title(f"Wait-time distribution: {title}")
            panel.grid(True, linewidth=0.3)
            if not drawn:
                panel.text(0.5, 0.5, "no such job started", ha="center", transform=panel.transAxes)
        panels[0].set_ylabel("share of jobs waiting at most this long")
        if drawn_any:
            handles: list[Any] = []
            names: list[str] = []
            for panel in panels:
                more, texts = panel.get_legend_handles_labels()
                handles += more
                names += texts
            _legend_below(figure, labels, (handles, names))
        return _png(figure)


def victims_grid_png(
    runs: Sequence[tuple[str, Sequence[Victim]]], window: tuple[float, float]
) -> bytes:
    """(run, its preemptions) per run: each victim's run time in the attempt it cut."""
    start, end = window
    unit, name = time_unit(end - start)
    with _figure(_grid_height(len(runs), 2.7, [r[0] for r in runs])) as figure:
        for index, (axes, (run, found)) in enumerate(
            zip(_grid(figure, len(runs)), runs, strict=True)
        ):
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
                _panel_title(index, run, f"{len(found):,} preemptions, {lost:,.0f} CPU-h lost"),
                fontsize=9,
            )
            axes.set_xlim(start / unit, max(end, start + 1) / unit)
        figure.supxlabel(f"time since the first submission ({name})", fontsize=10)
        figure.supylabel("victim's run time (h)", fontsize=10)
        figure.suptitle("Per preemption: how long the victim had run since it last left the queue")
        return _png(figure)
