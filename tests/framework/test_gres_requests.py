"""sbatch's generic resource options (--gres, --gpus*, --cpus-per-gpu, --mem-per-gpu,
--gres-flags) read into the typed JobRequest.gres_request, Slurm's refusals of bad values, and
the submission check that refuses what no node of the partition could hold."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from plurm.model.gres import GresAsk, GresRequest
from plurm.testing.cluster import TestCluster

CONF = """
GresTypes=gpu,mps
SelectType=select/cons_tres
NodeName=a[1-2] CPUs=8 RealMemory=8000 Gres=gpu:a100:2
NodeName=v1 CPUs=8 RealMemory=8000 Gres=gpu:v100:4
NodeName=c1 CPUs=8 RealMemory=8000
PartitionName=all Nodes=ALL Default=YES
PartitionName=cpu Nodes=c1
"""


@pytest.fixture
def cluster(make_cluster: Callable[..., TestCluster]) -> TestCluster:
    return make_cluster(CONF)


def submit(cluster: TestCluster, options: str) -> tuple[int, str, str]:
    result = cluster.command(f"sbatch {options} --wrap='sleep 10'")
    return result.status, result.stdout, result.stderr


def test_a_job_without_gres_has_no_gres_request(cluster: TestCluster) -> None:
    assert submit(cluster, "-n1")[0] == 0
    assert cluster.job(1).request.gres_request is None
    assert cluster.job(1).request.gres == ()


def test_options_become_a_typed_request(cluster: TestCluster) -> None:
    line = (
        "--gres=gpu:v100:1 --gpus=1 --gpus-per-task=v100:1 -n2 --cpus-per-gpu=2 "
        "--mem-per-gpu=1G --gres-flags=enforce-binding"
    )
    assert submit(cluster, line)[0] == 0, submit(cluster, line)
    request = cluster.job(1).request
    assert request.gres_request == GresRequest(
        per_node=(GresAsk("gpu", "v100", 1),),
        per_job=(GresAsk("gpu", None, 1),),
        per_task=(GresAsk("gpu", "v100", 1),),
        cpus_per_gpu=2,
        mem_per_gpu=1024,
        enforce_binding=True,
    )
    assert request.gres == ("gpu:v100:1", "gpus=1", "gpus-per-task=v100:1")
    assert submit(cluster, "--gres=gpu --gpus-per-node=1")[0] == 0
    assert cluster.job(2).request.gres_request == GresRequest(
        per_node=(GresAsk("gpu", None, 1), GresAsk("gpu", None, 1))
    )
    assert submit(cluster, "--gres=none")[0] == 0
    assert cluster.job(3).request.gres_request is None


@pytest.mark.parametrize(
    ("options", "status", "stderr"),
    [
        ("--gres=fpga:1", 1, "sbatch: error: Invalid generic resource (gres) specification\n"),
        ("--gres=mps:1", 1, "sbatch: error: Invalid generic resource (gres) specification\n"),
        ("--gres=gpu:a:b:2", 1, "sbatch: error: Invalid generic resource (gres) specification\n"),
        ("--gres=gpu:a100:x", 1, "sbatch: error: Invalid generic resource (gres) specification\n"),
        ("--gpus=abc", 1, "sbatch: error: Invalid generic resource (gres) specification\n"),
        ("--gpus=a100:", 1, "sbatch: error: Invalid generic resource (gres) specification\n"),
        (
            "--gpus=1 --cpus-per-gpu=x",
            255,
            'sbatch: error: Invalid numeric value "x" for --cpus-per-gpu.\n',
        ),
        (
            "--gpus=1 --cpus-per-gpu=2 -c2",
            1,
            "sbatch: error: --cpus-per-gpu is mutually exclusive with --cpus-per-task\n"
            "sbatch: error: Invalid generic resource (gres) specification\n",
        ),
        (
            "--gpus=1 --mem-per-gpu=lots",
            255,
            "sbatch: error: Invalid --mem-per-gpu specification\n",
        ),
        (
            "--gpus=1 --mem-per-gpu=1G --mem=2G",
            1,
            "sbatch: fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.\n",
        ),
        (
            "--gpus=1 --mem-per-gpu=1G --mem-per-cpu=100",
            1,
            "sbatch: fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.\n",
        ),
        ("--gpus=1 --gres-flags=tight", 255, "sbatch: error: Invalid gres-flags specification\n"),
    ],
)
def test_bad_values_are_refused_in_slurms_words(
    cluster: TestCluster, options: str, status: int, stderr: str
) -> None:
    assert submit(cluster, options) == (status, "", stderr)
    assert cluster.command("squeue -h").stdout == ""


NOT_AVAILABLE = (
    "sbatch: error: Batch job submission failed: Requested node configuration is not available\n"
)


@pytest.mark.parametrize(
    "options",
    [
        "--gres=gpu:5",  # no node has five
        "--gres=gpu:a100:3",  # the a100 nodes have two each
        "--gres=gpu:h100:1",  # no such type
        "-N3 --gres=gpu:a100:1",  # two a100 nodes only
        "--gpus=9",  # eight GPUs in all
        "-N1 --gpus=5",  # one node: no node has five
        "-n1 --gpus=5",  # one task: one node
        "-n5 --gpus-per-task=a100:1",  # four a100 in all
        "-p cpu --gres=gpu:1",  # a partition without GPUs
        "-N2 --ntasks-per-node=3 --gpus-per-task=a100:1",  # a node holds two tasks' worth
    ],
)
def test_what_no_node_could_hold_is_refused_at_submission(
    cluster: TestCluster, options: str
) -> None:
    assert submit(cluster, options) == (1, "", NOT_AVAILABLE)


@pytest.mark.parametrize(
    "options",
    [
        "--gres=gpu:4",
        "--gres=gpu:a100:2 -N2",
        "--gpus=4 -N2",
        "-N2 -n4 --gpus-per-task=a100:1",
        "-n4 --gpus-per-task=a100:1",  # two nodes added, as Slurm does (data/gres/gpu-per-task)
        "-N3 --gpus=6",
        "--gpus=5",  # more nodes than -N's one, as many as it takes
    ],
)
def test_what_some_nodes_could_hold_is_accepted(cluster: TestCluster, options: str) -> None:
    assert submit(cluster, options)[0] == 0


def test_gpus_per_task_takes_the_fewest_nodes_that_hold_them(cluster: TestCluster) -> None:
    """-n4 --gpus-per-task=a100:1 on two-a100 nodes runs on both (two tasks and two GPUs
    each); -n2 of the same then fits one node, and waits for one."""
    assert submit(cluster, "-n4 --gpus-per-task=a100:1")[0] == 0
    assert submit(cluster, "-n2 --gpus-per-task=a100:1")[0] == 0
    cluster.settle()
    first, second = cluster.job(1), cluster.job(2)
    assert first.nodes == ("a1", "a2")
    assert sorted((u.node, u.indexes) for u in first.gres_alloc) == [
        ("a1", (0, 1)),
        ("a2", (0, 1)),
    ]
    assert second.state.name == "PENDING"
    assert cluster.command("scancel 1").status == 0
    cluster.settle()
    assert cluster.job(2).state.name == "RUNNING"
    assert len(cluster.job(2).nodes) == 1
    assert [len(u.indexes) for u in cluster.job(2).gres_alloc] == [2]
