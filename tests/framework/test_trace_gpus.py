"""Trace jobs with GPUs: the mapping's ``[gpus]`` table, and the GPU figures of the summary
(GPU utilization, lost GPU-hours) checked against a plain re-computation from the replay's
state changes, and shown in the HTML report and the compare page; a cluster without GPUs gets
none of them."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

from plurm import conf
from plurm.cli.main import main
from plurm.errors import TraceError
from plurm.sim.compare import RunResult, render_csv, render_table
from plurm.sim.metrics import CSV_FIELDS, GPU_CSV_FIELDS, summarize, write_jobs_csv
from plurm.sim.trace import TraceMapping, Transition, replay
from plurm.workload import clean, parse_swf

CONF = """ClusterName=t
SlurmctldHost=h
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
PreemptType=preempt/partition_prio
PreemptMode=REQUEUE
NodeName=n[1-2] CPUs=2 Sockets=1 CoresPerSocket=2 RealMemory=1000 Gres=gpu:2
PartitionName=batch Nodes=ALL Default=YES PriorityTier=1
PartitionName=urgent Nodes=ALL PriorityTier=2
"""

# number submit wait run alloc cpu mem req_procs req_time req_mem status user group exe queue
# partition preceding think
TRACE = """; MaxProcs: 4
1 0 -1 100 2 -1 -1 2 200 -1 1 1 1 1 1 1 -1 -1
2 0 -1 200 1 -1 -1 1 300 -1 1 1 1 1 1 1 -1 -1
3 50 -1 30 2 -1 -1 2 60 -1 1 1 1 1 1 2 -1 -1
4 60 -1 40 1 -1 -1 1 60 -1 1 1 1 1 2 1 -1 -1
"""

MAPPING = {
    "partitions": {"1": "batch", "2": "urgent"},
    "gpus": {"per_processor": 1, "match": {"queue": [1]}},
}


def _config(tmp_path: Path, text: str = CONF) -> conf.SlurmConfig:
    path = tmp_path / "slurm.conf"
    path.write_text(text)
    return conf.load(path)


def _recomputed(transitions: list[Transition], gpus: dict[int, int]) -> tuple[float, float]:
    """GPU-seconds run and GPU-seconds thrown away (runs ended by a requeue or a cancel
    preemption), straight from the state changes."""
    used = lost = 0.0
    since: dict[int, float] = {}
    attempt: dict[int, float] = {}
    for change in transitions:
        job = change.job_id
        if change.old == "RUNNING":
            run = (change.time - since.pop(job)) * gpus[job]
            used += run
            attempt[job] = attempt.get(job, 0.0) + run
        if change.new == "RUNNING":
            since[job] = change.time
        if change.new == "PENDING" and change.old != "PENDING":
            lost += attempt.pop(job, 0.0)
        if change.new in ("COMPLETED", "PREEMPTED", "CANCELLED", "TIMEOUT", "FAILED"):
            thrown = attempt.pop(job, 0.0)
            lost += thrown if change.new == "PREEMPTED" else 0.0
    return used, lost


def test_gpu_figures_match_a_plain_recomputation(tmp_path: Path) -> None:
    config = _config(tmp_path)
    transitions: list[Transition] = []
    records = replay(
        clean(parse_swf(TRACE)), config, TraceMapping.from_dict(MAPPING), transitions=transitions
    )
    assert all(r.state == "COMPLETED" for r in records), [(r.state, r.rejected) for r in records]
    # one GPU per processor for queue 1; job 4 (queue 2) has none
    assert [r.gpus for r in records] == [2, 1, 2, 0]
    assert sum(r.preempted_requeue for r in records) >= 1  # the urgent job took GPUs
    gpus = {r.job_id: r.gpus for r in records}
    used, lost = _recomputed(transitions, gpus)
    assert lost > 0
    summary = summarize(records, total_cpus=4, total_gpus=4)
    first = min(r.submit for r in records)
    last = max(r.end for r in records if r.end is not None)
    assert summary["gpu_utilization"] == pytest.approx(used / (4 * (last - first)))
    assert summary["lost_gpu_hours"] == pytest.approx(lost / 3600)
    assert summary["gpu_jobs"] == 3
    assert summary["by_partition"]["urgent"]["gpu_jobs"] == 1
    out = io.StringIO()
    write_jobs_csv(records, out, gpus=True)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert [float(row["gpu_seconds"]) for row in rows] == [r.gpu_seconds for r in records]
    assert sum(float(row["lost_gpu_seconds"]) for row in rows) == pytest.approx(lost)


def test_per_node_gpus_with_whole_nodes(tmp_path: Path) -> None:
    mapping = TraceMapping.from_dict({"processors_as": "nodes", "gpus": {"per_node": 1}})
    trace = "1 0 -1 10 4 -1 -1 4 60 -1 1 1 1 1 1 1 -1 -1\n"
    records = replay(clean(parse_swf(trace)), _config(tmp_path), mapping)
    assert (records[0].state, records[0].nodes, records[0].gpus) == ("COMPLETED", 2, 2)
    assert records[0].gpu_seconds == pytest.approx(2 * records[0].run)


def test_no_gpu_figures_without_gpus(tmp_path: Path) -> None:
    plain = CONF.replace(" Gres=gpu:2", "").replace("GresTypes=gpu\n", "")
    records = replay(clean(parse_swf(TRACE)), _config(tmp_path, plain))
    summary = summarize(records, total_cpus=4)
    assert not [key for key in summary if "gpu" in key]
    out = io.StringIO()
    write_jobs_csv(records, out)
    assert out.getvalue().splitlines()[0] == ",".join(CSV_FIELDS)
    assert not set(GPU_CSV_FIELDS) & set(CSV_FIELDS)
    # a mapping that gives GPUs to a cluster without any is refused before the replay
    with pytest.raises(TraceError, match="has no GPUs"):
        replay(clean(parse_swf(TRACE)), _config(tmp_path, plain), TraceMapping.from_dict(MAPPING))


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"per_node": 1, "per_processor": 1}, "one of per_node and per_processor"),
        ({}, "one of per_node and per_processor"),
        ({"per_node": 0}, "gpus.per_node must be a whole number >= 1"),
        ({"per_processor": 1.5}, "gpus.per_processor must be a whole number >= 1"),
        ({"per_node": 1, "kind": "x"}, "unknown gpus key 'kind'"),
        ({"per_node": 1, "match": {"colour": 1}}, "unknown field 'colour'"),
        ({"per_node": 1, "type": ""}, "gpus.type must be a name"),
    ],
)
def test_bad_gpu_tables_are_refused(table: dict[str, object], message: str) -> None:
    with pytest.raises(TraceError, match=message):
        TraceMapping.from_dict({"gpus": table}, "m.toml")


def test_a_type_the_cluster_lacks_is_refused(tmp_path: Path) -> None:
    mapping = TraceMapping.from_dict({"gpus": {"per_node": 1, "type": "h100"}}, "m.toml")
    with pytest.raises(TraceError, match=r"gpus: .* has no GPUs of type 'h100'"):
        replay(clean(parse_swf(TRACE)), _config(tmp_path), mapping)


def test_the_comparison_shows_gpu_rows_only_when_a_run_had_gpus(tmp_path: Path) -> None:
    with_gpus = summarize(
        replay(clean(parse_swf(TRACE)), _config(tmp_path), TraceMapping.from_dict(MAPPING)),
        total_cpus=4,
        total_gpus=4,
    )
    plain = dict(with_gpus)
    for key in ("gpu_jobs", "gpu_utilization", "lost_gpu_hours"):
        del plain[key]
    only_plain = render_csv([RunResult("a", plain), RunResult("b", plain)])
    assert "gpu" not in only_plain
    mixed = render_csv([RunResult("a", plain), RunResult("b", with_gpus)])
    lines = {line.split(",")[0]: line for line in mixed.splitlines()}
    assert lines["gpu_utilization"] == f"gpu_utilization,,{with_gpus['gpu_utilization']!r}"
    assert "| GPU utilization | n/a | 50.0% |" in render_table(
        [RunResult("a", plain), RunResult("b", with_gpus)]
    )


GPU_MAP = """[partitions]
"1" = "batch"
"2" = "urgent"

