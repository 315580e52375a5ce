"""jobacct_gather/linux on a live cluster: what jobs use, in sacct and sstat, and jobs over
their memory limit ended OUT_OF_MEMORY (JobAcctGatherParams=OverMemoryKill).

One cluster of four node daemons for the module, sampling every second.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.live.conftest import LiveCluster, make_cluster

pytestmark = pytest.mark.live

EXTRA = """\
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=task=1
JobAcctGatherParams=OverMemoryKill
"""

#: Holds ``MB`` megabytes, every page touched, for ``SECONDS`` seconds.
HOLD = """\
#!/bin/sh
{python} -c '
import time
block = bytearray({mb} * 1024 * 1024)
for i in range(0, len(block), 4096):
    block[i] = 1
time.sleep({seconds})
'
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveCluster]:
    live = make_cluster(tmp_path_factory.mktemp("gather"), extra=EXTRA)
    try:
        live.up()
        yield live
    finally:
        live.down()


def _script(cluster: LiveCluster, name: str, mb: int, seconds: float) -> Path:
    path = cluster.root / name
    path.write_text(HOLD.format(python=sys.executable, mb=mb, seconds=seconds))
    path.chmod(0o755)
    return path


def _sacct(cluster: LiveCluster, job_id: int, fields: str) -> list[list[str]]:
    out = cluster.run("sacct", "-j", str(job_id), "-n", "-P", "-o", fields).stdout
    return [line.split("|") for line in out.splitlines()]


def _bytes(text: str) -> float:
    units = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}
    number = text.rstrip("KMG")
    return float(number) * units[text[len(number) :]]


def test_sacct_max_rss_of_a_job_holding_200_mb(cluster: LiveCluster) -> None:
    job_id = cluster.sbatch(str(_script(cluster, "hold200.sh", 200, 3)))
    cluster.wait_for(lambda: cluster.state(job_id) == "COMPLETED", 60, "the job's end")
    rows = _sacct(
        cluster, job_id, "JobID,State,MaxRSS,MaxVMSize,AveRSS,AveCPU,TotalCPU,MaxPages,Elapsed"
    )
    job, batch = rows[0], rows[1]
    assert batch[0] == f"{job_id}.batch" and batch[1] == "COMPLETED"
    assert job[2] == "" and job[3] == ""  # usage shows on the steps' lines only
    max_rss = _bytes(batch[2])
    assert 190 * 1024**2 <= max_rss <= 320 * 1024**2, batch
    assert batch[2].endswith(("K", "M"))  # Slurm's exact conversion of a size in bytes
    assert _bytes(batch[3]) >= max_rss  # virtual size holds at least what is resident
    assert batch[4] == batch[2]  # one task: its average is its maximum
    assert batch[5].count(":") == 2 and batch[6] != "" and job[6] == batch[6]
    assert batch[7].isdigit() or batch[7][:-1].isdigit()
    assert batch[8].count(":") == 2


def test_a_job_over_its_memory_ends_out_of_memory(cluster: LiveCluster) -> None:
    job_id = cluster.sbatch("--mem=100", str(_script(cluster, "hog400.sh", 400, 30)))
    cluster.wait_for(
        lambda: cluster.state(job_id) not in ("PENDING", "RUNNING", "COMPLETING", ""),
        20,
        "the job's end",
    )
    assert cluster.state(job_id) == "OUT_OF_MEMORY"
    code = cluster.run("squeue", "-h", "-t", "all", "-j", str(job_id), "-o", "%t").stdout
    assert code.strip() == "OOM"
    rows = _sacct(cluster, job_id, "JobID,State,ExitCode,MaxRSS,Elapsed")
    assert rows[0][1:3] == ["OUT_OF_MEMORY", "0:125"]
    assert rows[1][:3] == [f"{job_id}.batch", "OUT_OF_MEMORY", "0:125"]
    assert _bytes(rows[1][3]) > 100 * 1024**2
    # within a few sampling periods of one second, not the 30 s the job would hold on
    hours, minutes, seconds = (int(part) for part in rows[0][4].split(":"))
    assert hours == minutes == 0 and seconds <= 10


