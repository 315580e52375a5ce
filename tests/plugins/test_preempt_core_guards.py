"""The core's anti-thrash guards under preempt/partition_prio: PreemptParameters=
max_job_preempt=N, no_preempt_run_time=MIN[%] and no_preempt_finish_time=MIN[%]."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from plurm.errors import PlurmError
from plurm.model.job import JobState
from plurm.testing import JobBuilder, TestCluster

Make = Callable[..., TestCluster]
Job = Callable[[], JobBuilder]

CONF = (
    "PreemptType=preempt/partition_prio\nPreemptMode={mode}\nJobRequeue=1\n"
    "{params}"
    "NodeName=n1 CPUs=1\n"
    "PartitionName=low Nodes=ALL Default=YES PriorityTier=1 MaxTime=INFINITE\n"
    "PartitionName=high Nodes=ALL PriorityTier=2 MaxTime=INFINITE\n"
)


def _make(make_cluster: Make, params: str, mode: str = "REQUEUE") -> TestCluster:
    line = f"PreemptParameters={params}\n" if params else ""
    return make_cluster(CONF.format(mode=mode, params=line))


def _hit(cluster: TestCluster, job: Job, victim: int, at: float) -> int:
    """Run until ``at``, submit a one-minute high job, and give it 10 s to preempt."""
    cluster.run_until(at)
    assert cluster.state(victim) is JobState.RUNNING
    high = cluster.submit(job().partition("high").runtime(60))
    cluster.run_until(at + 10)
    return high


def test_max_job_preempt_spares_a_job_preempted_n_times(make_cluster: Make, job: Job) -> None:
    cluster = _make(make_cluster, "max_job_preempt=2")
    low = cluster.submit(job().runtime(100_000))
    cluster.settle()
    at = cluster.now
    for _ in range(2):
        high = _hit(cluster, job, low, at)
        assert cluster.state(high) is JobState.RUNNING  # the low job was requeued for it
        at += 400  # the high job ends, the low job starts again (after its requeue hold)
    third = _hit(cluster, job, low, at)
    assert cluster.state(third) is JobState.PENDING
    assert cluster.state(low) is JobState.RUNNING
    assert cluster.job(low).restarts == 2


def test_without_max_job_preempt_the_same_job_is_preempted_again(
    make_cluster: Make, job: Job
) -> None:
    cluster = _make(make_cluster, "")
    low = cluster.submit(job().runtime(100_000))
    cluster.settle()
    at = cluster.now
    for _ in range(3):
        high = _hit(cluster, job, low, at)
        assert cluster.state(high) is JobState.RUNNING
        at += 400
    assert cluster.job(low).restarts == 3


def test_max_job_preempt_counts_suspensions(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster(
        CONF.format(mode="SUSPEND,GANG", params="PreemptParameters=max_job_preempt=1\n")
    )
    low = cluster.submit(job().runtime(100_000))
    cluster.settle()
    first = _hit(cluster, job, low, cluster.now)
    assert cluster.state(first) is JobState.RUNNING
    assert cluster.state(low) is JobState.SUSPENDED
    cluster.run_until(cluster.now + 120)  # the high job ended; the low job resumed
    assert cluster.state(low) is JobState.RUNNING
    second = _hit(cluster, job, low, cluster.now)
    assert cluster.state(second) is JobState.PENDING
    assert cluster.state(low) is JobState.RUNNING


@pytest.mark.parametrize(
    ("setting", "ran", "spared"),
    [
        ("30", 29 * 60, False),
        ("30", 31 * 60, True),
        ("50%", 55 * 60, False),  # 50 % of its 2-hour limit is an hour
        ("50%", 65 * 60, True),
    ],
)
def test_no_preempt_run_time(
    make_cluster: Make, job: Job, setting: str, ran: float, spared: bool
) -> None:
    cluster = _make(make_cluster, f"no_preempt_run_time={setting}")
    low = cluster.submit(job().time(120).runtime(100_000))
    cluster.settle()
    high = _hit(cluster, job, low, cluster.now + ran)
    assert cluster.state(high) is (JobState.PENDING if spared else JobState.RUNNING)
    assert (cluster.job(low).preempt_time is None) is spared


def test_no_preempt_run_time_percent_needs_a_time_limit(make_cluster: Make, job: Job) -> None:
    cluster = _make(make_cluster, "no_preempt_run_time=10%")
    low = cluster.submit(job().runtime(100_000))  # MaxTime=INFINITE: no limit
    cluster.settle()
    high = _hit(cluster, job, low, cluster.now + 3600)
    assert cluster.state(high) is JobState.RUNNING


@pytest.mark.parametrize(
    ("setting", "ran", "spared"),
    [
        ("20", 95 * 60, False),  # 25 minutes left of 2 hours
        ("20", 105 * 60, True),  # 15 minutes left
        ("25%", 80 * 60, False),  # 40 minutes left; 25 % is 30 minutes
        ("25%", 95 * 60, True),
    ],
)
def test_no_preempt_finish_time(
    make_cluster: Make, job: Job, setting: str, ran: float, spared: bool
) -> None:
    cluster = _make(make_cluster, f"no_preempt_finish_time={setting}")
    low = cluster.submit(job().time(120).runtime(100_000))
    cluster.settle()
    high = _hit(cluster, job, low, cluster.now + ran)
    assert cluster.state(high) is (JobState.PENDING if spared else JobState.RUNNING)


def test_no_preempt_finish_time_needs_a_time_limit(make_cluster: Make, job: Job) -> None:
    cluster = _make(make_cluster, "no_preempt_finish_time=600")
    low = cluster.submit(job().runtime(100_000))
    cluster.settle()
    high = _hit(cluster, job, low, cluster.now + 60)
    assert cluster.state(high) is JobState.RUNNING


def test_guards_stack_with_the_victim_objective(make_cluster: Make, job: Job) -> None:
    cluster = _make(make_cluster, "victims=fewest,no_preempt_run_time=1")
    low = cluster.submit(job().runtime(100_000))
    cluster.settle()
    high = _hit(cluster, job, low, cluster.now + 120)
    assert cluster.state(high) is JobState.PENDING
    assert cluster.state(low) is JobState.RUNNING


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ("no_preempt_run_time=soon", "not a number of minutes or a percentage"),
        ("no_preempt_finish_time=120%", "not a percentage from 0% to 100%"),
        ("max_job_preempt=-1", "max_job_preempt"),
        ("max_job_preempt=two", "takes a whole number"),
        ("no_preempt_run_time", "needs a value"),
    ],
)
def test_bad_guard_values_are_configuration_errors(
    make_cluster: Make, params: str, message: str
) -> None:
    with pytest.raises(PlurmError, match=message):
        _make(make_cluster, params)


def test_a_guard_holds_under_preempt_qos_too(make_cluster: Make, job: Job) -> None:
    conf = (
        "SelectType=select/linear\nPreemptType=preempt/qos\nPreemptMode=REQUEUE\nJobRequeue=1\n"
        "PreemptParameters=no_preempt_run_time=10\n"
        "NodeName=n1 CPUs=1\nPartitionName=p Nodes=ALL Default=YES MaxTime=INFINITE\n"
    )
    qos = "QOS=normal Priority=10\nQOS=high Priority=100 Preempt=normal\n"
    cluster = make_cluster(conf, qos_text=qos)
    young = cluster.submit(job().runtime(100_000))
    cluster.settle()
    first = cluster.submit(job().qos("high").runtime(60))
    cluster.run_until(cluster.now + 10)
    assert cluster.state(first) is JobState.RUNNING  # 1 minute old: preempted
    cluster.run_until(cluster.now + 400)
    assert cluster.state(young) is JobState.RUNNING
    cluster.run_until(cluster.now + 900)  # now it has run more than 10 minutes
    second = cluster.submit(job().qos("high").runtime(60))
    cluster.run_until(cluster.now + 10)
    assert cluster.state(second) is JobState.PENDING
    assert cluster.state(young) is JobState.RUNNING
