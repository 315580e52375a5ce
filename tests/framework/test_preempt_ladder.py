"""The core's side of hook API 1.8, through a small test policy (not preempt/pbs nor
preempt/lsf): a ladder of methods per victim (``preempt_methods``), CHECKPOINT keeping the
work done, the fall-through to the next method when one cannot apply, and the trim pass
(``preempt_trim_victims``) that drops victims the preemptor does not need after all.

The test policy: jobs of partition high preempt jobs of partition low; a victim's ladder is
written in its job name (``SR``: suspend, else requeue; letters as PBS's preempt_order),
and candidates go in job id order.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from plurm import HOOK_API_VERSION, hookimpl
from plurm.conf.model import SlurmConfig
from plurm.conf.values import PreemptBase, PreemptMode
from plurm.model.cluster import Cluster
from plurm.model.job import Job, JobState
from plurm.model.select import PreemptMethod
from plurm.registry import PluginContext
from plurm.testing import JobBuilder, TestCluster

CONF = (
    "SelectType=select/linear\nPreemptType=preempt/ladder\nJobRequeue=1\nKillWait=5\n"
    "NodeName=n[1-{nodes}] CPUs=1 RealMemory=1000\n"
    "PartitionName=low Nodes=ALL Default=YES\n"
    "PartitionName=high Nodes=ALL\n"
)


def ladder_policy(*, trim: bool) -> Callable[[PluginContext], object]:
    """A factory of the test policy, trimming victims or not."""

    class Ladder:
        PLURM_HOOK_API = HOOK_API_VERSION

        def __init__(self, context: PluginContext) -> None:
            self.context = context

        @hookimpl
        def preempt_enabled(self, cluster: Cluster) -> bool:
            return True

        @hookimpl
        def preempt_check_mode(self, mode: PreemptMode, config: SlurmConfig) -> str | None:
            return None  # the ladder is in the job names, PreemptMode is not read

        @hookimpl
        def preempt_preemptable(self, preemptor: Job, preemptee: Job, cluster: Cluster) -> bool:
            return preemptor.partition == "high" and preemptee.partition == "low"

        @hookimpl
        def preempt_job_preempt_check(
            self, preemptor: Job, preemptee: Job, cluster: Cluster
        ) -> bool:
            return preemptor.partition == "high" and preemptee.partition == "low"

        @hookimpl
        def preempt_methods(self, job: Job, cluster: Cluster) -> tuple[PreemptMethod, ...]:
            return tuple(PreemptMethod(letter) for letter in job.name)

        @hookimpl
        def preempt_mode(self, job: Job, cluster: Cluster) -> PreemptMode:
            return PreemptMode(PreemptBase.REQUEUE)  # (required; the ladder takes its place)

        @hookimpl
        def preempt_priority(self, job: Job, cluster: Cluster) -> int:
            return 0  # equal: the core orders candidates by job id

        @hookimpl
        def preempt_grace_time(self, job: Job, cluster: Cluster) -> int:
            return 0

        @hookimpl
        def preempt_suspend_releases(self, cluster: Cluster) -> bool:
            return True

        @hookimpl
        def preempt_trim_victims(self, cluster: Cluster) -> bool:
            return trim

    return Ladder


def _cluster(
    make_cluster: Callable[..., TestCluster], nodes: int, *, trim: bool = False
) -> TestCluster:
    return make_cluster(
        CONF.format(nodes=nodes), plugins={"preempt/ladder": ladder_policy(trim=trim)}
    )


def _run_to_end(cluster: TestCluster, *job_ids: int, until: float = 20_000) -> None:
    while not all(cluster.state(j).finished for j in job_ids):
        due = cluster.step()
        assert due is not None and due <= until, cluster.states()


def test_checkpoint_requeues_the_victim_keeping_the_work_done(
    make_cluster: Callable[..., TestCluster], job: Callable[[], JobBuilder]
) -> None:
    cluster = _cluster(make_cluster, 1)
    low = cluster.submit(job().name("C").runtime(1000))
    cluster.run_until(300)
    high = cluster.submit(job().partition("high").runtime(100))
    cluster.settle()
    victim = cluster.job(low)
    assert victim.state is JobState.PENDING and victim.restarts == 1
    # its 300 s of work are kept (the kill's teardown adds a few seconds of run time)
    assert 300 <= victim.checkpointed <= 300 + 5
    _run_to_end(cluster, low, high)
    assert cluster.state(high) is JobState.COMPLETED
    assert cluster.state(low) is JobState.COMPLETED
    assert victim.start_time is not None and victim.end_time is not None
    # it runs only what was left: 1000 s less the work kept
    assert victim.end_time - victim.start_time == pytest.approx(1000 - victim.checkpointed)


def test_requeue_starts_the_work_over(
    make_cluster: Callable[..., TestCluster], job: Callable[[], JobBuilder]
) -> None:
    cluster = _cluster(make_cluster, 1)
    low = cluster.submit(job().name("R").runtime(1000))
    cluster.run_until(300)
    high = cluster.submit(job().partition("high").runtime(100))
    cluster.settle()
    victim = cluster.job(low)
    assert victim.state is JobState.PENDING and victim.restarts == 1
    assert victim.checkpointed == 0
    _run_to_end(cluster, low, high)
    assert victim.start_time is not None and victim.end_time is not None
    assert victim.end_time - victim.start_time == pytest.approx(1000)


def test_suspend_falls_through_for_a_job_already_suspended(
    make_cluster: Callable[..., TestCluster], job: Callable[[], JobBuilder]
) -> None:
    """SUSPEND applies to a running job only: an admin-suspended victim (which still holds
    its node against an exclusive job) is requeued, the next rung of its ladder."""
    cluster = _cluster(make_cluster, 1)
    low = cluster.submit(job().name("SR").runtime(1000))
    cluster.run_until(100)
    assert cluster.command(f"scontrol suspend {low}").status == 0
    cluster.settle()
    assert cluster.state(low) is JobState.SUSPENDED
    high = cluster.submit(job().partition("high").exclusive().runtime(100))
    cluster.settle()
    assert cluster.state(high) is JobState.RUNNING
    assert cluster.job(low).restarts == 1
    assert cluster.state(low) is JobState.PENDING


def test_suspend_applies_to_a_running_job(
    make_cluster: Callable[..., TestCluster], job: Callable[[], JobBuilder]
) -> None:
    """The same ladder on a running victim: suspended, not requeued; it resumes once the
    preemptor has ended."""
    cluster = _cluster(make_cluster, 1)
    low = cluster.submit(job().name("SR").runtime(1000))
    cluster.run_until(100)
    high = cluster.submit(job().partition("high").runtime(100))
    cluster.settle()
    assert cluster.state(high) is JobState.RUNNING
    assert cluster.state(low) is JobState.SUSPENDED and cluster.job(low).restarts == 0
    _run_to_end(cluster, high)
    cluster.settle()
    assert cluster.state(low) is JobState.RUNNING


@pytest.mark.parametrize(("requeue", "ending"), [(True, "PENDING"), (False, "PREEMPTED")])
def test_requeue_falls_through_to_cancel_for_a_job_that_cannot_be_requeued(
    make_cluster: Callable[..., TestCluster],
    job: Callable[[], JobBuilder],
    requeue: bool,
    ending: str,
) -> None:
    cluster = _cluster(make_cluster, 1)
    low = cluster.submit(job().name("RD").requeue(requeue).runtime(1000))
    cluster.run_until(100)
    high = cluster.submit(job().partition("high").runtime(100))
    cluster.settle()
    assert cluster.state(high) is JobState.RUNNING
    assert cluster.state(low).name == ending
    assert cluster.job(low).restarts == (1 if requeue else 0)


def test_a_ladder_with_no_method_that_applies_spares_the_job(
    make_cluster: Callable[..., TestCluster], job: Callable[[], JobBuilder]
) -> None:
    """REQUEUE alone on a job that cannot be requeued: no candidate, the preemptor waits."""
    cluster = _cluster(make_cluster, 1)
    low = cluster.submit(job().name("R").requeue(False).runtime(1000))
    cluster.run_until(100)
    high = cluster.submit(job().partition("high").runtime(100))
    cluster.settle()
    assert cluster.state(low) is JobState.RUNNING
    assert cluster.state(high) is JobState.PENDING


def _three_victims(
    make_cluster: Callable[..., TestCluster], job: Callable[[], JobBuilder], *, trim: bool
) -> tuple[TestCluster, list[int], int]:
    """One node of 4 cores (select/cons_res), busy with x (1 core), y (1 core) and z (2
    cores), candidates in that order; a preemptor of 3 cores: select removes x, y (2 cores,
    too few), then z, and names all three (each holds cores of the node it chose)."""
    cluster = make_cluster(
        CONF.format(nodes=1)
        .replace("select/linear", "select/cons_res\nSelectTypeParameters=CR_Core")
        .replace("CPUs=1", "CPUs=4"),
        plugins={"preempt/ladder": ladder_policy(trim=trim)},
    )
    victims = [cluster.submit(job().name("R").tasks(count).runtime(1000)) for count in (1, 1, 2)]
    cluster.run_until(100)
    assert all(cluster.state(v) is JobState.RUNNING for v in victims)
    high = cluster.submit(job().partition("high").tasks(3).runtime(100))
    cluster.settle()
    assert cluster.state(high) is JobState.RUNNING
    return cluster, victims, high


def test_without_trim_every_victim_select_chose_is_preempted(
    make_cluster: Callable[..., TestCluster], job: Callable[[], JobBuilder]
) -> None:
    cluster, victims, _ = _three_victims(make_cluster, job, trim=False)
    assert [cluster.job(v).restarts for v in victims] == [1, 1, 1]


def test_the_trim_pass_drops_a_victim_not_needed_last_chosen_first(
    make_cluster: Callable[..., TestCluster], job: Callable[[], JobBuilder]
) -> None:
    """Trimming z first: x and y alone free 2 cores, so z stays a victim. Then y: x and z
    free 3, enough, so y is dropped. Then x: z alone frees 2, so x stays. (First chosen
    first would have spared x and preempted y.)"""
    cluster, (x, y, z), _ = _three_victims(make_cluster, job, trim=True)
    assert cluster.job(x).restarts == 1
    assert cluster.job(z).restarts == 1
    assert cluster.job(y).restarts == 0 and cluster.state(y) is JobState.RUNNING
