"""Slurm's own preemption tests (testsuite/python/tests/test_128_1.py, test_128_2.py and
expect/test34.2, summarised in ../shared/reference/slurm-semantics.md §4.1), replayed on
Plurm's simulator with the same configuration and the same checks. test_151_4 (OverSubscribe
counted per node by linear, per partition by cons_res) lives with the select plugins' tests.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from plurm.testing.cluster import TestCluster

Make = Callable[..., TestCluster]

SELECTS = ("select/linear", "select/cons_res\nSelectTypeParameters=CR_Core")
#: Slurm's testsuite runs test_128_* on cons_tres. With select/linear and OverSubscribe=NO a
#: SUSPEND victim cannot make room (linear removes only CANCEL and REQUEUE candidates).
CONS_RES = SELECTS[1]

TEST_128_1 = """
SelectType={select}
PreemptType=preempt/partition_prio
PreemptMode=CANCEL,GANG
JobRequeue=1
NodeName=n1 CPUs=1 RealMemory=1000
PartitionName=partition1 Nodes=n1 PriorityTier=1 PreemptMode=CANCEL Default=YES
PartitionName=partition2 Nodes=n1 PriorityTier=2 PreemptMode=OFF
"""


def _sbatch(cluster: TestCluster, line: str) -> int:
    result = cluster.command(f"sbatch {line}")
    assert result.status == 0, result.stderr
    return int(result.stdout.split()[-1])


def _states(cluster: TestCluster, *jobs: int) -> tuple[str, ...]:
    return tuple(cluster.state(job).name for job in jobs)


def _low_then_high(cluster: TestCluster) -> tuple[int, int]:
    """test_128_1's pair: a long -N1 --exclusive job in partition1, then a short one in
    partition2, each given a scheduling pass."""
    low = _sbatch(cluster, "-p partition1 -N1 --exclusive --wrap='sleep 600'")
    cluster.settle()
    high = _sbatch(cluster, "-p partition2 -N1 --exclusive --wrap='sleep 20'")
    cluster.settle()
    return low, high


def _set_mode(cluster: TestCluster, mode: str) -> None:
    update = f"scontrol update PartitionName=partition1 PreemptMode={mode}"
    assert cluster.command(update).status == 0


@pytest.mark.parametrize("select", [CONS_RES])
def test_128_1_partition_prio_cancel_then_suspend_then_requeue(
    make_cluster: Make, select: str
) -> None:
    cluster = make_cluster(TEST_128_1.format(select=select))
    low, high = _low_then_high(cluster)
    # cancel: the low job ends PREEMPTED and the high job runs
    assert _states(cluster, low, high) == ("PREEMPTED", "RUNNING")
    cluster.run_until(cluster.now + 30)
    _set_mode(cluster, "SUSPEND")
    low, high = _low_then_high(cluster)
    # suspend: the low job is suspended while the high one runs, then runs again
    assert _states(cluster, low, high) == ("SUSPENDED", "RUNNING")
    cluster.run_until(cluster.now + 25)
    assert _states(cluster, low, high) == ("RUNNING", "COMPLETED")
    cluster.command(f"scancel {low}")
    cluster.settle()
    _set_mode(cluster, "REQUEUE")
    low, high = _low_then_high(cluster)
    # requeue: the low job goes back to PENDING, runs again after the high job, and stays
    assert _states(cluster, low, high) == ("PENDING", "RUNNING")
    assert cluster.job(low).restarts == 1
    cluster.run_until(cluster.now + 300)
    assert _states(cluster, low, high) == ("RUNNING", "COMPLETED")


TEST_128_2 = """
SelectType={select}
PreemptType=preempt/partition_prio
PreemptMode={mode}
PreemptExemptTime=00:00:10
SchedulerParameters=sched_interval=1
JobRequeue=1
DefMemPerNode=128
NodeName=n1 CPUs=2 RealMemory=1000
PartitionName=lowprio Nodes=n1 PriorityTier=1 Default=YES
PartitionName=highprio Nodes=n1 PriorityTier=2
"""


@pytest.mark.parametrize("select", [CONS_RES])
@pytest.mark.parametrize(
    ("mode", "preempted"),
    [("SUSPEND,GANG", "SUSPENDED"), ("REQUEUE", "PENDING"), ("CANCEL", "PREEMPTED")],
)
def test_128_2_exempt_time_protects_then_preempts(
    make_cluster: Make, select: str, mode: str, preempted: str
) -> None:
    cluster = make_cluster(TEST_128_2.format(select=select, mode=mode))
    low = _sbatch(cluster, "-p lowprio -N1 --exclusive --wrap='sleep 600'")
    cluster.settle()
    started = cluster.job(low).start_time
    assert started is not None
    high = _sbatch(cluster, "-p highprio -N1 --exclusive --wrap='sleep 600'")
    # The low job stays RUNNING through its 10 s window ...
    while cluster.now < started + 9:
        cluster.run_until(cluster.now + 1)
        assert _states(cluster, low, high) == ("RUNNING", "PENDING")
    # ... and after it, at the next scheduling pass, it is preempted by the mode.
    cluster.settle()
    assert _states(cluster, low, high) == (preempted, "RUNNING")


TEST_34_2_CONF = """
SelectType={select}
PreemptType=preempt/qos
PreemptMode=CANCEL
JobRequeue=1
NodeName=n1 CPUs=1 RealMemory=1000
PartitionName=batch Nodes=n1 Default=YES
"""
TEST_34_2_QOS = """
QOS=qos1 PreemptMode={mode}
QOS=qos2 Priority=10 Preempt=qos1
"""


@pytest.mark.parametrize("select", SELECTS)
@pytest.mark.parametrize("mode", ["CANCEL", "REQUEUE"])
def test_34_2_qos_preemption(make_cluster: Make, select: str, mode: str) -> None:
    cluster = make_cluster(
        TEST_34_2_CONF.format(select=select), qos_text=TEST_34_2_QOS.format(mode=mode)
    )
    victim = _sbatch(cluster, "--qos=qos1 -N1 --wrap='sleep 600'")
    cluster.settle()
    preemptor = _sbatch(cluster, "--qos=qos2 -N1 --wrap='sleep 30'")
    cluster.settle()
    if mode == "CANCEL":
        assert _states(cluster, victim, preemptor) == ("PREEMPTED", "RUNNING")
    else:
        # requeue: PENDING while the preemptor runs, then RUNNING once it ends
        assert _states(cluster, victim, preemptor) == ("PENDING", "RUNNING")
        cluster.run_until(cluster.now + 300)
        assert _states(cluster, victim, preemptor) == ("RUNNING", "COMPLETED")
