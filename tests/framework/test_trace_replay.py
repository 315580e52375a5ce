"""Trace replay: SWF jobs on a simulated cluster, their records, the summary, the command."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from plurm import conf
from plurm.cli.main import main
from plurm.errors import TraceError
from plurm.sim.metrics import summarize
from plurm.sim.trace import TraceMapping, replay
from plurm.workload import clean, parse_swf

CONF = """ClusterName=t
SlurmctldHost=h
SelectType=select/linear
PreemptType=preempt/partition_prio
PreemptMode=REQUEUE
NodeName=n[1-4] CPUs=1 RealMemory=1000
PartitionName=batch Nodes=ALL Default=YES PriorityTier=1
PartitionName=urgent Nodes=ALL PriorityTier=2
"""

# number submit wait run alloc cpu mem req_procs req_time req_mem status user group exe queue
# partition preceding think
TRACE = """; MaxProcs: 4
1 0 -1 100 4 -1 -1 4 200 -1 1 1 1 1 1 1 -1 -1
2 10 -1 50 1 -1 -1 1 60 -1 1 1 1 1 1 1 -1 -1
3 20 -1 30 2 -1 -1 2 120 -1 1 1 1 1 2 2 -1 -1
"""


def _setup(tmp_path: Path, text: str = CONF) -> conf.SlurmConfig:
    path = tmp_path / "slurm.conf"
    path.write_text(text)
    return conf.load(path)


def test_jobs_run_in_order_and_their_records_add_up(tmp_path: Path) -> None:
    trace = clean(parse_swf(TRACE))
    records = replay(trace, _setup(tmp_path))
    # Job 1 holds all four nodes from t=1 to 101; jobs 2 and 3 start on the pass after.
    assert [(r.trace_number, r.start, r.end, r.state) for r in records] == [
        (1, 1.0, 101.0, "COMPLETED"),
        (2, 102.0, 152.0, "COMPLETED"),
        (3, 102.0, 132.0, "COMPLETED"),
    ]
    assert [r.wait for r in records] == [1.0, 92.0, 82.0]
    summary = summarize(records, total_cpus=4)
    assert summary["wait_mean"] == pytest.approx((1 + 92 + 82) / 3)
    assert summary["makespan"] == 152.0
    # 4 x 100 + 1 x 50 + 2 x 30 CPU-seconds over 4 CPUs x 152 s
    assert summary["utilization"] == pytest.approx(510 / (4 * 152))
    # bounded slowdown: max(1, (wait + run) / max(run, 10))
    assert summary["bounded_slowdown_p95"] == pytest.approx((82 + 30) / 30)


def test_partition_and_queue_numbers_map_to_partitions_and_qos(tmp_path: Path) -> None:
    trace = clean(parse_swf(TRACE))
    mapping = TraceMapping.from_dict({"partitions": {"2": "urgent"}, "queues": {"2": "normal"}})
    records = replay(trace, _setup(tmp_path), mapping)
    assert [(r.partition, r.qos) for r in records] == [
        ("batch", None),
        ("batch", None),
        ("urgent", "normal"),
    ]


def test_high_priority_marking_preempts_and_counts_lost_work(tmp_path: Path) -> None:
    text = TRACE.replace("3 20 -1 30 2", "3 20 -1 30 4").replace("-1 2 120", "-1 4 120")
    trace = clean(parse_swf(text))
    mapping = TraceMapping(high_priority_fraction=1.0, high_priority_partition="urgent", seed=1)
    records = replay(trace, _setup(tmp_path), mapping)
    assert all(r.high_priority for r in records)
    # All in the same tier now: nobody preempts; then only job 3 marked urgent.
    text_mapping = TraceMapping.from_dict({"partitions": {"2": "urgent"}})
    records = replay(trace, _setup(tmp_path), text_mapping)
    first = records[0]
    assert first.preempted_requeue == 1
    assert first.lost_cpu_seconds == pytest.approx(4 * (21 - 1))
    summary = summarize(records, total_cpus=4)
    assert summary["preemptions"]["requeue"] == 1
    assert summary["by_partition"]["urgent"]["jobs"] == 1


def test_the_command_writes_jobs_csv_and_summary_json(tmp_path: Path) -> None:
    (tmp_path / "t.swf").write_text(TRACE)
    (tmp_path / "slurm.conf").write_text(CONF)
    out = tmp_path / "out"
    argv = ["simulate", "--conf", str(tmp_path / "slurm.conf"), "--trace", str(tmp_path / "t.swf")]
    assert main([*argv, "--out", str(out), "--quiet"]) == 0
    rows = list(csv.DictReader((out / "jobs.csv").open()))
    assert [row["state"] for row in rows] == ["COMPLETED"] * 3
    summary = json.loads((out / "summary.json").read_text())
    assert summary["ended"] == 3 and set(summary["by_partition"]) == {"batch"}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"queue": {}}, "unknown mapping key 'queue'"),
        ({"processors_as": "cores"}, "processors_as must be"),
        ({"high_priority": {"fraction": 2}}, "between 0 and 1"),
        ({"partitions": {"x": "batch"}}, "partitions: 'x' is not a whole number"),
        ({"partitions": {"1": None}}, "partitions.1 must be a name, not None"),
        ({"queues": {"0": ""}}, "queues.0 must be a name, not ''"),
    ],
)
def test_bad_mappings_say_what_is_wrong(data: dict[str, object], message: str) -> None:
    with pytest.raises(TraceError, match=message):
        TraceMapping.from_dict(data)


def test_a_mapping_file_that_is_not_toml_is_a_trace_error(tmp_path: Path) -> None:
    path = tmp_path / "m.toml"
    path.write_text("partitions = [")
    with pytest.raises(TraceError, match="not a valid TOML mapping"):
        TraceMapping.load(path)


def test_session_and_trace_together_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "slurm.conf").write_text(CONF)
    argv = ["simulate", "--conf", str(tmp_path / "slurm.conf"), "s", "--trace", "t.swf"]
    assert main(argv) == 1
    assert "either a SESSION file or --trace" in capsys.readouterr().err
