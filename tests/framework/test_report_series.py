"""The report's binned means, lost work and victims: the hourly and daily means against a plain
re-computation from the raw series, second by second; the work later thrown away and each
preemption's victim against the records' own counts, on a hand-made run and on a replay; the
configuration shown at the top of the page."""

from __future__ import annotations

import bisect
import random
from pathlib import Path
from typing import Any

import pytest

from plurm import conf
from plurm.sim import report, series
from plurm.sim.metrics import summarize
from plurm.sim.settings import partition_settings, plugin_settings
from plurm.sim.trace import JobRecord, TraceMapping, Transition, replay
from plurm.workload import clean, parse_swf

CONF = """ClusterName=t
SlurmctldHost=h
SelectType=select/linear
PreemptType=preempt/partition_prio
PreemptMode=REQUEUE
NodeName=n[1-2] CPUs=1 RealMemory=1000
PartitionName=batch Nodes=ALL Default=YES PriorityTier=1
PartitionName=urgent Nodes=ALL PriorityTier=2 PreemptMode=OFF
"""

# Job 1 (two CPUs) is requeued by job 3 (urgent), as in test_report.py.
TRACE = """; MaxProcs: 2
1 0 -1 100 2 -1 -1 2 200 -1 1 1 1 1 1 1 -1 -1
2 10 -1 50 1 -1 -1 1 60 -1 1 1 1 1 1 1 -1 -1
3 20 -1 30 1 -1 -1 1 120 -1 1 1 1 1 1 2 -1 -1
"""


