"""--gpus=N (per job) takes as many nodes as it needs when -N does not fix them: the fewest
nodes whose free GPUs hold it (each node's share the same, rounded up), up to -N's most;
on free resources at any node count before any preemption; refused at submission only
when no allowed node count could ever hold it."""

from __future__ import annotations

from collections.abc import Callable

from plurm.testing.cluster import TestCluster

CONF = """
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
PreemptType=preempt/partition_prio
PreemptMode=REQUEUE
GresTypes=gpu
AccountingStorageTRES=gres/gpu
NodeName=g[1-3] CPUs=8 Sockets=1 CoresPerSocket=8 RealMemory=8000 Gres=gpu:4
PartitionName=low Nodes=ALL Default=YES PriorityTier=1
PartitionName=high Nodes=ALL PriorityTier=2
"""

NOT_AVAILABLE = (
    "sbatch: error: Batch job submission failed: Requested node configuration is not available\n"
)


def gpus_held(cluster: TestCluster, job_id: int) -> dict[str, int]:
    held: dict[str, int] = {}
    for unit in cluster.job(job_id).gres_alloc:
        held[unit.node] = held.get(unit.node, 0) + len(unit.indexes)
    return held


def test_gpus_take_the_nodes_they_need(make_cluster: Callable[..., TestCluster]) -> None:
    cluster = make_cluster(CONF)
    wide = cluster.sbatch("--gpus=8")
    cluster.settle()
    assert cluster.state(wide).name == "RUNNING"
    assert gpus_held(cluster, wide) == {"g1": 4, "g2": 4}
    shown = cluster.command(f"scontrol show job {wide}").stdout
    assert "NumNodes=2 NumCPUs=2 " in shown
    assert "TRES=cpu=2,node=2,billing=2,gres/gpu=8" in shown
    # one node is enough: one node
    narrow = cluster.sbatch("--gpus=3")
    cluster.settle()
    assert gpus_held(cluster, narrow) == {"g3": 3}


def test_node_count_limits_are_kept(make_cluster: Callable[..., TestCluster]) -> None:
    cluster = make_cluster(CONF)
    for options in ("-N1 --gpus=6", "-N1-1 --gpus=6", "-n1 --gpus=6", "--gpus=13"):
        result = cluster.command(f"sbatch {options} --wrap='sleep 1'")
        assert (result.status, result.stderr) == (1, NOT_AVAILABLE), options
    ranged = cluster.sbatch("-N1-2 --gpus=6")
    fixed = cluster.sbatch("-N1 --gpus=1 -n2")
    cluster.settle()
    assert gpus_held(cluster, ranged) == {"g1": 3, "g2": 3}
    assert gpus_held(cluster, fixed) == {"g1": 1}
    # -n3 lets --gpus=9 take three nodes
    three = cluster.sbatch("-p high -n3 --gpus=9")
    cluster.settle()
    assert cluster.state(three).name == "RUNNING"
    assert gpus_held(cluster, three) == {"g1": 3, "g2": 3, "g3": 3}


def test_free_gpus_on_more_nodes_before_preempting(
    make_cluster: Callable[..., TestCluster],
) -> None:
    cluster = make_cluster(CONF)
    low = [cluster.sbatch("-p low --gpus-per-node=2 -w " + name) for name in ("g1", "g2", "g3")]
    cluster.settle()
    # four GPUs: two nodes' free halves rather than a victim
    high = cluster.sbatch("-p high --gpus=4")
    cluster.settle()
    assert [cluster.state(job).name for job in low] == ["RUNNING"] * 3
    assert gpus_held(cluster, high) == {"g1": 2, "g2": 2}
    # four GPUs on one node: no node has them free, so it preempts a low job
    more = cluster.sbatch("-p high --gpus=4 -N1")
    cluster.settle()
    assert cluster.state(more).name == "RUNNING"
    assert sum(cluster.state(job).name != "RUNNING" for job in low) == 1
