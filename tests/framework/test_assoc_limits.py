"""accounts.conf's association limits (GrpTRES cpu= and node=, GrpJobs, MaxJobs,
MaxSubmitJobs, MaxWall) under AccountingStorageEnforce=limits: what holds a job, with
Slurm 22.05's pending reasons, and what refuses a submission (plurm.controller.limits)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from plurm import conf
from plurm.conf.model import AssocLimits
from plurm.controller import RequestError
from plurm.errors import ConfError
from plurm.model.job import JobState, PendingReason
from plurm.testing import JobBuilder, TestCluster
from tests.support.cli import simulate

Make = Callable[..., TestCluster]
Job = Callable[[], JobBuilder]

HEAD = "AccountingStorageType=accounting_storage/slurmdbd\n"
NODES = "NodeName=n[1-4] CPUs=4\nPartitionName=p Nodes=ALL Default=YES MaxTime=600\n"
CONS = "SelectType=select/cons_res\nSelectTypeParameters=CR_Core\n"
#: physics (with theory below it) and chem; alice in theory, bob in physics, carol in chem.
TREE = (
    "Account=physics {physics}\n"
    "Account=theory Parent=physics\n"
    "Account=chem\n"
    "User=alice Account=theory {alice}\n"
    "User=bob Account=physics\n"
    "User=carol Account=chem\n"
)
POLICY = "Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)"


def _cluster(
    make_cluster: Make,
    physics: str = "",
    alice: str = "",
    *,
    enforce: str = "limits",
    extra: str = CONS,
) -> TestCluster:
    head = HEAD + (f"AccountingStorageEnforce={enforce}\n" if enforce else "")
    return make_cluster(
        head + extra + NODES, accounts_text=TREE.format(physics=physics, alice=alice)
    )


def _reason(cluster: TestCluster, job_id: int) -> PendingReason:
    job = cluster.job(job_id)
    assert job.state is JobState.PENDING
    return job.reason


def test_limits_are_read_and_max_limits_pass_down_the_tree(tmp_path: Path) -> None:
    config = conf.parse_text(
        "ClusterName=c\nSlurmctldHost=h\n" + HEAD + NODES,
        path=tmp_path / "slurm.conf",
        accounts_text=TREE.format(
            physics="GrpTRES=cpu=8,node=2 GrpJobs=5 MaxJobs=3 MaxWall=1-00:00:00",
            alice="MaxJobs=1 MaxSubmitJobs=4 GrpTRES=cpu=-1",
        ),
    )
    physics = {spec.name: spec for spec in config.accounts}["physics"]
    assert physics.limits == AssocLimits(
        grp_cpus=8, grp_nodes=2, grp_jobs=5, max_jobs=3, max_wall=1440
    )
    alice = config.association("alice", "theory")
    bob = config.association("bob", "physics")
    carol = config.association("carol", "chem")
    assert alice is not None and bob is not None and carol is not None
    # alice's own MaxJobs; MaxWall from physics (through theory); Grp* are not passed down
    assert alice.limits == AssocLimits(max_jobs=1, max_submit_jobs=4, max_wall=1440)
    assert bob.limits == AssocLimits(max_jobs=3, max_wall=1440)
    assert carol.limits == AssocLimits()


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("Account=a GrpTRES=mem=4", "GrpTRES"),
        ("Account=a GrpTRES=cpu=x", "GrpTRES"),
        ("Account=a MaxJobs=-3", "MaxJobs"),
        ("User=root Account=root MaxWall=soon", "MaxWall"),
        ("Account=a GrpJob=2", "GrpJobs"),  # the nearest field is suggested
        ("Account=a Priority=high", "Priority"),
        ("User=root Account=root Priority=-5", "Priority"),
    ],
)
def test_bad_limits_are_refused_with_the_field(tmp_path: Path, line: str, message: str) -> None:
    with pytest.raises(ConfError, match=message):
        conf.parse_text(
            "ClusterName=c\nSlurmctldHost=h\n" + HEAD + NODES,
            path=tmp_path / "slurm.conf",
            accounts_text=line + "\n",
        )


def test_an_accounts_grp_cpu_limit_covers_its_sub_accounts(make_cluster: Make, job: Job) -> None:
    cluster = _cluster(make_cluster, physics="GrpTRES=cpu=6")
    first = cluster.submit(job().user("bob").tasks(4).runtime(100))
    held = cluster.submit(job().user("alice").tasks(4).runtime(100))  # theory is below physics
    small = cluster.submit(job().user("alice").tasks(2).runtime(100))
    other = cluster.submit(job().user("carol").tasks(8).runtime(100))
    cluster.run_until(10)
    assert cluster.state(first) is JobState.RUNNING
    assert _reason(cluster, held) is PendingReason.ASSOC_GRP_CPU_LIMIT
    # neither holds up the jobs after it: what fits the limit, and other accounts, run
    assert cluster.state(small) is JobState.RUNNING
    assert cluster.state(other) is JobState.RUNNING
    squeue = cluster.command(f"squeue -h -j {held} -o %r").stdout
    assert squeue == "AssocGrpCpuLimit\n"
    cluster.run_until(150)
    assert cluster.state(held) is JobState.RUNNING  # once bob's job ended


def test_grp_node_limit_counts_each_node_once(make_cluster: Make, job: Job) -> None:
    cluster = _cluster(make_cluster, physics="GrpTRES=node=2")
    wide = cluster.submit(job().user("bob").nodes(2).exclusive().runtime(100))
    held = cluster.submit(job().user("alice").nodes(1).runtime(100))
    cluster.run_until(10)
    assert cluster.state(wide) is JobState.RUNNING
    assert _reason(cluster, held) is PendingReason.ASSOC_GRP_NODE_LIMIT
    cluster.run_until(150)
    assert cluster.state(held) is JobState.RUNNING


def test_grp_jobs_on_an_account_and_max_jobs_per_association(make_cluster: Make, job: Job) -> None:
    cluster = _cluster(make_cluster, physics="GrpJobs=3 MaxJobs=1")
    bob = [cluster.submit(job().user("bob").runtime(100)) for _ in range(2)]
    alice = [cluster.submit(job().user("alice").account("theory").runtime(100)) for _ in range(2)]
    cluster.run_until(10)
    # MaxJobs passes down to each user association: one job each
    assert [cluster.state(i) for i in (bob[0], alice[0])] == [JobState.RUNNING] * 2
    assert _reason(cluster, bob[1]) is PendingReason.ASSOC_MAX_JOBS_LIMIT
    assert _reason(cluster, alice[1]) is PendingReason.ASSOC_MAX_JOBS_LIMIT


def test_grp_jobs_holds_the_whole_subtree(make_cluster: Make, job: Job) -> None:
    cluster = _cluster(make_cluster, physics="GrpJobs=2")
    ids = [cluster.submit(job().user(user).runtime(100)) for user in ("bob", "alice", "alice")]
    cluster.run_until(10)
    assert [cluster.state(i) for i in ids[:2]] == [JobState.RUNNING] * 2
    assert _reason(cluster, ids[2]) is PendingReason.ASSOC_GRP_JOBS_LIMIT
    cluster.run_until(150)
    assert cluster.state(ids[2]) is JobState.RUNNING


def test_max_wall_holds_a_longer_job_and_limits_one_without_time(
    make_cluster: Make, job: Job
) -> None:
    cluster = _cluster(make_cluster, alice="MaxWall=30")
    long = cluster.submit(job().user("alice").time(60).runtime(10))
    plain = cluster.submit(job().user("alice").runtime(10))
    cluster.run_until(5)
    assert _reason(cluster, long) is PendingReason.ASSOC_MAX_WALL_LIMIT
    assert cluster.state(plain) is JobState.RUNNING
    assert "TimeLimit=00:30:00" in cluster.command(f"scontrol show job {plain}").stdout


def test_max_submit_jobs_refuses_with_slurms_text(make_cluster: Make, job: Job) -> None:
    cluster = _cluster(make_cluster, alice="MaxSubmitJobs=2")
    first = cluster.submit(job().user("alice").runtime(50))
    cluster.submit(job().user("alice").runtime(50))
    with pytest.raises(RequestError) as refused:
        cluster.submit(job().user("alice").runtime(50))
    assert refused.value.message == POLICY
    assert cluster.submit(job().user("bob").runtime(50)) == 3  # refusals take no job id
    cluster.run_until(60)
    assert cluster.state(first) is JobState.COMPLETED
    assert cluster.submit(job().user("alice").runtime(50)) == 4


def test_limits_hold_nothing_unless_enforced(make_cluster: Make, job: Job) -> None:
    cluster = _cluster(
        make_cluster, physics="GrpJobs=1", alice="MaxSubmitJobs=1", enforce="associations"
    )
    ids = [cluster.submit(job().user("alice").runtime(100)) for _ in range(3)]
    cluster.run_until(10)
    assert [cluster.state(i) for i in ids] == [JobState.RUNNING] * 3


@pytest.mark.parametrize("limit", ["", "GrpTRES=cpu=1"])
def test_backfill_starts_no_job_beyond_the_limits(make_cluster: Make, job: Job, limit: str) -> None:
    cluster = _cluster(
        make_cluster,
        physics=limit,
        extra=CONS + "SchedulerType=sched/backfill\nSchedulerParameters=bf_interval=5\n",
    )
    # carol's wide job waits for the whole cluster; bob's small one would backfill beside it
    running = cluster.submit(job().user("carol").tasks(12).runtime(1000).time(20))
    wide = cluster.submit(job().user("carol").tasks(16).runtime(100).time(20))
    small = cluster.submit(job().user("bob").tasks(2).runtime(100).time(5))
    cluster.run_until(30)
    assert cluster.state(running) is JobState.RUNNING
    assert cluster.state(wide) is JobState.PENDING
    if not limit:
        assert cluster.state(small) is JobState.RUNNING
    else:
        assert _reason(cluster, small) is PendingReason.ASSOC_GRP_CPU_LIMIT


def test_a_simulated_session_shows_the_reasons_and_the_refusal(tmp_path: Path) -> None:
    (tmp_path / "slurm.conf").write_text(
        "ClusterName=lim\nSlurmctldHost=ctl\n"
        + HEAD
        + "AccountingStorageEnforce=limits\n"
        + CONS
        + NODES
    )
    (tmp_path / "accounts.conf").write_text(
        "Account=lab GrpTRES=cpu=4 MaxSubmitJobs=3\nUser=daemon Account=lab\n"
    )
    (tmp_path / "session").write_text(
        "0 sbatch --uid=daemon -n4 --wrap='sleep 100'\n"
        "0 sbatch --uid=daemon -n1 --wrap='sleep 100'\n"
        "0 sbatch --uid=daemon -n1 --wrap='sleep 100'\n"
        "1 sbatch --uid=daemon -n1 --wrap='sleep 100'\n"
        "2 squeue -o '%i %t %r'\n"
        "105 squeue -o '%i %t %r'\n"
        "110 sbatch --uid=daemon --array=1-3 -n1 --wrap='sleep 100'\n"
        "110 sbatch --uid=daemon --array=1-2 -n1 --wrap='sleep 100'\n"
        "110 sbatch --uid=daemon -n1 --wrap='sleep 100'\n"
        "111 squeue -h -o %i\n"
    )
    result = simulate(tmp_path / "slurm.conf", tmp_path / "session")
    assert result.returncode == 0, result.stderr
    assert f"sbatch: error: Batch job submission failed: {POLICY}" in result.stdout
    first, second = result.stdout.split("$ squeue -o '%i %t %r'\n")[1:3]
    assert sorted(first.splitlines()[1:4]) == [
        "1 R None",
        "2 PD AssocGrpCpuLimit",
        "3 PD AssocGrpCpuLimit",
    ]
    assert sorted(second.splitlines()[1:3]) == ["2 R None", "3 R None"]
    # two jobs left of three: an array counts each task, so one of two does not fit either
    assert result.stdout.count(POLICY) == 3
    assert result.stdout.split("$ squeue -h -o %i\n")[1].splitlines() == ["2", "3", "4"]
