"""Candidates kept in victim order between decisions (controller/victims.py) and read only
as far as select goes (model/select.py's Candidates): the same decisions as building and
sorting every candidate for every job, with far fewer questions to the preempt plugin."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plurm import conf, hookimpl
from plurm.conf.values import PreemptBase
from plurm.controller.victims import VictimPool
from plurm.manager import Plugins
from plurm.model.cluster import Cluster
from plurm.model.job import Job, JobRequest, JobState
from plurm.model.select import Candidate, Candidates
from plurm.sim.session import Simulation

# ----------------------------------------------------------------------------- Candidates


def _candidate(job_id: int) -> Candidate:
    return Candidate(_job(job_id, "p", 0, 0.0, ()), PreemptBase.REQUEUE, job_id)


class _Counted:
    """A source that counts the candidates taken from it."""

    def __init__(self, ids: list[int]) -> None:
        self.ids = ids
        self.taken = 0

    def __iter__(self) -> Iterator[Candidate]:
        for job_id in self.ids:
            self.taken += 1
            yield _candidate(job_id)


def _ids(candidates: object) -> list[int]:
    return [c.job_id for c in candidates]  # type: ignore[attr-defined]


def test_candidates_are_read_only_as_far_as_the_reader_goes() -> None:
    source = _Counted(list(range(1, 101)))
    candidates = Candidates(source)
    assert candidates  # truth reads one
    assert source.taken == 1
    for candidate in candidates:
        if candidate.job_id == 3:
            break
    assert source.taken == 3
    assert candidates[4].job_id == 5
    assert source.taken == 5
    assert _ids(candidates.read()) == [1, 2, 3, 4, 5]
    assert len(candidates) == 100
    assert source.taken == 100


@given(st.lists(st.integers(1, 10**6), unique=True, max_size=30), st.data())
def test_candidates_behave_as_the_list_they_read(ids: list[int], data: st.DataObject) -> None:
    expected = [_candidate(job_id) for job_id in ids]
    candidates = Candidates(iter(expected))
    if ids:
        index = data.draw(st.integers(-len(ids), len(ids) - 1))
        assert candidates[index] is expected[index]
    start = data.draw(st.integers(-5, 35))
    stop = data.draw(st.integers(-5, 35))
    assert list(candidates[start:stop]) == expected[start:stop]
    assert bool(candidates) is bool(expected)
    assert list(candidates) == expected
    assert list(candidates) == expected  # again: the same ones
    assert len(candidates) == len(expected)


def test_two_readers_see_the_same_candidates() -> None:
    candidates = Candidates(_Counted([4, 5, 6]))
    first, second = iter(candidates), iter(candidates)
    assert next(first).job_id == 4
    assert [c.job_id for c in second] == [4, 5, 6]
    assert [c.job_id for c in first] == [5, 6]


def test_reordered_puts_the_read_ones_first_and_hands_on_the_rest() -> None:
    source = _Counted([1, 2, 3, 4, 5])
    candidates = Candidates(source)
    walk = iter(candidates)
    next(walk), next(walk), next(walk)
    read = candidates.read()
    again = candidates.reordered([read[2], read[0], read[1]])
    assert source.taken == 3
    assert _ids(again) == [3, 1, 2, 4, 5]
    with pytest.raises(RuntimeError, match="handed on"):
        list(candidates)
    with pytest.raises(ValueError, match="read so far"):
        Candidates(_Counted([1, 2])).reordered([_candidate(1)])


def test_the_nodes_bound_is_the_cores_and_goes_with_a_reordering() -> None:
    assert Candidates(_Counted([1])).nodes_bound() is None  # the core told none
    asked = []
    candidates = Candidates(_Counted([1, 2, 3]), nodes_bound=lambda: asked.append(1) or 0b1010)
    assert not asked  # worked out only when a plugin asks
    assert candidates.nodes_bound() == 0b1010
    next(iter(candidates))
    assert candidates.reordered(candidates.read()).nodes_bound() == 0b1010


# ----------------------------------------------------------------------------- VictimPool


def _job(job_id: int, partition: str, priority: int, start: float, nodes: tuple[str, ...]) -> Job:
    job = Job(job_id=job_id, request=JobRequest(), submit_time=0.0, partition=partition)
    job.priority = priority
    job.start_time = start
    job.nodes = nodes
    return job


_NODES = tuple(f"n{i}" for i in range(8))


def _mask(names: object) -> int:
    return sum(1 << _NODES.index(name) for name in names)  # type: ignore[attr-defined]


@given(
    st.lists(
        st.tuples(
            st.sampled_from("abc"),
            st.integers(0, 5),
            st.integers(0, 50),
            st.sets(st.sampled_from(_NODES), min_size=1, max_size=3),
            st.booleans(),
        ),
        max_size=40,
    ),
    st.booleans(),
    st.sets(st.sampled_from("abc"), min_size=1),
    st.sets(st.sampled_from(_NODES), min_size=1),
)
def test_the_pool_reads_as_the_full_walk_sorts(
    specs: list[tuple[str, int, int, set[str], bool]],
    youngest_first: bool,
    partitions: set[str],
    nodes: set[str],
) -> None:
    """Filed and taken out in any order, the pool yields what sorting every job gives."""
    jobs = [
        _job(i, part, prio, float(start), tuple(sorted(names)))
        for i, (part, prio, start, names, _) in enumerate(specs, 1)
    ]
    mode = {
        job.job_id: PreemptBase.OFF if job.priority == 0 else PreemptBase.REQUEUE for job in jobs
    }
    pool = VictimPool(
        lambda job: _FixedMode(mode[job.job_id]),  # type: ignore[arg-type,return-value]
        lambda job: job.priority * 3 % 7,
        _mask,
        youngest_first=youngest_first,
    )
    for job in jobs:
        pool.add(job)
        pool.nodes_of(partitions)  # worked out, and kept until a job of theirs comes or goes
    for job, (*_, leaves) in zip(jobs, specs, strict=True):
        if leaves:
            pool.discard(job.job_id)
            pool.nodes_of(partitions)
    pool.discard(10**6)  # never filed: nothing happens
    kept = [
        job
        for job, (*_, leaves) in zip(jobs, specs, strict=True)
        if not leaves and mode[job.job_id] is not PreemptBase.OFF
    ]
    assert len(pool) == len(kept)
    may = {job.job_id: job.job_id % 3 != 0 for job in jobs}
    wanted = [
        job
        for job in kept
        if job.partition in partitions and set(job.nodes) & nodes and may[job.job_id]
    ]
    if youngest_first:
        wanted.sort(key=lambda job: (-(job.start_time or 0.0), job.job_id))
    else:
        wanted.sort(key=lambda job: (job.priority * 3 % 7, job.job_id))
    preemptor = _job(0, "a", 0, 0.0, ())
    read = pool.candidates(
        preemptor, sorted(partitions), _mask(nodes), lambda _, victim: may[victim.job_id]
    )
    assert [c.job_id for c in read] == [job.job_id for job in wanted]
    # the nodes bound: every node of the kept jobs of those partitions, and at most the
    # nodes of the jobs taken out besides
    held = sum_of_masks([_mask(job.nodes) for job in kept if job.partition in partitions])
    gone = sum_of_masks([_mask(job.nodes) for job in jobs if job.partition in partitions])
    bound = pool.nodes_of(sorted(partitions))
    assert bound & held == held
    assert bound & ~(held | gone) == 0
    # once every job of theirs is taken out, nothing is left in it
    for job in kept:
        pool.discard(job.job_id)
    assert pool.nodes_of(sorted(partitions)) == 0


def sum_of_masks(masks: list[int]) -> int:
    total = 0
    for mask in masks:
        total |= mask
    return total


class _FixedMode:
    def __init__(self, base: PreemptBase) -> None:
        self.base = base


# ----------------------------------------------------------------------------- decisions


_CONFIGS = {
    "linear-requeue": (
        "SelectType=select/linear\nPreemptType=preempt/partition_prio\nPreemptMode=REQUEUE\n"
        "JobRequeue=1\n",
        "",
    ),
    "linear-suspend": (
        "SelectType=select/linear\nPreemptType=preempt/partition_prio\n"
        "PreemptMode=SUSPEND,GANG\nSchedulerTimeSlice=30\n",
        " OverSubscribe=FORCE:1",
    ),
    "cons_res-youngest": (
        "SelectType=select/cons_res\nSelectTypeParameters=CR_Core\n"
        "PreemptType=preempt/partition_prio\nPreemptMode=REQUEUE\nJobRequeue=1\n"
        "PreemptParameters=youngest_first,reorder_count=2\n",
        "",
    ),
    "cons_res-strict": (
        "SelectType=select/cons_res\nSelectTypeParameters=CR_Core\n"
        "PreemptType=preempt/partition_prio\nPreemptMode=CANCEL\n"
        "PreemptParameters=strict_order,reorder_count=3\n",
        "",
    ),
}


def _config_text(select_and_preempt: str, share: str) -> str:
    return (
        "ClusterName=pool\nSlurmctldHost=head\n"
        f"{select_and_preempt}"
        "NodeName=n[01-12] CPUs=4 RealMemory=4000\n"
        f"PartitionName=low Nodes=n[01-12] Default=YES PriorityTier=1 MaxTime=INFINITE{share}\n"
        f"PartitionName=mid Nodes=n[01-08] PriorityTier=5 MaxTime=INFINITE{share}\n"
        f"PartitionName=high Nodes=n[05-12] PriorityTier=10 MaxTime=INFINITE{share}\n"
    )


def _simulation(text: str, *, keep_victims: bool) -> tuple[Simulation, list[int]]:
    """A simulation whose preempt/partition_prio counts the victims it is asked about and,
    unless ``keep_victims``, does not promise fixed answers: then the core walks and sorts
    every candidate for every job, as it did before the pool."""
    config = conf.parse_text(text)
    plugins = Plugins.load(config)
    policy = plugins.manager.get_plugin("preempt/partition_prio")
    asked: list[int] = []

    class Counted(type(policy)):  # type: ignore[misc]
        @hookimpl
        def preempt_preemptable(self, preemptor: Job, preemptee: Job, cluster: Cluster) -> bool:
            asked.append(preemptee.job_id)
            return bool(super().preempt_preemptable(preemptor, preemptee, cluster))

        @hookimpl
        def preempt_victims_fixed(self, cluster: Cluster) -> bool:
            return keep_victims

    plugins.manager.unregister(policy)
    plugins.manager.register(Counted(policy.context), name="preempt/partition_prio")
    return Simulation(config, plugins), asked


def _history(simulation: Simulation, seed: int) -> list[tuple[object, ...]]:
    rng = random.Random(seed)
    controller = simulation.controller
    now = 0.0
    for _ in range(120):
        now += rng.choice((0, 0, 1, 5, 20, 60))
        simulation.run_until(now)
        partition = rng.choices(("low", "mid", "high"), (6, 2, 2))[0]
        controller.submit(
            JobRequest(
                name=partition,
                partitions=(partition,),
                min_nodes=rng.choice((1, 1, 2, 3)),
                ntasks=rng.choice((None, 2, 4)),
                time_limit=30,
                sim_runtime=float(rng.randint(30, 900)),
                requeue=True,
            )
        )
    simulation.run_until(now + 20_000)
    return [
        (job.job_id, job.state, job.start_time, job.end_time, job.restarts, tuple(job.nodes))
        for job in controller.cluster.jobs_in(*JobState)
    ]


@pytest.mark.parametrize("name", sorted(_CONFIGS))
@pytest.mark.parametrize("seed", [1, 2])
def test_kept_victims_give_the_same_decisions_as_walking_them_all(name: str, seed: int) -> None:
    text = _config_text(*_CONFIGS[name])
    kept, asked_kept = _simulation(text, keep_victims=True)
    walked, asked_walked = _simulation(text, keep_victims=False)
    assert kept.controller._victims is not None
    assert walked.controller._victims is None
    history = _history(kept, seed)
    assert history == _history(walked, seed)
    assert asked_walked, "the workload must make jobs look for victims"
    assert len(asked_kept) < len(asked_walked)
    if "suspend" not in name:  # requeued or cancelled victims show in the history
        assert any(restarts or state is JobState.PREEMPTED for _, state, *_, restarts, _ in history)
