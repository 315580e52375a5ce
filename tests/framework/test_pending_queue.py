"""The pending queue kept in key order between passes (plurm.controller.queue) reads exactly
as the sched plugin's own order of the eligible pending jobs, whatever happened since."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plurm.builtin.sched_builtin import BuiltinScheduler
from plurm.controller.queue import PendingByPartition, PendingQueue, ReadAsNeeded
from plurm.manager import Plugins
from plurm.model.job import Job, JobRequest, JobState, PendingReason, never_preempts
from plurm.registry import PluginContext
from plurm.testing import TestCluster
from tests.framework.test_queue_order import CLUSTER, CONFIG, ORDER  # the same cluster

PARTITIONS = ["low", "also_low", "high"]

# One step: (what, job index, partition, priority, time); few values, so that jobs tie often.
_STEP = st.tuples(
    st.sampled_from(["submit", "start", "requeue", "move", "wait"]),
    st.integers(min_value=0, max_value=30),
    st.sampled_from(PARTITIONS),
    st.integers(min_value=-2, max_value=2),
    st.sampled_from([0.0, 1.0, 2.5, 4.0]),
)


def _apply(
    step: tuple[str, int, str, int, float], jobs: list[Job], now: float
) -> tuple[Job | None, float]:
    """One step on ``jobs`` at ``now``: the job it changed (None: time passed), and the
    time after it."""
    what, index, partition, priority, when = step
    if what == "submit" or not jobs:
        job = Job(len(jobs) + 1, JobRequest(), now, partition)
        job.priority = priority
        job.eligible_time = now + when  # not eligible yet when > 0
        if when:
            job.reason = PendingReason.BEGIN_TIME
        jobs.append(job)
        return job, now
    job = jobs[index % len(jobs)]
    if what == "start":  # leaves the queue, or comes back to it
        job.state = JobState.RUNNING if job.state is JobState.PENDING else JobState.PENDING
    elif what == "requeue":  # back, eligible later (a requeued job's BeginTime)
        job.state = JobState.PENDING
        job.eligible_time = now + when
        job.reason = PendingReason.BEGIN_TIME if when else job.reason
    elif what == "move":  # a job of several partitions waits in another one now
        job.partition = partition
    else:
        return None, now + when
    return job, now


@settings(max_examples=300)
@given(st.lists(_STEP, max_size=60))
def test_the_kept_queue_reads_as_the_plugins_order(
    steps: list[tuple[str, int, str, int, float]],
) -> None:
    key = ORDER.sched_queue_key(never_preempts, CLUSTER)
    assert key is not None
    queue = PendingQueue()
    queue.reset(key, ())
    jobs: list[Job] = []
    now = 0.0
    for step in steps:
        job, now = _apply(step, jobs, now)
        if job is not None:
            queue.note(job)  # as the controller notes every change of state or partition
        eligible = [j for j in jobs if j.state is JobState.PENDING and j.eligible_time <= now]
        read = list(queue.ordered(now))
        assert read == ORDER.sched_queue_order(eligible, never_preempts, CLUSTER)
        assert set(queue.partitions()) == {j.partition for j in read}
        # each partition's own list (the queue itself while one partition has jobs)
        assert list(queue.ordered_except(())) == read
        for partition in PARTITIONS:
            others = set(PARTITIONS) - {partition}
            assert list(queue.ordered_except(others)) == [
                j for j in read if j.partition == partition
            ]
        # a job read as it became eligible has its BeginTime reason cleared, as _queue does
        assert all(j.reason is not PendingReason.BEGIN_TIME for j in read)


def test_no_key_keeps_nothing() -> None:
    queue = PendingQueue()
    queue.reset(None, [Job(1, JobRequest(), 0.0, "low")])
    assert not queue.kept
    with pytest.raises(RuntimeError):
        queue.ordered(0.0)


def test_sched_builtin_gives_no_key_when_a_job_may_go_ahead_of_its_own_tier() -> None:
    def preempts(first: Job, second: Job) -> bool:
        return first.priority > second.priority

    assert ORDER.sched_queue_key(preempts, CLUSTER) is None


CONF = """
SchedulerType=sched/backfill
SelectType=select/linear
PreemptType=preempt/partition_prio
PreemptMode=REQUEUE
JobRequeue=1
SchedulerParameters=bf_interval=5,default_queue_depth=3
NodeName=n[1-8] CPUs=1 RealMemory=1000
PartitionName=low Nodes=n[1-8] Default=YES PriorityTier=1
PartitionName=side Nodes=n[5-8] PriorityTier=1
PartitionName=high Nodes=n[1-4] PriorityTier=2
"""


_Outcome = dict[int, tuple[str, str, float | None, tuple[str, ...], int]]


def _outcome(cluster: TestCluster) -> _Outcome:
    return {
        job_id: (job.state.name, job.reason.value, job.start_time, job.nodes, job.restarts)
        for job_id, job in cluster.controller.cluster.jobs.items()
    }


def _replay(make_cluster, seed: int, steps: list[_Outcome] | None = None) -> _Outcome:  # type: ignore[no-untyped-def]
    """Random sbatch (some with -w), scancel, --begin, jobs of several partitions, REQUEUE
    preemptions, PriorityTier/State updates and nodes down and back; every job's state,
    reason, start, nodes and restarts (after each step too, into ``steps``)."""
    rng = random.Random(seed)
    cluster: TestCluster = make_cluster(CONF)
    for second in range(0, 900, 7):
        cluster.run_until(second)
        if steps is not None:
            steps.append(_outcome(cluster))
        for _ in range(rng.randint(0, 3)):
            partitions = rng.choice(["low", "side", "high", "high", "low,side", "side,high"])
            begin = f" --begin=now+{rng.randint(1, 90)}" if rng.random() < 0.1 else ""
            nice = f" --nice={rng.randint(-5, 5)}" if rng.random() < 0.2 else ""
            pinned = f" -w n{rng.randint(1, 8)}" if rng.random() < 0.1 else ""
            cluster.command(
                f"sbatch -p {partitions} -N{rng.randint(1, 4)} -t {rng.randint(1, 6)}{begin}"
                f"{nice}{pinned} --wrap='sleep {rng.randint(10, 400)}'"
            )  # (-w on a node outside the partition is refused: an error, not a job)
        if rng.random() < 0.05:
            state = rng.choice(["DOWN Reason=test", "RESUME"])
            cluster.command(f"scontrol update NodeName=n{rng.randint(1, 8)} State={state}")
        if rng.random() < 0.1:
            cluster.command(f"scancel {rng.randint(1, 40)}")
        if rng.random() < 0.05:
            tier = rng.randint(1, 3)
            cluster.command(f"scontrol update PartitionName=side PriorityTier={tier}")
        if rng.random() < 0.03:
            state = rng.choice(["DOWN", "UP"])
            cluster.command(f"scontrol update PartitionName=low State={state}")
    cluster.command("scontrol update PartitionName=low State=UP")
    cluster.command("scontrol update NodeName=n[1-8] State=RESUME")
    cluster.run_until(6000)
    return _outcome(cluster)


def test_a_replay_with_the_kept_queue_is_the_replay_with_the_queue_ordered_each_pass(
    make_cluster, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """The controller with sched/builtin's key, and with no key (sched_queue_order each
    pass, the path a plugin without a key takes), replays random workloads the same."""
    kept_steps: list[_Outcome] = []
    kept = {seed: _replay(make_cluster, seed, kept_steps) for seed in range(6)}
    monkeypatch.setattr(Plugins, "sched_queue_key", lambda self, preempts, cluster: None)
    ordered_steps: list[_Outcome] = []
    ordered = {seed: _replay(make_cluster, seed, ordered_steps) for seed in range(6)}
    assert kept == ordered
    # step by step too: the whole-queue pass over the kept queue skips the jobs of blocked
    # partitions and gives their reasons after it (Controller._settle_skipped)
    assert len(kept_steps) == len(ordered_steps)
    for kept_step, ordered_step in zip(kept_steps, ordered_steps, strict=True):
        assert kept_step == ordered_step
    # the workloads did exercise requeues, cancels and jobs that waited
    assert any(restarts for jobs in kept.values() for *_, restarts in jobs.values())
    assert any(s == "CANCELLED" for jobs in kept.values() for s, *_ in jobs.values())


_READ = st.one_of(
    st.integers(min_value=-12, max_value=12),
    st.builds(
        slice,
        st.none() | st.integers(-12, 12),
        st.none() | st.integers(-12, 12),
        st.none() | st.sampled_from([1, 2, -1]),
    ),
)


@given(st.lists(st.integers(), max_size=10), st.lists(_READ, max_size=6))
def test_a_sequence_read_as_needed_answers_as_the_list(
    items: list[int], reads: list[object]
) -> None:
    lazy = ReadAsNeeded(iter(items))
    for read in reads:
        if isinstance(read, int) and not -len(items) <= read < len(items):
            with pytest.raises(IndexError):
                lazy[read]
        else:
            assert lazy[read] == items[read]  # type: ignore[index]
    assert list(lazy) == items
    assert len(lazy) == len(items)


def test_a_sequence_read_as_needed_reads_no_further_than_asked() -> None:
    consumed: list[int] = []

    def numbers() -> Iterator[int]:
        for number in range(1000):
            consumed.append(number)
            yield number

    lazy = ReadAsNeeded(numbers())
    assert lazy[:3] == [0, 1, 2]
    assert lazy[4] == 4
    assert consumed == [0, 1, 2, 3, 4]
    assert next(iter(lazy)) == 0 and len(consumed) == 5
    assert len(lazy) == 1000


def test_a_job_past_what_backfill_reads_still_shows_its_required_node_down(
    make_cluster,  # type: ignore[no-untyped-def]
) -> None:
    """Backfill reads only bf_max_job_test jobs of the queue; a job deeper in it that
    requires a node now DOWN shows ReqNodeNotAvail after the pass all the same, as it did
    when the core filtered the whole queue for the plugin."""
    cluster: TestCluster = make_cluster(
        "SchedulerType=sched/backfill\nSelectType=select/linear\nSchedulerParameters="
        "bf_max_job_test=2,default_queue_depth=1,bf_interval=30,sched_interval=600\n"
        "NodeName=n[1-5] CPUs=1 RealMemory=1000\nPartitionName=p Nodes=ALL Default=YES\n"
    )
    cluster.command("sbatch -N4 -w n[1-4] --wrap='sleep 10000'")
    cluster.run_until(2)
    for _ in range(5):
        cluster.command("sbatch -N3 --wrap='sleep 100'")
    pinned = int(cluster.command("sbatch -N2 -w n5 --wrap='sleep 100'").stdout.split()[-1])
    cluster.run_until(40)  # event passes and a backfill pass
    assert cluster.job(pinned).reason.value == "Priority"
    cluster.command("scontrol update NodeName=n5 State=DOWN Reason=test")
    cluster.run_until(59)  # the event pass (depth 1) does not reach it
    assert cluster.job(pinned).reason.value == "Priority"
    cluster.run_until(62)  # the backfill pass at 60 reads two jobs, then notes it
    assert cluster.job(pinned).reason.value == "ReqNodeNotAvail"


@settings(max_examples=200)
@given(st.lists(_STEP, max_size=60))
def test_a_higher_priority_job_waits_as_a_look_at_every_pending_job_tells(
    steps: list[tuple[str, int, str, int, float]],
) -> None:
    """PendingByPartition answers whether an eligible job of higher priority waits in a
    job's partition as the walk over every pending job it replaced did."""
    index = PendingByPartition()
    jobs: list[Job] = []
    now = 0.0
    for step in steps:
        job, now = _apply(step, jobs, now)
        if job is not None:
            index.update(job)
        for asked in jobs:
            expected = any(
                other.partition == asked.partition
                and other.priority > asked.priority
                and other.eligible_time <= now
                for other in jobs
                if other.state is JobState.PENDING and other is not asked
            )
            assert index.higher_waits(asked, now) is expected


