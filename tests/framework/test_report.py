"""The trace replay's report: its time series on hand-checked workloads, the HTML file (self-
contained, every plot, the Gantt chart only for small runs, the same bytes twice), the command."""

from __future__ import annotations

import base64
import io
import json
import re
from pathlib import Path
from typing import Any

import matplotlib
import pytest
from PIL import Image

from plurm import conf
from plurm.cli.main import main
from plurm.sim import report, series
from plurm.sim.metrics import summarize
from plurm.sim.trace import JobRecord, TraceMapping, Transition, replay
from plurm.workload import clean, parse_swf

# Two one-CPU nodes; "urgent" jobs requeue "batch" ones.
CONF = """ClusterName=t
SlurmctldHost=h
SelectType=select/linear
PreemptType=preempt/partition_prio
PreemptMode=REQUEUE
NodeName=n[1-2] CPUs=1 RealMemory=1000
PartitionName=batch Nodes=ALL Default=YES PriorityTier=1
PartitionName=urgent Nodes=ALL PriorityTier=2
"""

# number submit wait run alloc cpu mem req_procs req_time req_mem status user group exe queue
# partition preceding think
TRACE = """; MaxProcs: 2
1 0 -1 100 2 -1 -1 2 200 -1 1 1 1 1 1 1 -1 -1
2 10 -1 50 1 -1 -1 1 60 -1 1 1 1 1 1 1 -1 -1
3 20 -1 30 1 -1 -1 1 120 -1 1 1 1 1 1 2 -1 -1
"""

PLOTS = (
    "utilization over time",
    "queue length",
    "wait-time distribution",
    "preemptions over time",
    "victim run time and lost work",
    "Gantt chart",
)


def _replay(
    tmp_path: Path, mapping: TraceMapping | None = None
) -> tuple[list[JobRecord], list[Transition]]:
    path = tmp_path / "slurm.conf"
    path.write_text(CONF)
    transitions: list[Transition] = []
    records = replay(clean(parse_swf(TRACE)), conf.load(path), mapping, transitions=transitions)
    return records, transitions


def _record(job_id: int, submit: float, cpus: int, **fields: Any) -> JobRecord:
    values: dict[str, Any] = {"partition": "batch", "qos": None, "high_priority": False}
    values.update(fields)
    return JobRecord(job_id=job_id, trace_number=job_id, submit=submit, cpus=cpus, **values)


def test_series_of_a_hand_made_run_with_a_requeue_and_a_suspension() -> None:
    # Job 1 (2 CPUs) runs 0-10, is requeued, runs again 30-40; job 2 (1 CPU) waits from 5 to
    # 10, runs 10-20, is suspended 20-25 and runs 25-30; job 3 is cancelled while pending.
    records = [
        _record(1, 0.0, 2, high_priority=True),
        _record(2, 5.0, 1, partition="other"),
        _record(3, 6.0, 1),
        _record(0, 7.0, 1, rejected="Invalid partition name specified"),
    ]
    transitions = [
        Transition(0.0, 1, "PENDING", "RUNNING"),
        Transition(8.0, 3, "PENDING", "CANCELLED"),
        Transition(10.0, 1, "RUNNING", "PENDING", "requeue"),
        Transition(10.0, 2, "PENDING", "RUNNING"),
        Transition(20.0, 2, "RUNNING", "SUSPENDED", "suspend"),
        Transition(25.0, 2, "SUSPENDED", "RUNNING"),
        Transition(30.0, 2, "RUNNING", "COMPLETED"),
        Transition(30.0, 1, "PENDING", "RUNNING"),
        Transition(40.0, 1, "RUNNING", "COMPLETED"),
    ]
    intervals = series.run_intervals(records, transitions)
    assert sorted((i.job_id, i.start, i.end, i.cpus) for i in intervals) == [
        (1, 0.0, 10.0, 2),
        (1, 30.0, 40.0, 2),
        (2, 10.0, 20.0, 1),
        (2, 25.0, 30.0, 1),
    ]
    used = series.utilization(intervals, total_cpus=4)
    assert used.times == (0.0, 10.0, 20.0, 25.0, 30.0, 40.0)
    assert used.values == (0.5, 0.25, 0.0, 0.25, 0.5, 0.0)
    assert used.mean(0.0, 40.0) == pytest.approx((2 * 10 + 1 * 10 + 1 * 5 + 2 * 10) / (4 * 40))
    queue = series.queue_length(records, transitions)
    # In: 1 at 0 (out at once), 2 at 5, 3 at 6; out: 3 at 8; 1 back and 2 out at 10; 1 out at 30.
    assert queue.times == (0.0, 5.0, 6.0, 8.0, 30.0)
    assert queue.values == (0.0, 1.0, 2.0, 1.0, 0.0)
    assert series.preemptions(transitions) == [(10.0, 1, "requeue"), (20.0, 2, "suspend")]


