"""The node table is in name order (Slurm 22.05 sorts it with strnatcmp when no topology
plugin ranks the nodes), whatever the order of the NodeName lines: bitmaps, select's scans,
node listings and partitions' node lists follow it. The real-Slurm recording that pins it is
tests/data/gres/gpu-cpu-only-order (tests/plugins/test_gres_recordings.py)."""

from __future__ import annotations

import re
from collections.abc import Callable

from plurm.model.cluster import Cluster
from plurm.testing.cluster import TestCluster

CONF = """
SelectType=select/linear
NodeName=n10 CPUs=1 RealMemory=1000
NodeName=n[1-2] CPUs=1 RealMemory=1000
NodeName=m1 CPUs=1 RealMemory=1000
PartitionName=p Nodes=n10,n[1-2],m1 Default=YES MaxTime=60
PartitionName=q Nodes=n10,n1 MaxTime=60
"""


def test_the_node_table_sorts_names_naturally_whatever_the_lines_order(
    make_cluster: Callable[..., TestCluster],
) -> None:
    cluster = make_cluster(CONF)
    config = cluster.controller.cluster.config
    assert config.node_names == ("m1", "n1", "n2", "n10")
    assert Cluster.from_config(config).node_index == {"m1": 0, "n1": 1, "n2": 2, "n10": 3}
    assert [part.nodes for part in config.partitions] == [
        ("m1", "n1", "n2", "n10"),
        ("n1", "n10"),
    ]
    shown = cluster.command("scontrol show node").stdout
    assert re.findall(r"^NodeName=(\S+)", shown, re.M) == ["m1", "n1", "n2", "n10"]
    partitions = cluster.command("scontrol show partition").stdout
    assert re.findall(r"^   Nodes=(\S+)", partitions, re.M) == ["m1,n[1-2,10]", "n[1,10]"]


def test_select_scans_the_nodes_in_name_order(make_cluster: Callable[..., TestCluster]) -> None:
    """select/linear takes the first idle nodes of the table: m1, then n1, n2 (not n10, the
    first line), and lists an allocation in table order."""
    cluster = make_cluster(CONF)
    for line in ("sbatch -N1 -t 10 --wrap='sleep 300'", "sbatch -N2 -t 10 --wrap='sleep 300'"):
        assert cluster.command(line).status == 0
    cluster.run_until(3)
    assert cluster.job(1).nodes == ("m1",)
    assert cluster.job(2).nodes == ("n1", "n2")
    assert cluster.command("squeue -h -o '%i %N'").stdout == "1 m1\n2 n[1-2]\n"
