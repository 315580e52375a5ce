"""The job commands on a live cluster: scontrol update TimeLimit ends a real running job at
its new limit, sbatch --signal=B:... reaches a real trap in the batch shell before the
limit, and sbatch --wait returns the job's exit code."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.live.conftest import LiveCluster, make_cluster

pytestmark = pytest.mark.live


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveCluster]:
    live = make_cluster(tmp_path_factory.mktemp("jobcmds"))
    try:
        live.up()
        yield live
    finally:
        live.down()


def test_sbatch_wait_returns_the_jobs_exit_code(cluster: LiveCluster) -> None:
    done = cluster.run("sbatch", "--wait", "--wrap", "sleep 1; exit 7", check=False)
    assert done.returncode == 7
    assert done.stdout.startswith("Submitted batch job ")
    job_id = int(done.stdout.split()[-1])
    assert cluster.state(job_id) == "FAILED"


def test_a_new_time_limit_and_a_signal_reach_real_jobs(cluster: LiveCluster) -> None:
    marker = cluster.root / "usr1"
    # the warning is due at once (60 s before a 1-minute limit): it comes at the next
    # 30-second time-limit check, as the new limit of the other job does
    warned = cluster.sbatch(
        "-t",
        "1",
        "--signal=B:USR1@60",
        "--wrap",
        f"trap 'echo usr1 >> {marker}' USR1; while :; do sleep 1 & wait; done",
    )
    limited = cluster.sbatch("-t", "10", "--wrap", "sleep 300")
    cluster.wait_for(
        lambda: cluster.state(warned) == cluster.state(limited) == "RUNNING", what="RUNNING"
    )
    update = cluster.run("scontrol", "update", f"JobId={limited}", "TimeLimit=0", check=False)
    assert (update.returncode, update.stderr) == (0, "")
    show = cluster.run("scontrol", "show", "job", str(limited)).stdout
    assert " TimeLimit=00:00:00 " in show
    cluster.wait_for(lambda: marker.exists(), timeout=45, what="the USR1 trap")
    assert Path(marker).read_text() == "usr1\n"
    assert cluster.state(warned) == "RUNNING"  # the trap caught it: the shell runs on
    cluster.wait_for(lambda: cluster.state(limited) == "TIMEOUT", timeout=45, what="TIMEOUT")
    refused = cluster.run("scontrol", "update", f"JobId={limited}", "TimeLimit=5", check=False)
    assert (refused.returncode, refused.stderr) == (
        1,
        f"Job has already finished for job {limited}\n",
    )
    cluster.run("scancel", str(warned))
    cluster.wait_for(lambda: cluster.state(warned) == "CANCELLED", what="CANCELLED")
