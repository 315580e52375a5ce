"""sched/gang: shadows suspend lower tiers; time slices rotate shared resources."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from plurm import conf
from plurm.manager import Plugins
from plurm.model.job import JobRequest, JobState
from plurm.sim.session import Simulation
from plurm.testing import JobBuilder, TestCluster
from plurm_sched_gang import GangScheduler, _Changes, _Partition

Make = Callable[..., TestCluster]
Job = Callable[[], JobBuilder]

TIERS = (
    "PreemptType=preempt/partition_prio\nPreemptMode=SUSPEND,GANG\n"
    "NodeName=n[1-3] CPUs=1\n"
    "PartitionName=DEFAULT Nodes=ALL OverSubscribe=FORCE:1\n"
    "PartitionName=low PriorityTier=1 Default=YES\n"
    "PartitionName=mid PriorityTier=2\n"
    "PartitionName=high PriorityTier=3\n"
)


def _low_under(make_cluster: Make, job: Job, partition: str) -> tuple[TestCluster, int, int]:
    """A job of ``low`` on n1, then one of ``partition`` on n1 (SchedulerTimeSlice=30:
    the slicer ticks at 30, 60, ...): the cluster and the two job ids."""
    cluster = make_cluster(TIERS)
    low = cluster.submit(job().nodelist("n1").runtime(600))
    cluster.settle()
    other = cluster.submit(job().nodelist("n1").partition(partition).runtime(600))
    cluster.settle()
    return cluster, low, other


def test_shadow_suspends_and_resumes_exactly_the_covered_jobs(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster(TIERS)
    for _ in range(3):
        cluster.submit(job().runtime(600))
    cluster.settle()
    high = cluster.submit(job().nodes(2).partition("high").runtime(20))
    cluster.settle()  # SUSPEND,GANG: the preemptor starts in the same pass
    assert cluster.states() == {1: "SUSPENDED", 2: "SUSPENDED", 3: "RUNNING", 4: "RUNNING"}
    assert cluster.job(high).nodes == ("n1", "n2")
    cluster.run_until(25)
    assert cluster.states() == {1: "RUNNING", 2: "RUNNING", 3: "RUNNING", 4: "COMPLETED"}
    assert [s for _, s in cluster.signals(1)] == ["STOP", "CONT"]


def test_suspended_time_does_not_count_as_run_time(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster(TIERS)
    low = cluster.submit(job().runtime(100))  # starts at 1
    cluster.run_until(10)
    cluster.submit(job().nodes(3).partition("high").runtime(30))  # runs from 11 to 41
    cluster.run_until(40)
    assert cluster.job(low).run_time(cluster.now) == 10
    cluster.run_until(130)
    assert cluster.state(low).name == "RUNNING"
    cluster.run_until(131)  # 10 s before the suspension, 90 s after the resume at 41
    assert cluster.state(low).name == "COMPLETED"
    assert cluster.job(low).end_time == 131


def test_shadows_stack_across_three_tiers(make_cluster: Make, job: Job) -> None:
    cluster, low, mid = _low_under(make_cluster, job, "mid")
    assert cluster.states() == {low: "SUSPENDED", mid: "RUNNING"}
    high = cluster.submit(job().nodelist("n1").partition("high").runtime(10))
    cluster.settle()
    assert cluster.states() == {low: "SUSPENDED", mid: "SUSPENDED", high: "RUNNING"}
    cluster.run_until(15)
    assert cluster.states() == {low: "SUSPENDED", mid: "RUNNING", high: "COMPLETED"}


def test_time_slicing_rotates_jobs_sharing_nodes(make_cluster: Make, job: Job) -> None:
    """Slurm's gang_scheduling page: two whole-cluster jobs under FORCE:2 take turns, never
    running together, and each gets about half the time."""
    cluster = make_cluster(
        "PreemptMode=GANG\nSchedulerTimeSlice=30\nNodeName=n[1-5] CPUs=1\n"
        "PartitionName=p Nodes=ALL Default=YES OverSubscribe=FORCE:2\n"
    )
    first = cluster.submit(job().nodes(5).runtime(1000))
    second = cluster.submit(job().nodes(5).runtime(1000))
    seen = set()
    for moment in range(1, 300, 5):
        cluster.run_until(moment)
        states = (cluster.state(first).name, cluster.state(second).name)
        assert states in {("RUNNING", "SUSPENDED"), ("SUSPENDED", "RUNNING")}
        seen.add(states)
    assert len(seen) == 2
    shares = [cluster.job(j).run_time(cluster.now) for j in (first, second)]
    assert abs(shares[0] - shares[1]) <= 60


def test_slurm_1_3_sched_gang_spelling_enables_gang(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster(
        "SchedulerType=sched/gang\nNodeName=n1 CPUs=1\n"
        "PartitionName=active Nodes=ALL Priority=1 Default=YES Shared=NO\n"
        "PartitionName=hipri Nodes=ALL Priority=2 Shared=NO\n"
    )
    assert "sched/gang" in cluster.plugins.type_strings()
    low = cluster.submit(job().runtime(600))
    cluster.settle()
    high = cluster.submit(job().partition("hipri").runtime(10))
    cluster.settle()
    assert cluster.states() == {low: "SUSPENDED", high: "RUNNING"}


def test_admin_suspend_is_not_undone_by_gang(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster(TIERS)
    low = cluster.submit(job().nodelist("n1").runtime(600))
    cluster.settle()
    assert cluster.command(f"scontrol suspend {low}").status == 0
    high = cluster.submit(job().nodelist("n2").partition("high").runtime(5))
    cluster.run_until(10)
    assert cluster.states() == {low: "SUSPENDED", high: "COMPLETED"}
    assert cluster.command(f"scontrol resume {low}").status == 0
    assert cluster.state(low).name == "RUNNING"


def test_partitions_are_gang_scheduled_independently(make_cluster: Make) -> None:
    """Slurm's gang scheduling docs: gang scheduling runs independently per partition, so
    jobs of two overlapping partitions of one PriorityTier may share resources and both
    run (which is why overlapping partitions without tiers are not recommended). Here the
    QOS extra row places a mid job on the cores of a running low job, and both run, as
    real Slurm 22.05 did (tests/data/scenarios/qos-extra-row, on select/cons_tres)."""
    cluster = make_cluster(
        "SelectType=select/cons_res\nSelectTypeParameters=CR_Core\n"
        "PreemptType=preempt/qos\nPreemptMode=REQUEUE,GANG\nSchedulerTimeSlice=30\n"
        "NodeName=n[1-8] CPUs=1 RealMemory=1000\n"
        "PartitionName=DEFAULT OverSubscribe=FORCE:1\n"
        "PartitionName=low Nodes=n[1-8] Default=YES\n"
        "PartitionName=mid Nodes=n[1-6]\n",
        qos_text="QOS=normal\n",
    )
    for line in ("-p low -N 2", "-p low -N 3", "-p mid -N 2"):
        assert cluster.command(f"sbatch {line} --wrap='sleep 100'").status == 0
    cluster.run_until(2)
    assert cluster.command("squeue -h -o '%i %P %T %N'").stdout == (
        "1 low RUNNING n[1-2]\n2 low RUNNING n[3-5]\n3 mid RUNNING n[1-2]\n"
    )


def test_rebuilding_only_changed_rows_decides_as_rebuilding_every_row() -> None:
    """Random starts, ends, time slices and partition updates on three tiers of partly
    overlapping partitions: the scheduler that rebuilds only the rows whose jobs or shadows
    changed returns, at every step, the decision of one that rebuilds every row."""
    import random

    import attrs

    from plurm import conf
    from plurm.model.cluster import Cluster
    from plurm.model.job import Job as ModelJob
    from plurm.model.job import JobRequest, JobState
    from plurm.registry import PluginContext
    from plurm_sched_gang import GangScheduler

    class EveryRow(GangScheduler):
        def _update_all_rows(self, changes):  # type: ignore[no-untyped-def]
            for part in self.parts.values():
                part.dirty = True
            super()._update_all_rows(changes)

    config = conf.parse_text(
        "ClusterName=c\nSlurmctldHost=h\nPreemptType=preempt/partition_prio\n"
        "PreemptMode=SUSPEND,GANG\nNodeName=n[1-6] CPUs=1\n"
        "PartitionName=low Nodes=n[1-6] PriorityTier=1 OverSubscribe=FORCE:2 Default=YES\n"
        "PartitionName=low2 Nodes=n[4-6] PriorityTier=1 OverSubscribe=FORCE:1\n"
        "PartitionName=mid Nodes=n[1-4] PriorityTier=2 OverSubscribe=FORCE:2\n"
        "PartitionName=high Nodes=n[2-3] PriorityTier=3 OverSubscribe=FORCE:1\n"
    )
    rng = random.Random(3)
    decisions = 0
    for _ in range(60):
        cluster = Cluster.from_config(config)
        context = PluginContext(config, "sched/gang")
        fast, slow = GangScheduler(context), EveryRow(context)
        running: list[ModelJob] = []
        for job_id in range(1, 40):
            action = rng.random()
            if action < 0.55 or not running:
                name = rng.choice(list(cluster.partitions))
                nodes = cluster.partition(name).nodes
                job = ModelJob(job_id, JobRequest(), 0.0, name)
                job.nodes = tuple(sorted(rng.sample(nodes, rng.randint(1, min(3, len(nodes))))))
                cluster.add_job(job)
                cluster.set_state(job, JobState.RUNNING)
                running.append(job)
                got = fast.sched_gang_job_start(job, cluster)
                want = slow.sched_gang_job_start(job, cluster)
            elif action < 0.85:
                job = running.pop(rng.randrange(len(running)))
                got = fast.sched_gang_job_fini(job, cluster)
                want = slow.sched_gang_job_fini(job, cluster)
            elif action < 0.97:
                got = fast.sched_gang_timeslice(cluster)
                want = slow.sched_gang_timeslice(cluster)
            else:
                name = rng.choice(list(cluster.partitions))
                tier = rng.randint(1, 3)
                part = cluster.partitions[name]
                cluster.partitions[name] = attrs.evolve(part, priority_tier=tier)
                got = fast.sched_gang_reconfig(cluster)
                want = slow.sched_gang_reconfig(cluster)
            assert got == want
            decisions += bool(got.suspend or got.resume or got.preempt)
    assert decisions > 100  # the schedulers did decide things


def test_a_stopped_sleep_keeps_its_wall_clock_deadline(make_cluster: Make) -> None:
    """`sleep N` counts wall-clock time while SIGSTOPped (Slurm 22.05, qos-suspend-gang): a
    job suspended past its deadline ends when it is resumed; `--sim-runtime` work is paused."""
    cluster = make_cluster(TIERS)
    cluster.command("sbatch --wrap='sleep 30'")  # starts at 1, deadline 31
    cluster.command("sbatch --sim-runtime=30 --wrap=work")  # starts at 1, 30 s of run time
    cluster.run_until(10)
    cluster.command("sbatch -p high -N3 --sim-runtime=40 --wrap=work")  # runs from 11 to 51
    cluster.run_until(50)
    assert cluster.states() == {1: "SUSPENDED", 2: "SUSPENDED", 3: "RUNNING"}
    cluster.run_until(52)
    assert cluster.states() == {1: "COMPLETED", 2: "RUNNING", 3: "COMPLETED"}
    assert cluster.job(1).end_time == 51
    cluster.run_until(72)  # 10 s before the suspension, 20 s after the resume at 51
    assert cluster.states()[2] == "COMPLETED"
    assert cluster.job(2).end_time == 71


def test_gang_takes_in_an_admin_resumed_job_at_its_next_time_slice(
    make_cluster: Make, job: Job
) -> None:
    """Observed on 22.05 (tests/data/oracle/cli, linear/171-173, 179): the jobs gang
    scheduling resumed when the preemptor was suspended by scontrol run on beside it after
    scontrol resume, until the time slicer's next tick suspends them again."""
    cluster, low, high = _low_under(make_cluster, job, "high")
    assert (cluster.state(low), cluster.state(high)) == (JobState.SUSPENDED, JobState.RUNNING)
    cluster.run_until(10)
    cluster.controller.suspend(high)
    cluster.run_until(12)
    assert cluster.state(low) is JobState.RUNNING
    cluster.controller.resume(high)
    cluster.run_until(29.9)
    assert (cluster.state(low), cluster.state(high)) == (JobState.RUNNING, JobState.RUNNING)
    cluster.run_until(30)
    assert (cluster.state(low), cluster.state(high)) == (JobState.SUSPENDED, JobState.RUNNING)
    assert cluster.job(low).suspend_time == 30


