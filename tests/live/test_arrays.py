"""A live cluster runs a throttled job array, a job that depends on it, and a held job."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.live.conftest import LiveCluster, make_cluster

pytestmark = pytest.mark.live

TASK = """#!/bin/sh
echo start $(date +%s.%N)
echo ids $SLURM_JOB_ID $SLURM_ARRAY_JOB_ID $SLURM_ARRAY_TASK_ID $SLURM_ARRAY_TASK_COUNT \
$SLURM_ARRAY_TASK_MIN $SLURM_ARRAY_TASK_MAX $SLURM_ARRAY_TASK_STEP
sleep 2
echo end $(date +%s.%N)
"""

AFTER = """#!/bin/sh
echo start $(date +%s.%N)
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveCluster]:
    live = make_cluster(tmp_path_factory.mktemp("arrays"))
    try:
        live.up()
        yield live
    finally:
        live.down()


def _values(path: Path) -> dict[str, list[str]]:
    return {line.split()[0]: line.split()[1:] for line in path.read_text().splitlines()}


def test_a_throttled_array_and_a_job_after_it(cluster: LiveCluster) -> None:
    (cluster.root / "task.sh").write_text(TASK)
    (cluster.root / "after.sh").write_text(AFTER)
    array = cluster.sbatch("--array=1-6%2", "-o", "%A_%a.out", str(cluster.root / "task.sh"))
    after = cluster.sbatch(
        f"--dependency=afterok:{array}", "-o", "after.out", str(cluster.root / "after.sh")
    )
    shown = cluster.run("squeue", "-h", "-j", str(after), "-o", "%r %E").stdout
    assert shown == f"Dependency afterok:{array}_*(unfulfilled)\n"
    most = 0

    def done() -> bool:
        nonlocal most
        shown = cluster.run("squeue", "-h", "-j", str(array), "-o", "%i %T").stdout
        most = max(most, shown.split().count("RUNNING"))
        return cluster.state(after) == "COMPLETED"

    cluster.wait_for(done, timeout=90, what="the array and the job after it")
    assert 1 <= most <= 2
    sacct = cluster.run(
        "sacct", "-j", str(array), "-X", "-n", "-P", "-o", "JobID,JobIDRaw,State"
    ).stdout
    rows = [line.split("|") for line in sacct.splitlines()]
    assert sorted(row[0] for row in rows) == [f"{array}_{task}" for task in range(1, 7)]
    assert {row[2] for row in rows} == {"COMPLETED"}
    raw_ids = {row[0]: int(row[1]) for row in rows}
    assert raw_ids[f"{array}_1"] == array  # the first task started has the array's id
    spans = []
    for task in range(1, 7):
        values = _values(cluster.root / f"{array}_{task}.out")
        job_id = raw_ids[f"{array}_{task}"]
        assert values["ids"] == [str(job_id), str(array), str(task), "6", "1", "6", "1"]
        spans.append((float(values["start"][0]), float(values["end"][0])))
    # never more than two tasks at once, by the tasks' own clocks
    for start, _ in spans:
        assert sum(1 for s, e in spans if s <= start < e) <= 2
    after_start = float(_values(cluster.root / "after.out")["start"][0])
    assert after_start >= max(end for _, end in spans)


def test_a_held_job_waits_until_released(cluster: LiveCluster) -> None:
    job = cluster.sbatch("-H", "-o", "/dev/null", "--wrap", "true")
    out = cluster.run("squeue", "-h", "-j", str(job), "-o", "%T %r %Q").stdout
    assert out == "PENDING JobHeldUser 0\n"
    cluster.run("scontrol", "release", str(job))
    cluster.wait_for(lambda: cluster.state(job) == "COMPLETED", what="the released job")
    # root's scontrol hold is an administrator's hold
    other = cluster.sbatch("-H", "-o", "/dev/null", "--wrap", "true")
    cluster.run("scontrol", "hold", str(other))
    out = cluster.run("squeue", "-h", "-j", str(other), "-o", "%T %r %Q").stdout
    assert out == "PENDING JobHeldAdmin 0\n"
    cluster.run("scancel", str(other))
    cluster.wait_for(lambda: cluster.state(other) == "CANCELLED", what="the cancelled job")
