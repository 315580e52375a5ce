"""sched/backfill: lower-priority jobs start early when they delay no job ahead of them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from plurm import conf
from plurm.manager import Plugins
from plurm.testing.cluster import TestCluster

FOUR_NODES = """
SchedulerType=sched/backfill
SelectType=select/linear
NodeName=n[1-4] CPUs=1 RealMemory=1000
PartitionName=p Nodes=n[1-4] Default=YES
"""

Make = Callable[..., TestCluster]


def queue(cluster: TestCluster) -> dict[int, str]:
    """job id -> state and nodes or reason, as squeue shows them."""
    out = cluster.command("squeue -h -o '%i %t %R'").stdout
    return {int(line.split()[0]): line.split(" ", 1)[1] for line in out.splitlines()}


def blocked_cluster(make_cluster: Make, conf_text: str = FOUR_NODES) -> TestCluster:
    """Job 1 holds n[1-2] for 10 minutes; job 2 needs all four nodes and must wait."""
    cluster = make_cluster(conf_text)
    cluster.command("sbatch -N2 -t 10 --wrap='sleep 600'")
    cluster.run_until(2)
    cluster.command("sbatch -N4 -t 10 --wrap='sleep 600'")
    return cluster


def test_a_short_job_starts_ahead_of_a_blocked_one_on_the_backfill_tick(make_cluster: Make) -> None:
    cluster = blocked_cluster(make_cluster)
    cluster.command("sbatch -N1 -t 5 --wrap='sleep 600'")
    cluster.run_until(29)
    # The main scheduler stops at the blocked job: the small one waits on Priority.
    assert queue(cluster) == {1: "R n[1-2]", 2: "PD (Resources)", 3: "PD (Priority)"}
    cluster.run_until(31)  # bf_interval=30
    assert queue(cluster) == {1: "R n[1-2]", 2: "PD (Resources)", 3: "R n3"}


def test_a_job_that_would_delay_the_blocked_one_waits(make_cluster: Make) -> None:
    cluster = blocked_cluster(make_cluster)
    cluster.command("sbatch -N1 -t 20 --wrap='sleep 600'")
    cluster.run_until(61)
    assert queue(cluster) == {1: "R n[1-2]", 2: "PD (Resources)", 3: "PD (Priority)"}
    # Once job 1 ends the blocked job runs first; the long one is next in line.
    cluster.command("scancel 1")
    cluster.run_until(63)  # job 1 is COMPLETING until its nodes are released (3.7 s)
    assert queue(cluster) == {1: "CG n[1-2]", 2: "PD (Resources)", 3: "PD (Priority)"}
    cluster.run_until(65)
    assert queue(cluster) == {2: "R n[1-4]", 3: "PD (Resources)"}


def test_reservations_end_at_the_window(make_cluster: Make) -> None:
    text = FOUR_NODES.replace("SelectType", "SchedulerParameters=bf_window=1\nSelectType")
    cluster = blocked_cluster(make_cluster, text)
    cluster.command("sbatch -N1 -t 20 --wrap='sleep 600'")
    cluster.run_until(31)
    # Job 2 could start only after ten minutes, beyond the one-minute window: no reservation.
    assert queue(cluster)[3] == "R n3"


def test_a_running_job_without_limit_blocks_no_reservation(make_cluster: Make) -> None:
    cluster = make_cluster(FOUR_NODES)
    cluster.command("sbatch -N2 --wrap='sleep 600'")  # UNLIMITED: its end is unknown
    cluster.run_until(2)
    cluster.command("sbatch -N4 -t 10 --wrap='sleep 600'")
    cluster.command("sbatch -N1 --wrap='sleep 600'")
    cluster.run_until(31)
    assert queue(cluster)[3] == "R n3"


def test_bf_max_job_test_bounds_the_jobs_looked_at(make_cluster: Make) -> None:
    text = FOUR_NODES.replace("SelectType", "SchedulerParameters=bf_max_job_test=1\nSelectType")
    cluster = blocked_cluster(make_cluster, text)
    cluster.command("sbatch -N1 -t 5 --wrap='sleep 600'")
    cluster.run_until(61)
    assert queue(cluster)[3] == "PD (Priority)"


def test_sched_builtin_does_not_backfill(make_cluster: Make) -> None:
    text = FOUR_NODES.replace("sched/backfill", "sched/builtin")
    cluster = blocked_cluster(make_cluster, text)
    cluster.command("sbatch -N1 -t 5 --wrap='sleep 600'")
    cluster.run_until(121)
    assert queue(cluster)[3] == "PD (Priority)"


def test_an_idle_cluster_schedules_no_backfill_pass(make_cluster: Make) -> None:
    cluster = make_cluster(FOUR_NODES)
    cluster.command("sbatch -N1 -t 1 --wrap='sleep 10'")
    cluster.run_until(20)
    assert cluster.simulation.clock.next_time() is None


def test_backfill_is_the_default_scheduler(tmp_path: Path) -> None:
    path = tmp_path / "slurm.conf"
    path.write_text("ClusterName=c\nSlurmctldHost=h\nNodeName=n1\nPartitionName=p Nodes=n1\n")
    plugins = Plugins.load(conf.load(path))
    assert [p.type_string for p in plugins.loaded if p.type_string.startswith("sched/")] == [
        "sched/backfill"
    ]


def test_a_job_sized_by_tasks_gets_its_reservation(make_cluster: Make) -> None:
    """-n without -N: the plan counts the nodes its CPUs need (4 one-CPU nodes here)."""
    cluster = make_cluster(FOUR_NODES)
    cluster.command("sbatch -n2 -t 10 --wrap='sleep 600'")
    cluster.run_until(2)
    cluster.command("sbatch -n4 -t 10 --wrap='sleep 600'")
    cluster.command("sbatch -n1 -t 20 --wrap='sleep 600'")
    cluster.run_until(61)
    assert queue(cluster) == {1: "R n[1-2]", 2: "PD (Resources)", 3: "PD (Priority)"}
