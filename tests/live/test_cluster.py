"""A live cluster of plurmctld and four plurmd runs real jobs behind Slurm's commands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.live.conftest import LiveCluster

pytestmark = pytest.mark.live


def _proc_states(pid_file: Path) -> list[str]:
    """The state letters of the processes whose pids a job wrote."""
    states = []
    for word in pid_file.read_text().split():
        try:
            status = Path(f"/proc/{word}/status").read_text()
        except OSError:
            continue
        line = next(line for line in status.splitlines() if line.startswith("State:"))
        states.append(line.split()[1])
    return states


def test_a_batch_job_runs_writes_its_output_and_completes(live_cluster: LiveCluster) -> None:
    script = live_cluster.root / "hello.sh"
    script.write_text(
        "#!/bin/sh\n#SBATCH -J hello\necho hello from $SLURM_JOB_ID on $SLURMD_NODENAME\n"
    )
    out = live_cluster.run("sbatch", str(script)).stdout
    assert out.startswith("Submitted batch job ")
    job_id = int(out.split()[-1])
    live_cluster.wait_for(lambda: live_cluster.state(job_id) == "COMPLETED", what="COMPLETED")
    output = (live_cluster.root / f"slurm-{job_id}.out").read_text()
    assert output == f"hello from {job_id} on n1\n"
    sacct = live_cluster.run(
        "sacct", "-j", str(job_id), "-X", "-P", "-n", "-o", "JobID,JobName,State,ExitCode"
    ).stdout
    assert sacct == f"{job_id}|hello|COMPLETED|0:0\n"


def test_squeue_shows_a_running_job_and_scancel_runs_its_trap(live_cluster: LiveCluster) -> None:
    marker = live_cluster.root / "trapped"
    job_id = live_cluster.sbatch(
        "-o",
        "trap-%j.out",
        "--wrap",
        f"trap 'echo trapped > {marker}; exit 0' TERM; sleep 60 & wait",
    )
    live_cluster.wait_for(lambda: live_cluster.state(job_id) == "RUNNING", what="RUNNING")
    line = live_cluster.run("squeue", "-h", "-o", "%i %T %N").stdout
    assert line == f"{job_id} RUNNING n1\n"
    live_cluster.run("scancel", str(job_id))
    live_cluster.wait_for(lambda: live_cluster.state(job_id) == "CANCELLED", what="CANCELLED")
    assert marker.read_text() == "trapped\n"


def test_scontrol_suspend_stops_every_process_and_resume_continues(
    live_cluster: LiveCluster,
) -> None:
    pids = live_cluster.root / "pids"
    job_id = live_cluster.sbatch(
        "--wrap",
        f"sleep 120 & echo $$ $! > {pids}; wait",
    )
    live_cluster.wait_for(
        lambda: pids.exists() and len(pids.read_text().split()) == 2, what="the job's pids"
    )
    live_cluster.run("scontrol", "suspend", str(job_id))
    live_cluster.wait_for(lambda: _proc_states(pids) == ["T", "T"], what="stopped processes")
    assert live_cluster.state(job_id) == "SUSPENDED"
    live_cluster.run("scontrol", "resume", str(job_id))
    live_cluster.wait_for(lambda: "T" not in _proc_states(pids), what="continued processes")
    assert live_cluster.state(job_id) == "RUNNING"
    live_cluster.run("scancel", str(job_id))
    live_cluster.wait_for(lambda: live_cluster.state(job_id) == "CANCELLED", what="CANCELLED")
    live_cluster.wait_for(lambda: _proc_states(pids) == [], what="the processes' end")


def test_scontrol_explain_through_the_controller(live_cluster: LiveCluster) -> None:
    job_id = live_cluster.sbatch("--wrap", "sleep 60")
    live_cluster.wait_for(lambda: live_cluster.state(job_id) == "RUNNING", what="RUNNING")
    text = live_cluster.run("scontrol", "explain", str(job_id)).stdout
    assert text == f"JobId={job_id} JobState=RUNNING Reason=None\n"
    answer = json.loads(live_cluster.run("scontrol", "explain", str(job_id), "--json").stdout)
    assert answer["job_id"] == job_id and answer["preempted_by"] is None
    unknown = live_cluster.run("scontrol", "explain", "999999", check=False)
    assert unknown.returncode == 1
    assert unknown.stderr == "slurm_load_jobs error: Invalid job id specified\n"
    live_cluster.run("scancel", str(job_id))
    live_cluster.wait_for(lambda: live_cluster.state(job_id) == "CANCELLED", what="CANCELLED")


def test_an_unknown_job_id_gets_slurms_words(live_cluster: LiveCluster) -> None:
    result = live_cluster.run("scontrol", "show", "job", "999999", check=False)
    assert result.returncode == 1
    assert result.stderr == "slurm_load_jobs error: Invalid job id specified\n"


def test_sinfo_shows_every_node_idle(live_cluster: LiveCluster) -> None:
    out = live_cluster.run("sinfo", "-h", "-o", "%P %a %D %t %N").stdout
    assert out == "debug* up 4 idle n[1-4]\n"