def test_wait_classes_name_each_class_once() -> None:
    records = [
        _record(1, 0.0, 1, start=0.0, high_priority=True, partition="high"),
        _record(2, 0.0, 1, start=4.0, qos="normal"),
        _record(3, 1.0, 1, start=9.0),
        _record(4, 1.0, 1),  # never started
    ]
    classes = series.wait_classes(records)
    # "partition high" and "partition batch" hold the same jobs as the priority classes.
    assert classes == {
        "all": [0.0, 4.0, 8.0],
        "high priority": [0.0],
        "normal": [4.0, 8.0],
        "QOS -": [0.0, 8.0],
        "QOS normal": [4.0],
    }


def test_series_of_a_replay_with_a_requeue(tmp_path: Path) -> None:
    records, transitions = _replay(
        tmp_path, TraceMapping.from_dict({"partitions": {"2": "urgent"}})
    )
    # Job 1 runs on both nodes from 1 until job 3 (urgent) requeues it at 21; it frees n2 at
    # once, where job 3 starts, and holds its batch host n1 COMPLETING until 24.7, when job 2
    # starts; job 1 is eligible again at 24 + 121 = 145 and starts on the next periodic
    # pass, at 180.
    intervals = series.run_intervals(records, transitions)
    assert sorted((i.job_id, i.start, i.end, i.cpus) for i in intervals) == [
        (1, 1.0, 21.0, 2),
        (1, 180.0, 280.0, 2),
        (2, 24.7, 74.7, 1),
        (3, 21.0, 51.0, 1),
    ]
    used = series.utilization(intervals, total_cpus=2)
    assert list(zip(used.times, used.values, strict=True)) == [
        (0.0, 0.0),
        (1.0, 1.0),
        (21.0, 0.5),
        (24.7, 1.0),
        (51.0, 0.5),
        (74.7, 0.0),
        (180.0, 1.0),
        (280.0, 0.0),
    ]
    # (2 x 20 + 2 x 30 + 1 x 20 + 2 x 100) CPU-seconds over 2 CPUs x 280 s, as the summary says
    summary = summarize(records, total_cpus=2)
    assert summary["utilization"] == pytest.approx(320 / 560)
    assert used.mean(*summary["utilization_window"]) == pytest.approx(320 / 560)
    queue = series.queue_length(records, transitions)
    assert list(zip(queue.times, queue.values, strict=True)) == [
        (0.0, 1.0),
        (1.0, 0.0),
        (10.0, 1.0),
        (20.0, 2.0),
        (21.0, 1.0),
        (180.0, 0.0),
    ]
    # A preemption is counted when its mode shows: at the victim's release (requeued).
    assert series.preemptions(transitions) == [(24.7, 1, "requeue")]


def _render(records: list[JobRecord], transitions: list[Transition]) -> str:
    summary = summarize(records, total_cpus=2)
    return report.render_report(
        records, transitions, summary, 2, title="t", details=[("trace", "t.swf")]
    )


def _images(text: str) -> list[tuple[str, bytes]]:
    found = re.findall(r'<img alt="([^"]*)" src="data:image/png;base64,([^"]+)">', text)
    return [(alt, base64.b64decode(data, validate=True)) for alt, data in found]


