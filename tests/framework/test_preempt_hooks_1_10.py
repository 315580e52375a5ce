"""Hook API 1.10's preempt hooks, through the small test policy of test_preempt_ladder (not
preempt/pbs nor preempt/lsf): ``preempt_requeue_delay`` (a victim requeued or checkpointed
by a preemption waits Slurm's requeue delay, BeginTime 121 s after the whole second it went
back, unless the policy gives another; ``scontrol requeue`` always waits Slurm's),
``preempt_suspended_counts`` (a preempt-suspended job counts against association limits
unless the policy says not), and the counts the core keeps on a job for policies
(``preemptions``, ``preempt_attempts``). ``preempt_suspended_reserve`` is tested through
preempt/pbs (tests/plugins/test_preempt_pbs_scenarios.py)."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest

from plurm import hookimpl
from plurm.controller import REQUEUE_DELAY
from plurm.model.cluster import Cluster
from plurm.model.job import Job, JobState, PendingReason
from plurm.registry import PluginContext
from plurm.testing import JobBuilder, TestCluster
from tests.framework.test_preempt_ladder import CONF, ladder_policy


def delay_policy(delay: int | None) -> Callable[[PluginContext], object]:
    """The ladder policy, answering ``preempt_requeue_delay`` with ``delay`` (None: not
    implemented at all, Slurm's default)."""
    base = ladder_policy(trim=False)
    if delay is None:
        return base

    class Delaying(base):  # type: ignore[misc,valid-type]
        @hookimpl
        def preempt_requeue_delay(self, job: Job, cluster: Cluster) -> int:
            return delay

    return Delaying


def _requeued_victim(
    make_cluster: Callable[..., TestCluster],
    job: Callable[[], JobBuilder],
    delay: int | None,
    ladder: str = "R",
) -> tuple[TestCluster, int, int, float]:
    """A 1-node cluster: a low job preempted at 300 s by a 100 s high job with ``ladder``;
    the cluster once the victim is back in the queue, both ids and when it went back."""
    cluster = make_cluster(CONF.format(nodes=1), plugins={"preempt/ladder": delay_policy(delay)})
    low = cluster.submit(job().name(ladder).runtime(1000))
    cluster.run_until(300)
    high = cluster.submit(job().partition("high").runtime(100))
    while cluster.state(low) is not JobState.PENDING:
        assert cluster.step() is not None
    back = cluster.now
    assert cluster.job(low).restarts == 1
    return cluster, low, high, back


def _started_again(cluster: TestCluster, low: int) -> float:
    while cluster.job(low).start_time is None:
        assert cluster.step() is not None and cluster.now < 5_000, cluster.states()
    start = cluster.job(low).start_time
    assert start is not None
    return start


def test_by_default_a_requeued_victim_waits_slurms_requeue_delay(
    make_cluster: Callable[..., TestCluster], job: Callable[[], JobBuilder]
) -> None:
    cluster, low, high, back = _requeued_victim(make_cluster, job, None)
    victim = cluster.job(low)
    assert victim.reason is PendingReason.BEGIN_TIME
    assert victim.eligible_time == math.floor(back) + REQUEUE_DELAY
    start = _started_again(cluster, low)
    end = cluster.job(high).end_time
    assert end is not None and end < victim.eligible_time <= start


@pytest.mark.parametrize("ladder", ["R", "C"])
def test_a_policy_answering_0_queues_the_victim_at_once(
    make_cluster: Callable[..., TestCluster], job: Callable[[], JobBuilder], ladder: str
) -> None:
    cluster, low, high, back = _requeued_victim(make_cluster, job, 0, ladder)
    victim = cluster.job(low)
    assert victim.reason is not PendingReason.BEGIN_TIME
    assert victim.eligible_time == back
    start = _started_again(cluster, low)
    end = cluster.job(high).end_time
    # it starts in the pass the preemptor's end triggers, not 121 s after it went back
    assert end is not None and end <= start <= end + 1
    assert start < math.floor(back) + REQUEUE_DELAY


def test_a_policy_may_give_another_delay(
    make_cluster: Callable[..., TestCluster], job: Callable[[], JobBuilder]
) -> None:
    cluster, low, _, back = _requeued_victim(make_cluster, job, 300, "C")
    victim = cluster.job(low)
    assert victim.reason is PendingReason.BEGIN_TIME
    assert victim.eligible_time == math.floor(back) + 300
    assert _started_again(cluster, low) >= victim.eligible_time


def test_scontrol_requeue_waits_slurms_delay_whatever_the_policy(
    make_cluster: Callable[..., TestCluster], job: Callable[[], JobBuilder]
) -> None:
    cluster = make_cluster(CONF.format(nodes=1), plugins={"preempt/ladder": delay_policy(0)})
    low = cluster.submit(job().name("R").runtime(1000))
    cluster.run_until(50)
    result = cluster.command(f"scontrol requeue {low}")
    assert result.status == 0, result
    while cluster.state(low) is not JobState.PENDING:
        assert cluster.step() is not None
    victim = cluster.job(low)
    assert victim.reason is PendingReason.BEGIN_TIME
    assert victim.eligible_time == math.floor(cluster.now) + REQUEUE_DELAY


def test_the_core_counts_a_jobs_preemptions_and_preemption_attempts(
    make_cluster: Callable[..., TestCluster], job: Callable[[], JobBuilder]
) -> None:
    """``Job.preemptions`` counts each preemption carried out on the job (kept across its
    requeue); ``Job.preempt_attempts`` counts the decisions that looked for victims for a
    waiting job, and starts again when it starts."""
    cluster = make_cluster(CONF.format(nodes=1), plugins={"preempt/ladder": delay_policy(0)})
    low = cluster.submit(job().name("R").runtime(1000))
    cluster.run_until(300)
    high = cluster.submit(job().partition("high").runtime(100))
    victim, preemptor = cluster.job(low), cluster.job(high)
    while victim.state is not JobState.COMPLETING:
        assert cluster.step() is not None
    # the preemptor waits for its victim's teardown: one decision looked for victims
    assert preemptor.state is JobState.PENDING and preemptor.preempt_attempts == 1
    assert victim.preemptions == 1 and preemptor.preemptions == 0
    _started_again(cluster, low)
    assert preemptor.state is not JobState.PENDING
    assert preemptor.preempt_attempts == 0  # it has started
    assert victim.preemptions == 1 and victim.preempt_attempts == 0
    # preempted again, by a second high job: the count goes on from 1
    again = cluster.submit(job().partition("high").runtime(100))
    while victim.state is not JobState.PENDING:
        assert cluster.step() is not None
    assert victim.preemptions == 2 and victim.restarts == 2
    assert cluster.job(again).preemptions == 0


LIMITS_HEAD = "AccountingStorageType=accounting_storage/slurmdbd\nAccountingStorageEnforce=limits\n"


def counting_policy(counts: bool | None) -> Callable[[PluginContext], object]:
    """The ladder policy, answering ``preempt_suspended_counts`` with ``counts`` (None: not
    implemented, Slurm's default)."""
    base = ladder_policy(trim=False)
    if counts is None:
        return base

    class Counting(base):  # type: ignore[misc,valid-type]
        @hookimpl
        def preempt_suspended_counts(self, job: Job, scope: str, cluster: Cluster) -> bool:
            assert scope in ("user", "account")
            return counts

    return Counting


@pytest.mark.parametrize(("counts", "starts"), [(None, False), (True, False), (False, True)])
def test_a_job_suspended_by_preemption_counts_against_limits_unless_the_policy_says(
    make_cluster: Callable[..., TestCluster],
    job: Callable[[], JobBuilder],
    counts: bool | None,
    starts: bool,
) -> None:
    """MaxJobs=1 on root's association: its job suspended by a releasing preemption still
    counts (Slurm's rule: a suspended job holds its association's limits until it ends), so
    its second job waits (AssocMaxJobsLimit) on a free node, unless the policy answers
    ``preempt_suspended_counts`` False."""
    cluster = make_cluster(
        LIMITS_HEAD + CONF.format(nodes=2),
        plugins={"preempt/ladder": counting_policy(counts)},
        accounts_text="Account=a\nAccount=b\nUser=root Account=a MaxJobs=1\nUser=root Account=b\n",
    )
    first = cluster.submit(job().name("S").nodes(2).account("a").runtime(1000))
    cluster.run_until(10)
    high = cluster.submit(job().partition("high").account("b").runtime(100))
    cluster.settle()
    assert cluster.state(first) is JobState.SUSPENDED
    assert cluster.job(high).nodes == ("n1",)
    second = cluster.submit(job().name("S").account("a").runtime(100))
    cluster.settle()
    if starts:
        assert cluster.state(second) is JobState.RUNNING and cluster.job(second).nodes == ("n2",)
    else:
        assert cluster.state(second) is JobState.PENDING
        assert cluster.job(second).reason is PendingReason.ASSOC_MAX_JOBS_LIMIT