[gpus]
per_processor = 1
match = { queue = [1] }
"""

GPU_COMPARISON = """title = "gpus"
trace = "t.swf"
conf = "slurm.conf"
map = "map.toml"

[[run]]
name = "requeue"

[[run]]
name = "cancel"
set = { PreemptMode = "CANCEL" }
"""


def _cells(text: str) -> dict[str, list[str]]:
    """Each table row of a page by its first cell: the other cells' texts."""
    rows: dict[str, list[str]] = {}
    for row in re.findall(r"<tr>(.*?)</tr>", text, re.S):
        cells = [
            re.sub(r"<[^>]+>", "", cell) for cell in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row)
        ]
        if cells:
            rows.setdefault(cells[0], cells[1:])
    return rows


def test_the_html_reports_show_gpu_figures_only_with_gpus(tmp_path: Path) -> None:
    (tmp_path / "t.swf").write_text(TRACE)
    (tmp_path / "map.toml").write_text(GPU_MAP)
    (tmp_path / "slurm.conf").write_text(CONF)
    argv = ["simulate", "--conf", str(tmp_path / "slurm.conf"), "--trace", str(tmp_path / "t.swf")]
    assert main([*argv, "--map", str(tmp_path / "map.toml"), "--out", str(tmp_path / "g")]) == 0
    summary = json.loads((tmp_path / "g" / "summary.json").read_text())
    rows = _cells((tmp_path / "g" / "report.html").read_text())
    assert rows["GPU jobs"] == ["3"]
    assert rows["GPU utilization"] == [f"{100 * summary['gpu_utilization']:.1f} %"]
    assert rows["lost GPU work"] == [f"{summary['lost_gpu_hours']:,.2f} GPU-h"]
    assert summary["lost_gpu_hours"] > 0
    (tmp_path / "compare.toml").write_text(GPU_COMPARISON)
    compare = ["compare", str(tmp_path / "compare.toml"), "--out", str(tmp_path / "c"), "--quiet"]
    assert main(compare) == 0
    page = _cells((tmp_path / "c" / "compare.html").read_text())
    figures = {
        name: json.loads((tmp_path / "c" / name / "summary.json").read_text())
        for name in ("requeue", "cancel")
    }
    shown = [f"{100 * figures[n]['gpu_utilization']:.1f} %" for n in ("requeue", "cancel")]
    assert [cell.strip() for cell in page["GPU utilization"][:2]] == shown
    lost = [f"{figures[n]['lost_gpu_hours']:,.2f}" for n in ("requeue", "cancel")]
    assert page["lost GPU-hours"] == lost
    # without GPUs: no GPU row on either page
    plain = CONF.replace(" Gres=gpu:2", "").replace("GresTypes=gpu\n", "")
    (tmp_path / "slurm.conf").write_text(plain)
    (tmp_path / "map.toml").write_text(GPU_MAP.split("[gpus]")[0])
    assert main([*argv, "--map", str(tmp_path / "map.toml"), "--out", str(tmp_path / "p")]) == 0
    assert "GPU" not in (tmp_path / "p" / "report.html").read_text()
    compare[3] = str(tmp_path / "pc")
    assert main(compare) == 0
    assert "GPU" not in (tmp_path / "pc" / "compare.html").read_text()