def test_a_partition_update_also_brings_gang_up_to_date(make_cluster: Make, job: Job) -> None:
    cluster, low, high = _low_under(make_cluster, job, "high")
    cluster.controller.suspend(high)
    cluster.controller.resume(high)
    cluster.run_until(15)
    cluster.controller.update_partition("mid", priority_tier=2)  # changes nothing by itself
    assert (cluster.state(low), cluster.state(high)) == (JobState.SUSPENDED, JobState.RUNNING)


def test_a_tier_raised_by_a_partition_update_swaps_the_suspended_job(
    make_cluster: Make, job: Job
) -> None:
    """Gang scheduling takes a partition's new PriorityTier at the update: the job of the
    partition raised above the other's now casts the shadow, resumes, and suspends the
    job that suspended it."""
    cluster, low, mid = _low_under(make_cluster, job, "mid")
    assert (cluster.state(low), cluster.state(mid)) == (JobState.SUSPENDED, JobState.RUNNING)
    cluster.run_until(10)
    cluster.controller.update_partition("low", priority_tier=3)
    assert (cluster.state(low), cluster.state(mid)) == (JobState.RUNNING, JobState.SUSPENDED)


# ----------------------------------------------------------------------------- rebuilds


class _AlwaysRebuild(GangScheduler):
    """The reference: every row rebuilt in full after every change (a rebuild of an
    up-to-date row changes nothing), as the plugin did before it skipped rebuilds that
    have nothing to do and brought shadowed rows up to date without one."""

    def _update_all_rows(self, changes: _Changes) -> None:
        for part in self._ordered():
            part.dirty = False
            part.shadowed = 0
            self._update_active_row(part, changes)


