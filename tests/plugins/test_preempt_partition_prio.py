"""preempt/partition_prio: tiers, modes, ordering."""

from __future__ import annotations

from collections.abc import Callable

from plurm.conf.values import PreemptBase
from plurm.testing import JobBuilder, TestCluster

Make = Callable[..., TestCluster]
Job = Callable[[], JobBuilder]

CONF = (
    "PreemptType=preempt/partition_prio\nPreemptMode=CANCEL\n"
    "NodeName=n[1-4] CPUs=1\n"
    "PartitionName=low Nodes=ALL PriorityTier=1 Default=YES\n"
    "PartitionName=same Nodes=ALL PriorityTier=1\n"
    "PartitionName=off Nodes=ALL PriorityTier=1 PreemptMode=OFF\n"
    "PartitionName=mid Nodes=ALL PriorityTier=2 PreemptMode=REQUEUE GraceTime=30\n"
    "PartitionName=high Nodes=ALL PriorityTier=3\n"
)


def _ask(cluster: TestCluster, preemptor: int, victim: int) -> bool:
    plugins = cluster.plugins
    return plugins.preempt_preemptable(
        cluster.job(preemptor), cluster.job(victim), cluster.controller.cluster
    )


def test_only_a_strictly_higher_tier_preempts(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster(CONF)
    low = cluster.submit(job().runtime(100))
    same = cluster.submit(job().partition("same").runtime(100))
    high = cluster.submit(job().partition("high").runtime(100))
    assert _ask(cluster, high, low)
    assert not _ask(cluster, same, low)
    assert not _ask(cluster, low, high)


def test_a_partition_with_mode_off_is_never_a_victim(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster(CONF)
    protected = cluster.submit(job().partition("off").runtime(100))
    high = cluster.submit(job().partition("high").runtime(100))
    assert not _ask(cluster, high, protected)


def test_mode_and_grace_come_from_the_partition_else_the_cluster(
    make_cluster: Make, job: Job
) -> None:
    cluster = make_cluster(CONF)
    low = cluster.job(cluster.submit(job().runtime(100)))
    mid = cluster.job(cluster.submit(job().partition("mid").runtime(100)))
    view = cluster.controller.cluster
    assert cluster.plugins.preempt_mode(low, view).base is PreemptBase.CANCEL
    assert cluster.plugins.preempt_mode(mid, view).base is PreemptBase.REQUEUE
    assert cluster.plugins.preempt_grace_time(mid, view) == 30
    assert cluster.plugins.preempt_grace_time(low, view) == 0


def test_ordering_key_is_tier_then_size(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster(CONF)
    view = cluster.controller.cluster
    small = cluster.job(cluster.submit(job().runtime(100)))
    big = cluster.job(cluster.submit(job().nodes(2).runtime(100)))
    mid = cluster.job(cluster.submit(job().partition("mid").runtime(100)))
    keys = {j.job_id: cluster.plugins.preempt_priority(j, view) for j in (small, big, mid)}
    assert keys[small.job_id] < keys[big.job_id] < keys[mid.job_id]
    assert keys[mid.job_id] == (2 << 16) + 1


def test_preemptor_is_queued_before_its_victims(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster(CONF.replace("NodeName=n[1-4]", "NodeName=n1"))
    cluster.submit(job().runtime(1000))  # takes the only node
    cluster.settle()
    waiting_low = cluster.submit(job().runtime(10))
    high = cluster.submit(job().partition("high").runtime(10))
    cluster.run_until(2)  # the victim is killed; it holds the node while COMPLETING
    assert cluster.state(1).name == "COMPLETING"
    cluster.run_until(6)
    assert cluster.state(high).name == "RUNNING"
    assert cluster.state(waiting_low).name == "PENDING"


def test_preempt_by_tier_holds_for_every_pair_and_keeps_the_queue_order(
    make_cluster: Make, job: Job
) -> None:
    """The promise behind preempt_by_tier: neither question answers True for a victim whose
    partition's tier is at least the preemptor's (every pair of partitions, with and without
    the PRIORITY flag); so the queue sorted by key alone is the one the pairwise comparison
    gives, over random priorities."""
    import random

    from plurm.builtin.sched_builtin import BuiltinScheduler
    from plurm.model.job import PreemptsByTier
    from plurm.registry import PluginContext

    rng = random.Random(5)
    for mode in ("PreemptMode=CANCEL\n", "PreemptMode=CANCEL,PRIORITY\n"):
        cluster = make_cluster(CONF.replace("PreemptMode=CANCEL\n", mode))
        plugins, model = cluster.plugins, cluster.controller.cluster
        assert plugins.preempt_by_tier(model)
        parts = list(model.partitions)
        jobs = [cluster.job(cluster.submit(job().partition(rng.choice(parts)))) for _ in range(40)]
        for first in jobs:
            first.priority = rng.randint(1, 5)
        seen_true = False
        for first in jobs:
            for second in jobs:
                tier_first = model.partition(first.partition).priority_tier
                tier_second = model.partition(second.partition).priority_tier
                answers = (
                    plugins.preempt_preemptable(first, second, model),
                    plugins.preempt_job_preempt_check(first, second, model),
                )
                seen_true = seen_true or any(answers)
                if tier_second >= tier_first:
                    assert answers == (False, False), (first.partition, second.partition)
        assert seen_true  # the check above is not vacuous
        order = BuiltinScheduler(PluginContext(model.config, "sched/builtin"))
        check = plugins.preempt_check_for(model)
        for _ in range(20):
            rng.shuffle(jobs)
            assert order.sched_queue_order(jobs, PreemptsByTier(check), model) == (
                order.sched_queue_order(jobs, check, model)
            )
