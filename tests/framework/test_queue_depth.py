"""default_queue_depth: an event-triggered pass tests at most that many jobs (plus one), as
Slurm 22.05's does; the whole queue is tested on the periodic pass (sched_interval)."""

from __future__ import annotations

from collections.abc import Callable

from plurm.testing.cluster import TestCluster

Make = Callable[..., TestCluster]

CONF = """
SchedulerType=sched/builtin
SelectType=select/linear
{params}
NodeName=n[1-3] CPUs=1 RealMemory=1000
PartitionName=a Nodes=n[1-2] Default=YES
PartitionName=b Nodes=n3
"""


def _fill(cluster: TestCluster, waiting: int) -> int:
    """Job 1 holds a's two nodes; ``waiting`` jobs queue behind it in a; then one job for b,
    whose node is free, comes last in the queue. Returns its id."""
    cluster.command("sbatch -N2 --wrap='sleep 10000'")
    cluster.run_until(cluster.now + 2)  # job 1 runs: the queue is the jobs below
    for _ in range(waiting):
        cluster.command("sbatch --wrap='sleep 100'")
    return int(cluster.command("sbatch -p b --wrap='sleep 100'").stdout.split()[-1])


def test_an_event_pass_stops_after_the_default_depth(make_cluster: Make) -> None:
    cluster = make_cluster(CONF.format(params=""))  # default_queue_depth=100, sched_interval=60
    cluster.run_until(5)
    last = _fill(cluster, 101)  # 102nd in the queue: one too far for an event pass
    cluster.run_until(59)
    assert cluster.state(last).name == "PENDING"
    cluster.run_until(61)  # the periodic pass tests the whole queue
    assert cluster.state(last).name == "RUNNING"
    assert cluster.job(last).start_time == 60


def test_within_the_depth_the_event_pass_reaches_the_job(make_cluster: Make) -> None:
    cluster = make_cluster(CONF.format(params=""))
    cluster.run_until(5)
    last = _fill(cluster, 100)  # 101st in the queue: the last one an event pass tests
    cluster.run_until(9)
    assert cluster.state(last).name == "RUNNING"
    assert cluster.job(last).start_time == 8


def test_a_deeper_default_depth_reaches_further(make_cluster: Make) -> None:
    cluster = make_cluster(CONF.format(params="SchedulerParameters=default_queue_depth=200"))
    cluster.run_until(5)
    last = _fill(cluster, 130)
    cluster.run_until(9)
    assert cluster.state(last).name == "RUNNING"