_GANG_CONFIGS = {
    "linear": "SelectType=select/linear\n",
    "cons_res": "SelectType=select/cons_res\nSelectTypeParameters=CR_Core\n",
}


def _gang_simulation(select: str, reference: type[GangScheduler] | None) -> Simulation:
    config = conf.parse_text(
        "ClusterName=gang\nSlurmctldHost=head\n"
        f"{select}"
        "PreemptType=preempt/partition_prio\nPreemptMode=SUSPEND,GANG\n"
        "SchedulerTimeSlice=30\n"
        "NodeName=n[01-10] CPUs=4 RealMemory=4000\n"
        "PartitionName=low Nodes=n[01-10] Default=YES PriorityTier=1 OverSubscribe=FORCE:2"
        " MaxTime=INFINITE\n"
        "PartitionName=low2 Nodes=n[04-10] PriorityTier=1 OverSubscribe=FORCE:1"
        " MaxTime=INFINITE\n"
        "PartitionName=mid Nodes=n[01-06] PriorityTier=5 OverSubscribe=FORCE:2"
        " MaxTime=INFINITE\n"
        "PartitionName=high Nodes=n[03-10] PriorityTier=9 OverSubscribe=FORCE:1"
        " MaxTime=INFINITE\n"
    )
    plugins = Plugins.load(config)
    if reference is not None:
        gang = plugins.manager.get_plugin("sched/gang")
        plugins.manager.unregister(gang)
        plugins.manager.register(reference(gang.context), name="sched/gang")
    return Simulation(config, plugins)


