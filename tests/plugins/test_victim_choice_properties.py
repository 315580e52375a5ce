"""Properties of PreemptParameters=victims= on random clusters (select/linear and
select/cons_res; REQUEUE, CANCEL, SUSPEND,GANG): every option's victims let the job start,
no option takes more victims than ``slurm``, and ``fewest`` is minimal where the search is
exact."""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path

import attrs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plurm.controller.victim_search import choose_victims
from plurm.model.job import JobState
from plurm.model.select import SelectMode, SelectStatus
from plurm.testing import JobBuilder, TestCluster
from plurm.testing.cluster import build_cluster

OPTIONS = ("slurm", "fewest", "least_lost_work")


@attrs.frozen
class Case:
    select: str
    mode: str
    nodes: int
    cpus: int
    #: Low jobs: (nodes, tasks, seconds after the previous submission).
    lows: tuple[tuple[int, int, int], ...]
    high_nodes: int
    high_tasks: int


@st.composite
def cases(draw: st.DrawFn) -> Case:
    select = draw(st.sampled_from(["select/linear", "select/cons_res"]))
    modes = ["REQUEUE", "CANCEL"] + (["SUSPEND,GANG"] if select == "select/cons_res" else [])
    mode = draw(st.sampled_from(modes))
    nodes = draw(st.integers(3, 7))
    cpus = draw(st.integers(1, 2))
    lows = tuple(
        draw(
            st.lists(
                st.tuples(st.integers(1, 3), st.integers(1, 2), st.sampled_from([0, 600, 1800])),
                min_size=1,
                max_size=6,
            )
        )
    )
    high_nodes = draw(st.integers(1, nodes))
    high_tasks = draw(st.integers(high_nodes, high_nodes * cpus))
    return Case(select, mode, nodes, cpus, lows, high_nodes, high_tasks)


def _conf(case: Case, victims: str) -> str:
    select = case.select + ("\nSelectTypeParameters=CR_Core" if "cons" in case.select else "")
    share = " OverSubscribe=FORCE:1" if "GANG" in case.mode else ""
    return (
        f"SelectType={select}\nPreemptType=preempt/partition_prio\nPreemptMode={case.mode}\n"
        f"JobRequeue=1\nPreemptParameters=victims={victims}\n"
        f"NodeName=n[1-{case.nodes}] CPUs={case.cpus}\n"
        f"PartitionName=low Nodes=ALL Default=YES PriorityTier=1{share}\n"
        f"PartitionName=high Nodes=ALL PriorityTier=2{share}\n"
    )


def _setup(case: Case, victims: str, workdir: Path) -> tuple[TestCluster, int]:
    """The low jobs submitted and run, then the high job submitted (not yet tried)."""
    cluster = build_cluster(_conf(case, victims), workdir)
    for nodes, tasks, after in case.lows:
        size = min(nodes, case.nodes)
        tasks = min(max(tasks, size), size * case.cpus)
        cluster.submit(JobBuilder().nodes(size).tasks(tasks).runtime(10**7))
        cluster.settle()
        cluster.run_until(cluster.now + after)
    high = cluster.submit(
        JobBuilder().partition("high").nodes(case.high_nodes).tasks(case.high_tasks).runtime(10**6)
    )
    return cluster, high


def _victims(cluster: TestCluster, high: int) -> set[int]:
    """The jobs preempted: stamped so, or suspended by gang scheduling under the job."""
    return {
        job.job_id
        for job in cluster.controller.cluster.jobs.values()
        if job.job_id != high and (job.preempt_time is not None or job.state is JobState.SUSPENDED)
    }


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(case=cases())
def test_every_option_starts_the_job_with_no_more_victims_than_slurm(case: Case) -> None:
    taken: dict[str, set[int]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for index, option in enumerate(OPTIONS):
            workdir = Path(tmp) / str(index)
            workdir.mkdir()
            cluster, high = _setup(case, option, workdir)
            cluster.run_until(cluster.now + 2)
            taken[option] = _victims(cluster, high)
            cluster.run_until(cluster.now + 60)
            # Sufficient: the job starts (its victims gone, or suspended under it).
            assert cluster.state(high) is JobState.RUNNING, (option, cluster.states())
    for option in OPTIONS:
        assert len(taken[option]) <= len(taken["slurm"]), (option, taken)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(case=cases().filter(lambda c: "GANG" not in c.mode))
def test_fewest_is_minimal_where_the_search_is_exact(case: Case) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        cluster, high = _setup(case, "fewest", Path(tmp))
        controller = cluster.controller
        view = controller.cluster
        job = view.job(high)
        plugins = cluster.plugins
        usable = controller._usable_nodes(job)
        alone = plugins.select_job_test(job, usable, SelectMode.RUN_NOW, (), view)
        if alone.status is SelectStatus.SUCCESS:
            return  # no preemption needed
        candidates = list(controller._candidates(job))
        slurm = plugins.select_job_test(job, usable, SelectMode.RUN_NOW, candidates, view)
        assert slurm.status is SelectStatus.SUCCESS  # every node is a candidate's or idle

        def test(members: object) -> object:
            return plugins.select_job_test(job, usable, SelectMode.RUN_NOW, members, view)

        choice = choose_victims(slurm, candidates, lambda c: 1.0, test)  # type: ignore[arg-type]
        chosen = set(choice.result.victims)
        assert choice.result.status is SelectStatus.SUCCESS
        assert len(chosen) <= len(slurm.victims)
        if not choice.exact:
            return
        # No smaller set of candidates lets the job start (checked by brute force).
        for size in range(len(chosen)):
            for members in itertools.combinations(candidates, size):
                answer = test(list(members))
                assert not (
                    answer.status is SelectStatus.SUCCESS  # type: ignore[attr-defined]
                    and set(answer.victims) <= {c.job_id for c in members}  # type: ignore[attr-defined]
                ), (chosen, [c.job_id for c in members])
