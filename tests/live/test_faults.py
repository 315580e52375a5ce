"""Live mode under faults: daemons killed with SIGKILL lose no job and run none twice, and bad
input on the network gets a clear error while the daemons keep running."""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

import pytest

from plurm import conf
from plurm.commands.dispatch import run_command
from plurm.live.client import RpcClient, invocation
from plurm.live.noded import _start_time
from tests.live.conftest import LiveCluster, make_cluster

pytestmark = pytest.mark.live


def _kill9(cluster: LiveCluster, daemon: str) -> int:
    """SIGKILL the daemon its pid file names (checked by start time); its pid."""
    pid_text, start_text = (cluster.root / "state" / f"{daemon}.pid").read_text().split()
    pid = int(pid_text)
    assert _start_time(pid) == int(start_text), f"{daemon} is not running"
    os.kill(pid, signal.SIGKILL)
    # the test process started it (through local.up): reap it, so that it is gone
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)
    return pid


def _submit(cluster: LiveCluster, client: RpcClient, *argv: str) -> int:
    """sbatch's code, run in this process against the live controller (sixty sbatch
    processes would spend most of the test starting Python)."""
    result = run_command(["sbatch", "--parsable", *argv], client, cluster.root, invocation())
    assert result.status == 0, result.stderr
    return int(result.stdout.strip())


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return not state[state.rindex(")") + 2 :].startswith("Z")


# ---------------------------------------------------------------------------- plurmctld


def test_a_killed_plurmctld_loses_no_job_and_runs_none_twice(tmp_path: Path) -> None:
    cluster = make_cluster(
        tmp_path, nodes=4, cpus=4, extra="SelectType=select/cons_res\nSelectTypeParameters=CR_CPU"
    )
    ran = tmp_path / "ran"
    (tmp_path / "out").mkdir()
    try:
        cluster.up()
        client = RpcClient(conf.load(str(cluster.conf)))
        ids = [
            _submit(
                cluster,
                client,
                "-o",
                "out/%j.out",
                "--wrap",
                f"echo $SLURM_JOB_ID >> {ran}; sleep 1",
            )
            for _ in range(60)
        ]
        assert ids == list(range(ids[0], ids[0] + 60))
        # some have ended, some run, most wait
        cluster.wait_for(lambda: ran.exists() and len(ran.read_text().split()) >= 20)
        _kill9(cluster, "plurmctld")
        started = cluster.run("plurm", "cluster", "up", check=False)
        assert started.returncode == 0, started.stderr
        assert "plurmctld" in started.stdout
        assert "plurmd" not in started.stdout  # the nodes' daemons ran on

        def sacct() -> list[str]:
            return cluster.run(
                "sacct", "-X", "-P", "-n", "-o", "JobID,State", "-j", ",".join(map(str, ids))
            ).stdout.splitlines()

        cluster.wait_for(
            lambda: sum(line.endswith("|COMPLETED") for line in sacct()) == 60,
            timeout=60,
            what="every job COMPLETED",
        )
        assert sorted(sacct()) == sorted(f"{job_id}|COMPLETED" for job_id in ids)
        assert sorted(map(int, ran.read_text().split())) == ids  # each ran exactly once
        after = _submit(cluster, client, "--wrap", "true")
        assert after == ids[-1] + 1
    finally:
        cluster.down()


# ---------------------------------------------------------------------------- plurmd


def test_a_killed_plurmd_downs_its_node_and_its_restart_kills_the_orphans(
    tmp_path: Path,
) -> None:
    cluster = make_cluster(
        tmp_path,
        nodes=2,
        cpus=2,
        slurmd_timeout=6,
        extra="ReturnToService=2\nMessageTimeout=2\nSelectType=select/cons_res\nSelectTypeParameters=CR_CPU",
    )
    script = "sleep 300 & echo $$ $! > pids-$SLURM_JOB_ID-${SLURM_RESTART_COUNT:-0}; wait"

    def pids(job_id: int, attempt: int) -> list[int]:
        path = tmp_path / f"pids-{job_id}-{attempt}"
        words = path.read_text().split() if path.exists() else []
        return [int(word) for word in words] if len(words) == 2 else []

    def node(name: str) -> str:
        lines = cluster.run("sinfo", "-h", "-N", "-o", "%N %t %E").stdout.splitlines()
        return next(line for line in lines if line.startswith(f"{name} "))

    try:
        cluster.up()
        requeued = cluster.sbatch("-w", "n1", "-o", "/dev/null", "--wrap", script)
        failed = cluster.sbatch("-w", "n1", "-o", "/dev/null", "--no-requeue", "--wrap", script)
        cluster.wait_for(lambda: bool(pids(requeued, 0) and pids(failed, 0)), what="both jobs")
        orphans = pids(requeued, 0) + pids(failed, 0)
        _kill9(cluster, "plurmd-n1")
        cluster.wait_for(
            lambda: node("n1") == "n1 down* Not responding", timeout=30, what="n1 down*"
        )
        cluster.wait_for(lambda: cluster.state(failed) == "NODE_FAIL", what="NODE_FAIL")
        assert cluster.state(requeued) == "PENDING"  # requeued; it waits for n1 (-w n1)
        assert node("n2") == "n2 idle none"
        assert all(_alive(pid) for pid in orphans)  # nothing killed them yet
        started = cluster.run("plurm", "cluster", "up")
        assert started.stdout.startswith("started: plurmd-n1\n")
        assert not [pid for pid in orphans if _alive(pid)]
        # ReturnToService=2: n1 serves again; the requeued job waits out its BeginTime
        cluster.wait_for(lambda: node("n1") == "n1 idle none", what="n1 idle")
        show = cluster.run("scontrol", "show", "job", str(requeued)).stdout
        assert "JobState=PENDING Reason=BeginTime" in show
        assert " Restarts=1 " in show
        sacct = cluster.run(
            "sacct", "-X", "-P", "-n", "-o", "JobID,State,ExitCode", "-j", str(failed)
        ).stdout
        assert sacct == f"{failed}|NODE_FAIL|0:0\n"
    finally:
        cluster.down()
