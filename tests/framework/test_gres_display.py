"""Generic resources where the commands show them: scontrol show job (TRES's gres/gpu,
TresPerNode/TresPerJob/TresPerTask, CpusPerTres, MemPerTres), scontrol show node (CfgTRES,
AllocTRES), squeue -O tres-alloc and sacct -o AllocTRES; GRES appear in TRES strings only
when AccountingStorageTRES tracks them, as in Slurm. Also the codec round trip of a job's
GRES, which live mode stores."""

from __future__ import annotations

import json
from collections.abc import Callable

from plurm.commands.gres_display import gres_used
from plurm.commands.tres_units import tres_memory
from plurm.live.codec import job_from_dict, job_to_dict
from plurm.testing.cluster import TestCluster

CONF = """
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
NodeName=g1 CPUs=8 Sockets=1 CoresPerSocket=8 RealMemory=8000 Gres=gpu:a100:2,gpu:v100:2
NodeName=c1 CPUs=8 Sockets=1 CoresPerSocket=8 RealMemory=8000
PartitionName=p Nodes=ALL Default=YES
"""


def lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines()]


def test_job_and_node_tres_with_tracked_gpus(make_cluster: Callable[..., TestCluster]) -> None:
    cluster = make_cluster("AccountingStorageTRES=gres/gpu,gres/gpu:a100\n" + CONF)
    typed = cluster.sbatch("-n1 --gres=gpu:a100:2 --cpus-per-gpu=1 --mem-per-gpu=100")
    untyped = cluster.sbatch("-n1 --gpus=1")
    plain = cluster.sbatch("-n1")
    waiting = cluster.sbatch("-n1 --gpus-per-task=2")
    cluster.settle()
    shown = lines(cluster.command(f"scontrol show job {typed}").stdout)
    # (--cpus-per-gpu=1 on two GPUs: two CPUs; --mem-per-gpu tells the memory)
    assert "TRES=cpu=2,mem=200M,node=1,billing=2,gres/gpu=2,gres/gpu:a100=2" in shown
    at = shown.index("Power=")
    assert shown[at + 1 : at + 4] == [
        "CpusPerTres=gres:gpu:1",
        "MemPerTres=gres:gpu:100",
        "TresPerNode=gres:gpu:a100:2",
    ]
    shown = lines(cluster.command(f"scontrol show job {untyped}").stdout)
    assert "TRES=cpu=1,node=1,billing=1,gres/gpu=1" in shown
    assert "TresPerJob=gres:gpu:1" in shown
    # pending (one GPU is left): what it asks for
    assert cluster.state(waiting).name == "PENDING"
    shown = lines(cluster.command(f"scontrol show job {waiting}").stdout)
    assert "TresPerTask=gres:gpu:2" in shown
    assert "TRES=cpu=1,mem=8000M,node=1,billing=1,gres/gpu=2" in shown
    shown = lines(cluster.command(f"scontrol show job {plain}").stdout)
    assert "TRES=cpu=1,node=1,billing=1" in shown
    assert not [line for line in shown if line.startswith(("TresPer", "CpusPerTres"))]
    node = lines(cluster.command("scontrol show node g1").stdout)
    assert "CfgTRES=cpu=8,mem=8000M,billing=8,gres/gpu=4,gres/gpu:a100=2" in node
    # the CPU-only job went on c1, the node without GPUs (tests/data/gres/gpu-cpu-only-*)
    assert "AllocTRES=cpu=3,gres/gpu=3,gres/gpu:a100=2" in node
    c1 = lines(cluster.command("scontrol show node c1").stdout)
    assert "CfgTRES=cpu=8,mem=8000M,billing=8" in c1
    assert "AllocTRES=cpu=1" in c1
    squeue = cluster.command(f"squeue -h -j {typed} -O tres-alloc:80").stdout
    assert squeue.strip() == "cpu=2,mem=200M,node=1,billing=2,gres/gpu=2,gres/gpu:a100=2"
    cluster.command(f"scancel {typed}")
    cluster.settle()
    sacct = cluster.command(f"sacct -X -n -j {typed} -o AllocTRES%60").stdout
    assert sacct.strip() == "billing=2,cpu=2,gres/gpu=2,gres/gpu:a100=2,node=1"