def test_the_report_is_one_self_contained_file_with_every_plot(tmp_path: Path) -> None:
    records, transitions = _replay(
        tmp_path, TraceMapping.from_dict({"partitions": {"2": "urgent"}})
    )
    text = _render(records, transitions)
    assert text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")
    # Nothing loaded from elsewhere: no links, scripts, stylesheets or non-data sources.
    assert "href=" not in text and "<script" not in text and "<link" not in text
    assert "url(" not in text
    assert all(
        src.startswith("data:image/png;base64,") for src in re.findall(r'src="([^"]*)"', text)
    )
    images = _images(text)
    assert [alt for alt, _ in images] == list(PLOTS)
    for _, png in images:
        with Image.open(io.BytesIO(png)) as image:
            image.verify()
            assert image.format == "PNG" and image.size[0] == 900
    for heading in ("Per partition", "Per QOS", "High-priority class"):
        assert f"<h3>{heading}</h3>" in text
    assert "<td>urgent</td>" in text and "<td>batch</td>" in text


def test_the_gantt_chart_is_left_out_above_the_threshold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    records, transitions = _replay(tmp_path)
    monkeypatch.setattr(report, "GANTT_MAX_JOBS", 2)
    text = _render(records, transitions)
    assert [alt for alt, _ in _images(text)] == list(PLOTS[:-1])
    assert "this run has 3 jobs, and the Gantt chart is drawn only for runs of at most 2" in text


def test_the_same_replay_gives_the_same_bytes_whatever_the_matplotlibrc(tmp_path: Path) -> None:
    records, transitions = _replay(tmp_path)
    first = _render(records, transitions)
    again, transitions = _replay(tmp_path)
    with matplotlib.rc_context({"lines.linewidth": 4.0, "font.size": 20, "savefig.dpi": 50}):
        second = _render(again, transitions)
    assert first.encode() == second.encode()


def test_the_command_writes_the_report_unless_told_not_to(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "t.swf").write_text(TRACE)
    (tmp_path / "slurm.conf").write_text(CONF)
    argv = ["simulate", "--conf", str(tmp_path / "slurm.conf"), "--trace", str(tmp_path / "t.swf")]
    out = tmp_path / "out"
    assert main([*argv, "--out", str(out), "--quiet"]) == 0
    assert capsys.readouterr().out == ""
    text = (out / "report.html").read_text()
    assert "<h1>Plurm replay of t.swf</h1>" in text and len(_images(text)) == len(PLOTS)
    assert json.loads((out / "summary.json").read_text())["ended"] == 3

    bare = tmp_path / "bare"
    assert main([*argv, "--out", str(bare), "--no-report"]) == 0
    assert "report:" not in capsys.readouterr().out
    assert sorted(p.name for p in bare.iterdir()) == ["jobs.csv", "summary.json"]

    loud = tmp_path / "loud"
    assert main([*argv, "--out", str(loud)]) == 0
    printed = capsys.readouterr().out
    assert printed.endswith(f"report: {(loud / 'report.html').resolve()}\n")


def test_a_wait_plot_of_many_classes_keeps_its_axes_and_grows_for_its_legend() -> None:
    """One class per partition of a large cluster (35 here): the legend goes below the
    axes, in columns, and the figure grows for it; matplotlib's layout does not give up
    ("axes sizes collapsed to zero"), and each class is still in the legend."""
    import io
    import warnings

    from matplotlib.image import imread

    from plurm.sim import plots

    few = {"all": [0.0, 5.0, 50.0], "partition a": [5.0]}
    many = {f"partition p{i:02d}": [float(i), float(10 * i)] for i in range(35)}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the layout's warning fails the test
        small = imread(io.BytesIO(plots.waits_png(few)), format="png")
        large = imread(io.BytesIO(plots.waits_png(many)), format="png")
    assert large.shape[1] == small.shape[1]  # the same width
    assert large.shape[0] > small.shape[0] + 100  # taller, by the legend's rows
