"""Real Python clients of Slurm work unchanged against a live Plurm cluster: submitit (its
own example: a function submitted, its result read back) and dask-jobqueue (a SLURMCluster
scaled to two worker jobs, a computation, then closed with every worker job ended). They
find nothing but Slurm's commands on PATH and SLURM_CONF, as on a Slurm cluster."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.live.conftest import BIN, LiveCluster, make_cluster

pytestmark = pytest.mark.live

submitit = pytest.importorskip("submitit")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveCluster]:
    live = make_cluster(tmp_path_factory.mktemp("clients"), nodes=2)
    try:
        live.up()
        yield live
    finally:
        live.down()


@pytest.fixture
def on_cluster(cluster: LiveCluster, monkeypatch: pytest.MonkeyPatch) -> LiveCluster:
    """This process's environment as a login node's: the commands on PATH, SLURM_CONF."""
    monkeypatch.setenv("SLURM_CONF", str(cluster.conf))
    monkeypatch.setenv("PATH", f"{BIN}:{os.environ.get('PATH', '')}")
    for name in [name for name in os.environ if name.startswith("SLURM_JOB")]:
        monkeypatch.delenv(name)
    return cluster


def add(a: int, b: int) -> int:
    return a + b


def _gone(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True
    return "\nState:\tZ" in status


def test_submitit_runs_a_function_as_a_slurm_job(on_cluster: LiveCluster, tmp_path: Path) -> None:
    executor = submitit.AutoExecutor(folder=tmp_path / "submitit")
    assert executor.cluster == "slurm"  # found by its srun, as on Slurm
    executor.update_parameters(timeout_min=1, slurm_partition="debug")
    job = executor.submit(add, 5, 7)
    assert job.result() == 12
    # the result is written by the task, before srun and the batch script end
    on_cluster.wait_for(
        lambda: job.watcher.get_state(job.job_id, "force") == "COMPLETED", what="COMPLETED"
    )
    sacct = on_cluster.run("sacct", "-j", job.job_id, "-P", "-n", "-o", "JobID,JobName,State")
    assert sacct.stdout.splitlines() == [
        f"{job.job_id}|submitit|COMPLETED",
        f"{job.job_id}.batch|batch|COMPLETED",
        f"{job.job_id}.0|{Path(sys.executable).name}|COMPLETED",
    ]
    assert "Job completed successfully" in (job.stdout() or "")


def test_submitit_cancels_a_job(on_cluster: LiveCluster, tmp_path: Path) -> None:
    executor = submitit.AutoExecutor(folder=tmp_path / "submitit")
    executor.update_parameters(timeout_min=1, slurm_partition="debug")
    job = executor.submit(time.sleep, 120)
    on_cluster.wait_for(lambda: on_cluster.state(int(job.job_id)) == "RUNNING", what="RUNNING")
    job.cancel(check=True)
    on_cluster.wait_for(lambda: on_cluster.state(int(job.job_id)) == "CANCELLED", what="CANCELLED")
    # sacct says who cancelled it, as Slurm's does (submitit reads the State column as is)
    assert job.watcher.get_state(job.job_id, "force") == f"CANCELLED by {os.getuid()}"


def test_submitit_map_array(on_cluster: LiveCluster, tmp_path: Path) -> None:
    executor = submitit.AutoExecutor(folder=tmp_path / "submitit")
    executor.update_parameters(timeout_min=1, slurm_partition="debug")
    jobs = executor.map_array(add, [1, 2, 3], [10, 20, 30])
    assert [job.result() for job in jobs] == [11, 22, 33]


def test_dask_jobqueue_scales_computes_and_closes(on_cluster: LiveCluster, tmp_path: Path) -> None:
    jobqueue = pytest.importorskip("dask_jobqueue")
    distributed = pytest.importorskip("distributed")
    cluster = jobqueue.SLURMCluster(
        cores=1,
        memory="1GB",
        processes=1,
        queue="debug",
        walltime="00:05:00",
        python=sys.executable,
        scheduler_options={"host": "127.0.0.1"},
        worker_extra_args=["--host", "127.0.0.1"],
        local_directory=str(tmp_path),
        log_directory=str(tmp_path / "logs"),
    )
    try:
        cluster.scale(2)
        with distributed.Client(cluster) as client:
            client.wait_for_workers(2, timeout=60)
            assert client.submit(sum, [1, 2, 3]).result(timeout=60) == 6
            assert sum(client.gather(client.map(add, range(10), range(10)))) == 90
            workers = list(client.run(os.getpid).values())
            nannies = list(client.run(os.getpid, nanny=True).values())
            job_ids = [int(job.job_id) for job in cluster.workers.values()]
            assert len(job_ids) == 2
            assert {on_cluster.state(job_id) for job_id in job_ids} == {"RUNNING"}
    finally:
        cluster.close()
    # dask-jobqueue cancels its jobs with scancel: they end, and so do their processes.
    on_cluster.wait_for(
        lambda: all(on_cluster.state(job_id) in ("CANCELLED", "COMPLETED") for job_id in job_ids),
        what="the worker jobs' end",
    )
    on_cluster.wait_for(
        lambda: all(_gone(pid) for pid in workers + nannies), what="the workers' processes' end"
    )
