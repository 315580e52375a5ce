"""Live mode: a job's CUDA_VISIBLE_DEVICES (and ROCR_VISIBLE_DEVICES, GPU_DEVICE_ORDINAL,
SLURM_JOB_GPUS) name the GPUs select gave it, and two jobs never share a GPU: on one node with
two GPUs, two one-GPU jobs run at once on different GPUs, and a third waits for one of them
and gets the GPU it frees; its --cpus-per-gpu and --mem-per-gpu are in SLURM_CPUS_PER_GPU
and SLURM_MEM_PER_GPU."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.live.conftest import LiveCluster, make_cluster

pytestmark = pytest.mark.live

SCRIPT = (
    "echo $CUDA_VISIBLE_DEVICES $ROCR_VISIBLE_DEVICES $GPU_DEVICE_ORDINAL $SLURM_JOB_GPUS; "
    "sleep {seconds}"
)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveCluster]:
    root = tmp_path_factory.mktemp("gres")
    live = make_cluster(
        root,
        nodes=1,
        cpus=4,
        extra="GresTypes=gpu\nSelectType=select/cons_tres\nSelectTypeParameters=CR_Core",
    )
    text = live.conf.read_text().replace("RealMemory=1000", "RealMemory=1000 Gres=gpu:2")
    live.conf.write_text(text)
    try:
        live.up()
        yield live
    finally:
        live.down()


def output(root: Path, job_id: int) -> list[str]:
    path = root / f"slurm-{job_id}.out"
    return path.read_text().split() if path.exists() else []


def test_jobs_see_their_own_gpus_and_never_share_one(cluster: LiveCluster) -> None:
    root = cluster.root
    long = cluster.sbatch(
        "-n1", "--gres=gpu:1", "-D", str(root), "--wrap", SCRIPT.format(seconds=30)
    )
    short = cluster.sbatch(
        "-n1", "--gres=gpu:1", "-D", str(root), "--wrap", SCRIPT.format(seconds=6)
    )
    third = cluster.sbatch(
        "-n1",
        "--gres=gpu:1",
        "--cpus-per-gpu=2",
        "--mem-per-gpu=100",
        "-D",
        str(root),
        "--wrap",
        SCRIPT.format(seconds=0) + "; echo $SLURM_CPUS_PER_GPU $SLURM_MEM_PER_GPU",
    )
    cluster.wait_for(
        lambda: len(output(root, long)) == 4 and len(output(root, short)) == 4, 30, "two jobs' GPUs"
    )
    first, second = output(root, long), output(root, short)
    # each names one GPU in all four variables, and not the other job's
    assert len(set(first)) == 1 and len(set(second)) == 1
    assert {first[0], second[0]} == {"0", "1"}
    assert cluster.state(third) == "PENDING"  # both GPUs are held; CPUs are free
    cluster.wait_for(lambda: len(output(root, third)) == 6, 30, "the third job's GPU")
    # the one the short job freed
    assert output(root, third) == [second[0]] * 4 + ["2", "100"]
    cluster.run("scancel", str(long))
