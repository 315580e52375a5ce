"""How jobs end: the signals they get, their exit codes, admin suspension and scancel's
reporting, as real Slurm 22.05 showed them (tests/data/oracle/cli, scenarios linear/endings)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from plurm.testing.cluster import JobBuilder, TestCluster

CONF = """
SelectType=select/linear
KillWait=5
NodeName=n[1-2] CPUs=1 RealMemory=1000
PartitionName=p Nodes=n[1-2] Default=YES
"""


@pytest.fixture
def cluster(make_cluster: Callable[..., TestCluster]) -> TestCluster:
    return make_cluster(CONF)


def exit_code(cluster: TestCluster, job_id: int) -> str:
    text = cluster.command(f"scontrol show job {job_id}").stdout
    return text.split("ExitCode=", 1)[1].split()[0]


def test_a_cancelled_job_dies_at_sigterm(cluster: TestCluster) -> None:
    cluster.command("sbatch --wrap='sleep 300'")
    cluster.run_until(2)
    cluster.command("scancel 1")
    cluster.run_until(5.6)  # COMPLETING, holding its node, until slurmd reports it gone
    assert (cluster.state(1).name, cluster.job(1).nodes) == ("COMPLETING", ("n1",))
    assert cluster.command("squeue -h -o '%t %M'").stdout == "CG 0:01\n"  # frozen at the kill
    cluster.run_until(5.8)  # released 3.7 s after the kill, as on Slurm 22.05
    assert cluster.state(1).name == "CANCELLED"
    assert cluster.signals(1) == [(2.0, "CONT"), (2.0, "TERM")]
    assert exit_code(cluster, 1) == "0:15"


def test_a_job_that_traps_sigterm_runs_until_sigkill_after_killwait(cluster: TestCluster) -> None:
    cluster.command("""sbatch --wrap='trap "" TERM; sleep 300'""")
    cluster.run_until(2)
    cluster.command("scancel 1")
    cluster.run_until(10.3)  # SIGKILL at 7; the node is released 3.35 s later
    assert cluster.state(1).name == "COMPLETING"
    cluster.run_until(10.4)
    assert cluster.state(1).name == "CANCELLED"
    assert cluster.signals(1) == [(2.0, "CONT"), (2.0, "TERM"), (7.0, "KILL")]
    assert exit_code(cluster, 1) == "0:9"


@pytest.mark.parametrize("wrap", ["trap '' TERM; sleep 300", "sleep 300; trap '' TERM"])
def test_which_wraps_ignore_sigterm(cluster: TestCluster, wrap: str) -> None:
    cluster.command(f'sbatch --wrap="{wrap}"')
    assert cluster.job(1).request.ignore_sigterm is wrap.startswith("trap")


def test_a_suspended_job_is_cancelled_with_sigkill(cluster: TestCluster) -> None:
    cluster.command("sbatch --wrap='sleep 300'")
    cluster.run_until(2)
    assert cluster.command("scontrol suspend 1").status == 0
    cluster.command("scancel 1")
    cluster.run_until(6)
    assert cluster.state(1).name == "CANCELLED"
    assert [signal for _, signal in cluster.signals(1)] == ["STOP", "KILL"]
    assert exit_code(cluster, 1) == "0:9"


def test_a_timed_out_job_shows_its_limit_as_reason(cluster: TestCluster) -> None:
    cluster.command("sbatch -t 1 --wrap='sleep 300'")
    cluster.run_until(120)
    out = cluster.command("squeue -t all -h -o '%T %r %R'").stdout
    assert out == "TIMEOUT TimeLimit (TimeLimit)\n"
    assert exit_code(cluster, 1) == "0:15"


def test_a_cancelled_pending_job_keeps_its_reason(cluster: TestCluster) -> None:
    cluster.command("sbatch -N 2 --wrap='sleep 300'")
    cluster.command("sbatch -N 2 --wrap='sleep 300'")
    cluster.run_until(2)
    cluster.command("scancel 2")
    assert cluster.command("squeue -t all -h -j 2 -o '%T %r'").stdout == "CANCELLED Resources\n"


def test_squeue_j_lists_every_state_unless_t_names_some(cluster: TestCluster) -> None:
    cluster.command("sbatch -N 2 --wrap='sleep 300'")
    cluster.command("sbatch -N 2 --wrap='sleep 300'")
    cluster.run_until(2)
    cluster.command("scancel 2")
    assert (
        cluster.command("squeue -h -j 1,2 -o '%i %T'").stdout == "2 CANCELLED\n1 RUNNING\n"
    )  # by state: CA before R
    assert cluster.command("squeue -h -j 1,2 -t R -o '%i %T'").stdout == "1 RUNNING\n"
    assert cluster.command("squeue -h -j 1,2 -t CA -o '%i %T'").stdout == "2 CANCELLED\n"


def test_admin_suspension_zeroes_priority_and_resume_reprioritizes(cluster: TestCluster) -> None:
    for _ in range(2):
        cluster.command("sbatch --wrap='sleep 300'")
    cluster.run_until(2)
    assert cluster.job(1).priority == 0xFFFF0000 - 1
    assert cluster.command("scontrol suspend 1").status == 0
    assert cluster.job(1).priority == 0
    # Suspending again succeeds silently, as in Slurm.
    assert cluster.command("scontrol suspend 1") == cluster.command("scontrol suspend 1")
    assert cluster.command("scontrol suspend 1").stderr == ""
    assert cluster.command("scontrol resume 1").status == 0
    # priority/basic hands out the next lower priority, below job 2's.
    assert cluster.job(1).priority == 0xFFFF0000 - 3
    resumed_twice = cluster.command("scontrol resume 1")
    assert (resumed_twice.status, resumed_twice.stderr) == (1, "Job is not suspended for job 1\n")


def test_scancel_reports_unknown_jobs_only_when_verbose(cluster: TestCluster) -> None:
    quiet = cluster.command("scancel 99")
    assert (quiet.status, quiet.stderr) == (0, "")
    verbose = cluster.command("scancel -v 99")
    assert (verbose.status, verbose.stderr) == (
        0,
        "scancel: Terminating job 99\n"
        "scancel: error: Kill job error on job id 99: Invalid job id specified\n",
    )


def test_resume_continues_a_gang_suspended_job(make_cluster: Callable[..., TestCluster]) -> None:
    cluster = make_cluster(
        "SelectType=select/linear\nPreemptType=preempt/partition_prio\nPreemptMode=SUSPEND,GANG\n"
        "NodeName=n1 CPUs=1 RealMemory=1000\n"
        "PartitionName=low Nodes=n1 Default=YES OverSubscribe=FORCE:1 PriorityTier=1\n"
        "PartitionName=high Nodes=n1 OverSubscribe=FORCE:1 PriorityTier=2\n"
    )
    cluster.command("sbatch --wrap='sleep 300'")
    cluster.run_until(2)
    cluster.command("sbatch -p high --wrap='sleep 300'")
    cluster.run_until(4)
    assert cluster.states() == {1: "SUSPENDED", 2: "RUNNING"}
    # As seen on Slurm 22.05: the resume succeeds and both run on the node; the job keeps
    # its priority, since no admin suspension zeroed it.
    assert cluster.command("scontrol resume 1").status == 0
    assert cluster.states() == {1: "RUNNING", 2: "RUNNING"}
    assert cluster.job(1).priority == 0xFFFF0000 - 1


GRACE = """
SelectType=select/linear
SchedulerParameters=sched_interval=1
PreemptType=preempt/partition_prio
PreemptMode=CANCEL
KillWait=5
NodeName=n1 CPUs=1 RealMemory=1000
PartitionName=low Nodes=n1 Default=YES PriorityTier=1 GraceTime=10
PartitionName=high Nodes=n1 PriorityTier=2
"""


def _preempt_at_3(make_cluster: Callable[..., TestCluster], wrap: str) -> TestCluster:
    cluster = make_cluster(GRACE)
    cluster.command(f"sbatch --wrap={wrap!r}")
    cluster.run_until(2)
    cluster.command("sbatch -p high --wrap='sleep 300'")
    cluster.run_until(3)
    return cluster


def test_grace_signals_steps_only_and_the_retry_after_grace_kills(
    make_cluster: Callable[..., TestCluster],
) -> None:
    """A plain batch script gets no SIGTERM at the start of grace (Slurm signals job steps
    only), runs through it, and is killed when the waiting preemptor retries: every
    KillWait + MessageTimeout = 15 s, so GraceTime=10 ends at the retry at 3 + 15."""
    cluster = _preempt_at_3(make_cluster, "sleep 300")
    assert cluster.signals(1) == [(3.0, "CONT (steps)"), (3.0, "TERM (steps)")]
    cluster.run_until(17)
    assert cluster.states() == {1: "RUNNING", 2: "PENDING"}
    assert cluster.command("squeue -h -j 2 -o %r").stdout == "Resources\n"
    cluster.run_until(19)
    assert cluster.states() == {1: "COMPLETING", 2: "PENDING"}
    assert cluster.signals(1)[2:] == [(18.0, "CONT"), (18.0, "TERM")]
    cluster.run_until(22)  # released at 21.7; the preemptor starts on that release
    assert cluster.states() == {1: "PREEMPTED", 2: "RUNNING"}
    assert exit_code(cluster, 1) == "0:15"


def test_a_victim_whose_step_dies_in_grace_fails_by_its_exit(
    make_cluster: Callable[..., TestCluster],
) -> None:
    """Its srun step gets the grace SIGTERM; the script exits 143 and the job ends FAILED,
    not PREEMPTED (real Slurm 22.05: scenario cancel-grace-srun)."""
    cluster = _preempt_at_3(make_cluster, "srun sleep 300")
    assert cluster.job(1).request.runs_steps
    cluster.run_until(5.9)
    assert cluster.state(1).name == "RUNNING"
    cluster.run_until(7)  # srun exits about 3 s after its step's SIGTERM
    assert cluster.states() == {1: "FAILED", 2: "RUNNING"}
    assert exit_code(cluster, 1) == "143:0"
    assert cluster.job(1).preempt_time == 3.0


def test_a_victim_that_traps_sigterm_runs_out_its_grace(
    make_cluster: Callable[..., TestCluster],
) -> None:
    cluster = _preempt_at_3(make_cluster, 'trap "" TERM; sleep 300')
    # Killed at the retry at 18; SIGKILL follows KillWait (5 s) later, and the node is
    # released 3.35 s after that (real Slurm: 8.35 s after the kill).
    cluster.run_until(26)
    assert cluster.states() == {1: "COMPLETING", 2: "PENDING"}
    cluster.run_until(27)
    assert [signal for _, signal in cluster.signals(1)] == [
        "CONT (steps)",
        "TERM (steps)",
        "CONT",
        "TERM",
        "KILL",
    ]
    assert [when for when, _ in cluster.signals(1)] == [3.0, 3.0, 18.0, 18.0, 23.0]
    assert cluster.states() == {1: "PREEMPTED", 2: "RUNNING"}
    assert exit_code(cluster, 1) == "0:9"


def test_a_grace_victim_is_killed_by_the_time_limit_check_if_its_preemptor_goes(
    make_cluster: Callable[..., TestCluster],
) -> None:
    """Slurm cuts the victim's end time to the grace's end; with its preemptor cancelled,
    the periodic time-limit check (every 30 s) ends it, still as a preemption."""
    cluster = _preempt_at_3(make_cluster, "sleep 300")
    cluster.command("scancel 2")
    cluster.run_until(29)
    assert cluster.state(1).name == "RUNNING"
    cluster.run_until(30)
    assert cluster.state(1).name == "COMPLETING"
    cluster.run_until(34)
    assert cluster.state(1).name == "PREEMPTED"


def test_only_a_job_that_outlasts_the_next_limit_check_gets_one(
    cluster: TestCluster, job: Callable[[], JobBuilder]
) -> None:
    """The simulated executor knows each job's run time, so the controller arms a time-limit
    check only for a job still running when the check comes (the checks run every 30 s).
    The limit counts run time only: a suspension moves such a job's end and its limit
    alike, and the resume asks again. A ``sleep`` keeps to the wall clock: suspended, it
    still ends when it would have."""
    # Each runs 125 s against a limit of 2 minutes, due at 121: its own end at 126 comes
    # before the check at 150, unless a suspension of 25 s moves it to 151.
    first = cluster.submit(job().time(2).runtime(125))
    second = cluster.submit(job().time(2).runtime(125))
    cluster.run_until(2)
    timers = cluster.controller._limit_timers
    assert (cluster.job(first).start_time, cluster.job(second).start_time) == (1.0, 1.0)
    assert first not in timers and second not in timers
    cluster.run_until(50)
    assert cluster.command(f"scontrol suspend {second}").status == 0
    cluster.run_until(75)
    assert cluster.command(f"scontrol resume {second}").status == 0
    assert second in timers  # due at 146, its end at 151: the check at 150 ends it
    sleeper = cluster.sbatch("-t 2", "sleep 125")  # (on the node the first job leaves)
    cluster.run_until(130)
    assert cluster.job(sleeper).start_time == 127.0
    assert cluster.command(f"scontrol suspend {sleeper}").status == 0
    cluster.run_until(155)
    assert cluster.command(f"scontrol resume {sleeper}").status == 0
    assert sleeper not in timers  # it wakes at 252, its limit due at 272
    cluster.run_until(300)
    out = cluster.command("sacct -n -X -o JobID,State,Elapsed").stdout.split()
    assert out == [
        *(str(first), "COMPLETED", "00:02:05"),
        *(str(second), "TIMEOUT", "00:02:04"),
        *(str(sleeper), "COMPLETED", "00:01:40"),
    ]