def _gang_history(simulation: Simulation, seed: int) -> list[tuple[object, ...]]:
    rng = random.Random(seed)
    controller = simulation.controller
    now = 0.0
    for _ in range(150):
        now += rng.choice((0, 0, 1, 3, 10, 40))
        simulation.run_until(now)
        partition = rng.choices(("low", "low2", "mid", "high"), (5, 3, 2, 2))[0]
        controller.submit(
            JobRequest(
                partitions=(partition,),
                min_nodes=rng.choice((1, 1, 2, 3)),
                ntasks=rng.choice((None, 2, 4)),
                sim_runtime=float(rng.randint(20, 600)),
            )
        )
    simulation.run_until(now + 50_000)
    return _jobs(simulation)


def _jobs(simulation: Simulation) -> list[tuple[object, ...]]:
    return [
        (job.job_id, job.state, job.start_time, job.end_time, job.nodes, job.pre_suspend_time)
        for job in simulation.controller.cluster.jobs_in(*JobState)
    ]


@pytest.mark.parametrize("select", sorted(_GANG_CONFIGS))
@pytest.mark.parametrize("seed", [3, 4, 5])
def test_rows_kept_up_to_date_decide_as_full_rebuilds(select: str, seed: int) -> None:
    """Skipped rebuilds and shadowed rows brought up to date in place give every job the
    same history (starts, suspensions, ends) as rebuilding every row after every change."""
    fast = _gang_history(_gang_simulation(_GANG_CONFIGS[select], None), seed)
    full = _gang_history(_gang_simulation(_GANG_CONFIGS[select], _AlwaysRebuild), seed)
    assert fast == full
    assert any(suspended for *_, suspended in fast), "the workload must suspend jobs"


