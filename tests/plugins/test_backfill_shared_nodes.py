"""sched/backfill on nodes that jobs share (issue #29): under select/cons_res a pass tests
each job on the nodes no higher job reserved within its run, with their current use, as
Slurm's backfill does; under select/linear nodes stay whole. The first two sessions are
tests/data/scenarios/backfill-share-{cpus,reserved} (recorded on Slurm 22.05, replayed at
5, 40 and 70 s by tests/scenarios), followed here to job 3's start."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from plurm.model.job import JobState
from plurm.model.select import SelectMode, SelectStatus
from plurm.testing import TestCluster
from plurm.testing.cluster import build_cluster

Make = Callable[..., TestCluster]

CONF = (
    "SchedulerType=sched/backfill\n{select}"
    "NodeName=n[1-2] CPUs=4\n"
    "PartitionName=p Nodes=ALL Default=YES MaxTime=INFINITE\n"
)
CONS_RES = "SelectType=select/cons_res\nSelectTypeParameters=CR_Core\n"
LINEAR = "SelectType=select/linear\n"


def _queue(cluster: TestCluster) -> None:
    """n1 runs a 3-CPU job for 10 minutes, n2 one for 5; job 3 wants a whole node (it
    waits for n2, at 5 minutes), jobs 4 and 5 one CPU for 10 minutes each."""
    cluster.command("sbatch -n3 -t 10 --wrap='sleep 100000'")
    cluster.command("sbatch -n3 -t 5 --wrap='sleep 100000'")
    cluster.run_until(1)
    cluster.command("sbatch -N1 -n4 -t 10 --wrap='sleep 100000'")
    cluster.command("sbatch -n1 -t 10 --wrap='sleep 100000'")
    cluster.command("sbatch -n1 -t 10 --wrap='sleep 100000'")
    cluster.run_until(5)
    assert [cluster.job(i).nodes for i in (1, 2)] == [("n1",), ("n2",)]
    assert cluster.job(3).reason.name == "RESOURCES"
    assert [cluster.job(i).reason.name for i in (4, 5)] == ["PRIORITY", "PRIORITY"]


def test_cons_res_backfill_starts_a_job_beside_running_ones(make_cluster: Make) -> None:
    cluster = make_cluster(CONF.format(select=CONS_RES))
    _queue(cluster)
    cluster.run_until(40)  # a backfill pass
    # Job 3 is planned on n2 from job 2's end: job 4, which would run past it, gets n1's
    # free CPU, beside job 1; job 5 finds n1 full then and waits.
    assert cluster.state(4) is JobState.RUNNING
    assert cluster.job(4).nodes == ("n1",)
    assert cluster.state(5) is JobState.PENDING
    assert cluster.state(3) is JobState.PENDING
    cluster.run_until(400)  # job 2 reaches its time limit: job 3 takes n2, not delayed
    assert cluster.state(3) is JobState.RUNNING
    assert cluster.job(3).nodes == ("n2",)
    assert cluster.state(5) is JobState.PENDING


def test_cons_res_backfill_keeps_off_a_node_reserved_for_a_higher_job(
    make_cluster: Make,
) -> None:
    """The same, but job 1 holds n1 for longer than job 2 holds n2 and job 3 needs one
    node: n2 is job 3's, and a job that would run past job 2's end may not share it."""
    cluster = make_cluster(CONF.format(select=CONS_RES))
    cluster.command("sbatch -n3 -t 5 --wrap='sleep 100000'")
    cluster.command("sbatch -n3 -t 10 --wrap='sleep 100000'")
    cluster.run_until(1)
    cluster.command("sbatch -N1 -n4 -t 10 --wrap='sleep 100000'")
    cluster.command("sbatch -n1 -t 10 --wrap='sleep 100000'")
    cluster.command("sbatch -n1 -t 1 --wrap='sleep 100000'")
    cluster.run_until(40)
    # job 3 waits for n1 (free at 5 minutes): job 4 (10 minutes) may only share n2, and
    # job 5 (one minute, done before job 3 starts) may share n1
    assert cluster.job(4).nodes == ("n2",)
    assert cluster.job(5).nodes == ("n1",)
    assert cluster.state(3) is JobState.PENDING
    cluster.run_until(400)
    assert cluster.job(3).nodes == ("n1",)
    assert cluster.state(3) is JobState.RUNNING


@pytest.mark.parametrize("until", [40, 200])
def test_linear_backfill_still_plans_whole_nodes(make_cluster: Make, until: float) -> None:
    cluster = make_cluster(CONF.format(select=LINEAR))
    _queue(cluster)
    cluster.run_until(until)
    assert [cluster.state(i) for i in (3, 4, 5)] == [JobState.PENDING] * 3


def test_cons_res_backfill_shares_a_node_whose_job_has_no_time_limit(make_cluster: Make) -> None:
    """A node held by a job without a time limit is busy for ever in the plan, yet a job
    may start beside it now (n1's job 1 has no limit, n2 is full; job 3 blocks the queue)."""
    cluster = make_cluster(CONF.format(select=CONS_RES))
    cluster.command("sbatch -n3 --wrap='sleep 100000'")
    cluster.command("sbatch -n4 -t 10 --wrap='sleep 100000'")
    cluster.run_until(1)
    cluster.command("sbatch -N2 -n8 -t 10 --wrap='sleep 100000'")
    cluster.command("sbatch -n1 -t 5 --wrap='sleep 100000'")
    cluster.run_until(5)
    assert cluster.job(4).reason.name == "PRIORITY"
    cluster.run_until(40)
    assert cluster.state(4) is JobState.RUNNING
    assert cluster.job(4).nodes == ("n1",)


# What sched/backfill's memo of refused starts beside running jobs relies on: for a plain
# request (nodes and CPUs only), select's answer on nodes as they are gets no better with
# fewer nodes offered or more nodes and CPUs asked. A pass that saw a job refused on some
# nodes passes over a later job of its partition, with its CPUs per task, that asks at least
# as much on some of those nodes.

_SHAPES = {
    "plain": "",
    "gang": "PreemptType=preempt/partition_prio\nPreemptMode=SUSPEND,GANG\n",
}


@settings(max_examples=120, deadline=None, derandomize=True)
@given(
    shape=st.sampled_from(sorted(_SHAPES)),
    oversubscribe=st.sampled_from(["NO", "FORCE:1", "YES"]),
    running=st.lists(
        st.tuples(st.sampled_from(["lo", "hi"]), st.integers(1, 3), st.integers(1, 6)),
        max_size=8,
    ),
    asked=st.tuples(st.sampled_from(["lo", "hi"]), st.integers(1, 3), st.integers(1, 2)),
    tasks=st.integers(1, 10),
    more=st.tuples(st.integers(0, 1), st.integers(0, 3)),
    left_out=st.sets(st.integers(1, 5), max_size=2),
    dropped=st.sets(st.integers(1, 5), max_size=2),
)
def test_a_plain_request_refused_on_nodes_is_refused_on_fewer_asking_more(
    shape: str,
    oversubscribe: str,
    running: list[tuple[str, int, int]],
    asked: tuple[str, int, int],
    tasks: int,
    more: tuple[int, int],
    left_out: set[int],
    dropped: set[int],
) -> None:
    conf = (
        "SchedulerType=sched/backfill\n" + CONS_RES + _SHAPES[shape]
        + "NodeName=n[1-3] CPUs=4\nNodeName=n[4-5] CPUs=2\n"
        f"PartitionName=lo Nodes=ALL Default=YES MaxTime=INFINITE PriorityTier=1 "
        f"OverSubscribe={oversubscribe}\n"
        "PartitionName=hi Nodes=n[2-5] MaxTime=INFINITE PriorityTier=2\n"
    )  # fmt: skip
    with tempfile.TemporaryDirectory() as workdir:
        cluster = build_cluster(conf, Path(workdir))
        for partition, nodes, cpus in running:
            cluster.command(
                f"sbatch -p {partition} -N {nodes} -n {max(cpus, nodes)} -t 60 --wrap='sleep 9999'"
            )
        cluster.run_until(5)
        partition, nodes, per_task = asked
        tasks = max(tasks, nodes)
        shapes = [(nodes, tasks), (nodes + more[0], max(tasks + more[1], nodes + more[0]))]
        ids = []
        for count, total in shapes:
            result = cluster.command(
                f"sbatch --parsable -p {partition} -N {count} -n {total} -c {per_task}"
                " --begin=now+3600 -t 10 --wrap='sleep 1'"
            )
            assume(result.status == 0)  # (not a request the partition can never run)
            ids.append(int(result.stdout))
        first, second = ids
        state = cluster.controller.cluster
        names = [name for name in state.partition(partition).nodes if int(name[1:]) not in left_out]
        fewer = [name for name in names if int(name[1:]) not in dropped]
        test = cluster.plugins.select_job_test
        on_more = test(cluster.job(first), names, SelectMode.RUN_NOW, (), state)
        on_fewer = test(cluster.job(second), fewer, SelectMode.RUN_NOW, (), state)
        if on_more.status is not SelectStatus.SUCCESS:
            assert on_fewer.status is not SelectStatus.SUCCESS
