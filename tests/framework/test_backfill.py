"""sched/backfill: lower-priority jobs start early when they delay no job ahead of them."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plurm import conf
from plurm.manager import Plugins
from plurm.testing.cluster import TestCluster

if TYPE_CHECKING:
    from plurm.conf.model import SlurmConfig
    from plurm.model.cluster import Cluster
    from plurm_select_linear import LinearSelect

FOUR_NODES = """
SchedulerType=sched/backfill
SelectType=select/linear
NodeName=n[1-4] CPUs=1 RealMemory=1000
PartitionName=p Nodes=n[1-4] Default=YES
"""

Make = Callable[..., TestCluster]


def queue(cluster: TestCluster) -> dict[int, str]:
    """job id -> state and nodes or reason, as squeue shows them."""
    out = cluster.command("squeue -h -o '%i %t %R'").stdout
    return {int(line.split()[0]): line.split(" ", 1)[1] for line in out.splitlines()}


def blocked_cluster(make_cluster: Make, conf_text: str = FOUR_NODES) -> TestCluster:
    """Job 1 holds n[1-2] for 10 minutes; job 2 needs all four nodes and must wait."""
    cluster = make_cluster(conf_text)
    cluster.command("sbatch -N2 -t 10 --wrap='sleep 600'")
    cluster.run_until(2)
    cluster.command("sbatch -N4 -t 10 --wrap='sleep 600'")
    return cluster


def test_a_short_job_starts_ahead_of_a_blocked_one_on_the_backfill_tick(make_cluster: Make) -> None:
    cluster = blocked_cluster(make_cluster)
    cluster.command("sbatch -N1 -t 5 --wrap='sleep 600'")
    cluster.run_until(29)
    # The main scheduler stops at the blocked job: the small one waits on Priority.
    assert queue(cluster) == {1: "R n[1-2]", 2: "PD (Resources)", 3: "PD (Priority)"}
    cluster.run_until(31)  # bf_interval=30
    assert queue(cluster) == {1: "R n[1-2]", 2: "PD (Resources)", 3: "R n3"}


def test_a_job_that_would_delay_the_blocked_one_waits(make_cluster: Make) -> None:
    cluster = blocked_cluster(make_cluster)
    cluster.command("sbatch -N1 -t 20 --wrap='sleep 600'")
    cluster.run_until(61)
    assert queue(cluster) == {1: "R n[1-2]", 2: "PD (Resources)", 3: "PD (Priority)"}
    # Once job 1 ends the blocked job runs first; the long one is next in line.
    cluster.command("scancel 1")
    cluster.run_until(63)  # job 1 is COMPLETING until its batch host is released (3.7 s)
    assert queue(cluster) == {1: "CG n1", 2: "PD (Resources)", 3: "PD (Priority)"}
    cluster.run_until(65)
    assert queue(cluster) == {2: "R n[1-4]", 3: "PD (Resources)"}


def test_reservations_end_at_the_window(make_cluster: Make) -> None:
    text = FOUR_NODES.replace("SelectType", "SchedulerParameters=bf_window=1\nSelectType")
    cluster = blocked_cluster(make_cluster, text)
    cluster.command("sbatch -N1 -t 20 --wrap='sleep 600'")
    cluster.run_until(31)
    # Job 2 could start only after ten minutes, beyond the one-minute window: no reservation.
    assert queue(cluster)[3] == "R n3"


def test_a_running_job_without_limit_blocks_no_reservation(make_cluster: Make) -> None:
    cluster = make_cluster(FOUR_NODES)
    cluster.command("sbatch -N2 --wrap='sleep 600'")  # UNLIMITED: its end is unknown
    cluster.run_until(2)
    cluster.command("sbatch -N4 -t 10 --wrap='sleep 600'")
    cluster.command("sbatch -N1 --wrap='sleep 600'")
    cluster.run_until(31)
    assert queue(cluster)[3] == "R n3"


def test_bf_max_job_test_bounds_the_jobs_looked_at(make_cluster: Make) -> None:
    text = FOUR_NODES.replace("SelectType", "SchedulerParameters=bf_max_job_test=1\nSelectType")
    cluster = blocked_cluster(make_cluster, text)
    cluster.command("sbatch -N1 -t 5 --wrap='sleep 600'")
    cluster.run_until(61)
    assert queue(cluster)[3] == "PD (Priority)"


def test_sched_builtin_does_not_backfill(make_cluster: Make) -> None:
    text = FOUR_NODES.replace("sched/backfill", "sched/builtin")
    cluster = blocked_cluster(make_cluster, text)
    cluster.command("sbatch -N1 -t 5 --wrap='sleep 600'")
    cluster.run_until(121)
    assert queue(cluster)[3] == "PD (Priority)"


def test_an_idle_cluster_schedules_no_backfill_pass(make_cluster: Make) -> None:
    cluster = make_cluster(FOUR_NODES)
    cluster.command("sbatch -N1 -t 1 --wrap='sleep 10'")
    cluster.run_until(20)
    assert cluster.simulation.clock.next_time() is None


def test_backfill_is_the_default_scheduler(tmp_path: Path) -> None:
    path = tmp_path / "slurm.conf"
    path.write_text("ClusterName=c\nSlurmctldHost=h\nNodeName=n1\nPartitionName=p Nodes=n1\n")
    plugins = Plugins.load(conf.load(path))
    assert [p.type_string for p in plugins.loaded if p.type_string.startswith("sched/")] == [
        "sched/backfill"
    ]


def test_a_job_sized_by_tasks_gets_its_reservation(make_cluster: Make) -> None:
    """-n without -N: the plan counts the nodes its CPUs need (4 one-CPU nodes here)."""
    cluster = make_cluster(FOUR_NODES)
    cluster.command("sbatch -n2 -t 10 --wrap='sleep 600'")
    cluster.run_until(2)
    cluster.command("sbatch -n4 -t 10 --wrap='sleep 600'")
    cluster.command("sbatch -n1 -t 20 --wrap='sleep 600'")
    cluster.run_until(61)
    assert queue(cluster) == {1: "R n[1-2]", 2: "PD (Resources)", 3: "PD (Priority)"}


def _linear_cluster(config: SlurmConfig, now: float) -> tuple[Cluster, LinearSelect]:
    """A cluster of ``config`` at ``now``, and select/linear set up on it."""
    from plurm.model.cluster import Cluster
    from plurm.registry import PluginContext
    from plurm_select_linear import LinearSelect

    cluster = Cluster.from_config(config)
    cluster.now = now
    select = LinearSelect(PluginContext(config, "select/linear"))
    select.select_node_init(cluster)
    return cluster, select


def _reference_backfill(jobs, view, cluster):  # type: ignore[no-untyped-def]
    """The backfill pass as first written (plan every job, rebuild everything): the
    optimized plugin must start exactly the same jobs on the same nodes."""
    import math

    from plurm.model.backfill import BackfillStart
    from plurm.model.job import JobState
    from plurm.model.select import SelectStatus

    params = cluster.config.scheduler_parameters
    now = view.now
    horizon = now + params.bf_window * 60
    resolution = max(1, params.bf_resolution)
    index = cluster.node_index
    names = cluster.config.node_names

    def rounded(when):  # type: ignore[no-untyped-def]
        if when is None:
            return math.inf
        return now + math.ceil(max(0.0, when - now) / resolution) * resolution

    busy_until: dict[int, float] = {}
    for job in cluster.jobs_in(JobState.RUNNING, JobState.SUSPENDED, JobState.COMPLETING):
        end = rounded(view.expected_end(job))
        for name in job.nodes:
            busy_until[index[name]] = max(busy_until.get(index[name], now), end)
    ends: dict[float, int] = {}
    for bit, end in busy_until.items():
        ends[end] = ends.get(end, 0) | (1 << bit)
    infinite = ends.pop(math.inf, 0)
    widest = max(cluster.node(name).cpus for name in names)
    # the plan, whole: segment i starts at plan_starts[i] with plan_free[i] free
    plan_starts = [now]
    busy = 0
    for mask in ends.values():
        busy |= mask
    plan_free = [((1 << len(names)) - 1) & ~infinite & ~busy]
    for when in sorted(ends):
        plan_starts.append(when)
        plan_free.append(plan_free[-1] | ends[when])

    def reserve(start, end, nodes):  # type: ignore[no-untyped-def]
        for when in (start, end):  # split the segments that contain the two times
            if when == math.inf:
                continue
            at = max(i for i, s in enumerate(plan_starts) if s <= when)
            if plan_starts[at] != when:
                plan_starts.insert(at + 1, when)
                plan_free.insert(at + 1, plan_free[at])
        for i, s in enumerate(plan_starts):
            if start <= s < end:
                plan_free[i] &= ~nodes

    starts = []
    limit = params.bf_job_part_count_reserve
    made: dict[str, int] = {}
    for job in jobs[: params.bf_max_job_test]:
        usable = 0
        for name in view.usable_nodes(job):
            usable |= 1 << index[name]
        duration = math.inf if job.time_limit is None else job.time_limit * 60
        least = max(job.request.min_nodes, math.ceil(job.request.cpus / widest))
        for first in range(len(plan_starts)):  # the openings, one by one
            start = plan_starts[first]
            if start >= horizon:
                break
            free = plan_free[first] & usable
            at = first + 1
            while (
                free.bit_count() >= least
                and at < len(plan_starts)
                and plan_starts[at] < start + duration
            ):
                free &= plan_free[at]
                at += 1
            if free.bit_count() < least:
                continue
            free_names = [names[bit] for bit in range(free.bit_length()) if free >> bit & 1]
            result = view.test_only(job, free_names)
            if result.status is not SelectStatus.SUCCESS:
                continue
            if start != now and limit:  # bf_job_part_count_reserve
                if made.get(job.partition, 0) >= limit:
                    break
                made[job.partition] = made.get(job.partition, 0) + 1
            chosen = 0
            for name in result.nodes:
                chosen |= 1 << index[name]
            reserve(start, start + duration, chosen)
            if start == now:
                starts.append(BackfillStart(job.job_id, result.nodes))
            break
    return starts


@pytest.mark.parametrize("shared", [False, True])
@pytest.mark.parametrize("reserve", [0, 1, 3])
def test_backfill_starts_the_jobs_the_plain_algorithm_starts(reserve: int, shared: bool) -> None:
    """Random clusters, running jobs (some sharing nodes with suspended ones) and queues:
    the pass with its shortcuts (bitmaps, the last job that could start now, hopeless
    sizes, skipped openings) starts the same jobs on the same nodes as the plain
    algorithm, with every job reserving or only the first ``bf_job_part_count_reserve`` of
    each partition.

    ``shared``: one plugin makes every pass, alternately on two configurations whose node
    tables put the nodes at other places (the second has one more node, a0, first in its
    table: the node table is in name order, so listing the lines in another order would not
    move them), with job ids and node tuples that recur: what it keeps from pass to pass
    (each job's sizes, each held job's nodes as a bitmap) must never outlive what it was
    worked out from."""

    from plurm.builtin.sched_backfill import BackfillScheduler
    from plurm.model.backfill import BackfillView
    from plurm.model.job import Job, JobRequest, JobState
    from plurm.model.select import SelectMode
    from plurm.registry import PluginContext

    text = (
        "ClusterName=c\nSlurmctldHost=h\nSelectType=select/linear\n"
        f"SchedulerParameters=bf_window=120,bf_resolution=60,bf_job_part_count_reserve={reserve}\n"
        "{nodes}PartitionName=p Nodes=ALL Default=YES\nPartitionName=q Nodes=a[1-12]\n"
    )
    base = conf.parse_text(text.format(nodes="NodeName=a[1-12] CPUs=1\nNodeName=b[1-8] CPUs=2\n"))
    reordered = conf.parse_text(
        text.format(nodes="NodeName=b[1-8] CPUs=2\nNodeName=a[0-12] CPUs=1\n")
    )
    assert reordered.node_names[1:] == base.node_names
    tuples: dict[frozenset[str], tuple[str, ...]] = {}  # node tuples, the same object again
    plugin = BackfillScheduler(PluginContext(base, "sched/backfill"))
    rng = random.Random(11)
    for case in range(300):
        config = reordered if shared and case % 2 else base
        now = 1000.0
        cluster, select = _linear_cluster(config, now)
        job_id = 0
        free = list(config.node_names)
        for _ in range(rng.randint(0, 12)):
            if not free:
                break
            job_id += 1
            held = rng.sample(free, min(len(free), rng.randint(1, 4)))
            free = [name for name in free if name not in held]
            running = Job(
                job_id, JobRequest(), 0.0, "p", time_limit=rng.choice([None, 10, 30, 60, 90])
            )
            running.nodes = cluster.in_table_order(held)
            if shared:
                running.nodes = tuples.setdefault(frozenset(held), running.nodes)
            running.start_time = now - rng.randint(0, 1500)
            cluster.add_job(running)
            cluster.set_state(running, JobState.RUNNING)
            select.select_job_begin(running, cluster)
            if rng.random() < 0.3:
                # a suspended job on some of those nodes (gang scheduling, or suspension by
                # preemption): each node is busy until the later of the two ends
                job_id += 1
                shared_nodes = rng.sample(held, rng.randint(1, len(held)))
                suspended = Job(
                    job_id, JobRequest(), 0.0, "p", time_limit=rng.choice([None, 10, 60, 120])
                )
                suspended.nodes = cluster.in_table_order(shared_nodes)
                suspended.start_time = now - rng.randint(0, 1500)
                cluster.add_job(suspended)
                cluster.set_state(suspended, JobState.SUSPENDED)
        pending = []
        for _ in range(rng.randint(1, 25)):
            job_id += 1
            size = rng.randint(1, 10)
            request = JobRequest(min_nodes=size, ntasks=rng.choice([None, size + 2]))
            job = Job(job_id, request, 0.0, rng.choice(["p", "p", "q"]))
            job.time_limit = rng.choice([None, 5, 20, 45, 90, 200])
            cluster.add_job(job)
            pending.append(job)

        def usable(job: Job, cluster: Cluster = cluster) -> Sequence[str]:
            return cluster.bitmap(cluster.mask_of(cluster.partition(job.partition).nodes))

        def test_only(job, nodes, cluster=cluster, select=select):  # type: ignore[no-untyped-def]
            return select.select_job_test(job, nodes, SelectMode.TEST_ONLY, (), cluster)

        def expected_end(job: Job, now: float = now) -> float | None:
            if job.time_limit is None or job.start_time is None:
                return None
            return max(now, job.start_time + job.time_limit * 60)

        view = BackfillView(now, usable, test_only, expected_end)
        if not shared:
            plugin = BackfillScheduler(PluginContext(config, "sched/backfill"))
        assert plugin.sched_backfill(pending, view, cluster) == _reference_backfill(
            pending, view, cluster
        )


PREEMPTING = """
SchedulerType=sched/backfill
SelectType=select/linear
PreemptType=preempt/partition_prio
PreemptMode=CANCEL
KillWait=5
NodeName=n[1-2] CPUs=1 RealMemory=1000
PartitionName=low Nodes=n[1-2] Default=YES PriorityTier=1
PartitionName=high Nodes=n[1-2] PriorityTier=2 PreemptMode=OFF
"""


def _preempting_setup(make_cluster: Make, text: str, limit: int = 2) -> TestCluster:
    """n1: a low job for 30 minutes; n2: a high job for 10 minutes. A high -N2 job waits
    (it plans to start at 1,801 when n1 frees; its partition is blocked in the main pass); a
    high -N1 job could preempt the low one."""
    cluster = make_cluster(text)
    cluster.command("sbatch -p low -t 30 --wrap='sleep 3000'")
    cluster.command("sbatch -p high -w n2 -t 10 --wrap='sleep 600'")
    cluster.run_until(2)
    cluster.command("sbatch -p high -N2 -t 10 --wrap='sleep 600'")
    cluster.command(f"sbatch -p high -N1 -t {limit} --wrap='sleep 100'")
    cluster.run_until(5)
    return cluster


def test_backfill_starts_a_job_by_preempting_when_the_main_pass_cannot(
    make_cluster: Make,
) -> None:
    cluster = _preempting_setup(make_cluster, PREEMPTING)
    # The main pass stops at job 3 (it needs n2, held by a job it may not preempt); job 4
    # waits behind it on Priority, though it could preempt job 1.
    assert queue(cluster) == {1: "R n1", 2: "R n2", 3: "PD (Resources)", 4: "PD (Priority)"}
    cluster.run_until(31)  # the backfill pass at 30: job 4 ends before job 3 could start
    assert queue(cluster)[1] == "CG n1"
    # Like the main scheduler, backfill only signals the victim; job 4 starts on a later
    # pass that reaches it (the next backfill pass: the main pass stops at job 3).
    cluster.run_until(59)
    assert queue(cluster) == {2: "R n2", 3: "PD (Resources)", 4: "PD (Priority)"}
    assert cluster.state(1).name == "PREEMPTED"
    cluster.run_until(61)
    assert queue(cluster) == {2: "R n2", 3: "PD (Resources)", 4: "R n1"}


def test_backfill_preempts_beside_a_partition_whose_jobs_cannot(make_cluster: Make) -> None:
    """The same, with a busy partition apart (n3) whose pending job has no candidate: the
    pass plans two components, asks the core which partitions' jobs may preempt at all,
    and must still find job 4, which may."""
    text = PREEMPTING.replace("NodeName=n[1-2]", "NodeName=n[1-3]") + (
        "PartitionName=other Nodes=n3 PriorityTier=1\n"
    )
    cluster = make_cluster(text)
    cluster.command("sbatch -p other -t 60 --wrap='sleep 3000'")
    cluster.command("sbatch -p other -t 60 --wrap='sleep 3000'")
    cluster.command("sbatch -p low -t 30 --wrap='sleep 3000'")
    cluster.command("sbatch -p high -w n2 -t 10 --wrap='sleep 600'")
    cluster.run_until(2)
    cluster.command("sbatch -p high -N2 -t 10 --wrap='sleep 600'")
    cluster.command("sbatch -p high -N1 -t 2 --wrap='sleep 100'")
    cluster.run_until(5)
    assert queue(cluster) == {
        1: "R n3",
        2: "PD (Resources)",
        3: "R n1",
        4: "R n2",
        5: "PD (Resources)",
        6: "PD (Priority)",
    }
    cluster.run_until(31)  # the backfill pass at 30: job 6 preempts job 3
    assert queue(cluster)[3] == "CG n1"
    cluster.run_until(61)
    assert queue(cluster)[6] == "R n1"
    assert queue(cluster)[2] == "PD (Resources)"


def test_backfill_preempts_in_two_components_each(make_cluster: Make) -> None:
    """The scene twice, on n1-n2 and on n3-n4: each component's last job that may preempt
    is found, not only the one the pass finds first (reading from the queue's end)."""
    text = (
        PREEMPTING.replace("NodeName=n[1-2]", "NodeName=n[1-4]")
        .replace("PartitionName=low", "PartitionName=low1")
        .replace("PartitionName=high", "PartitionName=high1")
        + "PartitionName=low2 Nodes=n[3-4] PriorityTier=1\n"
        + "PartitionName=high2 Nodes=n[3-4] PriorityTier=2 PreemptMode=OFF\n"
    )
    cluster = make_cluster(text)
    for low, high, node in (("low1", "high1", "n2"), ("low2", "high2", "n4")):
        cluster.command(f"sbatch -p {low} -t 30 --wrap='sleep 3000'")
        cluster.command(f"sbatch -p {high} -w {node} -t 10 --wrap='sleep 600'")
    cluster.run_until(2)
    for high in ("high1", "high2"):
        cluster.command(f"sbatch -p {high} -N2 -t 10 --wrap='sleep 600'")
        cluster.command(f"sbatch -p {high} -N1 -t 2 --wrap='sleep 100'")
    cluster.run_until(5)
    assert queue(cluster) == {
        1: "R n1",
        2: "R n2",
        3: "R n3",
        4: "R n4",
        5: "PD (Resources)",
        6: "PD (Priority)",
        7: "PD (Resources)",
        8: "PD (Priority)",
    }
    cluster.run_until(31)  # the backfill pass at 30: jobs 6 and 8 preempt jobs 1 and 3
    assert (queue(cluster)[1], queue(cluster)[3]) == ("CG n1", "CG n3")
    cluster.run_until(61)
    assert (queue(cluster)[6], queue(cluster)[8]) == ("R n1", "R n3")


def test_backfill_does_not_preempt_into_a_reservation(make_cluster: Make) -> None:
    """Job 4 would run past job 3's planned start (1,801): it must not preempt."""
    cluster = _preempting_setup(make_cluster, PREEMPTING, limit=40)
    cluster.run_until(100)
    assert queue(cluster)[1] == "R n1"
    assert queue(cluster)[4].startswith("PD")


_Outcome = dict[int, tuple[str, float | None, tuple[str, ...], int]]


def _random_replay(
    make_cluster: Make,
    text: str,
    seed: int,
    *,
    partitions: Sequence[str],
    widest: int,
    longest: int,
    every: int,
    span: int,
    until: float,
    sleeps: tuple[int, int] = (10, 400),
) -> _Outcome:
    """Up to three sbatch every ``every`` seconds for ``span`` seconds (random partition,
    -N, -t and run time, from ``seed``), then the cluster runs until ``until``: each job's
    state, start, nodes and restarts."""

    rng = random.Random(seed)
    cluster = make_cluster(text)
    for second in range(0, span, every):
        cluster.run_until(second)
        for _ in range(rng.randint(0, 3)):
            cluster.command(
                f"sbatch -p {rng.choice(partitions)} -N{rng.randint(1, widest)} "
                f"-t {rng.randint(1, longest)} --wrap='sleep {rng.randint(*sleeps)}'"
            )
    cluster.run_until(until)
    return {
        job_id: (job.state.name, job.start_time, job.nodes, job.restarts)
        for job_id, job in cluster.controller.cluster.jobs.items()
    }


def test_planning_only_up_to_the_last_job_that_may_preempt_changes_no_start(
    make_cluster: Make,
) -> None:
    """With preemption on, backfill plans the queue up to the last job that could start on
    free nodes or has any preemption candidate. Random workloads on three tiers replay the
    same, job for job, as with every job planned (may_preempt always True)."""
    from plurm.controller.controller import Controller

    text = (
        "SchedulerType=sched/backfill\nSelectType=select/linear\n"
        "PreemptType=preempt/partition_prio\nPreemptMode=REQUEUE\nJobRequeue=1\n"
        "SchedulerParameters=bf_interval=5\n"
        "NodeName=n[1-8] CPUs=1 RealMemory=1000\n"
        "PartitionName=low Nodes=n[1-8] Default=YES PriorityTier=1\n"
        "PartitionName=side Nodes=n[5-8] PriorityTier=1\n"
        "PartitionName=high Nodes=n[1-4] PriorityTier=2\n"
    )

    def replay(seed: int) -> _Outcome:
        return _random_replay(
            make_cluster,
            text,
            seed,
            partitions=["low", "side", "high", "high"],
            widest=4,
            longest=6,
            every=7,
            span=600,
            until=4000,
        )

    cut = {seed: replay(seed) for seed in range(8)}
    original = Controller._may_preempt
    try:
        Controller._may_preempt = lambda self, job: True  # type: ignore[method-assign]
        planned = {seed: replay(seed) for seed in range(8)}
    finally:
        Controller._may_preempt = original  # type: ignore[method-assign]
    assert cut == planned
    assert any(restarts for jobs in cut.values() for *_, restarts in jobs.values())


SIX_NODES = """
SchedulerType=sched/backfill
SelectType=select/linear
NodeName=n[1-6] CPUs=1 RealMemory=1000
PartitionName=p Nodes=n[1-6] Default=YES
"""


@pytest.mark.parametrize(
    ("reserve", "fourth", "fifth"),
    [(0, "PD (Priority)", "R n6"), (2, "PD (Priority)", "R n6"), (1, "R n6", "PD (Priority)")],
)
def test_bf_job_part_count_reserve_protects_only_the_first_blocked_jobs(
    make_cluster: Make, reserve: int, fourth: str, fifth: str
) -> None:
    """Job 1 holds n[1-3] for 10 minutes. Job 2 (-N5) plans to start when it ends, on
    n[1-5]; job 3 (-N6) plans to start after job 2. Job 4 (-N1, 30 minutes) would delay job 3
    on n6 but not job 2: it starts only when job 2 alone holds a reservation (EASY)."""
    text = SIX_NODES.replace(
        "SelectType", f"SchedulerParameters=bf_job_part_count_reserve={reserve}\nSelectType"
    )
    cluster = make_cluster(text)
    cluster.command("sbatch -N3 -t 10 --wrap='sleep 600'")
    cluster.run_until(2)
    cluster.command("sbatch -N5 -t 10 --wrap='sleep 600'")
    cluster.command("sbatch -N6 -t 10 --wrap='sleep 600'")
    cluster.command("sbatch -N1 -t 30 --wrap='sleep 1800'")
    cluster.run_until(31)
    expected = {1: "R n[1-3]", 2: "PD (Resources)", 3: "PD (Priority)", 4: fourth}
    assert queue(cluster) == expected
    # Job 5 (20 minutes) ends before job 3's planned start: it takes n6 if job 4 did not,
    # and would delay job 2 anywhere else
    cluster.command("sbatch -N1 -t 20 --wrap='sleep 1200'")
    cluster.run_until(61)
    assert queue(cluster)[5] == fifth


@pytest.mark.parametrize(
    ("option", "count", "notice"),
    [("=1", 1, None), ("=100000", 100000, None), ("=0", 0, None), ("=100001", 0, "100001"),
     ("=-1", 0, "-1"), ("=x", 0, None), ("=5x", 5, None), ("=010", 10, None),
     ("=0x10", 0, None), ("", 0, None)],
)  # fmt: skip
def test_bf_job_part_count_reserve_is_read_as_slurm_bounds_it(
    option: str, count: int, notice: str | None
) -> None:
    """slurmctld's backfill plugin reads the number with C's atoi (no digits: 0; it stops at
    the first other character; always decimal) and logs a value out of 0..100000, keeping 0;
    the bare word is not the option it looks for."""
    config = conf.parse_text(
        "ClusterName=c\nSlurmctldHost=h\nNodeName=n1 CPUs=1\nPartitionName=p Nodes=n1\n"
        f"SchedulerParameters=bf_interval=10,bf_job_part_count_reserve{option}\n"
    )
    assert config.scheduler_parameters.bf_job_part_count_reserve == count
    assert config.scheduler_parameters.bf_interval == 10
    said = [str(n) for n in config.notices if "bf_job_part_count_reserve" in str(n)]
    # at the SchedulerParameters line (5, column 1)
    message = f"slurm.conf:5:1: Invalid SchedulerParameters bf_job_part_count_reserve: {notice}"
    assert said == ([message] if notice else [])
    assert "bf_job_part_count_reserve" not in config.inactive.get("SchedulerParameters", "")


@pytest.mark.parametrize("preempt", [False, True])
def test_partitions_that_share_no_node_plan_apart_and_start_the_same_jobs(
    make_cluster: Make, monkeypatch: pytest.MonkeyPatch, preempt: bool
) -> None:
    """Backfill plans each connected component of the jobs' node sets only up to its own
    last job that could start (or preempt). Random workloads on partitions that overlap in
    a chain (a-b, b-c) and one apart (d) replay the same, job for job, as with all jobs in
    one component (planned up to the queue's last startable job)."""
    from plurm.builtin import sched_backfill

    text = (
        "SchedulerType=sched/backfill\nSelectType=select/linear\n"
        + (
            "PreemptType=preempt/partition_prio\nPreemptMode=REQUEUE\nJobRequeue=1\n"
            if preempt
            else ""
        )
        + "SchedulerParameters=bf_interval=5\n"
        "NodeName=n[1-12] CPUs=1 RealMemory=1000\n"
        "PartitionName=a Nodes=n[1-4] Default=YES PriorityTier=1\n"
        "PartitionName=b Nodes=n[4-6] PriorityTier=1\n"
        "PartitionName=c Nodes=n[6-8] PriorityTier=2\n"
        "PartitionName=d Nodes=n[9-12] PriorityTier=1\n"
    )

    def replay(seed: int) -> _Outcome:
        return _random_replay(
            make_cluster,
            text,
            seed,
            partitions="abcdd",
            widest=3,
            longest=8,
            every=5,
            span=900,
            until=8000,
            sleeps=(10, 450),
        )

    apart = {seed: replay(seed) for seed in range(6)}

    def one_component(masks: object) -> list[int]:
        union = 0
        for mask in masks:  # type: ignore[attr-defined]
            union |= mask
        return [union] if union else []

    monkeypatch.setattr(sched_backfill, "_components", one_component)
    together = {seed: replay(seed) for seed in range(6)}
    assert apart == together
    # backfill did start jobs out of order: some job started before one queued ahead of it
    assert any(
        later[1] is not None and (earlier[1] is None or later[1] < earlier[1])
        for jobs in apart.values()
        for job_id, earlier in jobs.items()
        for other, later in jobs.items()
        if other > job_id
    )


def test_components_join_node_sets_that_share_a_node_even_through_others() -> None:
    from plurm.builtin.sched_backfill import _components

    assert sorted(_components([0b0011, 0b1100, 0b0110, 0b1_0000, 0])) == [0b1111, 0b1_0000]
    assert sorted(_components([0b1, 0b100, 0b10, 0b110])) == [0b1, 0b110]
    assert sorted(_components([0b1, 0b100, 0b11, 0b110])) == [0b111]


def test_jobs_of_one_partition_plan_together_even_on_node_sets_apart(make_cluster: Make) -> None:
    """bf_job_part_count_reserve counts a partition's reservations: jobs of one partition
    whose node sets -x keeps apart still plan as one group. Job 3 reserves n[1-2] (the one
    reservation allowed), so job 4 may not reserve n[3-4] and job 5 starts on n4 now; were
    job 3 left unplanned (its node set has nothing free now), job 4's reservation at 120
    would keep job 5 out."""
    cluster = make_cluster(
        "SchedulerType=sched/backfill\nSelectType=select/linear\n"
        "SchedulerParameters=bf_job_part_count_reserve=1,bf_interval=30\n"
        "NodeName=n[1-4] CPUs=1 RealMemory=1000\nPartitionName=p Nodes=ALL Default=YES\n"
    )
    cluster.command("sbatch -N2 -w n[1-2] -t 2 --wrap='sleep 1000'")
    cluster.command("sbatch -N1 -w n3 -t 2 --wrap='sleep 1000'")
    cluster.run_until(2)
    cluster.command("sbatch -N2 -x n[3-4] -t 1 --wrap='sleep 10'")
    cluster.command("sbatch -N2 -x n[1-2] -t 1 --wrap='sleep 10'")
    fifth = int(cluster.command("sbatch -N1 -x n[1-2] -t 10 --wrap='sleep 10'").stdout.split()[-1])
    cluster.run_until(35)  # the backfill pass at 30
    assert queue(cluster)[fifth] == "R n4"


def test_a_job_passed_over_for_too_few_free_nodes_still_builds_its_view_in_turn() -> None:
    """A job that may only start now, with too few of its nodes free now, is passed over
    without a search; the pass must still build the view of its node set at its turn, as
    the search did. Here job 13 (past p's two reservations, four of w, x, y, a1 wanted)
    builds the view of {w, x, y, a1}; the reservations of jobs 14 and 15 then split it at
    1060 and 1120. Job 16 (-N1-2 -n8 on those nodes) is refused {w, x, y} by select/linear
    (best fit takes x and y first, then reaches its two nodes with 5 CPUs) and takes the
    next opening, {w, y} at 1060: so job 17, which may use only w, cannot start now. Built
    only at job 16's turn, the view is merged, lacks the 1060 split, and job 16 reserves
    {y, a1} at 1120, which lets job 17 start on w (found by review; no simulation had
    shown it)."""
    from plurm.builtin.sched_backfill import BackfillScheduler
    from plurm.model.backfill import BackfillView
    from plurm.model.job import Job, JobRequest, JobState
    from plurm.model.select import SelectMode
    from plurm.registry import PluginContext

    config = conf.parse_text(
        "ClusterName=c\nSlurmctldHost=h\nSelectType=select/linear\n"
        "SchedulerParameters=bf_window=120,bf_resolution=60,bf_job_part_count_reserve=2\n"
        "NodeName=w CPUs=4\nNodeName=g CPUs=1\nNodeName=x CPUs=1\nNodeName=y CPUs=4\n"
        "NodeName=a1 CPUs=4\nNodeName=z[1-2] CPUs=1\n"
        "PartitionName=p Nodes=ALL Default=YES\nPartitionName=q Nodes=ALL\n"
        "PartitionName=r Nodes=ALL\n"
    )
    now = 1000.0
    cluster, select = _linear_cluster(config, now)
    ends: dict[int, float] = {}
    for job_id, nodes, end in (
        (1, ("a1",), 1060.0),
        (2, ("g",), 1120.0),
        (3, ("z1", "z2"), 1500.0),
    ):
        running = Job(job_id, JobRequest(), 0.0, "p", time_limit=1000)
        running.nodes = nodes
        running.start_time = 0.0
        cluster.add_job(running)
        cluster.set_state(running, JobState.RUNNING)
        select.select_job_begin(running, cluster)
        ends[job_id] = end
    every = set(config.node_names)
    pending = []
    for job_id, partition, minutes, only, size in (
        (11, "p", 5, {"z1", "z2"}, {}),  # reserves a z node at 1500 (p: 1)
        (12, "p", 5, {"z1", "z2"}, {}),  # the other one (p: 2, its limit)
        (13, "p", 5, {"w", "x", "y", "a1"}, {"min_nodes": 4}),  # now only, too few free
        (14, "r", 1, {"a1"}, {}),  # reserves a1 from 1060 to 1120
        (15, "r", 10, {"x", "g"}, {"min_nodes": 2}),  # reserves x and g from 1120
        (16, "q", 2, {"w", "x", "y", "a1"}, {"min_nodes": 1, "max_nodes": 2, "ntasks": 8}),
        (17, "q", 2, {"w"}, {}),  # w is free now
    ):
        exclude = tuple(sorted(every - only))
        job = Job(job_id, JobRequest(exclude=exclude, **size), 0.0, partition, time_limit=minutes)
        cluster.add_job(job)
        pending.append(job)

    def usable(job: Job) -> Sequence[str]:
        part = cluster.mask_of(cluster.partition(job.partition).nodes)
        return cluster.bitmap(part & ~cluster.mask_of(job.request.exclude))

    def test_only(job, nodes):  # type: ignore[no-untyped-def]
        return select.select_job_test(job, nodes, SelectMode.TEST_ONLY, (), cluster)

    view = BackfillView(now, usable, test_only, lambda job: ends.get(job.job_id))
    plugin = BackfillScheduler(PluginContext(config, "sched/backfill"))
    assert plugin.sched_backfill(pending, view, cluster) == []
    assert plugin.sched_backfill(pending, view, cluster) == _reference_backfill(
        pending, view, cluster
    )


_NOW = 1000.0
_profile_plans = st.fixed_dictionaries(
    {
        # running jobs' ends (whole minutes after now) with the nodes they free then
        "ends": st.dictionaries(st.integers(0, 8), st.integers(1, 255), max_size=5),
        # (start minute, minutes, nodes) of the reservations a pass makes, in turn
        "reservations": st.lists(
            st.tuples(st.integers(0, 8), st.integers(1, 10), st.integers(1, 255)), max_size=6
        ),
        # (least, seconds) sizes searched for
        "sizes": st.lists(
            st.tuples(st.integers(1, 8), st.integers(1, 700)), min_size=1, max_size=6
        ),
        "usable": st.integers(1, 255),
        "view_first": st.booleans(),  # the view built before the reservations, or after
    }
)


@given(_profile_plans)
@settings(max_examples=300, deadline=None)
def test_a_size_with_no_opening_finds_none_when_larger_or_after_more_reservations(
    plan: dict,  # type: ignore[type-arg]
) -> None:
    """What the pass's hopeless and now-only memos rely on: a (least, duration) that finds
    no opening, within the window or now only, finds none with more nodes or for longer,
    and none after any further reservation (they only take nodes away)."""
    import math

    from plurm.builtin.backfill_profile import PyProfile as _Profile

    ends = {_NOW + 60 * minute: nodes for minute, nodes in plan["ends"].items()}
    profile = _Profile(_NOW, 255, ends)
    usable = plan["usable"]
    if plan["view_first"]:
        profile.view(usable)
    horizons = (_NOW + 600, math.nextafter(_NOW, math.inf))  # the window, now only
    closed: list[tuple[float, int, float]] = []  # (horizon, least, duration) with none
    for step in range(len(plan["reservations"]) + 1):
        for horizon in horizons:
            for least, duration in plan["sizes"]:
                found = next(profile.openings(usable, least, duration, horizon), None)
                if found is None:
                    closed.append((horizon, least, duration))
                else:
                    assert not any(
                        h >= horizon and n <= least and d <= duration for h, n, d in closed
                    ), (step, horizon, least, duration, found)
        if step < len(plan["reservations"]):
            start, minutes, nodes = plan["reservations"][step]
            profile.reserve(_NOW + 60 * start, _NOW + 60 * (start + minutes), nodes)


def test_a_job_moved_to_another_partition_plans_on_that_partition_s_nodes() -> None:
    """The pass keeps each job's sizes and usable-nodes key from pass to pass while its
    request and time limit are the same objects and values: a job moved to another
    partition (same request) must be planned on the new partition's nodes at once, even
    behind a job still in the old one (whose usable nodes the pass has already asked)."""
    from plurm.builtin.sched_backfill import BackfillScheduler
    from plurm.model.backfill import BackfillStart, BackfillView
    from plurm.model.job import Job, JobRequest, JobState
    from plurm.model.select import SelectMode
    from plurm.registry import PluginContext

    config = conf.parse_text(
        "ClusterName=c\nSlurmctldHost=h\nSelectType=select/linear\n"
        "NodeName=a[1-2] CPUs=1\nNodeName=b[1-2] CPUs=1\n"
        "PartitionName=p Nodes=a[1-2] Default=YES\nPartitionName=q Nodes=b[1-2]\n"
    )
    now = 1000.0
    cluster, select = _linear_cluster(config, now)
    running = Job(1, JobRequest(min_nodes=2), 0.0, "p", time_limit=60)
    running.nodes = ("a1", "a2")
    running.start_time = 0.0
    cluster.add_job(running)
    cluster.set_state(running, JobState.RUNNING)
    select.select_job_begin(running, cluster)
    ahead = Job(2, JobRequest(min_nodes=2), 0.0, "p", time_limit=10)  # stays in p
    waiting = Job(3, JobRequest(min_nodes=2), 0.0, "p", time_limit=10)
    cluster.add_job(ahead)
    cluster.add_job(waiting)

    def usable(job: Job) -> Sequence[str]:
        return cluster.bitmap(cluster.mask_of(cluster.partition(job.partition).nodes))

    def test_only(job, nodes):  # type: ignore[no-untyped-def]
        return select.select_job_test(job, nodes, SelectMode.TEST_ONLY, (), cluster)

    view = BackfillView(now, usable, test_only, lambda job: 3600.0)
    plugin = BackfillScheduler(PluginContext(config, "sched/backfill"))
    assert plugin.sched_backfill([ahead, waiting], view, cluster) == []
    waiting.partition = "q"
    assert plugin.sched_backfill([ahead, waiting], view, cluster) == [
        BackfillStart(3, ("b1", "b2"))
    ]


HELD_ENDS = """
SchedulerType=sched/backfill
SelectType=select/linear
PreemptType=preempt/partition_prio
PreemptMode=SUSPEND,GANG
SchedulerTimeSlice=60
JobRequeue=1
KillWait=5
NodeName=n[1-6] CPUs=1 RealMemory=1000
PartitionName=low Nodes=n[1-3] Default=YES PriorityTier=1 PreemptMode=REQUEUE
PartitionName=mid Nodes=n[4-6] PriorityTier=1 PreemptMode=SUSPEND OverSubscribe=FORCE:1
PartitionName=high Nodes=n[1-6] PriorityTier=2 PreemptMode=OFF
"""


def test_the_held_ends_the_core_keeps_are_the_expected_ends(
    make_cluster: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``BackfillView.held_ends`` gives every job holding nodes, with ``expected_end`` (an
    end before now standing for now) and the bitmap of its held nodes, at every pass of a
    seeded session in which jobs start, end early, overrun their limits, are requeued,
    suspended and resumed, and complete. The core keeps running jobs' ends and bitmaps as
    they start and resume, so a path that forgot to would show here."""
    from plurm.controller import passes as passes_module
    from plurm.model.backfill import BackfillView
    from plurm.model.job import JobState

    held_states = (JobState.RUNNING, JobState.SUSPENDED, JobState.COMPLETING)
    seen: dict[JobState, int] = dict.fromkeys(held_states, 0)
    passes = 0

    def checked(**fields: object) -> BackfillView:
        nonlocal passes
        view = BackfillView(**fields)  # type: ignore[arg-type]
        assert view.held_ends is not None
        now = view.now
        model = cluster.controller.cluster
        given = {}
        for job, when, mask in view.held_ends():
            assert job.job_id not in given
            given[job.job_id] = (now if when is not None and when < now else when, mask)
        expected = {}
        for state in held_states:
            for job in model.jobs_unordered(state):
                expected[job.job_id] = (view.expected_end(job), model.mask_of(job.held_nodes))
                seen[state] += 1
        assert given == expected
        passes += 1
        return view

    monkeypatch.setattr(passes_module, "BackfillView", checked)
    cluster = make_cluster(HELD_ENDS)
    rng = random.Random(7)
    for second in range(0, 4 * 3600, 45):
        cluster.run_until(second)
        partition = rng.choice(["low", "low", "mid", "mid", "high"])
        nodes = rng.randint(1, 3)
        limit = rng.randint(1, 20)
        # some run past their limit (TIMEOUT), the rest end early
        run = rng.randint(30, limit * 60 + 120)
        cluster.command(f"sbatch -p {partition} -N{nodes} -t {limit} --wrap='sleep {run}'")
    cluster.run_until(6 * 3600)
    assert passes > 100
    assert all(count > 0 for count in seen.values()), seen
    model = cluster.controller.cluster
    jobs = [model.job(job_id) for job_id in range(1, 4 * 80 + 1)]
    assert any(job.restarts for job in jobs)  # requeued
    assert any(job.state is JobState.TIMEOUT for job in jobs)


def test_every_request_field_is_classed_for_the_sharing_memo() -> None:
    """sched/backfill skips a plain job's test on nodes as they are when a plain job of the
    same kind, no bigger, found no room there: every JobRequest field must be one _plain
    reads, one that sizes the job, or one that does not bear on placement."""
    import attrs

    from plurm.builtin import sched_backfill
    from plurm.model.job import JobRequest

    classed = (
        sched_backfill._PLAIN_TERMS | sched_backfill._SIZE_TERMS | sched_backfill._NOT_PLACEMENT
    )
    assert {field.name for field in attrs.fields(JobRequest)} == classed


_SIZE = st.tuples(st.integers(1, 15), st.integers(1, 4), st.integers(1, 8))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(_SIZE, max_size=8), _SIZE)
def test_refused_sizes_kept_short_cover_what_every_refusal_covers(
    refusals: list[tuple[int, int, int]], asked: tuple[int, int, int]
) -> None:
    """The memo of starts refused beside running jobs (node set, node count, CPU count)
    drops the sizes a new refusal covers: a request is passed over exactly when some refusal
    so far was on at least its nodes and asked no more nodes and CPUs than it does."""
    from plurm.builtin.sched_backfill import _covered_on, _noted_on

    kept: list[tuple[int, int, int]] | None = None
    for nodes, least, cpus in refusals:
        kept = _noted_on(kept, nodes, least, cpus)
    nodes, least, cpus = asked
    every = any(n <= least and c <= cpus and nodes & ~on == 0 for on, n, c in refusals)
    assert _covered_on(kept, nodes, least, cpus) is every
    assert len(kept or ()) <= len(refusals)


def test_a_job_starts_beside_running_jobs_only_if_it_ends_before_a_reservation(
    make_cluster: Make,
) -> None:
    """The first pending job reserves both nodes from the end of the job on n1 (601, kept
    at 630 by the pass at 30). Of two one-core jobs that could run beside that job now, the
    one whose run ends before the reservation (9 minutes) starts; the one that would still
    run then (11 minutes) waits."""
    cluster = make_cluster(
        "SelectType=select/cons_res\nSelectTypeParameters=CR_Core\n"
        "SchedulerType=sched/backfill\nSchedulerParameters=bf_interval=30\n"
        "NodeName=n[1-2] CPUs=4 RealMemory=1000\nPartitionName=p Nodes=ALL Default=YES\n"
    )
    cluster.sbatch("-n1 -w n1 -t 10", "sleep 1000")
    cluster.sbatch("-N1 -n4 -w n2 -t 5", "sleep 1000")
    cluster.run_until(2)
    first = cluster.sbatch("-N2 -n8 -t 5", "sleep 100")
    short = cluster.sbatch("-n1 -t 9", "sleep 100")
    long = cluster.sbatch("-n1 -t 11", "sleep 100")
    cluster.run_until(31)
    states = cluster.states()
    assert (states[first], states[short], states[long]) == ("PENDING", "RUNNING", "PENDING")
    assert cluster.job(short).start_time == 30.0 and cluster.job(short).nodes == ("n1",)
