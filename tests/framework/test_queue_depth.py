"""default_queue_depth: an event-triggered pass tests at most that many jobs (plus one), as
Slurm 22.05's does; the whole queue is tested on the periodic pass (sched_interval)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from plurm.manager import Plugins
from plurm.model.job import PendingReason
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


def test_a_refused_job_shows_its_reason_after_the_first_pass_however_deep(
    make_cluster: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A job its partition refuses (here: more nodes than the partition has) does not count
    towards the depth, and shows PartitionConfig from the first pass after its submission
    on, even behind more jobs than an event pass tests (Slurm sets it at submission). The
    same with the queue ordered each pass (a sched plugin without a sort key)."""
    for kept in (True, False):
        if not kept:
            monkeypatch.setattr(Plugins, "sched_queue_key", lambda self, preempts, cluster: None)
        cluster = make_cluster(CONF.format(params="SchedulerParameters=default_queue_depth=3"))
        assert cluster.controller._pending.kept is kept
        cluster.run_until(5)
        _fill(cluster, 10)
        too_wide = int(cluster.command("sbatch -N3 --wrap='sleep 1'").stdout.split()[-1])
        assert cluster.job(too_wide).reason.value == "Priority"  # a job of a waits ahead
        cluster.run_until(cluster.now + 2)  # one event pass, no periodic or backfill one
        assert cluster.job(too_wide).reason.value == "PartitionConfig"
        assert cluster.state(too_wide).name == "PENDING"


def test_a_whole_queue_pass_with_every_partition_blocked_gives_the_rest_priority(
    make_cluster: Make,
) -> None:
    """Once every partition has a job that waits, the rest of a whole-queue pass waits
    behind them (Priority), even a job that was first in its partition before (Resources),
    and a job whose required node is down shows ReqNodeNotAvail."""
    # partition c, with no job, does not keep the pass going
    cluster = make_cluster(CONF.format(params="") + "PartitionName=c Nodes=n3\n")
    cluster.command("sbatch -N2 --wrap='sleep 10000'")
    cluster.command("sbatch -p b --wrap='sleep 10000'")
    cluster.run_until(2)
    first = int(cluster.command("sbatch --wrap='sleep 100'").stdout.split()[-1])
    cluster.run_until(4)
    assert cluster.job(first).reason.value == "Resources"
    pinned = int(cluster.command("sbatch -w n2 --wrap='sleep 1'").stdout.split()[-1])
    cluster.command("scontrol update NodeName=n2 State=DRAIN Reason=test")
    ahead = int(cluster.command("sbatch --nice=-100 --wrap='sleep 100'").stdout.split()[-1])
    behind_b = int(cluster.command("sbatch -p b --nice=-100 --wrap='sleep 1'").stdout.split()[-1])
    cluster.controller.schedule()  # a whole-queue pass: a and b are blocked by their heads
    assert cluster.job(ahead).reason.value == "Resources"
    assert cluster.job(behind_b).reason.value == "Resources"
    assert cluster.job(first).reason.value == "Priority"
    assert cluster.job(pinned).reason.value == "ReqNodeNotAvail"


def test_an_event_pass_with_every_partition_blocked_stops_at_its_depth(
    make_cluster: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once every partition has a job that waits, an event pass still reaches only its
    depth (plus one) of jobs: those it reaches wait behind their partition's head
    (Priority), the ones after keep their reasons, and the periodic pass that tests the
    whole queue is due at the next sched_interval tick. The same with the queue ordered
    each pass (a sched plugin without a sort key)."""
    for kept in (True, False):
        if not kept:
            monkeypatch.setattr(Plugins, "sched_queue_key", lambda self, preempts, cluster: None)
        cluster = make_cluster(CONF.format(params="SchedulerParameters=default_queue_depth=3"))
        assert cluster.controller._pending.kept is kept
        cluster.command("sbatch -N2 --wrap='sleep 10000'")
        cluster.command("sbatch -p b --wrap='sleep 10000'")
        cluster.run_until(2)
        waiting = [int(cluster.command("sbatch -p b --wrap='sleep 1'").stdout.split()[-1])]
        for _ in range(5):
            waiting.append(int(cluster.command("sbatch --wrap='sleep 1'").stdout.split()[-1]))
        cluster.run_until(cluster.now + 2)
        for job_id in waiting:  # forget what earlier passes said, to see what this one says
            cluster.job(job_id).reason = PendingReason.NONE
        controller = cluster.controller
        controller._pass_at.clear()
        controller.schedule(full=False)
        reasons = [cluster.job(job_id).reason.value for job_id in waiting]
        # b's head, a's head (every partition is blocked), two more: 4 = depth + 1
        assert reasons == ["Resources", "Resources", "Priority", "Priority", "None", "None"]
        assert controller._pass_at == {60: True}


def test_a_whole_queue_pass_tells_a_job_behind_its_partitions_head_whether_its_node_is_back(
    make_cluster: Make,
) -> None:
    """A whole-queue pass over the kept queue skips the jobs behind a blocked partition's
    head and gives their reasons after it: a job there that requires a node shows
    ReqNodeNotAvail while the node is out of service and Priority again once it is back,
    though nothing else about it changed."""
    cluster = make_cluster(CONF.format(params=""))
    controller = cluster.controller
    assert controller._pending.kept
    cluster.command("sbatch -N2 --wrap='sleep 10000'")  # holds a's two nodes
    cluster.run_until(2)
    head = int(cluster.command("sbatch --wrap='sleep 100'").stdout.split()[-1])
    pinned = int(cluster.command("sbatch -w n2 --wrap='sleep 1'").stdout.split()[-1])
    cluster.run_until(4)
    reasons = []
    for update in ("", "State=DRAIN Reason=test", "State=RESUME"):
        if update:
            cluster.command(f"scontrol update NodeName=n2 {update}")
        controller.schedule()  # a whole-queue pass
        assert cluster.job(head).reason.value == "Resources"
        reasons.append(cluster.job(pinned).reason.value)
    assert reasons == ["Priority", "ReqNodeNotAvail", "Priority"]
