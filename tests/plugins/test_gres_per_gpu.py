"""--cpus-per-gpu and --mem-per-gpu under select/cons_tres: a job gets N CPUs per GPU it is
given on each node, and (memory counted, CR_Core_Memory) M MiB per GPU there; both show in
the job's TRES (NumCPUs, cpu=, mem=), the node's CPUAlloc, AllocMem and AllocTRES, and
decide where the job fits."""

from __future__ import annotations

from collections.abc import Callable

from plurm.testing.cluster import TestCluster

CONF = """
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
GresTypes=gpu
AccountingStorageTRES=gres/gpu
NodeName=g[1-2] CPUs=8 Sockets=1 CoresPerSocket=8 RealMemory=8192 Gres=gpu:4
PartitionName=p Nodes=ALL Default=YES
"""


def lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines()]


def test_cpus_and_memory_per_gpu_are_given(make_cluster: Callable[..., TestCluster]) -> None:
    cluster = make_cluster(CONF)
    job = cluster.sbatch("-n1 --gpus=2 --cpus-per-gpu=3 --mem-per-gpu=1G")
    cluster.settle()
    assert cluster.state(job).name == "RUNNING"
    shown = lines(cluster.command(f"scontrol show job {job}").stdout)
    assert "NumNodes=1 NumCPUs=6 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:*" in shown
    assert "TRES=cpu=6,mem=2G,node=1,billing=6,gres/gpu=2" in shown
    node = lines(cluster.command("scontrol show node g1").stdout)
    assert node[1] == "CPUAlloc=6 CPUEfctv=8 CPUTot=8 CPULoad=0.00"
    assert "RealMemory=8192 AllocMem=2048 FreeMem=N/A Sockets=1 Boards=1" in node
    assert "AllocTRES=cpu=6,mem=2G,gres/gpu=2" in node
    assert "CfgTRES=cpu=8,mem=8G,billing=8,gres/gpu=4" in node
    squeue = cluster.command(f"squeue -h -j {job} -O tres-alloc:60").stdout
    assert squeue.strip() == "cpu=6,mem=2G,node=1,billing=6,gres/gpu=2"


def test_cpus_per_gpu_decide_the_node(make_cluster: Callable[..., TestCluster]) -> None:
    """g1 keeps two GPUs but only two CPUs: a one-GPU job asking 4 CPUs per GPU goes to g2,
    and one asking for two GPUs of 4 CPUs each waits (g2 has 4 CPUs left)."""
    cluster = make_cluster(CONF)
    first = cluster.sbatch("-n1 --gpus=2 --cpus-per-gpu=3 --mem-per-gpu=100")
    cluster.settle()
    second = cluster.sbatch("-n1 --gpus=1 --cpus-per-gpu=4 --mem-per-gpu=100")
    cluster.settle()
    assert cluster.job(first).nodes == ("g1",)
    assert cluster.job(second).nodes == ("g2",)
    third = cluster.sbatch("-n1 --gpus=2 --cpus-per-gpu=4 --mem-per-gpu=100")
    cluster.settle()
    assert cluster.state(third).name == "PENDING"
    # a job within g1's two CPUs left goes there (once the waiting one is gone)
    cluster.command(f"scancel {third}")
    fourth = cluster.sbatch("-n1 --gpus=2 --cpus-per-gpu=1 --mem-per-gpu=100")
    cluster.settle()
    assert cluster.job(fourth).nodes == ("g1",)


def test_memory_per_gpu_decides_the_node(make_cluster: Callable[..., TestCluster]) -> None:
    cluster = make_cluster(CONF)
    first = cluster.sbatch("-n1 --gpus=1 --mem-per-gpu=6G")
    cluster.settle()
    second = cluster.sbatch("-n1 --gpus=1 --mem-per-gpu=3G")
    cluster.settle()
    assert cluster.job(first).nodes == ("g1",)
    assert cluster.job(second).nodes == ("g2",)
    node = lines(cluster.command("scontrol show node g1").stdout)
    assert "RealMemory=8192 AllocMem=6144 FreeMem=N/A Sockets=1 Boards=1" in node
    # more than a node's memory for its GPUs: no node could ever hold it, so it is refused
    # (and kept as FAILED), as a --mem beyond every node's RealMemory is
    cluster.command(f"scancel {first} {second}")
    refused = cluster.command("sbatch -N1 --gpus=2 --mem-per-gpu=5G --wrap='sleep 60'")
    assert refused.status == 1
    assert "Requested node configuration is not available" in refused.stderr
    # on two nodes (no -N), one GPU and 5G each
    spread = cluster.sbatch("--gpus=2 --mem-per-gpu=5G")
    cluster.settle()
    assert cluster.job(spread).nodes == ("g1", "g2")


def test_per_gpu_on_each_node_of_a_wider_job(make_cluster: Callable[..., TestCluster]) -> None:
    cluster = make_cluster(CONF)
    job = cluster.sbatch("-N2 --gpus-per-node=2 --cpus-per-gpu=2 --mem-per-gpu=1000")
    cluster.settle()
    assert cluster.job(job).nodes == ("g1", "g2")
    shown = lines(cluster.command(f"scontrol show job {job}").stdout)
    assert "TRES=cpu=8,mem=4000M,node=2,billing=8,gres/gpu=4" in shown
    for name in ("g1", "g2"):
        node = lines(cluster.command(f"scontrol show node {name}").stdout)
        assert "AllocTRES=cpu=4,mem=2000M,gres/gpu=2" in node


def test_without_memory_counted_mem_per_gpu_changes_nothing(
    make_cluster: Callable[..., TestCluster],
) -> None:
    cluster = make_cluster(CONF.replace("CR_Core_Memory", "CR_Core"))
    job = cluster.sbatch("-n1 --gpus=1 --cpus-per-gpu=2 --mem-per-gpu=100G")
    cluster.settle()
    assert cluster.state(job).name == "RUNNING"
    node = lines(cluster.command("scontrol show node g1").stdout)
    assert "RealMemory=8192 AllocMem=0 FreeMem=N/A Sockets=1 Boards=1" in node
    assert "AllocTRES=cpu=2,gres/gpu=1" in node
    # the job's TRES tells its memory all the same, as slurmctld counts it from the GPUs
    shown = lines(cluster.command(f"scontrol show job {job}").stdout)
    assert "TRES=cpu=2,mem=100G,node=1,billing=2,gres/gpu=1" in shown
