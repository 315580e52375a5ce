"""compare.html: written by plurm compare unless --no-report, well-formed (parsed tag by tag),
with one column per run in each table and the figures of each run's summary, every plot a
PNG, the same bytes whatever the worker count; the scatter's labels kept apart."""

from __future__ import annotations

import base64
import io
import json
from html.parser import HTMLParser
from pathlib import Path

import pytest
from PIL import Image

from plurm.cli.main import main
from plurm.sim import compare_plots
from plurm.sim.compare import Comparison, open_executor, run_runs
from plurm.sim.compare_report import HEADLINE, headline_value, render_page
from plurm.sim.report import useful_utilization
from tests.framework.test_compare import COMPARISON, CONF, MAP, _trace_text

RUNS = ["backfill", "builtin", "cancel"]
PLOTS = [
    "lost work against high-priority p95 wait",
    "utilization per run",
    "queue length per run",
    "lost work so far per run",
    "wait-time distributions",
    "victims per run",
]
_VOID = {"meta", "img", "br", "hr", "link", "input", "col", "wbr"}


class Page(HTMLParser):
    """The page parsed: it fails on a closing tag that does not close the open one, and keeps
    each table's rows of cell texts, each image and each h2."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[str] = []
        self.tables: list[list[list[str]]] = []
        self.images: list[tuple[str, str]] = []
        self.headings: list[str] = []
        self._cell: list[str] | None = None
        self._heading: list[str] | None = None
        self.feed(text)
        self.close()
        assert self.open == [], f"tags left open: {self.open}"

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "img":
            values = dict(attrs)
            self.images.append((values["alt"] or "", values["src"] or ""))
        if tag in _VOID:
            return
        self.open.append(tag)
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "h2":
            self._heading = []

    def handle_endtag(self, tag: str) -> None:
        if tag in _VOID:
            return
        assert self.open and self.open[-1] == tag, f"</{tag}> closes {self.open[-1:]}"
        self.open.pop()
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "h2" and self._heading is not None:
            self.headings.append("".join(self._heading))
            self._heading = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        if self._heading is not None:
            self._heading.append(data)


@pytest.fixture(scope="module")
def compared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("compare-report")
    (directory / "slurm.conf").write_text(CONF)
    (directory / "map.toml").write_text(MAP)
    (directory / "t.swf").write_text(_trace_text())
    (directory / "compare.toml").write_text(COMPARISON)
    out = directory / "out"
    argv = ["compare", str(directory / "compare.toml"), "--out", str(out), "--quiet"]
    assert main([*argv, "--workers", "2"]) == 0
    return directory


def test_the_page_is_well_formed_with_every_run_in_every_table(compared: Path) -> None:
    text = (compared / "out" / "compare.html").read_text()
    assert text.startswith("<!DOCTYPE html>")
    page = Page(text)
    assert "<script" not in text and "href=" not in text
    settings, headline, every, key = page.tables
    for table in (settings, headline, every):
        assert table[0] == ["", *RUNS]  # one column per run
        assert all(len(row) == len(RUNS) + 1 for row in table)
    rows = {row[0]: row[1:] for row in settings}
    assert rows["SchedulerType"] == ["sched/backfill", "sched/builtin", "sched/backfill"]
    assert rows["PreemptMode"] == ["REQUEUE", "REQUEUE", "CANCEL"]
    # The headline figures are each run's summary's, as compare.json has them.
    document = json.loads((compared / "out" / "compare.json").read_text())
    summaries = [run["summary"] for run in document["runs"]]
    figures = {row[0]: row[1:] for row in headline[1:]}
    assert [label for label, *_ in HEADLINE] == list(figures)
    assert figures["lost CPU-hours"] == [format(s["lost_cpu_hours"], ",.2f") for s in summaries]
    for label, _, fmt, _ in HEADLINE:
        shown = [cell.removesuffix(" %") for cell in figures[label]]
        assert shown == [format(headline_value(label, s, 4), fmt) for s in summaries]
    assert figures["preemptions (all modes)"] == [
        str(sum(s["preemptions"].values())) for s in summaries
    ]
    assert figures["useful utilization"] == [
        f"{100 * useful_utilization(s, 4):.1f} %" for s in summaries
    ]
    # The scatter's key: every run, numbered in order, with the two figures it plots.
    assert key[0] == ["#", "run", "lost CPU-hours", "high-priority p95 wait (s)"]
    assert [row[:2] for row in key[1:]] == [[f"\u25cf {n}", run] for n, run in enumerate(RUNS, 1)]
    assert [row[2:] for row in key[1:]] == [
        [f"{s['lost_cpu_hours']:,.2f}", f"{s['high_priority']['wait_p95']:,.1f}"] for s in summaries
    ]
    full = {row[0]: row[1:] for row in every[1:]}
    assert full["mean wait (s)"] == [f"{s['wait_mean']:,.1f}" for s in summaries]
    assert "heavy users" not in full  # n/a in every run: listed below instead
    # Every plot, a PNG of the page's width.
    assert [alt for alt, _ in page.images] == PLOTS
    for _, src in page.images:
        assert src.startswith("data:image/png;base64,")
        png = base64.b64decode(src.removeprefix("data:image/png;base64,"), validate=True)
        with Image.open(io.BytesIO(png)) as image:
            image.verify()
            assert image.format == "PNG" and image.size[0] == 1200


def test_no_report_leaves_the_page_out_and_changes_nothing_else(compared: Path) -> None:
    out = compared / "bare"
    argv = ["compare", str(compared / "compare.toml"), "--out", str(out), "--quiet"]
    assert main([*argv, "--workers", "2", "--no-report"]) == 0
    assert not (out / "compare.html").exists()
    for name in ("compare.csv", "compare.md", "compare.json", "backfill/jobs.csv"):
        assert (out / name).read_bytes() == (compared / "out" / name).read_bytes()


def test_the_page_is_the_same_whatever_the_worker_count(compared: Path) -> None:
    comparison = Comparison.load(compared / "compare.toml")
    trace = comparison.read_trace()
    with open_executor("process", 1) as executor:
        results = run_runs(comparison.runs, trace, executor)
    assert (
        render_page(comparison, results, trace) == (compared / "out" / "compare.html").read_text()
    )


def test_side_by_side_figures_grow_a_row_per_three_runs() -> None:
    from plurm.sim.series import Step

    step = Step((0.0, 100.0), (0.5, 0.0))

    def height(runs: int) -> int:
        png = compare_plots.utilization_grid_png(
            [(f"r{i}", step, step, (0.0, 200.0)) for i in range(runs)], (0.0, 200.0), 60.0
        )
        with Image.open(io.BytesIO(png)) as image:
            return image.size[1]

    assert height(1) == height(3) < height(4) == height(6) < height(7)


def test_scatter_labels_that_would_overlap_are_raised() -> None:
    # Two labels side by side on one line overlap, and the first runs through the second's
    # point: it is raised clear of both; one far to the right stays on its point's line.
    anchors = [(0.50, 0.1, "backfill-requeue"), (0.52, 0.1, "backfill-easy"), (0.95, 0.1, "x")]
    offsets = compare_plots._label_offsets(anchors, (1000.0, 300.0))
    assert offsets[1] == 5.0 and offsets[0] >= offsets[1] + 12 and offsets[2] == 5.0
    # A point well above a label's line does not move it.
    apart = compare_plots._label_offsets(
        [(0.50, 0.1, "backfill-requeue"), (0.52, 0.5, "p")], (1000.0, 300.0)
    )
    assert apart == [5.0, 5.0]


def test_the_scatter_names_few_runs_and_numbers_many_with_every_run_in_its_key() -> None:
    """Up to NAMED_POINTS runs the points carry names; beyond, numbers, and the figure grows
    a key below the plot (one entry per run, so a row per few runs)."""

    def size(png: bytes) -> tuple[int, int]:
        with Image.open(io.BytesIO(png)) as image:
            return image.size

    def points(count: int) -> list[tuple[str, float, float]]:
        return [(f"run-with-a-long-name-{i}", float(i % 3), 10.0 * (i % 2)) for i in range(count)]

    few = compare_plots.NAMED_POINTS
    assert compare_plots.scatter_named(few) and not compare_plots.scatter_named(few + 1)
    heights = [size(compare_plots.scatter_png(points(n)))[1] for n in (2, few, few + 1, 12)]
    assert heights[0] == heights[1] < heights[2] < heights[3]
    # The same runs in every plot: numbered legends, whatever the count.
    assert compare_plots.run_label(0, "a") == "1  a"
    wide = compare_plots.waits_png([(f"r{i}", [1.0, 5.0], [2.0]) for i in range(12)])
    narrow = compare_plots.waits_png([(f"r{i}", [1.0, 5.0], [2.0]) for i in range(2)])
    assert size(wide)[1] > size(narrow)[1]  # the legend below grows, the panels keep theirs


def test_panel_titles_of_long_run_names_wrap_and_the_rows_grow() -> None:
    """A side-by-side panel's title is the numbered run then its figures, on two lines; a
    name too long for a third of the figure wraps, and its row of panels grows a line."""
    short = compare_plots._panel_title(0, "requeue-slurm", "1 % used")
    assert short == "1  requeue-slurm\n1 % used"
    long_name = "guarded-least_lost_work-" * 4
    wrapped = compare_plots._panel_title(8, long_name, "1 % used").split("\n")
    assert len(wrapped) > 2 and wrapped[-1] == "1 % used"
    assert all(len(line) <= compare_plots._TITLE_CHARS for line in wrapped)
    assert compare_plots._grid_height(3, 2.0, ["a"] * 3) < compare_plots._grid_height(
        3, 2.0, ["a", long_name, "b"]
    )
