"""select/cons_tres places GPUs: two one-GPU jobs per two-GPU node and the fifth waits on
Resources while CPU-only jobs start; a job's GPUs free at its end; a job needing two GPUs on
one node preempts the jobs that hold that node's GPUs (the cheaper node's under
PreemptParameters=victims=fewest|least_lost_work); enforce-binding keeps a job on the
cores gres.conf binds its GPUs to; select/linear takes whole nodes."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from plurm.testing.cluster import TestCluster

GPU = """
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
NodeName=g[1-2] CPUs=8 Sockets=1 CoresPerSocket=8 RealMemory=8000 Gres=gpu:2
PartitionName=p Nodes=ALL Default=YES
"""

PREEMPT = """
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
PreemptType=preempt/partition_prio
PreemptMode=REQUEUE
GresTypes=gpu
NodeName=g[1-2] CPUs=8 Sockets=1 CoresPerSocket=8 RealMemory=8000 Gres=gpu:2
PartitionName=low Nodes=ALL Default=YES PriorityTier=1
PartitionName=high Nodes=ALL PriorityTier=2
"""


def held(
    cluster: TestCluster,
) -> dict[int, dict[str, dict[tuple[str, str | None], tuple[int, ...]]]]:
    """The units each running job holds (Job.gres_alloc, from select_job_gres)."""
    found: dict[int, dict[str, dict[tuple[str, str | None], tuple[int, ...]]]] = {}
    for job in cluster.controller.cluster.jobs.values():
        if job.state.name != "RUNNING":
            continue
        for unit in job.gres_alloc:
            found.setdefault(job.job_id, {}).setdefault(unit.node, {})[(unit.name, unit.type)] = (
                unit.indexes
            )
    return found


def assert_no_gpu_shared(cluster: TestCluster) -> None:
    seen: set[tuple[str, int]] = set()
    for nodes in held(cluster).values():
        for node, units in nodes.items():
            for indexes in units.values():
                for index in indexes:
                    assert (node, index) not in seen, (node, index, held(cluster))
                    seen.add((node, index))


def test_one_gpu_jobs_go_two_per_node_and_the_fifth_waits_on_resources(
    make_cluster: Callable[..., TestCluster],
) -> None:
    cluster = make_cluster(GPU)
    gpu_jobs = [cluster.sbatch("-n1 --gres=gpu:1") for _ in range(4)]
    cpu_job = cluster.sbatch("-n6")  # the cores the GPU jobs leave
    gpu_jobs.append(cluster.sbatch("-n1 --gres=gpu:1"))
    cluster.settle()
    states = cluster.states()
    assert [states[j] for j in gpu_jobs] == ["RUNNING"] * 4 + ["PENDING"]
    assert cluster.job(gpu_jobs[4]).reason.value == "Resources"
    assert states[cpu_job] == "RUNNING"
    nodes = [cluster.job(j).nodes for j in gpu_jobs[:4]]
    assert sorted(nodes) == [("g1",), ("g1",), ("g2",), ("g2",)]
    units = held(cluster)
    for node in ("g1", "g2"):
        indexes = sorted(
            i for job in gpu_jobs[:4] for i in units[job].get(node, {}).get(("gpu", None), ())
        )
        assert indexes == [0, 1], (node, units)
    cluster.command(f"scancel {gpu_jobs[0]}")
    cluster.settle()
    assert cluster.state(gpu_jobs[4]).name == "RUNNING"
    assert cluster.job(gpu_jobs[4]).nodes == cluster.job(gpu_jobs[0]).nodes
    assert gpu_jobs[0] not in held(cluster)


def test_a_two_gpu_job_preempts_the_jobs_holding_one_nodes_gpus(
    make_cluster: Callable[..., TestCluster],
) -> None:
    cluster = make_cluster(PREEMPT)
    low = [cluster.sbatch("-p low -n1 --gres=gpu:1") for _ in range(4)]
    cluster.settle()
    assert all(cluster.state(j).name == "RUNNING" for j in low)
    urgent = cluster.sbatch("-p high -n1 --gres=gpu:2")
    cluster.settle()
    assert cluster.state(urgent).name == "RUNNING"
    node = cluster.job(urgent).nodes
    requeued = [j for j in low if cluster.state(j).name != "RUNNING"]
    # exactly the two jobs that held that node's GPUs went back to the queue
    assert len(requeued) == 2
    assert all(cluster.job(j).state.name == "PENDING" for j in requeued)
    still = [j for j in low if j not in requeued]
    assert all(cluster.job(j).nodes != node for j in still)
    assert held(cluster)[urgent][node[0]] == {("gpu", None): (0, 1)}
    # once it ends, the requeued jobs start again, each on GPUs of its own
    cluster.command(f"scancel {urgent}")
    cluster.run_until(cluster.now + 300)
    assert all(cluster.state(j).name == "RUNNING" for j in low)
    assert_no_gpu_shared(cluster)


def test_cpu_only_high_priority_job_does_not_preempt_for_gpus(
    make_cluster: Callable[..., TestCluster],
) -> None:
    cluster = make_cluster(PREEMPT)
    low = [cluster.sbatch("-p low -n1 --gres=gpu:1") for _ in range(4)]
    cluster.settle()
    cpu = cluster.sbatch("-p high -n4")
    cluster.settle()
    assert cluster.state(cpu).name == "RUNNING"
    assert all(cluster.state(j).name == "RUNNING" for j in low)


def test_enforce_binding_keeps_a_job_on_its_gpus_cores(
    make_cluster: Callable[..., TestCluster],
) -> None:
    gres_conf = "NodeName=g[1-2] Name=gpu File=/dev/nvidia0 Cores=0-3\n" + (
        "NodeName=g[1-2] Name=gpu File=/dev/nvidia1 Cores=4-7\n"
    )
    cluster = make_cluster(GPU, files={"gres.conf": gres_conf})
    # a CPU-only job takes cores 0-3 of each node
    filler = cluster.sbatch("-N2 -n8")
    cluster.settle()
    bound = cluster.sbatch("-n1 --gres=gpu:1 --gres-flags=enforce-binding")
    cluster.settle()
    assert cluster.state(filler).name == "RUNNING"
    assert cluster.state(bound).name == "RUNNING"
    node = cluster.job(bound).nodes[0]
    # GPU 0 is bound to the filler's cores: the job gets GPU 1
    assert held(cluster)[bound][node] == {("gpu", None): (1,)}
    two = cluster.sbatch("-N1 -n8 --gres=gpu:2 --gres-flags=enforce-binding")
    cluster.settle()
    assert cluster.state(two).name == "PENDING"


def test_select_linear_takes_whole_nodes_with_their_gpus(
    make_cluster: Callable[..., TestCluster],
) -> None:
    conf = GPU.replace("select/cons_tres", "select/linear").replace(
        "PartitionName", "NodeName=c1 CPUs=8 RealMemory=8000\nPartitionName"
    )
    cluster = make_cluster(conf)
    first = cluster.sbatch("-n1 --gres=gpu:1")
    second = cluster.sbatch("-n1 --gres=gpu:1")
    third = cluster.sbatch("-n1 --gres=gpu:1")
    cluster.settle()
    assert [cluster.state(j).name for j in (first, second, third)] == [
        "RUNNING",
        "RUNNING",
        "PENDING",
    ]
    assert {cluster.job(first).nodes, cluster.job(second).nodes} == {("g1",), ("g2",)}
    cpu = cluster.sbatch("-n1")  # c1 has no GPU: the third waits, a CPU-only job goes there
    cluster.run_until(cluster.now + 31)
    assert cluster.job(cpu).nodes == ("c1",)
    assert cluster.state(third).name == "PENDING"
    # the job holds every GPU of its node
    assert held(cluster)[first] == {cluster.job(first).nodes[0]: {("gpu", None): (0, 1)}}


GANG = """
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
PreemptMode=GANG
SchedulerTimeSlice=30
GresTypes=gpu
NodeName=g1 CPUs=4 Sockets=1 CoresPerSocket=4 RealMemory=8000 Gres=gpu:2
PartitionName=p Nodes=ALL Default=YES OverSubscribe=FORCE:2
"""


def test_gang_time_slices_cores_but_never_gpus(make_cluster: Callable[..., TestCluster]) -> None:
    cluster = make_cluster(GANG)
    # CPU-only jobs that each fill the node share it by time slices
    first, second = cluster.sbatch("-n4"), cluster.sbatch("-n4")
    cluster.settle()
    assert {cluster.state(first).name, cluster.state(second).name} == {"RUNNING", "SUSPENDED"}
    cluster.command(f"scancel {first} {second}")
    cluster.settle()
    # jobs that each need both GPUs do not: a suspended job keeps its GPUs
    gpu_a = cluster.sbatch("-n1 --gres=gpu:2")
    gpu_b = cluster.sbatch("-n1 --gres=gpu:2")
    cluster.run_until(cluster.now + 65)
    assert cluster.state(gpu_a).name == "RUNNING"
    assert cluster.state(gpu_b).name == "PENDING"
    assert cluster.job(gpu_b).reason.value == "Resources"


def test_gpus_per_task_spreads_before_it_preempts(
    make_cluster: Callable[..., TestCluster],
) -> None:
    """A high job with -n2 --gpus-per-task=1, one GPU free on each node: it takes one of
    each node (two nodes, no -N asked) rather than preempt for two GPUs on one node; a
    second one, with every GPU held, requeues the low jobs."""
    cluster = make_cluster(PREEMPT)
    low = [cluster.sbatch(f"-p low -n1 --gres=gpu:1 -w {node}") for node in ("g1", "g2")]
    cluster.settle()
    high = cluster.sbatch("-p high -n2 --gpus-per-task=1")
    cluster.settle()
    assert cluster.states()[high] == "RUNNING"
    assert cluster.job(high).nodes == ("g1", "g2")
    assert all(cluster.states()[job] == "RUNNING" for job in low)
    assert_no_gpu_shared(cluster)
    again = cluster.sbatch("-p high -n2 --gpus-per-task=1")
    cluster.settle()
    assert cluster.states()[again] == "RUNNING"  # by requeueing low jobs' GPUs
    assert any(cluster.states()[job] == "PENDING" for job in low)
    assert_no_gpu_shared(cluster)


def _choosing(victims: str) -> str:
    return PREEMPT.replace(
        "PreemptMode=REQUEUE\n",
        f"PreemptMode=REQUEUE\nJobRequeue=1\nPreemptParameters=victims={victims}\n",
    )


@pytest.mark.parametrize(
    ("victims", "taken", "node"),
    [("slurm", {1, 2}, "g1"), ("fewest", {3}, "g2"), ("least_lost_work", {3}, "g2")],
)
def test_a_two_gpu_preemptor_takes_the_cheaper_node_s_gpu_holders(
    make_cluster: Callable[..., TestCluster], victims: str, taken: set[int], node: str
) -> None:
    """g1: two old one-GPU jobs (1, 2); g2: a young two-GPU job (3). A high job needing two
    GPUs on one node: Slurm's order (1, 2, 3) takes jobs 1 and 2 and g1; fewest takes job 3
    alone, and so does least_lost_work (one CPU for 100 s against two for 700 s)."""
    cluster = make_cluster(_choosing(victims))
    small = [cluster.sbatch("-p low -n1 --gres=gpu:1") for _ in range(2)]
    cluster.run_until(600)
    big = cluster.sbatch("-p low -n1 --gres=gpu:2")
    cluster.run_until(700)
    assert [cluster.job(j).nodes for j in (*small, big)] == [("g1",), ("g1",), ("g2",)]
    high = cluster.sbatch("-p high -n1 --gres=gpu:2")
    cluster.run_until(790)
    assert {j for j in (*small, big) if cluster.job(j).preempt_time is not None} == taken
    assert cluster.state(high).name == "RUNNING"
    assert cluster.job(high).nodes == (node,)
    assert held(cluster)[high] == {node: {("gpu", None): (0, 1)}}
    for j in {*small, big} - taken:
        assert cluster.state(j).name == "RUNNING"
    for j in taken:
        assert cluster.state(j).name == "PENDING"  # requeued
    assert_no_gpu_shared(cluster)