def _plain_means(step: series.Step, start: int, end: int, width: int) -> list[tuple[float, float]]:
    """The mean per bin, summing the step's value at each whole second (its times are whole
    seconds, so this is its integral)."""
    out = []
    for left in range(start, end, width):
        right = min(left + width, end)
        total = 0.0
        for second in range(left, right):
            index = bisect.bisect_right(step.times, second) - 1
            total += step.values[index] if index >= 0 else 0.0
        out.append((float(left), total / (right - left)))
    return out


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("width", [600, 3600, 86400])
def test_binned_means_equal_a_plain_recomputation_from_the_raw_series(
    seed: int, width: int
) -> None:
    rng = random.Random(seed)
    span = {600: 5 * 3600, 3600: 2 * 86400, 86400: 12 * 86400}[width]
    times = sorted(rng.sample(range(1, span), 40))
    step = series.Step((0.0, *map(float, times)), tuple(rng.random() for _ in range(41)))
    start, end = 0, span - rng.randrange(1, width)  # the last bin is a partial one
    means = series.binned_means(step, start, end, width)
    assert len(means) == -(-(end - start) // width)
    expected = _plain_means(step, start, end, width)
    assert [left for left, _ in means] == [left for left, _ in expected]
    assert [value for _, value in means] == pytest.approx([value for _, value in expected])
    # Each bin's mean is also the step's own mean over the bin.
    for left, value in means:
        assert value == pytest.approx(step.mean(left, min(left + width, end)))


def test_binned_means_of_a_series_starting_late_and_an_empty_window() -> None:
    step = series.Step((100.0, 200.0), (1.0, 0.5))
    assert series.binned_means(step, 0.0, 300.0, 100.0) == [
        (0.0, 0.0),
        (100.0, 1.0),
        (200.0, 0.5),
    ]
    assert series.binned_means(step, 50.0, 50.0, 100.0) == []


def test_the_bin_width_goes_by_the_span() -> None:
    assert series.bin_width(3 * 3600) == 600
    assert series.bin_width(6 * 86400) == 3600
    assert series.bin_width(21 * 86400) == 86400


def _record(job_id: int, submit: float, cpus: int, **fields: Any) -> JobRecord:
    values: dict[str, Any] = {"partition": "batch", "qos": None, "high_priority": False}
    values.update(fields)
    return JobRecord(job_id=job_id, trace_number=job_id, submit=submit, cpus=cpus, **values)


def test_lost_intervals_and_victims_of_a_hand_made_run() -> None:
    # Job 1 (2 CPUs) runs 0-10, is suspended 10-15, runs 15-20, is requeued (released at 22),
    # runs again 30-40. Job 2 (1 CPU) runs 0-5 and is cancelled by a preemption (ended at 6).
    # Job 3 (1 CPU) runs 0-8, is suspended by a preemption 8-12 and runs 12-20.
    records = [_record(1, 0.0, 2), _record(2, 0.0, 1), _record(3, 0.0, 1)]
    transitions = [
        Transition(0.0, 1, "PENDING", "RUNNING"),
        Transition(0.0, 2, "PENDING", "RUNNING"),
        Transition(0.0, 3, "PENDING", "RUNNING"),
        Transition(5.0, 2, "RUNNING", "COMPLETING"),
        Transition(6.0, 2, "COMPLETING", "PREEMPTED", "cancel"),
        Transition(8.0, 3, "RUNNING", "SUSPENDED", "suspend"),
        Transition(10.0, 1, "RUNNING", "SUSPENDED"),  # a gang time slice: no preemption
        Transition(12.0, 3, "SUSPENDED", "RUNNING"),
        Transition(15.0, 1, "SUSPENDED", "RUNNING"),
        Transition(20.0, 1, "RUNNING", "COMPLETING"),
        Transition(20.0, 3, "RUNNING", "COMPLETED"),
        Transition(22.0, 1, "COMPLETING", "PENDING", "requeue"),
        Transition(30.0, 1, "PENDING", "RUNNING"),
        Transition(40.0, 1, "RUNNING", "COMPLETED"),
    ]
    intervals = series.run_intervals(records, transitions)
    assert sorted((i.job_id, i.start, i.end, i.lost) for i in intervals) == [
        (1, 0.0, 10.0, True),
        (1, 15.0, 20.0, True),
        (1, 30.0, 40.0, False),
        (2, 0.0, 5.0, True),
        (3, 0.0, 8.0, False),
        (3, 12.0, 20.0, False),
    ]
    assert series.victims(records, transitions) == [
        series.Victim(6.0, 2, "cancel", 5.0, 5.0),
        series.Victim(8.0, 3, "suspend", 8.0, 0.0),
        series.Victim(22.0, 1, "requeue", 15.0, 30.0),
    ]


def _replay(tmp_path: Path) -> tuple[conf.SlurmConfig, list[JobRecord], list[Transition]]:
    path = tmp_path / "slurm.conf"
    path.write_text(CONF)
    config = conf.load(path)
    transitions: list[Transition] = []
    mapping = TraceMapping.from_dict({"partitions": {"2": "urgent"}})
    records = replay(clean(parse_swf(TRACE)), config, mapping, transitions=transitions)
    return config, records, transitions


def test_lost_work_and_victims_of_a_replay_match_the_records(tmp_path: Path) -> None:
    _, records, transitions = _replay(tmp_path)
    summary = summarize(records, total_cpus=2)
    # Job 1 ran 1-21 on two CPUs before job 3 requeued it: 40 CPU-seconds lost.
    assert summary["lost_cpu_hours"] == pytest.approx(40 / 3600)
    found = series.victims(records, transitions)
    assert [(v.job_id, v.mode, v.run, v.lost_cpu_seconds) for v in found] == [
        (1, "requeue", 20.0, 40.0)
    ]
    intervals = series.run_intervals(records, transitions)
    lost = sum((i.end - i.start) * i.cpus for i in intervals if i.lost)
    kept = sum((i.end - i.start) * i.cpus for i in intervals if not i.lost)
    assert lost == pytest.approx(40.0)
    first, last = summary["utilization_window"]
    assert report.useful_utilization(summary, 2) == pytest.approx(kept / (2 * (last - first)))


def test_the_report_shows_the_configuration_at_its_top(tmp_path: Path) -> None:
    config, records, transitions = _replay(tmp_path)
    settings = plugin_settings(config)
    assert ("PreemptType", "preempt/partition_prio") in settings
    assert ("PreemptMode", "REQUEUE") in settings
    assert ("SelectType", "select/linear") in settings
    assert partition_settings(config) == [
        ("batch", "2", "1", "REQUEUE (cluster)"),
        ("urgent", "2", "2", "OFF"),
    ]
    text = report.render_report(
        records,
        transitions,
        summarize(records, total_cpus=2),
        2,
        settings=settings,
        partitions=partition_settings(config),
    )
    assert text.index("<h2>Configuration</h2>") < text.index("<h2>Summary</h2>")
    assert "<td>preempt/partition_prio</td>" in text
    assert "useful utilization" in text
