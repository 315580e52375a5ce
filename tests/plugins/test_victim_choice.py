"""PreemptParameters=victims=slurm|fewest|least_lost_work under preempt/partition_prio, on
select/linear and select/cons_res: the seed's future-ideas example and the 8-node case."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs
import pytest

from plurm import hookimpl
from plurm.builtin.sched_backfill import BackfillScheduler
from plurm.errors import PlurmError
from plurm.model.backfill import BackfillStart, BackfillView
from plurm.model.cluster import Cluster
from plurm.model.job import Job as JobRecord
from plurm.model.job import JobState
from plurm.testing import JobBuilder, TestCluster

Make = Callable[..., TestCluster]
Job = Callable[[], JobBuilder]

# The Slurm 1.3 preemption page's "future ideas": five nodes, three one-node jobs of the
# low partition on n[1-3], a 3-node job of the high partition; SUSPEND,GANG.
SEED = (
    "SelectType=select/cons_res\nSelectTypeParameters=CR_Core\n"
    "PreemptType=preempt/partition_prio\nPreemptMode=SUSPEND,GANG\n"
    "{params}"
    "NodeName=n[1-5] CPUs=2\n"
    "PartitionName=active Nodes=ALL Default=YES PriorityTier=1 OverSubscribe=FORCE:1\n"
    "PartitionName=hipri Nodes=ALL PriorityTier=2 OverSubscribe=FORCE:1\n"
)

# Eight one-CPU nodes under select/linear: a 4-node job and two 2-node jobs fill them.
EIGHT = (
    "SelectType=select/linear\n"
    "PreemptType=preempt/partition_prio\nPreemptMode=REQUEUE\nJobRequeue=1\n"
    "{params}"
    "NodeName=n[1-8] CPUs=1\n"
    "PartitionName=low Nodes=ALL Default=YES PriorityTier=1\n"
    "PartitionName=high Nodes=ALL PriorityTier=2\n"
)


def _params(victims: str | None) -> str:
    return f"PreemptParameters=victims={victims}\n" if victims else ""


def _seed(make_cluster: Make, job: Job, victims: str | None) -> tuple[TestCluster, int]:
    cluster = make_cluster(SEED.format(params=_params(victims)))
    for _ in range(3):
        cluster.submit(job().tasks(2).runtime(600))
    cluster.settle()
    assert [cluster.job(i).nodes for i in (1, 2, 3)] == [("n1",), ("n2",), ("n3",)]
    high = cluster.submit(job().partition("hipri").nodes(3).tasks(6).runtime(100))
    cluster.run_until(cluster.now + 5)
    return cluster, high


@pytest.mark.parametrize("victims", [None, "slurm"])
def test_seed_example_slurm_suspends_all_three(make_cluster: Make, job: Job, victims: str) -> None:
    cluster, high = _seed(make_cluster, job, victims)
    assert cluster.state(high) is JobState.RUNNING
    assert cluster.job(high).nodes == ("n1", "n2", "n3")
    assert [cluster.state(i) for i in (1, 2, 3)] == [JobState.SUSPENDED] * 3


def test_seed_example_fewest_takes_one_victim_and_the_idle_nodes(
    make_cluster: Make, job: Job
) -> None:
    cluster, high = _seed(make_cluster, job, "fewest")
    assert cluster.state(high) is JobState.RUNNING
    # One victim (the first in Slurm's order: job 1) and the two idle nodes.
    assert cluster.job(high).nodes == ("n1", "n4", "n5")
    assert [cluster.state(i) for i in (1, 2, 3)] == [
        JobState.SUSPENDED,
        JobState.RUNNING,
        JobState.RUNNING,
    ]


def _eight(
    make_cluster: Make, job: Job, victims: str | None, *, old_big: bool
) -> tuple[TestCluster, dict[str, int], int]:
    """The 4-node job and two 2-node jobs; ``old_big``: the 4-node job started an hour
    before the others (else an hour after)."""
    cluster = make_cluster(EIGHT.format(params=_params(victims)))
    ids: dict[str, int] = {}
    first, second = (("big", 4), ("small", 2)) if old_big else (("small", 2), ("big", 4))
    for name, size in (first, second):
        count = 1 if name == "big" else 2
        for index in range(count):
            ids[f"{name}{index}"] = cluster.submit(job().nodes(size).runtime(100_000))
        cluster.settle()
        cluster.run_until(cluster.now + 3600)
    assert all(cluster.state(i) is JobState.RUNNING for i in ids.values())
    high = cluster.submit(job().partition("high").nodes(4).runtime(100))
    cluster.run_until(cluster.now + 2)
    return cluster, ids, high


def _preempted(cluster: TestCluster, ids: dict[str, int]) -> set[str]:
    return {name for name, i in ids.items() if cluster.job(i).preempt_time is not None}


@pytest.mark.parametrize("old_big", [True, False])
def test_eight_nodes_slurm_takes_the_two_small_jobs(
    make_cluster: Make, job: Job, old_big: bool
) -> None:
    cluster, ids, _ = _eight(make_cluster, job, "slurm", old_big=old_big)
    assert _preempted(cluster, ids) == {"small0", "small1"}


@pytest.mark.parametrize("old_big", [True, False])
def test_eight_nodes_fewest_takes_the_one_four_node_job(
    make_cluster: Make, job: Job, old_big: bool
) -> None:
    cluster, ids, high = _eight(make_cluster, job, "fewest", old_big=old_big)
    assert _preempted(cluster, ids) == {"big0"}
    cluster.run_until(cluster.now + 10)
    assert cluster.state(high) is JobState.RUNNING
    assert cluster.state(ids["big0"]) is JobState.PENDING  # requeued
    assert {cluster.state(ids[n]) for n in ("small0", "small1")} == {JobState.RUNNING}


def test_eight_nodes_least_lost_work_takes_the_young_small_jobs(
    make_cluster: Make, job: Job
) -> None:
    cluster, ids, _ = _eight(make_cluster, job, "least_lost_work", old_big=True)
    # 4 CPUs x 2 h lost against 2 x 2 CPUs x 1 h: the two young 2-node jobs go.
    assert _preempted(cluster, ids) == {"small0", "small1"}


def test_eight_nodes_least_lost_work_takes_a_young_big_job(make_cluster: Make, job: Job) -> None:
    cluster, ids, _ = _eight(make_cluster, job, "least_lost_work", old_big=False)
    # 4 CPUs x 1 h lost against 2 x 2 CPUs x 2 h: the young 4-node job goes.
    assert _preempted(cluster, ids) == {"big0"}


def test_an_unknown_objective_is_a_configuration_error(make_cluster: Make) -> None:
    with pytest.raises(PlurmError, match="victims takes one of slurm, fewest, least_lost_work"):
        make_cluster(EIGHT.format(params=_params("cheapest")))


def test_past_the_exact_bound_the_pool_still_finds_the_one_big_victim(
    make_cluster: Make, job: Job
) -> None:
    """18 nodes, sixteen 1-node jobs then one 2-node job (last in Slurm's order: larger):
    17 candidates, past EXACT_CANDIDATES; the bounded pool (lowest cost per CPU) holds the
    2-node job, and fewest takes it alone where Slurm takes two 1-node jobs."""
    conf = EIGHT.replace("NodeName=n[1-8]", "NodeName=n[1-18]")
    for victims, expected in (("slurm", 2), ("fewest", 1)):
        cluster = make_cluster(conf.format(params=_params(victims)))
        smalls = [cluster.submit(job().runtime(100_000)) for _ in range(16)]
        big = cluster.submit(job().nodes(2).runtime(100_000))
        cluster.settle()
        assert all(cluster.state(i) is JobState.RUNNING for i in [*smalls, big])
        high = cluster.submit(job().partition("high").nodes(2).runtime(100))
        cluster.run_until(cluster.now + 10)
        assert cluster.state(high) is JobState.RUNNING
        taken = [i for i in [*smalls, big] if cluster.job(i).preempt_time is not None]
        assert len(taken) == expected
        assert (taken == [big]) is (victims == "fewest")


def test_a_retry_during_grace_time_keeps_its_victims(make_cluster: Make, job: Job) -> None:
    """least_lost_work at the first try (t=101): the 2-node job (2 CPUs x 30 s) over the
    1-node job (1 x 70 s). At the preemptor's retry at the periodic pass (t=180, past
    KillWait + MessageTimeout: it may signal again), during the victim's GraceTime, the
    2-node job would cost more (2 x 109 s > 1 x 149 s) had it not been chosen already: the
    retry keeps it and takes no second victim."""
    conf = (
        "SelectType=select/linear\nPreemptType=preempt/partition_prio\nPreemptMode=CANCEL\n"
        "PreemptParameters=victims=least_lost_work\n"
        "NodeName=n[1-3] CPUs=1\n"
        "PartitionName=low Nodes=ALL Default=YES PriorityTier=1 GraceTime=120\n"
        "PartitionName=high Nodes=ALL PriorityTier=2\n"
    )
    cluster = make_cluster(conf)
    cluster.run_until(30)
    old = cluster.submit(job().runtime(100_000))
    cluster.run_until(70)
    young = cluster.submit(job().nodes(2).runtime(100_000))
    cluster.run_until(100)
    assert cluster.job(old).start_time == 31 and cluster.job(young).start_time == 71
    cluster.submit(job().partition("high").runtime(100))
    cluster.run_until(103)
    assert cluster.job(young).preempt_time == 101
    assert cluster.job(old).preempt_time is None
    cluster.run_until(185)  # past the retry at 180 (its GraceTime ends at 221)
    assert cluster.state(young) is JobState.RUNNING  # in its GraceTime
    assert cluster.job(old).preempt_time is None


# Backfill that preempts: five one-CPU nodes under select/linear. Low jobs 1 and 2 (one node
# each, old) and 3 (two nodes, young); high job 4 holds n5 (same tier: not a candidate).
# High job 5 (-N5) needs n5: the main pass stops at it, and job 6 (-N2, short) waits behind
# it on Priority; only the backfill pass reaches job 6, which ends before job 5's planned
# start, and starts it by preempting.
BACKFILL = (
    "SchedulerType=sched/backfill\nSelectType=select/linear\n"
    "PreemptType=preempt/partition_prio\nPreemptMode=CANCEL\nKillWait=5\n"
    "{params}"
    "NodeName=n[1-5] CPUs=1\n"
    "PartitionName=low Nodes=ALL Default=YES PriorityTier=1\n"
    "PartitionName=high Nodes=ALL PriorityTier=2 PreemptMode=OFF\n"
)


@pytest.mark.parametrize(
    ("victims", "taken", "nodes"),
    [
        ("slurm", {1, 2}, ("n1", "n2")),
        ("fewest", {3}, ("n3", "n4")),
        ("least_lost_work", {3}, ("n3", "n4")),
    ],
)
def test_backfill_that_preempts_takes_the_chosen_victims(
    make_cluster: Make, victims: str, taken: set[int], nodes: tuple[str, ...]
) -> None:
    cluster = make_cluster(BACKFILL.format(params=_params(victims)))
    cluster.command("sbatch -p low -t 600 --wrap='sleep 100000'")
    cluster.command("sbatch -p low -t 600 --wrap='sleep 100000'")
    cluster.run_until(3000)
    cluster.command("sbatch -p low -N2 -t 600 --wrap='sleep 100000'")
    cluster.command("sbatch -p high -w n5 -t 10 --wrap='sleep 600'")
    cluster.run_until(3002)
    cluster.command("sbatch -p high -N5 -t 10 --wrap='sleep 600'")
    cluster.command("sbatch -p high -N2 -t 2 --wrap='sleep 100'")
    cluster.run_until(3005)
    assert [cluster.job(i).nodes for i in (1, 2, 3, 4)] == [
        ("n1",),
        ("n2",),
        ("n3", "n4"),
        ("n5",),
    ]
    # the main pass stops at job 5; job 6 waits behind it
    assert cluster.job(5).reason.name == "RESOURCES"
    assert cluster.job(6).reason.name == "PRIORITY"
    assert all(cluster.job(i).preempt_time is None for i in (1, 2, 3))
    cluster.run_until(3100)  # backfill passes: job 6 preempts, then starts
    assert {i for i in (1, 2, 3) if cluster.job(i).preempt_time is not None} == taken
    assert cluster.state(6) is JobState.RUNNING
    assert cluster.job(6).nodes == nodes
    for i in {1, 2, 3} - taken:
        assert cluster.state(i) is JobState.RUNNING
    assert cluster.state(5) is JobState.PENDING


def _reserved_for_job_5(cluster: TestCluster) -> None:
    """Job 4 ends within a minute and job 5 needs n[3-5]: the backfill pass reserves n3-n5
    for job 5 from job 4's end, within job 6's run."""
    cluster.command("sbatch -p low -t 600 --wrap='sleep 100000'")
    cluster.command("sbatch -p low -t 600 --wrap='sleep 100000'")
    cluster.run_until(3000)
    cluster.command("sbatch -p low -N2 -t 600 --wrap='sleep 100000'")
    cluster.command("sbatch -p high -w n5 -t 1 --wrap='sleep 600'")
    cluster.run_until(3002)
    cluster.command("sbatch -p high -N3 -w n[3-5] -t 10 --wrap='sleep 600'")
    cluster.command("sbatch -p high -N2 -t 2 --wrap='sleep 100'")
    cluster.run_until(3005)
    assert cluster.job(6).reason.name == "PRIORITY"


def test_backfill_fewest_does_not_take_victims_on_reserved_nodes(make_cluster: Make) -> None:
    """As above, with n3-n5 reserved for job 5: job 6 may preempt only on n1-n2 (jobs 1
    and 2), as under ``slurm``; taking job 3 instead would delay job 5."""
    cluster = make_cluster(BACKFILL.format(params=_params("fewest")))
    _reserved_for_job_5(cluster)
    cluster.run_until(3100)
    assert cluster.job(6).nodes == ("n1", "n2")
    assert cluster.job(3).preempt_time is not None  # by job 5, at job 4's end
    assert cluster.state(5) is JobState.RUNNING


class _BackfillBefore112(BackfillScheduler):
    """sched/backfill as a plugin written before hook API 1.12 answers: no ``allowed``."""

    @hookimpl
    def sched_backfill(
        self, jobs: Sequence[JobRecord], view: BackfillView, cluster: Cluster
    ) -> list[BackfillStart]:
        starts = super().sched_backfill(jobs, view, cluster)
        return [attrs.evolve(start, allowed=None) for start in starts]


def test_a_backfill_start_without_allowed_nodes_preempts_on_all_usable_ones(
    make_cluster: Make,
) -> None:
    """A sched plugin that does not fill ``allowed`` (written before 1.12) still gets its
    preempting starts: the core searches victims on all the job's usable nodes, as it did
    (fewest then takes job 3, the one victim, on n3-n4)."""
    cluster = make_cluster(
        BACKFILL.format(params=_params("fewest")), plugins={"sched/backfill": _BackfillBefore112}
    )
    _reserved_for_job_5(cluster)
    cluster.run_until(3100)
    assert cluster.state(6) is JobState.RUNNING
    assert cluster.job(6).nodes == ("n3", "n4")
    assert cluster.job(3).preempt_time is not None
    assert cluster.state(1) is JobState.RUNNING