def test_a_finished_job_requeued_by_scontrol_is_looked_at_as_one_requiring_nodes(
    make_cluster,  # type: ignore[no-untyped-def]
) -> None:
    """A -w job that finished and was requeued (scontrol requeue) waits again for its
    required node: past what backfill reads, it shows ReqNodeNotAvail after a backfill pass
    once its node is drained, as a job submitted so does."""
    cluster: TestCluster = make_cluster(
        "SchedulerType=sched/backfill\nSelectType=select/linear\nSchedulerParameters="
        "bf_max_job_test=2,default_queue_depth=1,bf_interval=30,sched_interval=900\n"
        "NodeName=n[1-5] CPUs=1 RealMemory=1000\nPartitionName=p Nodes=ALL Default=YES\n"
    )
    cluster.command("sbatch -N4 -w n[1-4] --wrap='sleep 10000'")
    pinned = int(cluster.command("sbatch -w n5 --nice=100 --wrap='sleep 1'").stdout.split()[-1])
    cluster.run_until(5)
    assert cluster.state(pinned).name == "COMPLETED"
    for _ in range(5):
        cluster.command("sbatch -N3 --wrap='sleep 100'")
    cluster.run_until(40)  # a backfill pass at 30 while it is finished
    cluster.command(f"scontrol requeue {pinned}")
    cluster.command("scontrol update NodeName=n5 State=DRAIN Reason=test")
    cluster.run_until(170)  # eligible again from 161
    cluster.command("sbatch -N3 --wrap='sleep 100'")  # an event: a pass, then backfill at 180
    cluster.run_until(185)
    assert cluster.state(pinned).name == "PENDING"
    assert cluster.job(pinned).reason.value == "ReqNodeNotAvail"


def test_a_sequence_read_as_needed_slices_backwards_as_the_list() -> None:
    items = list(range(10))
    for read in (slice(8, 2, -1), slice(None, 3, -1), slice(5, None, -2), slice(-3, None)):
        assert ReadAsNeeded(iter(items))[read] == items[read]


def test_a_subclass_with_its_own_order_gets_no_key_from_sched_builtin() -> None:
    """A sched plugin that subclasses sched/builtin and orders the queue its own way must
    not have the core keep the queue by builtin's key (which is not its order)."""

    class Reversed(BuiltinScheduler):
        def sched_queue_order(self, jobs, preempts, cluster):  # type: ignore[no-untyped-def]
            return list(reversed(super().sched_queue_order(jobs, preempts, cluster)))

    plugin = Reversed(PluginContext(CONFIG, "sched/reversed"))
    assert plugin.sched_queue_key(never_preempts, CLUSTER) is None
    assert ORDER.sched_queue_key(never_preempts, CLUSTER) is not None
