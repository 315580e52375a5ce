"""A node's allocated memory (scontrol show node's AllocMem, sinfo -O allocmem): what
select/cons_res and cons_tres count on it when memory is a consumable resource (CR_*_Memory),
else 0, as Slurm 22.05 shows (tests/data/oracle/cli records AllocMem=0 under select/linear
and CR_Core with jobs running). The live view carries it over the wire."""

from __future__ import annotations

import re
from collections.abc import Callable

from plurm.commands.client import LocalClient, node_alloc_mem
from plurm.live.snapshot import view_from_dict, view_to_dict
from plurm.testing.cluster import TestCluster

NODES = """
NodeName=n[1-2] CPUs=8 Sockets=1 CoresPerSocket=8 RealMemory=8000
PartitionName=p Nodes=ALL Default=YES OverSubscribe=NO
"""


def alloc_mem(cluster: TestCluster, node: str) -> int:
    shown = cluster.command(f"scontrol show node {node}").stdout
    found = re.search(r"AllocMem=(\d+)", shown)
    assert found is not None, shown
    return int(found.group(1))


def test_memory_counted_under_cr_core_memory(make_cluster: Callable[..., TestCluster]) -> None:
    cluster = make_cluster(
        "SelectType=select/cons_tres\nSelectTypeParameters=CR_Core_Memory\n" + NODES
    )
    first = cluster.sbatch("-w n1 -n1 --mem=1000")
    cluster.sbatch("-w n1 -n2 --mem-per-cpu=500")
    whole = cluster.sbatch("-w n2 -n1")  # no request, no DefMemPerCPU: all of the node's
    cluster.settle()
    assert alloc_mem(cluster, "n1") == 2000
    assert alloc_mem(cluster, "n2") == 8000
    long = cluster.command("sinfo -h -N -O nodelist:4,allocmem:.6").stdout.splitlines()
    assert long == ["n1    2000", "n2    8000"]
    # AllocTRES tells the memory too (CfgTRES's form: MiB, or G when a whole number of them)
    node = cluster.command("scontrol show node n1").stdout
    assert "   AllocTRES=cpu=3,mem=2000M\n" in node
    assert "   CfgTRES=cpu=8,mem=8000M,billing=8\n" in node
    # an administrator's suspension keeps the job's memory
    assert cluster.command(f"scontrol suspend {first}").status == 0
    assert alloc_mem(cluster, "n1") == 2000
    cluster.command(f"scancel {first} {whole}")
    cluster.settle()
    assert alloc_mem(cluster, "n1") == 1000
    assert alloc_mem(cluster, "n2") == 0


def test_zero_when_memory_is_not_consumable(make_cluster: Callable[..., TestCluster]) -> None:
    for select in ("select/cons_res\nSelectTypeParameters=CR_Core", "select/linear"):
        cluster = make_cluster(f"SelectType={select}\n" + NODES)
        cluster.sbatch("-w n1 -n1 --mem=1000")
        cluster.settle()
        assert re.search(r"CPUAlloc=[1-9]", cluster.command("scontrol show node n1").stdout)
        assert alloc_mem(cluster, "n1") == 0, select


def test_the_live_view_carries_allocated_memory(make_cluster: Callable[..., TestCluster]) -> None:
    cluster = make_cluster(
        "SelectType=select/cons_res\nSelectTypeParameters=CR_CPU_Memory\n" + NODES
    )
    cluster.sbatch("-w n2 -n3 --mem-per-cpu=100")
    cluster.settle()
    view = LocalClient(cluster.controller).view()
    rebuilt = view_from_dict(cluster.config, view_to_dict(view))
    assert node_alloc_mem(rebuilt, "n2") == node_alloc_mem(view, "n2") == 300
    assert node_alloc_mem(rebuilt, "n1") == 0