def test_sstat_shows_a_running_job_and_its_steps(cluster: LiveCluster) -> None:
    hold = _script(cluster, "hold50.sh", 50, 30)
    script = cluster.root / "steps.sh"
    script.write_text(f"#!/bin/sh\nsrun -n 2 {hold} &\nsleep 30\n")
    job_id = cluster.sbatch("-n", "2", str(script))

    def sampled() -> bool:
        result = cluster.run(
            "sstat", "-j", f"{job_id}.0", "-n", "-P", "-o", "JobID,MaxRSS,NTasks", check=False
        )
        cells = result.stdout.strip().split("|")
        return len(cells) == 3 and cells[1] != "" and _bytes(cells[1]) >= 45 * 1024**2

    cluster.wait_for(sampled, 30, "step 0's figures")
    lines = cluster.run("sstat", "-j", str(job_id), "-P", "-o", "JobID,MaxRSS,MaxRSSTask,NTasks")
    head, row = lines.stdout.splitlines()
    assert head == "JobID|MaxRSS|MaxRSSTask|NTasks"
    cells = row.split("|")
    assert cells[0] == f"{job_id}.0" and cells[2] in ("0", "1") and cells[3] == "2"
    batch = cluster.run("sstat", "-j", f"{job_id}.batch", "-n", "-P", "-o", "JobID,MaxRSS")
    assert batch.stdout.split("|")[0] == f"{job_id}.batch"
    everything = cluster.run("sstat", "-a", "-j", str(job_id), "-n", "-P", "-o", "JobID")
    assert everything.stdout.split() == [f"{job_id}.0", f"{job_id}.batch"]
    cluster.run("scancel", str(job_id))
    cluster.wait_for(lambda: cluster.state(job_id) == "CANCELLED", 30, "the cancel")
    gone = cluster.run("sstat", "-j", str(job_id), check=False)
    assert gone.returncode == 1 and f"couldn't get steps for job {job_id}" in gone.stderr
    # the figures of the step went to accounting with the job's end
    rows = _sacct(cluster, job_id, "JobID,MaxRSS")
    step = next(row for row in rows if row[0] == f"{job_id}.0")
    assert _bytes(step[1]) >= 45 * 1024**2


def test_a_step_over_its_memory_ends_out_of_memory_and_the_job_goes_on(
    cluster: LiveCluster,
) -> None:
    hog = _script(cluster, "hog300.sh", 300, 30)
    script = cluster.root / "oomstep.sh"
    script.write_text(f"#!/bin/sh\nsrun {hog}\necho after=$?\n")
    job_id = cluster.sbatch("--mem=150", "-o", str(cluster.root / "oomstep.out"), str(script))
    cluster.wait_for(lambda: cluster.state(job_id) == "COMPLETED", 30, "the job's end")
    rows = {row[0]: row[1:] for row in _sacct(cluster, job_id, "JobID,State,ExitCode")}
    assert rows[f"{job_id}.0"] == ["OUT_OF_MEMORY", "0:125"]
    assert rows[f"{job_id}.batch"] == ["COMPLETED", "0:0"]
    assert "after=137" in (cluster.root / "oomstep.out").read_text()


def test_cgroup_gathers_or_says_once_why_it_cannot(tmp_path: Path) -> None:
    from plurm_jobacct_gather_cgroup import CgroupTree

    live = make_cluster(
        tmp_path, nodes=1, extra=EXTRA.replace("jobacct_gather/linux", "jobacct_gather/cgroup")
    )
    try:
        live.up()
        first = live.sbatch(str(_script(live, "hold200.sh", 200, 3)))
        second = live.sbatch("--mem=100", str(_script(live, "hog400.sh", 400, 30)))
        live.wait_for(
            lambda: live.state(second) not in ("PENDING", "RUNNING", "COMPLETING", ""),
            40,
            "the second job's end",
        )
        live.wait_for(lambda: live.state(first) == "COMPLETED", 30, "the first job's end")
        max_rss = _bytes(_sacct(live, first, "JobID,MaxRSS")[1][1])
        assert 190 * 1024**2 <= max_rss <= 320 * 1024**2
        assert live.state(second) == "OUT_OF_MEMORY", _sacct(
            live, second, "JobID,State,ExitCode,MaxRSS"
        )
        log = (live.root / "state" / "plurmd-n1.log").read_text()
        probe = CgroupTree.probe("probe-test")
        if isinstance(probe, str):
            # the machine lets no daemon make a memory cgroup (this sandbox): one clear line
            assert log.count("jobacct_gather/cgroup: no cgroup per job on node n1") == 1
            assert "sampling each process's /proc figures instead" in log
        else:
            probe.base.rmdir()
            assert "no cgroup per job" not in log
    finally:
        live.down()


