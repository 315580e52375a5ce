"""preempt/qos: Preempt lists, WITHIN, PRIORITY, QOS modes, grace, exempt time, ordering."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from plurm.conf.values import PreemptBase
from plurm.testing import JobBuilder, TestCluster

Make = Callable[..., TestCluster]
Job = Callable[[], JobBuilder]

CONF = (
    "SelectType=select/linear\nPreemptType=preempt/qos\nPreemptMode=REQUEUE\nJobRequeue=1\n"
    "NodeName=n[1-4] CPUs=1 RealMemory=1000\n"
    "PartitionName=batch Nodes=ALL Default=YES\n"
)
QOS = (
    "QOS=scavenger Priority=0 PreemptMode=CANCEL\n"
    "QOS=normal Priority=10 Preempt=scavenger\n"
    "QOS=high Priority=100 Preempt=normal,scavenger\n"
    "QOS=peer Priority=50 PreemptMode=REQUEUE,WITHIN\n"
)


def _cluster(make_cluster: Make, conf: str = CONF, qos: str = QOS) -> TestCluster:
    return make_cluster(conf, qos_text=qos)


def _ask(cluster: TestCluster, preemptor: int, victim: int) -> bool:
    return cluster.plugins.preempt_preemptable(
        cluster.job(preemptor), cluster.job(victim), cluster.controller.cluster
    )


def test_the_preempt_list_decides_across_qos(make_cluster: Make, job: Job) -> None:
    cluster = _cluster(make_cluster)
    scav = cluster.submit(job().qos("scavenger"))
    normal = cluster.submit(job())  # no --qos: the default QOS, normal
    high = cluster.submit(job().qos("high"))
    assert _ask(cluster, high, normal) and _ask(cluster, high, scav)
    assert _ask(cluster, normal, scav)
    assert not _ask(cluster, scav, normal)
    assert not _ask(cluster, normal, high)


def test_same_qos_needs_within_and_a_strictly_higher_priority(make_cluster: Make, job: Job) -> None:
    cluster = _cluster(make_cluster)
    first, second = cluster.submit(job()), cluster.submit(job())
    assert not _ask(cluster, first, second)  # normal has no WITHIN
    peer_first, peer_second = cluster.submit(job().qos("peer")), cluster.submit(job().qos("peer"))
    # priority/basic: the earlier job has the higher priority
    assert _ask(cluster, peer_first, peer_second)
    assert not _ask(cluster, peer_second, peer_first)
    cluster.job(peer_second).priority = cluster.job(peer_first).priority
    assert not _ask(cluster, peer_first, peer_second)


def test_priority_flag_requires_a_strictly_higher_job_priority(
    make_cluster: Make, job: Job
) -> None:
    cluster = _cluster(
        make_cluster, CONF.replace("PreemptMode=REQUEUE", "PreemptMode=REQUEUE,PRIORITY")
    )
    normal = cluster.submit(job())
    high = cluster.submit(job().qos("high"))
    assert not _ask(cluster, high, normal)  # the later job has the lower priority
    cluster.job(high).priority = cluster.job(normal).priority
    assert not _ask(cluster, high, normal)  # equal is not enough, unlike partition_prio
    cluster.job(high).priority += 1
    assert _ask(cluster, high, normal)


def test_the_mode_is_the_victim_qos_else_the_cluster(make_cluster: Make, job: Job) -> None:
    cluster = _cluster(make_cluster)
    modes = {
        name: cluster.plugins.preempt_mode(
            cluster.job(cluster.submit(job().qos(name))), cluster.controller.cluster
        )
        for name in ("scavenger", "normal", "peer")
    }
    assert modes["scavenger"].base is PreemptBase.CANCEL
    assert modes["normal"].base is PreemptBase.REQUEUE
    # WITHIN only says who may preempt; the victim's mode drops it.
    assert (modes["peer"].base, modes["peer"].within) == (PreemptBase.REQUEUE, False)


def test_victims_are_ordered_by_qos_priority_then_size(make_cluster: Make, job: Job) -> None:
    cluster = _cluster(make_cluster)
    big_normal = cluster.submit(job().nodes(2))
    scav = cluster.submit(job().qos("scavenger"))
    small_normal = cluster.submit(job())
    cluster.settle()
    key = {
        job_id: cluster.plugins.preempt_priority(cluster.job(job_id), cluster.controller.cluster)
        for job_id in (big_normal, scav, small_normal)
    }
    assert key[scav] < key[small_normal] < key[big_normal]
    assert key[big_normal] == (10 << 16) + 2


def test_high_qos_requeues_normal_and_cancels_scavenger(make_cluster: Make, job: Job) -> None:
    cluster = _cluster(make_cluster)
    for _ in range(2):
        cluster.submit(job().qos("scavenger"))
    cluster.submit(job().nodes(2))
    cluster.settle()
    high = cluster.submit(job().nodes(4).qos("high"))
    for _ in range(3):
        cluster.settle()
    assert cluster.states() == {1: "PREEMPTED", 2: "PREEMPTED", 3: "PENDING", high: "RUNNING"}
    assert cluster.job(3).restarts == 1
    assert cluster.command("squeue -h -j 3 -o %r").stdout == "BeginTime\n"


def test_qos_grace_time_applies_to_its_victims(make_cluster: Make) -> None:
    cluster = _cluster(
        make_cluster, qos=QOS.replace("PreemptMode=CANCEL", "PreemptMode=CANCEL GraceTime=40")
    )
    cluster.command("""sbatch -N4 --qos=scavenger --wrap='trap "" TERM; sleep 300'""")
    cluster.run_until(2)
    cluster.command("sbatch -N4 --qos=high --wrap='sleep 300'")
    # Chosen at 3. The preemptor retries at most every KillWait + MessageTimeout (30 + 10 s),
    # on a pass: the periodic one (sched_interval, 60 s) at 60 finds the grace over and
    # kills; SIGKILL KillWait (30 s) later, the node is released 3.35 s after that.
    cluster.run_until(59)
    assert cluster.states() == {1: "RUNNING", 2: "PENDING"}
    cluster.run_until(61)
    assert cluster.states() == {1: "COMPLETING", 2: "PENDING"}
    cluster.run_until(93)
    assert cluster.states() == {1: "COMPLETING", 2: "PENDING"}
    cluster.run_until(94)
    assert cluster.states() == {1: "PREEMPTED", 2: "RUNNING"}


@pytest.mark.parametrize(
    ("qos_exempt", "cluster_exempt", "protected_until"),
    [("PreemptExemptTime=00:01:30", "", 90), ("PreemptExemptTime=-1", "00:02:00", 120)],
)
def test_preempt_exempt_time_comes_from_the_qos_first(
    make_cluster: Make, qos_exempt: str, cluster_exempt: str, protected_until: int
) -> None:
    conf = CONF + (f"PreemptExemptTime={cluster_exempt}\n" if cluster_exempt else "")
    qos = QOS.replace("QOS=normal Priority=10", f"QOS=normal Priority=10 {qos_exempt}")
    cluster = _cluster(make_cluster, conf, qos)
    cluster.command("sbatch -N4 --wrap='sleep 1000'")
    cluster.run_until(2)
    cluster.command("sbatch -N4 --qos=high --wrap='sleep 1000'")
    cluster.run_until(protected_until)
    assert cluster.states() == {1: "RUNNING", 2: "PENDING"}
    # The next periodic pass (sched_interval, 60 s) after the exemption ends preempts; the
    # preemptor starts once the victim's node is released.
    cluster.run_until(protected_until + 65)
    assert cluster.states() == {1: "PENDING", 2: "RUNNING"}
