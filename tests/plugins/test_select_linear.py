"""select/linear, through a simulated cluster built from config text."""

from __future__ import annotations

from collections.abc import Callable

from plurm.testing import JobBuilder, TestCluster

Make = Callable[..., TestCluster]
Job = Callable[[], JobBuilder]


def test_weight_tiers_gate_then_table_order_places(make_cluster: Make, job: Job) -> None:
    """Observed on real 22.05: big[1-2] Weight=50 listed before small[1-3] Weight=1; with
    small1 busy a 3-node job gets big[1-2],small2, not the lightest nodes."""
    cluster = make_cluster(
        "NodeName=big[1-2] CPUs=1 Weight=50\nNodeName=small[1-3] CPUs=1 Weight=1\n"
        "PartitionName=p Nodes=ALL Default=YES\n"
    )
    first = cluster.submit(job().runtime(100))
    cluster.settle()
    assert cluster.job(first).nodes == ("small1",)
    second = cluster.submit(job().nodes(3).runtime(100))
    cluster.settle()
    assert cluster.job(second).nodes == ("big1", "big2", "small2")


def test_lighter_tier_is_used_alone_when_it_suffices(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster(
        "NodeName=big[1-2] CPUs=1 Weight=50\nNodeName=small[1-3] CPUs=1 Weight=1\n"
        "PartitionName=p Nodes=ALL Default=YES\n"
    )
    three = cluster.submit(job().nodes(3).runtime(9))
    cluster.settle()
    assert cluster.job(three).nodes == ("small1", "small2", "small3")


def test_best_fit_prefers_the_smallest_run_that_is_enough(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster("NodeName=n[1-6] CPUs=1\nPartitionName=p Nodes=ALL Default=YES\n")
    cluster.submit(job().nodelist("n2").runtime(100))
    cluster.settle()
    one = cluster.submit(job().runtime(100))
    cluster.settle()
    assert cluster.job(one).nodes == ("n1",)  # the run [n1] beats the run [n3-n6]


def test_contiguous_needs_one_block(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster("NodeName=n[1-6] CPUs=1\nPartitionName=p Nodes=ALL Default=YES\n")
    cluster.submit(job().nodelist("n3").runtime(100))
    cluster.settle()
    loose = cluster.submit(job().nodes(4).runtime(100))
    cluster.settle()
    # No run of 4: the largest run first (n4-n6), then the best fit for the rest (n1).
    assert cluster.job(loose).nodes == ("n1", "n4", "n5", "n6")
    cluster.command("scancel 2")
    cluster.settle()
    cluster.submit(job().nodelist("n5").runtime(100))
    cluster.settle()
    tight = cluster.command("sbatch -N3 --contiguous --wrap='sleep 9'")
    cluster.settle()
    assert tight.stdout == "Submitted batch job 4\n"
    assert cluster.state(4).name == "PENDING" and cluster.job(4).reason.value == "Resources"


def test_cpus_decide_how_many_nodes(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster("NodeName=n[1-4] CPUs=4\nPartitionName=p Nodes=ALL Default=YES\n")
    wide = cluster.submit(job().tasks(10).runtime(5))
    cluster.settle()
    assert cluster.job(wide).nodes == ("n1", "n2", "n3")


def test_cr_memory_is_consumable(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster(
        "SelectTypeParameters=CR_Memory\nNodeName=n1 CPUs=4 RealMemory=1000\n"
        "PartitionName=p Nodes=ALL Default=YES OverSubscribe=FORCE:4\n"
        "PreemptMode=GANG\n"
    )
    first = cluster.submit(job().mem(600).runtime(100))
    second = cluster.submit(job().mem(600).runtime(100))
    third = cluster.submit(job().mem(300).runtime(100))
    cluster.settle()
    assert cluster.state(first).name == "RUNNING"
    assert cluster.state(second).name == "PENDING"
    assert cluster.job(second).reason.value == "Resources"
    assert cluster.job(third).reason.value == "Priority"  # behind #2 in the same partition


def test_oversubscribe_counts_jobs_per_node_across_partitions(make_cluster: Make, job: Job) -> None:
    """linear counts every job on a node, whatever its partition (Slurm's test_151_4)."""
    cluster = make_cluster(
        "NodeName=n1 CPUs=1\n"
        "PartitionName=p1 Nodes=n1 OverSubscribe=YES Default=YES\n"
        "PartitionName=p3 Nodes=n1 OverSubscribe=FORCE:2\n"
    )
    in_p1 = cluster.command("sbatch -p p1 --oversubscribe --wrap='sleep 100'")
    in_p3 = cluster.command("sbatch -p p3 --wrap='sleep 100'")
    third = cluster.command("sbatch -p p3 --wrap='sleep 100'")
    cluster.settle()
    assert [in_p1.status, in_p3.status, third.status] == [0, 0, 0]
    assert cluster.states() == {1: "RUNNING", 2: "RUNNING", 3: "PENDING"}


def test_exclusive_job_gets_empty_nodes_only(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster(
        "NodeName=n[1-2] CPUs=2\nPartitionName=p Nodes=ALL Default=YES OverSubscribe=FORCE:2\n"
    )
    cluster.submit(job().runtime(50))
    cluster.settle()
    lone = cluster.submit(job().exclusive().runtime(50))
    cluster.settle()
    assert cluster.job(lone).nodes == ("n2",)
    blocked = cluster.submit(job().exclusive().runtime(50))
    cluster.settle()
    assert cluster.state(blocked).name == "PENDING"


def test_preemption_removes_candidates_until_the_job_fits(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster(
        "PreemptType=preempt/partition_prio\nPreemptMode=CANCEL\n"
        "NodeName=n[1-4] CPUs=1\n"
        "PartitionName=low Nodes=ALL PriorityTier=1 Default=YES\n"
        "PartitionName=high Nodes=ALL PriorityTier=2\n"
    )
    for _ in range(4):
        cluster.submit(job().runtime(500))
    cluster.settle()
    high = cluster.submit(job().nodes(2).partition("high").runtime(50))
    # CANCEL is two-phase: the victims are killed on the next pass, and the preemptor starts
    # on the pass after, once they are gone.
    cluster.run_until(cluster.now + 1)
    assert cluster.state(high).name == "PENDING"
    assert cluster.state(1).name == "COMPLETING"
    cluster.settle()
    assert cluster.states() == {
        1: "PREEMPTED",
        2: "PREEMPTED",
        3: "RUNNING",
        4: "RUNNING",
        5: "RUNNING",
    }
    assert cluster.job(high).nodes == ("n1", "n2")
    assert [s for _, s in cluster.signals(1)] == ["CONT", "TERM"]


def test_requeue_victim_waits_for_begin_time_and_counts_a_restart(
    make_cluster: Make, job: Job
) -> None:
    cluster = make_cluster(
        "PreemptType=preempt/partition_prio\nPreemptMode=REQUEUE\nJobRequeue=1\n"
        "NodeName=n1 CPUs=1\n"
        "PartitionName=low Nodes=ALL PriorityTier=1 Default=YES\n"
        "PartitionName=high Nodes=ALL PriorityTier=2\n"
    )
    low = cluster.submit(job().runtime(1000))
    cluster.settle()
    high = cluster.submit(job().partition("high").runtime(30))
    cluster.run_until(3)  # killed at 2: COMPLETING, its run time reset
    victim = cluster.job(low)
    assert (victim.state.name, victim.run_time(cluster.now)) == ("COMPLETING", 0.0)
    cluster.run_until(6)  # released at 5.7: back in the queue, and the preemptor runs
    assert (victim.state.name, victim.reason.value, victim.restarts) == ("PENDING", "BeginTime", 1)
    assert cluster.state(high).name == "RUNNING"
    cluster.run_until(100)  # the high job ended at 36, but the requeue delay holds the victim
    assert cluster.state(low).name == "PENDING"
    # Eligible at the released second + 121 = 126, picked up by the next periodic pass (180).
    assert victim.eligible_time == 126
    cluster.run_until(180)
    assert cluster.state(low).name == "RUNNING"


def test_requeue_without_requeue_permission_cancels(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster(
        "PreemptType=preempt/partition_prio\nPreemptMode=REQUEUE\nJobRequeue=0\n"
        "NodeName=n1 CPUs=1\n"
        "PartitionName=low Nodes=ALL PriorityTier=1 Default=YES\n"
        "PartitionName=high Nodes=ALL PriorityTier=2\n"
    )
    low = cluster.submit(job().runtime(1000))
    cluster.settle()
    cluster.submit(job().partition("high").runtime(30))
    cluster.settle()
    assert cluster.state(low).name == "PREEMPTED"


def test_hook_sequence_of_a_start(make_cluster: Make, job: Job, hook_recorder) -> None:  # type: ignore[no-untyped-def]
    cluster = make_cluster("NodeName=n[1-2] CPUs=1\nPartitionName=p Nodes=ALL Default=YES\n")
    recorder = hook_recorder(cluster)
    cluster.submit(job().runtime(5))
    cluster.settle()
    names = [n for n in recorder.names() if n != "plurm_job_state_changed"]
    assert names == [
        "sched_queue_order",
        "select_job_test",
        "select_job_begin",
        "sched_gang_job_start",
    ]


def test_a_job_for_several_partitions_runs_in_the_first_that_fits(
    make_cluster: Make, job: Job
) -> None:
    cluster = make_cluster(
        "NodeName=a1 CPUs=1\nNodeName=b1 CPUs=1\n"
        "PartitionName=pa Nodes=a1 Default=YES\nPartitionName=pb Nodes=b1\n"
    )
    cluster.submit(job().partition("pa").runtime(100))
    cluster.settle()
    either = cluster.submit(job().partition("pa", "pb").runtime(100))
    cluster.settle()
    assert (cluster.job(either).partition, cluster.job(either).nodes) == ("pb", ("b1",))
    stuck = cluster.submit(job().partition("pa", "pb").runtime(100))
    cluster.settle()
    assert (cluster.state(stuck).name, cluster.job(stuck).partition) == ("PENDING", "pa")


def test_bitmap_placement_matches_the_general_code() -> None:
    """Given a NodeBitmap, linear places on bitmaps (when nothing is shared and memory is
    not counted); the answer must be the one the general code gives for the same names."""
    import random

    from plurm import conf
    from plurm.model.cluster import Cluster
    from plurm.model.job import Job as RealJob
    from plurm.model.job import JobRequest, JobState
    from plurm.model.select import SelectMode
    from plurm.registry import PluginContext
    from plurm_select_linear import LinearSelect

    config = conf.parse_text(
        "ClusterName=c\nSlurmctldHost=h\nSelectType=select/linear\n"
        "NodeName=a[1-9] CPUs=1\nNodeName=b[1-9] CPUs=4\nNodeName=c[1-9] CPUs=2\n"
        "PartitionName=p Nodes=ALL Default=YES\n"
    )
    names = config.node_names
    rng = random.Random(5)
    for _ in range(300):
        cluster = Cluster.from_config(config)
        select = LinearSelect(PluginContext(config, "select/linear"))
        select.select_node_init(cluster)
        for job_id in range(1, rng.randint(1, 8)):
            held = rng.sample(names, rng.randint(1, 4))
            busy = RealJob(job_id, JobRequest(exclusive=rng.random() < 0.2), 0.0, "p")
            busy.nodes = cluster.in_table_order(held)
            busy.state = JobState.RUNNING
            select.select_job_begin(busy, cluster)
            if rng.random() < 0.3:
                select.select_job_suspend(busy, True, cluster)
            if rng.random() < 0.2:
                select.select_job_fini(busy, cluster)
        low = rng.randint(1, 6)
        request = JobRequest(
            min_nodes=low,
            max_nodes=rng.choice([None, low, low + 2]),
            ntasks=rng.choice([None, rng.randint(1, 30)]),
            exclusive=rng.random() < 0.2,
            contiguous=rng.random() < 0.2,
        )
        job = RealJob(99, request, 0.0, "p")
        mask = rng.getrandbits(len(names))
        bitmap = cluster.bitmap(mask)
        for mode in (SelectMode.RUN_NOW, SelectMode.TEST_ONLY):
            fast = select.select_job_test(job, bitmap, mode, (), cluster)
            slow = select.select_job_test(job, tuple(bitmap), mode, (), cluster)
            assert fast == slow, (request, bitmap, mode)


def test_bitmap_preemption_walk_matches_the_general_code() -> None:
    """The preemption walk on bitmaps (no sharing, memory not counted) removes candidates
    and places as the general walk does: the same nodes and victims, whatever the mix of
    running, suspended and exclusive jobs and of SUSPEND, REQUEUE and CANCEL victims."""
    import random

    from plurm import conf
    from plurm.conf.values import PreemptBase
    from plurm.model.cluster import Cluster
    from plurm.model.job import Job as RealJob
    from plurm.model.job import JobRequest, JobState
    from plurm.model.select import Candidate, Candidates, SelectMode, SelectStatus
    from plurm.registry import PluginContext
    from plurm_select_linear import LinearSelect

    config = conf.parse_text(
        "ClusterName=c\nSlurmctldHost=h\nSelectType=select/linear\n"
        "NodeName=a[1-9] CPUs=1\nNodeName=b[1-9] CPUs=4\nNodeName=c[1-9] CPUs=2\n"
        "PartitionName=p Nodes=ALL Default=YES OverSubscribe=FORCE:1\n"
    )
    names = config.node_names
    rng = random.Random(11)
    preempted = 0
    for _ in range(400):
        cluster = Cluster.from_config(config)
        select = LinearSelect(PluginContext(config, "select/linear"))
        select.select_node_init(cluster)
        candidates = []
        for job_id in range(1, rng.randint(2, 12)):
            held = rng.sample(names, rng.randint(1, 6))
            busy = RealJob(job_id, JobRequest(exclusive=rng.random() < 0.2), 0.0, "p")
            busy.nodes = cluster.in_table_order(held)
            busy.state = JobState.RUNNING
            select.select_job_begin(busy, cluster)
            if rng.random() < 0.2:
                select.select_job_suspend(busy, True, cluster)
            if rng.random() < 0.1:
                select.select_job_fini(busy, cluster)  # a candidate select no longer holds
            mode = rng.choice([PreemptBase.SUSPEND, PreemptBase.REQUEUE, PreemptBase.CANCEL])
            candidates.append(Candidate(busy, mode, rng.randint(0, 5)))
        rng.shuffle(candidates)
        low = rng.randint(1, 12)
        request = JobRequest(
            min_nodes=low,
            max_nodes=rng.choice([None, low, low + 2]),
            ntasks=rng.choice([None, rng.randint(1, 40)]),
            exclusive=rng.random() < 0.2,
            contiguous=rng.random() < 0.1,
        )
        job = RealJob(99, request, 0.0, "p")
        bitmap = cluster.bitmap(rng.getrandbits(len(names)))
        fast = select.select_job_test(
            job, bitmap, SelectMode.RUN_NOW, Candidates(candidates), cluster
        )
        slow = select.select_job_test(
            job, tuple(bitmap), SelectMode.RUN_NOW, tuple(candidates), cluster
        )
        assert fast == slow, (request, bitmap)
        preempted += fast.status is SelectStatus.SUCCESS and bool(fast.victims)
    assert preempted > 50  # the cases do reach the walk, and often find victims