def test_a_cgroups_memory_limit_is_enforced_by_the_kernel(tmp_path: Path) -> None:
    """With a cgroup per job, the kernel ends a job over its --mem at once: the sampler,
    every 60 s here, has no part in it. The job ends OUT_OF_MEMORY, as Slurm's does."""
    from plurm_jobacct_gather_cgroup import CgroupTree

    probe = CgroupTree.probe("probe-test")
    if isinstance(probe, str):
        pytest.skip(f"this machine gives the node daemon no memory cgroup: {probe}")
    probe.base.rmdir()
    extra = EXTRA.replace("jobacct_gather/linux", "jobacct_gather/cgroup").replace(
        "task=1", "task=60"
    )
    live = make_cluster(tmp_path, nodes=1, extra=extra)
    try:
        live.up()
        hog = _script(live, "hog400.sh", 400, 60)
        script = live.root / "first-line.sh"  # its first command is in the job's cgroup
        script.write_text(f"#!/bin/sh\ncat /proc/self/cgroup > {live.root}/cgroup.txt\n{hog}\n")
        script.chmod(0o755)
        job_id = live.sbatch("--mem=100", str(script))
        live.wait_for(
            lambda: live.state(job_id) not in ("PENDING", "RUNNING", "COMPLETING", ""),
            45,
            "the job's end",
        )
        assert f"/plurm_n1/job_{job_id}\n" in (live.root / "cgroup.txt").read_text()
        rows = _sacct(live, job_id, "JobID,State,ExitCode,Elapsed")
        assert rows[0][1:3] == ["OUT_OF_MEMORY", "0:125"], rows
        assert rows[1][:3] == [f"{job_id}.batch", "OUT_OF_MEMORY", "0:125"]
        hours, minutes, seconds = (int(part) for part in rows[0][3].split(":"))
        assert hours == minutes == 0 and seconds < 30  # not the sampler's 60 s
        log = (live.root / "state" / "plurmd-n1.log").read_text()
        assert f"job_id={job_id}: detected 1 oom-kill event(s) in " in log
        assert "exceeded memory limit" not in log  # the sampler never saw it
        assert not (probe.base / f"job_{job_id}").exists()  # its cgroup is gone
    finally:
        live.down()


def test_a_finished_steps_figures_show_while_its_job_runs_on(cluster: LiveCluster) -> None:
    hold = _script(cluster, "hold60.sh", 60, 2)
    script = cluster.root / "onestep.sh"
    script.write_text(f"#!/bin/sh\nsrun {hold}\nsleep 60\n")
    job_id = cluster.sbatch(str(script))

    def step_figures() -> list[str] | None:
        rows = _sacct(cluster, job_id, "JobID,State,MaxRSS")
        row = next((r for r in rows if r[0] == f"{job_id}.0"), None)
        return row if row is not None and row[1] == "COMPLETED" and row[2] else None

    cluster.wait_for(lambda: step_figures() is not None, 30, "step 0's figures in sacct")
    row = step_figures()
    assert row is not None and _bytes(row[2]) >= 55 * 1024**2
    assert cluster.state(job_id) == "RUNNING"
    cluster.run("scancel", str(job_id))
    cluster.wait_for(lambda: cluster.state(job_id) == "CANCELLED", 30, "the cancel")


def test_bad_usage_reports_are_refused_and_the_controller_serves_on(
    cluster: LiveCluster,
) -> None:
    from plurm import conf
    from plurm.live.client import RpcClient
    from plurm.live.rpc import RpcError

    client = RpcClient(conf.load(str(cluster.conf)))
    job_id = cluster.sbatch("--wrap", "sleep 30")
    cluster.wait_for(lambda: cluster.state(job_id) == "RUNNING", 20, "the job's start")
    for usage in ({"max_rss": -5}, {"max_rss": "big"}, {"owner": 0}, [1, 2]):
        with pytest.raises(RpcError, match="bad usage"):
            client.call(
                "step_usage",
                {"node": "n1", "job_id": job_id, "step": "0", "usage": usage,
                 "out_of_memory": False},
            )  # fmt: skip
    with pytest.raises(RpcError, match="out_of_memory a boolean"):
        client.call("step_usage", {"node": "n1", "job_id": job_id, "step": "0"})
    assert cluster.state(job_id) == "RUNNING"
    cluster.run("scancel", str(job_id))
    cluster.wait_for(lambda: cluster.state(job_id) == "CANCELLED", 30, "the cancel")
