"""select/cons_tres's node-by-node tests decide as the whole-usage reference does.

A test reads only the jobs on the nodes it tests (``View.of(usage, nodes)``), the GPU tests
remember where a share is free and find what a dry run of the preemption loop freed from the
jobs it dropped, and the idle GPU tests are remembered. ``ConsResSelect.reference`` turns
all that off: every step sums up the whole usage and looks at every node, as the first
versions did. On random clusters with GPUs (two types on some nodes), random running jobs
(with and without GPUs, some suspended by an administrator) and a random preemptor and
candidate order, both give the same answer: status, nodes, victims and the placement.
"""

from __future__ import annotations

import attrs
from hypothesis import given, settings
from hypothesis import strategies as st

from plurm import conf
from plurm.conf.values import PreemptBase
from plurm.model.cluster import Cluster
from plurm.model.gres import GresAsk, GresRequest
from plurm.model.job import Job, JobRequest, JobState
from plurm.model.select import Candidate, SelectMode, SelectResult, SelectStatus
from plurm.registry import PluginContext
from plurm_select_cons_res.plugin import ConsResSelect
from plurm_select_cons_res.steps import Placement


@attrs.frozen
class Low:
    nodes: int
    tasks: int
    gpus: int
    gpu_type: str | None
    memory: int
    partition: str
    suspended: bool


@attrs.frozen
class Case:
    nodes: int
    cpus: int
    typed: bool
    mode: str
    oversubscribe: str
    memory: bool
    lows: tuple[Low, ...]
    high_nodes: int
    high_tasks: int
    high_gpus: int
    high_gpu_type: str | None
    high_memory: int
    high_exclusive: bool
    order: tuple[int, ...]


def _low(cpus: int) -> st.SearchStrategy[Low]:
    return st.builds(
        Low,
        nodes=st.integers(1, 2),
        tasks=st.integers(1, cpus),
        gpus=st.sampled_from([0, 1, 1, 2, 2, 3]),
        gpu_type=st.sampled_from([None, None, "a", "b"]),
        memory=st.sampled_from([0, 100, 300, 400, 600]),
        partition=st.sampled_from(["low", "low", "mid"]),
        suspended=st.booleans(),
    )


@st.composite
def cases(draw: st.DrawFn) -> Case:
    nodes = draw(st.integers(2, 6))
    cpus = draw(st.integers(2, 6))
    lows = tuple(draw(st.lists(_low(cpus), min_size=1, max_size=16)))
    high_nodes = draw(st.integers(1, 2))
    return Case(
        nodes=nodes,
        cpus=cpus,
        typed=draw(st.booleans()),
        mode=draw(st.sampled_from(["REQUEUE", "CANCEL", "SUSPEND,GANG"])),
        oversubscribe=draw(st.sampled_from(["NO", "FORCE:2", "YES:2"])),
        memory=draw(st.booleans()),
        lows=lows,
        high_nodes=high_nodes,
        high_tasks=draw(st.integers(high_nodes, high_nodes * cpus)),
        high_gpus=draw(st.sampled_from([0, 1, 2, 3, 4, 4])),
        high_gpu_type=draw(st.sampled_from([None, None, "a", "b"])),
        high_memory=draw(st.sampled_from([0, 300, 500, 700])),
        high_exclusive=draw(st.booleans()),
        order=tuple(draw(st.permutations(range(len(lows))))),
    )


def _config(case: Case) -> str:
    params = "CR_Core_Memory" if case.memory else "CR_Core"
    # every other node has two GPU types when typed, the others plain GPUs
    lines = []
    for index in range(case.nodes):
        gres = "gpu:a:2,gpu:b:2" if case.typed and index % 2 else "gpu:4"
        lines.append(
            f"NodeName=n{index} CPUs={case.cpus} Sockets=1 CoresPerSocket={case.cpus} "
            f"RealMemory=1000 Gres={gres}"
        )
    return (
        "ClusterName=c\nSlurmctldHost=h\nSelectType=select/cons_tres\n"
        f"SelectTypeParameters={params}\nGresTypes=gpu\n"
        f"PreemptType=preempt/partition_prio\nPreemptMode={case.mode}\nJobRequeue=1\n"
        + "\n".join(lines)
        + f"\nPartitionName=low Nodes=ALL Default=YES PriorityTier=1 "
        f"OverSubscribe={case.oversubscribe}\n"
        "PartitionName=mid Nodes=ALL PriorityTier=1\n"
        "PartitionName=high Nodes=ALL PriorityTier=10\n"
    )


def _gres(gpus: int, gpu_type: str | None) -> GresRequest | None:
    return GresRequest(per_node=(GresAsk("gpu", gpu_type, gpus),)) if gpus else None


def _decide(
    select: ConsResSelect, job: Job, candidates: tuple[Candidate, ...], cluster: Cluster
) -> tuple[SelectResult, Placement | None]:
    result = select.select_job_test(
        job, cluster.config.node_names, SelectMode.RUN_NOW, candidates, cluster
    )
    tested = select.tested.pop(job.job_id, None)
    return result, tested.placement if tested is not None else None


@settings(max_examples=300, deadline=None)
@given(cases())
def test_node_by_node_tests_decide_as_the_whole_usage_reference(case: Case) -> None:
    config = conf.parse_text(_config(case))
    cluster = Cluster.from_config(config)
    select = ConsResSelect(PluginContext(config, "select/cons_tres"))
    select.select_node_init(cluster)
    running: list[Job] = []
    for job_id, low in enumerate(case.lows, start=1):
        request = JobRequest(
            ntasks=low.tasks,
            min_nodes=low.nodes,
            partitions=(low.partition,),
            mem_per_node=low.memory or None,
            gres_request=_gres(low.gpus, low.gpu_type),
        )
        job = Job(job_id, request, 0.0, low.partition)
        result = select.select_job_test(
            job, cluster.config.node_names, SelectMode.RUN_NOW, (), cluster
        )
        if result.status is not SelectStatus.SUCCESS:
            continue
        job.nodes, job.state = result.nodes, JobState.RUNNING
        job.start_time = 0.0
        cluster.add_job(job)
        select.select_job_begin(job, cluster)
        if low.suspended:
            job.state = JobState.SUSPENDED
            select.select_job_suspend(job, True, cluster)
        running.append(job)
    mode = PreemptBase.SUSPEND if "SUSPEND" in case.mode else PreemptBase(case.mode)
    by_id = {job.job_id: job for job in running}
    candidates = tuple(
        Candidate(by_id[index + 1], mode, 1) for index in case.order if index + 1 in by_id
    )
    high = Job(
        1000,
        JobRequest(
            ntasks=case.high_tasks,
            min_nodes=case.high_nodes,
            partitions=("high",),
            exclusive=case.high_exclusive,
            mem_per_node=case.high_memory or None,
            gres_request=_gres(case.high_gpus, case.high_gpu_type),
        ),
        0.0,
        "high",
    )
    before = _usage(select)
    # (the reference first: the memos the fast path keeps must not change its answer)
    select.reference = True
    expected = _decide(select, high, candidates, cluster)
    select.reference = False
    for _ in range(2):  # afresh, then with what the first test remembered
        assert _decide(select, high, candidates, cluster) == expected
        # the dry runs of the preemption loop left the usage as it was
        assert _usage(select) == before


def _usage(select: ConsResSelect) -> tuple[object, ...]:
    usage = select.usage
    rows = {part: [set(row) for row in rows] for part, rows in usage.rows.items()}
    placed = {job: usage.row_of(job) for job in usage.allocations}
    return dict(usage.allocations), rows, placed, usage.dry