class _CycleRebuilding(GangScheduler):
    """The reference for time slices: every slice rebuilds its row from the front."""

    def _cycle(self, part: _Partition, changes: _Changes) -> None:
        self._cycle_rebuilding(part, changes)


class _CountingShortSlices(GangScheduler):
    """The plugin as it is, counting the slices it takes without a rebuild."""

    short = 0

    def _cycle_all_placed(self, part: _Partition) -> None:
        type(self).short += 1
        super()._cycle_all_placed(part)


def _rows(simulation: Simulation) -> list[tuple[object, ...]]:
    """Each partition's row as gang scheduling keeps it: its jobs in order, with their
    rows, and the resources in use."""
    gang = simulation.plugins.manager.get_plugin("sched/gang")
    return [
        (name, [(j.job_id, j.row, j.running) for j in part.jobs], part.active, part.jobs_active)
        for name, part in sorted(gang.parts.items())
    ]


def test_slices_of_rows_with_every_job_placed_decide_as_rebuilding_them() -> None:
    """A slice that only shadows make (every job of the row placed) reorders and relabels
    the row without rebuilding it: after every step, each row (its jobs' order and rows)
    is the one a rebuild gives, and so is every job's history."""
    _CountingShortSlices.short = 0
    for select in sorted(_GANG_CONFIGS):
        for seed in range(3, 7):
            config = _GANG_CONFIGS[select]
            fast = _gang_simulation(config, _CountingShortSlices)
            full = _gang_simulation(config, _CycleRebuilding)
            rng = random.Random(seed)
            now = 0.0
            for _ in range(150):
                now += rng.choice((0, 0, 1, 3, 10, 40))
                request = JobRequest(
                    partitions=(rng.choices(("low", "low2", "mid", "high"), (5, 3, 2, 2))[0],),
                    min_nodes=rng.choice((1, 1, 2, 3)),
                    ntasks=rng.choice((None, 2, 4)),
                    sim_runtime=float(rng.randint(20, 600)),
                )
                for simulation in (fast, full):
                    simulation.run_until(now)
                    simulation.controller.submit(request)
                assert _rows(fast) == _rows(full), (select, seed, now)
            for simulation in (fast, full):
                simulation.run_until(now + 50_000)
            assert _jobs(fast) == _jobs(full)
    assert _CountingShortSlices.short > 50  # the short slices were taken


def test_a_job_s_mask_has_one_bit_per_unit_in_the_order_units_came() -> None:
    """sched/gang gives each (node, core) a bit the first time a job holds it, and a job's
    mask has exactly its units' bits: built in a byte buffer, it is the OR of those bits,
    on masks thousands of bits wide as on narrow ones."""
    from plurm import conf
    from plurm.model.job import Job as ModelJob
    from plurm.registry import PluginContext

    config = conf.parse_text(
        "ClusterName=c\nSlurmctldHost=h\nNodeName=n[1-400] CPUs=32\nPartitionName=p Nodes=ALL\n"
    )
    gang = GangScheduler(PluginContext(config, "sched/gang"))
    rng = random.Random(5)
    order: dict[tuple[str, int], int] = {}  # the bits as the first version gave them
    for job_id in range(1, 300):
        job = ModelJob(job_id, JobRequest(), 0.0, "p")
        units = frozenset(
            (f"n{rng.randint(1, 400)}", rng.randrange(32)) for _ in range(rng.randint(0, 40))
        )
        job.units = units
        job.nodes = tuple(sorted({name for name, _ in units}))
        expected = 0
        for unit in units:  # (the order _mask reads them in)
            expected |= 1 << order.setdefault(unit, len(order))
        assert gang._mask(job) == expected
    assert max(order.values()) > 2000  # wide masks were built
