"""srun inside a batch job runs job steps: their tasks, environment, files, signals, exit
status, and their lines in sacct."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.live.conftest import LiveCluster, make_cluster

pytestmark = pytest.mark.live


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveCluster]:
    live = make_cluster(tmp_path_factory.mktemp("steps"), nodes=2)
    try:
        live.up()
        yield live
    finally:
        live.down()


def _finished(cluster: LiveCluster, job_id: int) -> str:
    cluster.wait_for(
        lambda: cluster.state(job_id) in ("COMPLETED", "FAILED", "CANCELLED"), what="its end"
    )
    return cluster.state(job_id)


def _steps(cluster: LiveCluster, job_id: int) -> list[str]:
    out = cluster.run(
        "sacct", "-j", str(job_id), "-P", "-n", "-o", "JobID,JobName,State,ExitCode,NTasks"
    ).stdout
    return out.splitlines()


def test_srun_runs_numbered_steps_with_their_tasks_and_exit_status(cluster: LiveCluster) -> None:
    script = cluster.root / "steps.sh"
    script.write_text(
        "#!/bin/sh\n"
        "#SBATCH -n 3 -o steps-%j.out\n"
        "srun sh -c 'echo task $SLURM_PROCID of $SLURM_NTASKS step $SLURM_STEP_ID "
        "local $SLURM_LOCALID gtids $SLURM_GTIDS on $SLURMD_NODENAME' | sort\n"
        "echo rc=$?\n"
        "srun -n1 -J failing sh -c 'exit 3'\n"
        "echo rc=$?\n"
        "srun --version\n"
    )
    job_id = int(cluster.run("sbatch", "--parsable", str(script)).stdout)
    assert _finished(cluster, job_id) == "COMPLETED"
    output = (cluster.root / f"steps-{job_id}.out").read_text()
    assert output == (
        "task 0 of 3 step 0 local 0 gtids 0,1,2 on n1\n"
        "task 1 of 3 step 0 local 1 gtids 0,1,2 on n1\n"
        "task 2 of 3 step 0 local 2 gtids 0,1,2 on n1\n"
        "rc=0\n"
        "srun: error: n1: task 0: Exited with exit code 3\n"
        "rc=3\n"
        "slurm 22.05.8\n"
    )
    assert _steps(cluster, job_id) == [
        f"{job_id}|steps.sh|COMPLETED|0:0|",
        f"{job_id}.batch|batch|COMPLETED|0:0|1",
        f"{job_id}.0|sh|COMPLETED|0:0|3",
        f"{job_id}.1|failing|FAILED|3:0|1",
    ]


def test_a_step_spans_the_job_nodes_and_writes_per_task_files(cluster: LiveCluster) -> None:
    job_id = cluster.sbatch(
        "-N2",
        "-o",
        "two-%j.out",
        "--wrap",
        "srun --unbuffered --output out-%j_%t_%s.log --error err-%j_%t.log "
        "sh -c 'echo $SLURM_NODEID $SLURMD_NODENAME $SLURM_STEP_NODELIST $SLURM_NNODES; "
        "echo oops >&2'",
    )
    assert _finished(cluster, job_id) == "COMPLETED"
    for task, node in ((0, "n1"), (1, "n2")):
        out = (cluster.root / f"out-{job_id}_{task}_0.log").read_text()
        assert out == f"{task} {node} n[1-2] 2\n"
        assert (cluster.root / f"err-{job_id}_{task}.log").read_text() == "oops\n"
    assert (cluster.root / f"two-{job_id}.out").read_text() == ""


def test_srun_forwards_a_signal_to_its_tasks_in_their_own_process_group(
    cluster: LiveCluster,
) -> None:
    marker = cluster.root / "forwarded"
    script = cluster.root / "forward.sh"
    script.write_text(
        "#!/bin/bash\n"
        "#SBATCH -o forward-%j.out\n"
        f'srun bash -c \'trap "echo got TERM > {marker}; exit 5" TERM; '
        "echo pgid $(ps -o pgid= -p $$) pid $$; sleep 30 & wait' &\n"
        "srun_pid=$!\n"
        f"while [ ! -s forward-$SLURM_JOB_ID.out ]; do sleep 0.1; done\n"
        "echo batch pgid $(ps -o pgid= -p $$) pid $$\n"
        "kill -TERM $srun_pid\n"
        "wait $srun_pid\n"
        "echo rc=$?\n"
    )
    job_id = int(cluster.run("sbatch", "--parsable", str(script)).stdout)
    assert _finished(cluster, job_id) == "COMPLETED"
    assert marker.read_text() == "got TERM\n"
    lines = (cluster.root / f"forward-{job_id}.out").read_text().splitlines()
    task = lines[0].split()
    batch = lines[1].split()
    assert task[1] == task[3]  # the task leads its own process group
    assert batch[2] == batch[4]  # the batch script leads its own
    assert task[1] != batch[2]
    assert lines[2:] == ["srun: error: n1: task 0: Exited with exit code 5", "rc=5"]
    assert _steps(cluster, job_id)[2] == f"{job_id}.0|bash|FAILED|5:0|1"


def test_srun_refuses_a_step_larger_than_the_job(cluster: LiveCluster) -> None:
    job_id = cluster.sbatch(
        "-n1", "-o", "big-%j.out", "--wrap", "srun -n 9 true; echo rc=$?; srun -N 3 true"
    )
    assert _finished(cluster, job_id) == "FAILED"
    assert (cluster.root / f"big-{job_id}.out").read_text() == (
        f"srun: error: Unable to create step for job {job_id}: "
        "More processors requested than permitted\n"
        "rc=1\n"
        "srun: error: Only allocated 1 nodes asked for 3\n"
    )


def test_srun_outside_an_allocation_refuses(cluster: LiveCluster, tmp_path: Path) -> None:
    env = {k: v for k, v in cluster.env.items() if not k.startswith("SLURM_JOB")}
    cluster.env, saved = env, cluster.env
    try:
        result = cluster.run("srun", "true", check=False)
    finally:
        cluster.env = saved
    assert result.returncode == 1
    assert "inside an allocation only" in result.stderr
