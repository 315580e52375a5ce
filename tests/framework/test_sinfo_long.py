"""sinfo -O/--Format: Slurm 22.05's field names, ``name[:[.]size][suffix]``, 20 columns by
default, its headers, and the GPU fields (GRES, GRES_USED) that part nodes into lines."""

from __future__ import annotations

from collections.abc import Callable

from plurm.testing.cluster import TestCluster

CONF = """
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
NodeName=g[1-2] CPUs=8 Sockets=1 CoresPerSocket=8 RealMemory=8000 Gres=gpu:2
NodeName=c1 CPUs=4 Sockets=1 CoresPerSocket=4 RealMemory=4000
PartitionName=gpu Nodes=g[1-2] Default=YES
PartitionName=cpu Nodes=c1
"""


def test_default_sizes_headers_and_gpu_fields(make_cluster: Callable[..., TestCluster]) -> None:
    cluster = make_cluster(CONF)
    result = cluster.command("sinfo -O nodelist,partition,statecompact,gres,gresused")
    assert result.status == 0, result.stderr
    assert result.stdout.splitlines() == [
        "NODELIST".ljust(20)
        + "PARTITION".ljust(20)
        + "STATE".ljust(20)
        + "GRES".ljust(20)
        + "GRES_USED".ljust(20),
        "g[1-2]".ljust(20)
        + "gpu*".ljust(20)
        + "idle".ljust(20)
        + "gpu:2".ljust(20)
        + "gpu:0".ljust(20),
        "c1".ljust(20)
        + "cpu".ljust(20)
        + "idle".ljust(20)
        + "(null)".ljust(20)
        + "gpu:0".ljust(20),
    ]
    job = cluster.command("sbatch --parsable -n1 --gres=gpu:2 --wrap='sleep 1000'")
    assert job.status == 0, job.stderr
    cluster.settle()
    result = cluster.command("sinfo -h -p gpu -O nodelist:8,statelong:.10,gresused:0,cpusstate:.14")
    # the node whose GPUs are in use is on a line of its own (Slurm matches on GRES_USED)
    assert result.stdout.splitlines() == [
        "g1           mixedgpu:2       1/7/0/8",
        "g2            idlegpu:0       0/8/0/8",
    ]


def test_sizes_suffixes_and_unknown_names(make_cluster: Callable[..., TestCluster]) -> None:
    cluster = make_cluster(CONF)
    result = cluster.command("sinfo -p cpu -O 'partition:2|,cpus:.3|,memory:|,freemem:.4,nosuch'")
    assert result.status == 0
    assert result.stderr == "sinfo: error: Invalid job format specification: nosuch\n"
    # headers are cut as values are; ":" alone prints the value as it is
    assert result.stdout.splitlines() == ["PA|CPU|MEMORY|FREE", "cp|  4|4000| N/A"]
    # a cut default partition keeps its mark; a host name is a line of its own
    result = cluster.command("sinfo -h -O partition:3,nodehost:.4,allocmem:.9,nodes:.3")
    assert result.stdout.splitlines() == [
        "gp*  g1        0  1",
        "gp*  g2        0  1",
        "cpu  c1        0  1",
    ]
    # a right-justified NODELIST header is not cut; a value is
    header = cluster.command("sinfo -p gpu -O nodelist:.4,nodelist:4").stdout.splitlines()
    assert header == ["NODELISTNODE", "g[1-g[1-"]


def test_node_oriented(make_cluster: Callable[..., TestCluster]) -> None:
    cluster = make_cluster(CONF)
    result = cluster.command("sinfo -N -h -O nodelist:4,partition:5,gres:6")
    # by node name, whatever the node table's order (as 22.05 lists -N: tests/data/gres)
    assert result.stdout.splitlines() == ["c1  cpu  (null)", "g1  gpu* gpu:2 ", "g2  gpu* gpu:2 "]
