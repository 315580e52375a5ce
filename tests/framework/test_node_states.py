"""Node states an administrator sets (scontrol update NodeName=... State=...), as real Slurm
22.05 showed them: recorded in tests/data/oracle/cli (scenarios cons_res and down) and in
trial runs of /work/shared/oracle on nodes running jobs."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from plurm.model.node import InvalidNodeState, NodeCondition, admin_update
from plurm.testing.cluster import TestCluster

CONF = """
SelectType=select/linear
KillWait=2
NodeName=n[1-4] CPUs=1 RealMemory=1000
PartitionName=p Nodes=n[1-4] Default=YES
"""


@pytest.fixture
def cluster(make_cluster: Callable[..., TestCluster]) -> TestCluster:
    return make_cluster(CONF)


def node_state(cluster: TestCluster, name: str) -> str:
    text = cluster.command(f"scontrol show node {name}").stdout
    return text.split("State=", 1)[1].split()[0]


def update(cluster: TestCluster, args: str) -> tuple[int, str]:
    result = cluster.command(f"scontrol update {args}")
    return result.status, result.stderr


# ------------------------------------------------------------------------- the state machine


def test_down_and_drain_add_up_and_resume_clears_both() -> None:
    drained = admin_update(None, "DRAIN", "fan", busy=False, now=5.0)
    assert drained == NodeCondition(drain=True, reason="fan", since=5.0)
    both = admin_update(drained, "DOWN", "dead", busy=False, now=6.0)
    assert both == NodeCondition(down=True, drain=True, reason="dead", since=6.0)
    assert admin_update(both, "RESUME", None, busy=False, now=7.0) is None


def test_undrain_keeps_a_down_node_down_with_its_reason() -> None:
    both = NodeCondition(down=True, drain=True, reason="zz", since=1.0)
    assert admin_update(both, "UNDRAIN", None, busy=False, now=2.0) == NodeCondition(
        down=True, reason="zz", since=1.0
    )
    assert admin_update(None, "UNDRAIN", None, busy=False, now=2.0) is None


def test_resume_needs_a_node_out_of_service_and_idle_a_node_without_jobs() -> None:
    with pytest.raises(InvalidNodeState):
        admin_update(None, "RESUME", None, busy=False, now=0.0)
    draining = NodeCondition(drain=True, reason="retire")
    with pytest.raises(InvalidNodeState):
        admin_update(draining, "IDLE", None, busy=True, now=0.0)
    assert admin_update(draining, "IDLE", None, busy=False, now=0.0) is None


def test_a_reason_alone_only_replaces_the_reason_of_a_node_out_of_service() -> None:
    drained = NodeCondition(drain=True, reason="x", since=1.0)
    assert admin_update(drained, None, "second", busy=False, now=3.0) == NodeCondition(
        drain=True, reason="second", since=3.0
    )
    assert admin_update(None, None, "ignored", busy=False, now=3.0) is None


# ------------------------------------------------------------------------- through scontrol


def test_draining_a_busy_node_lets_its_job_finish_and_starts_nothing_new(
    cluster: TestCluster,
) -> None:
    cluster.command("sbatch -w n1 --wrap='sleep 10'")
    cluster.run_until(2)
    assert update(cluster, "nodename=n1 state=drain reason=retire") == (0, "")
    assert node_state(cluster, "n1") == "ALLOCATED+DRAIN"
    assert cluster.command("sinfo -h -N -o '%N %t %E'").stdout.splitlines()[0] == "n1 drng retire"
    cluster.run_until(12)  # the job ends by itself; the node stays out of service
    assert cluster.state(1).name == "COMPLETED"
    assert node_state(cluster, "n1") == "IDLE+DRAIN"
    cluster.command("sbatch -w n1 --wrap='sleep 10'")
    cluster.run_until(14)
    assert cluster.state(2).name == "PENDING"
    assert update(cluster, "NodeName=n1 State=RESUME") == (0, "")
    cluster.run_until(16)
    assert cluster.state(2).name == "RUNNING"
    assert cluster.command("sinfo -R -h").stdout == ""


def test_a_down_node_requeues_its_job_or_fails_it(cluster: TestCluster) -> None:
    cluster.command("sbatch -w n1 --wrap='sleep 300'")
    cluster.command("sbatch -w n2 --no-requeue --wrap='sleep 300'")
    cluster.run_until(3)
    assert update(cluster, "nodename=n[1-2] state=down reason=broken") == (0, "")
    # At once, with no COMPLETING: the requeueable job is pending again, the other failed.
    squeue = cluster.command("squeue -h -t all -o '%i %T %r %R'").stdout
    assert squeue.splitlines() == ["2 NODE_FAIL NodeDown n2", "1 PENDING BeginTime (BeginTime)"]
    assert cluster.job(1).restarts == 1
    assert cluster.command("sinfo -h -o '%t %N'").stdout == "idle n[3-4]\ndown n[1-2]\n"
    assert node_state(cluster, "n1") == "DOWN"


def test_update_errors_are_slurms(cluster: TestCluster) -> None:
    assert update(cluster, "nodename=n1 state=drain") == (
        1,
        "You must specify a reason when DOWNING or DRAINING a node. Request denied\n",
    )
    assert update(cluster, "nodename=n1 state=resume") == (
        1,
        "slurm_update error: Invalid node state specified\n",
    )
    # the known node of the list is still drained
    assert update(cluster, "nodename=nosuch,n2 state=drain reason=x") == (
        1,
        "slurm_update error: Invalid node name specified\n",
    )
    assert node_state(cluster, "n2") == "IDLE+DRAIN"
    status, error = update(cluster, "nodename=n1 state=bogus reason=x")
    assert (status, error.splitlines()[0]) == (1, "Invalid input: state=bogus")


def test_return_to_service_2_revives_configured_down_nodes_at_registration(
    make_cluster: Callable[..., TestCluster],
) -> None:
    down_nodes = 'DownNodes=n4 State=DOWN Reason="bad fan"\n'
    kept = make_cluster(CONF + down_nodes)
    assert node_state(kept, "n4") == "DOWN"
    revived = make_cluster(CONF + "ReturnToService=2\n" + down_nodes)
    assert node_state(revived, "n4") == "IDLE"
