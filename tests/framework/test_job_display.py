"""How squeue, scontrol and sinfo show jobs and nodes under a consumable-resource select, as
real Slurm 22.05 showed them (tests/data/oracle/cli scenario cons_res, and trial runs of
/work/shared/oracle with 2-CPU nodes)."""

from __future__ import annotations

import pwd
from collections.abc import Callable

import pytest

from plurm.testing.cluster import TestCluster

CONF = """
SelectType=select/cons_res
SelectTypeParameters=CR_Core
NodeName=c[1-4] CPUs=2 RealMemory=1000
PartitionName=p Nodes=c[1-4] Default=YES MaxTime=60
PartitionName=q Nodes=c[1-2]
"""


@pytest.fixture
def cluster(make_cluster: Callable[..., TestCluster]) -> TestCluster:
    return make_cluster(CONF)


def show_job(cluster: TestCluster, job_id: int, field: str) -> str:
    text = cluster.command(f"scontrol show job {job_id}").stdout
    return text.split(f" {field}=", 1)[1].split()[0]


def test_a_pending_job_waits_for_as_many_nodes_as_its_cpus_need(cluster: TestCluster) -> None:
    cluster.command("sbatch -p q -n 8 --wrap='sleep 300'")  # 8 CPUs on 2-CPU nodes
    cluster.command("sbatch -p q -n 3 -c 2 --begin=now+3600 --wrap='sleep 300'")
    cluster.command("sbatch -p p -n 5 --begin=now+3600 --wrap='sleep 300'")
    cluster.run_until(3)
    squeue = cluster.command("squeue -h -t all -o '%i %D %C'").stdout.splitlines()
    assert sorted(squeue) == ["1 4 8", "2 3 6", "3 3 5"]
    assert show_job(cluster, 1, "NumNodes") == "4"


def test_time_left_is_the_limit_less_the_run_time(cluster: TestCluster) -> None:
    cluster.command("sbatch -p p -n 1 --wrap='sleep 300'")
    cluster.command("sbatch -p q --begin=now+3600 --wrap='sleep 300'")
    cluster.run_until(11)
    squeue = cluster.command("squeue -h -t all -o '%i %L|%.12L|%5L'").stdout.splitlines()
    assert squeue == ["1 59:50|       59:50|59:50", "2 UNLIMITED|   UNLIMITED|UNLIM"]
    header = cluster.command("squeue -o '%L' -j 1").stdout.splitlines()[0]
    assert header == "TIME_LEFT"


def test_a_job_shows_the_cpus_cons_res_gave_it_and_may_share(cluster: TestCluster) -> None:
    cluster.command("sbatch -n 1 --wrap='sleep 300'")
    cluster.command("sbatch -n 1 --exclusive --wrap='sleep 300'")
    cluster.run_until(2)
    assert show_job(cluster, 1, "NumCPUs") == "1"
    assert show_job(cluster, 1, "TRES") == "cpu=1,node=1,billing=1"
    assert show_job(cluster, 1, "OverSubscribe") == "OK"
    assert show_job(cluster, 2, "OverSubscribe") == "NO"
    node = cluster.command("scontrol show node c1").stdout
    assert "   AllocTRES=cpu=1\n" in node


def test_sbatch_uid_submits_for_another_user(cluster: TestCluster) -> None:
    other = next(entry for entry in pwd.getpwall() if entry.pw_uid != 0)
    result = cluster.command(f"sbatch --uid={other.pw_uid} --begin=now+60 --wrap='sleep 1'")
    assert result.stdout == "Submitted batch job 1\n"
    assert show_job(cluster, 1, "UserId") == f"{other.pw_name}({other.pw_uid})"
    assert show_job(cluster, 1, "GroupId") == "root(0)"  # the submitter's group
    listed = cluster.command(f"squeue -h -u {other.pw_name} -o %i").stdout
    assert listed == cluster.command(f"squeue -h -u {other.pw_uid} -o %i").stdout == "1\n"
    bad = cluster.command("sbatch --uid=no-such-user-here --wrap='sleep 1'")
    assert (bad.status, bad.stderr) == (255, "sbatch: error: Invalid --uid specification\n")


def test_sinfo_without_partitions_merges_the_lines_that_print_alike(
    cluster: TestCluster,
) -> None:
    assert cluster.command("sinfo -o '%t %N'").stdout == "STATE NODELIST\nidle c[1-4]\n"
    by_limit = cluster.command("sinfo -o '%l %t %N'").stdout
    assert by_limit == "TIMELIMIT STATE NODELIST\n1:00:00 idle c[1-4]\ninfinite idle c[1-2]\n"
    cluster.command("scontrol update nodename=c3 state=drain reason=r")
    cluster.command("scontrol update nodename=c4 state=down reason=r")
    states = cluster.command("sinfo -h -o '%t %N'").stdout
    assert states == "drain c3\nidle c[1-2]\ndown c4\n"