def test_untracked_gres_are_not_in_tres(make_cluster: Callable[..., TestCluster]) -> None:
    cluster = make_cluster(CONF)
    job = cluster.sbatch("-n1 --gres=gpu:1")
    cluster.settle()
    shown = lines(cluster.command(f"scontrol show job {job}").stdout)
    assert "TRES=cpu=1,node=1,billing=1" in shown
    assert "TresPerNode=gres:gpu:1" in shown
    assert "CfgTRES=cpu=8,mem=8000M,billing=8" in lines(
        cluster.command("scontrol show node g1").stdout
    )


def test_gres_used_and_the_codec_round_trip(make_cluster: Callable[..., TestCluster]) -> None:
    cluster = make_cluster(CONF)
    first = cluster.sbatch("-n1 --gres=gpu:v100:2")
    second = cluster.sbatch("-n1 --gres=gpu:1")
    cluster.settle()
    jobs = [cluster.job(first), cluster.job(second)]
    assert gres_used("g1", cluster.config, jobs) == "gpu:a100:1(IDX:0),gpu:v100:2(IDX:2-3)"
    assert gres_used("g1", cluster.config, []) == "gpu:a100:0(IDX:N/A),gpu:v100:0(IDX:N/A)"
    assert gres_used("c1", cluster.config, jobs) == "gpu:0"  # (GresTypes=gpu, no GPU)
    job = cluster.job(first)
    again = job_from_dict(json.loads(json.dumps(job_to_dict(job))))
    assert again.gres_alloc == job.gres_alloc
    assert again.request.gres_request == job.request.gres_request


def test_a_finished_job_shows_the_cores_it_was_given(
    make_cluster: Callable[..., TestCluster],
) -> None:
    """As 22.05 showed (tests/data/gres/gpu-typed): cpu=1 for a finished -n1 job on an
    8-CPU node, not the node's CPUs."""
    cluster = make_cluster(CONF)
    result = cluster.command("sbatch --parsable -n1 --gres=gpu:1 -t 1 --wrap='sleep 5'")
    assert result.status == 0, result.stderr
    cluster.run_until(30)
    assert cluster.state(1).name == "COMPLETED"
    shown = cluster.command("squeue -h -t all -O JobID:4,tres-alloc:30").stdout
    assert shown == "1   cpu=1,node=1,billing=1        \n"
    assert "TRES=cpu=1,node=1,billing=1" in cluster.command("scontrol show job 1").stdout


def test_scontrol_details_show_the_gres_in_use(make_cluster: Callable[..., TestCluster]) -> None:
    cluster = make_cluster(CONF)
    cluster.sbatch("-n1 --gres=gpu:v100:2")
    cluster.sbatch("-n1 --gres=gpu:1")
    cluster.settle()
    plain = cluster.command("scontrol show node g1").stdout
    detailed = cluster.command("scontrol -d show node g1").stdout
    gres = "   Gres=gpu:a100:2,gpu:v100:2\n"
    used = "   GresDrain=N/A\n   GresUsed=gpu:a100:1(IDX:0),gpu:v100:2(IDX:2-3)\n"
    assert gres in plain and "GresUsed" not in plain and "GresDrain" not in plain
    assert detailed == plain.replace(gres, gres + used)
    assert (
        "   Gres=(null)\n   GresDrain=N/A\n   GresUsed=gpu:0\n"
        in cluster.command("scontrol --details show node c1").stdout
    )
    oneliner = cluster.command("scontrol -o -d show node g1").stdout
    assert " GresDrain=N/A GresUsed=gpu:a100:1(IDX:0),gpu:v100:2(IDX:2-3) " in oneliner
    assert cluster.command("scontrol -d -o show node g1").stdout == oneliner


def test_tres_memory_is_in_the_largest_exact_unit() -> None:
    shown = [tres_memory(mib) for mib in (0, 1000, 1024, 1536, 2048, 3 * 1024 * 1024)]
    assert shown == ["0M", "1000M", "1G", "1536M", "2G", "3T"]
