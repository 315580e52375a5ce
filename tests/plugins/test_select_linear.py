"""select/linear, through a simulated cluster built from config text."""

from __future__ import annotations

import random
from collections.abc import Callable

import attrs

from plurm import conf
from plurm.conf.values import PreemptBase
from plurm.model.bitmap import NodeBitmap
from plurm.model.cluster import Cluster
from plurm.model.job import Job as RealJob
from plurm.model.job import JobRequest, JobState
from plurm.model.select import Candidate, Candidates, SelectMode, SelectResult, SelectStatus
from plurm.registry import PluginContext
from plurm.testing import JobBuilder, TestCluster
from plurm_select_linear import LinearSelect

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
    # sched/builtin gives a sort key (asked at start-up), so the pass reads the kept queue
    # and no sched_queue_order call comes first; the submission asks select whether any
    # node could ever hold the job (TEST_ONLY), the default time limit of a job without
    # -t, then the job's priority; the first pass asks once whether select answers from the
    # nodes alone (then a BUSY answer may be kept)
    assert names == [
        "select_job_test",
        "plurm_job_default_time_limit",
        "priority_job_set",
        "select_answers_by_nodes",
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


def _linear(nodes_and_partitions: str) -> tuple[Cluster, LinearSelect]:
    """A cluster of the given NodeName and PartitionName lines, and select/linear set up
    on it."""
    config = conf.parse_text(
        "ClusterName=c\nSlurmctldHost=h\nSelectType=select/linear\n" + nodes_and_partitions
    )
    cluster = Cluster.from_config(config)
    select = LinearSelect(PluginContext(config, "select/linear"))
    select.select_node_init(cluster)
    return cluster, select


def _random_linear(
    partition: str, rng: random.Random, jobs: int, widest: int, suspended: float, ended: float
) -> tuple[Cluster, LinearSelect, list[RealJob]]:
    """select/linear on 27 nodes of three sizes, with up to ``jobs`` random allocations,
    some exclusive, some suspended by an admin (a share of ``suspended``), some ended."""
    cluster, select = _linear(
        "NodeName=a[1-9] CPUs=1\nNodeName=b[1-9] CPUs=4\nNodeName=c[1-9] CPUs=2\n"
        f"PartitionName=p Nodes=ALL Default=YES {partition}\n"
    )
    config = cluster.config
    made = []
    for job_id in range(1, rng.randint(2, jobs)):
        held = rng.sample(config.node_names, rng.randint(1, widest))
        busy = RealJob(job_id, JobRequest(exclusive=rng.random() < 0.2), 0.0, "p")
        busy.nodes = cluster.in_table_order(held)
        busy.state = JobState.RUNNING
        select.select_job_begin(busy, cluster)
        if rng.random() < suspended:
            select.select_job_suspend(busy, True, cluster)
        if rng.random() < ended:
            select.select_job_fini(busy, cluster)  # one select no longer holds
        made.append(busy)
    return cluster, select, made


def _random_request(rng: random.Random, widest: int, contiguous: float) -> RealJob:
    low = rng.randint(1, widest)
    request = JobRequest(
        min_nodes=low,
        max_nodes=rng.choice([None, low, low + 2]),
        ntasks=rng.choice([None, rng.randint(1, 5 * widest)]),
        exclusive=rng.random() < 0.2,
        contiguous=rng.random() < contiguous,
    )
    return RealJob(99, request, 0.0, "p")


def test_bitmap_placement_matches_the_general_code() -> None:
    """Given a NodeBitmap, linear places on bitmaps (when nothing is shared and memory is
    not counted); the answer must be the one the general code gives for the same names."""
    rng = random.Random(5)
    for _ in range(300):
        cluster, select, _ = _random_linear("", rng, jobs=8, widest=4, suspended=0.3, ended=0.2)
        job = _random_request(rng, widest=6, contiguous=0.2)
        bitmap = cluster.bitmap(rng.getrandbits(len(cluster.config.node_names)))
        for mode in (SelectMode.RUN_NOW, SelectMode.TEST_ONLY):
            fast = select.select_job_test(job, bitmap, mode, (), cluster)
            slow = select.select_job_test(job, tuple(bitmap), mode, (), cluster)
            assert fast == slow, (job.request, bitmap, mode)


def test_bitmap_preemption_walk_matches_the_general_code() -> None:
    """The preemption walk on bitmaps (no sharing, memory not counted) removes candidates
    and places as the general walk does: the same nodes and victims, whatever the mix of
    running, suspended and exclusive jobs and of SUSPEND, REQUEUE and CANCEL victims."""
    rng = random.Random(11)
    modes = [PreemptBase.SUSPEND, PreemptBase.REQUEUE, PreemptBase.CANCEL]
    preempted = 0
    for _ in range(400):
        cluster, select, jobs = _random_linear(
            "OverSubscribe=FORCE:1", rng, jobs=12, widest=6, suspended=0.2, ended=0.1
        )
        candidates = [Candidate(busy, rng.choice(modes), rng.randint(0, 5)) for busy in jobs]
        rng.shuffle(candidates)
        job = _random_request(rng, widest=12, contiguous=0.1)
        bitmap = cluster.bitmap(rng.getrandbits(len(cluster.config.node_names)))
        fast = select.select_job_test(
            job, bitmap, SelectMode.RUN_NOW, Candidates(candidates), cluster
        )
        slow = select.select_job_test(
            job, tuple(bitmap), SelectMode.RUN_NOW, tuple(candidates), cluster
        )
        assert fast == slow, (job.request, bitmap)
        preempted += fast.status is SelectStatus.SUCCESS and bool(fast.victims)
    assert preempted > 50  # the cases do reach the walk, and often find victims


def test_the_shared_nodes_are_those_with_two_jobs_or_more() -> None:
    """``LinearSelect.shared`` (the nodes where the preemption walk must count node by
    node) is kept as jobs begin, are suspended and resumed by an admin, give up nodes as
    they complete, and end: at every step it holds exactly the nodes with two jobs or more
    (a node left out would let the walk take a shared node for free; one kept too long
    would only cost time, and shows only here)."""
    rng = random.Random(17)
    cluster, select = _linear(
        "NodeName=n[1-12] CPUs=2\nPartitionName=p Nodes=ALL Default=YES OverSubscribe=FORCE:4\n"
    )
    config = cluster.config

    def counted() -> int:
        return sum(
            1 << cluster.node_index[name] for name, node in select.use.items() if node.total > 1
        )

    held: list[RealJob] = []
    steps = {"shared": 0, "emptied": 0}
    for job_id in range(1, 400):
        action = rng.random()
        if action < 0.45 or not held:
            job = RealJob(job_id, JobRequest(exclusive=rng.random() < 0.1), 0.0, "p")
            job.nodes = cluster.in_table_order(rng.sample(config.node_names, rng.randint(1, 5)))
            job.state = JobState.RUNNING
            select.select_job_begin(job, cluster)
            held.append(job)
        elif action < 0.6:
            job = rng.choice(held)
            if rng.random() < 0.5:
                select.select_job_suspend(job, True, cluster)
            else:
                select.select_job_resume(job, True, cluster)
        elif action < 0.75:
            job = rng.choice(held)
            gone = rng.sample(job.nodes, rng.randint(0, len(job.nodes)))
            select.select_job_resized(job, tuple(gone), cluster)
            job.nodes = tuple(name for name in job.nodes if name not in gone)
        else:
            job = held.pop(rng.randrange(len(held)))
            before = select.shared
            select.select_job_fini(job, cluster)
            steps["emptied"] += bool(before & ~select.shared)
        assert select.shared == counted(), job_id
        steps["shared"] += bool(select.shared)
    assert steps["shared"] > 100 and steps["emptied"] > 5, steps


def test_a_nodes_bound_gives_the_same_answers_reading_fewer_candidates() -> None:
    """Told where the candidates can be at most (the core's victim pool knows without
    reading them), the walk answers as it does untold, and when even those nodes leave
    the job short it reads no further candidate (past the one that says there are some)."""
    rng = random.Random(13)
    modes = [PreemptBase.SUSPEND, PreemptBase.REQUEUE, PreemptBase.CANCEL]
    fewer = 0
    for _ in range(400):
        cluster, select, jobs = _random_linear("", rng, jobs=20, widest=6, suspended=0.2, ended=0)
        # only some running jobs are candidates (the others: a higher tier, say)
        offered = [Candidate(busy, rng.choice(modes), 0) for busy in jobs if rng.random() < 0.4]
        job = _random_request(rng, widest=12, contiguous=0.1)
        bitmap = cluster.bitmap(rng.getrandbits(len(cluster.config.node_names)))
        # their nodes, and perhaps a few more
        bound = cluster.mask_of(name for c in offered for name in c.job.nodes)
        bound |= rng.getrandbits(len(cluster.config.node_names)) & rng.getrandbits(8)
        plain = Candidates(offered)
        told = Candidates(offered, nodes_bound=lambda: bound)  # noqa: B023 (called at once)
        untold = select.select_job_test(job, bitmap, SelectMode.RUN_NOW, plain, cluster)
        assert select.select_job_test(job, bitmap, SelectMode.RUN_NOW, told, cluster) == untold
        fewer += len(told.read()) < len(plain.read())
    assert fewer > 15  # the bound answered, where the walk read candidates to be sure


def _built(seed: int) -> tuple[Cluster, LinearSelect, list[RealJob], random.Random]:
    """The same random select/linear state for the same seed, and the random source."""
    rng = random.Random(seed)
    cluster, select, jobs = _random_linear("", rng, jobs=12, widest=6, suspended=0.2, ended=0)
    return cluster, select, jobs, rng


def _ask(
    select: LinearSelect, job: RealJob, nodes: NodeBitmap, offer: list[Candidate], cluster: Cluster
) -> SelectResult:
    return select.select_job_test(job, nodes, SelectMode.RUN_NOW, Candidates(offer), cluster)


def _a_start(rng: random.Random, cluster: Cluster) -> RealJob:
    """A job starting on up to four random nodes (some may hold jobs already)."""
    names = cluster.config.node_names
    starting = RealJob(500, JobRequest(exclusive=rng.random() < 0.2), 0.0, "p")
    starting.nodes = cluster.in_table_order(rng.sample(names, rng.randint(1, 4)))
    starting.state = JobState.RUNNING
    return starting


def test_a_busy_test_is_remembered_only_while_nothing_it_read_changed() -> None:
    """select/linear remembers that a job was busy on some nodes (RUN_NOW, no candidates,
    on bitmaps), and answers busy at once while the node use, the request, its partition
    and the configuration are the same objects. After any of them changed, the answer
    must be the one a select that was never asked gives."""
    remembered = kept = changed = 0
    for seed in range(300):
        cluster, asked, jobs, rng = _built(seed)
        job = _random_request(rng, widest=12, contiguous=0.1)
        nodes = cluster.bitmap(rng.getrandbits(len(cluster.config.node_names)))
        once = _ask(asked, job, nodes, [], cluster)
        assert _ask(asked, job, nodes, [], cluster) == once  # the same answer again
        remembered += bool(asked.busy_tests)
        # another request under the same job id: asked afresh
        other = RealJob(job.job_id, attrs.evolve(job.request, min_nodes=1), 0.0, "p")
        assert _ask(asked, other, nodes, [], cluster) == _ask(
            _built(seed)[1], other, nodes, [], cluster
        )
        # a job starts: it only takes nodes, so a busy answer is kept, and must be the
        # answer of a select that saw the same start and was never asked
        starting = _a_start(rng, cluster)
        asked.select_job_begin(starting, cluster)
        fresh = _built(seed)[1]
        fresh.select_job_begin(starting, cluster)
        kept += bool(asked.busy_tests)
        assert _ask(asked, job, nodes, [], cluster) == _ask(fresh, job, nodes, [], cluster)
        # a job ends: the node use changed, and what was remembered no longer holds
        ending = rng.randrange(len(jobs))
        asked.select_job_fini(jobs[ending], cluster)
        _, fresh, fresh_jobs, _ = _built(seed)
        fresh.select_job_begin(starting, cluster)
        fresh.select_job_fini(fresh_jobs[ending], cluster)
        again = _ask(asked, job, nodes, [], cluster)
        assert again == _ask(fresh, job, nodes, [], cluster), seed
        changed += again != once
    # busy answers were remembered, kept over a start, and changed after an end
    assert remembered > 30 and kept > 15 and changed > 5


def test_a_busy_answer_under_a_node_limit_is_asked_again_after_a_start() -> None:
    """A start only takes nodes, yet under a node limit on nodes of several sizes it can
    make room. 8 CPUs on at most 2 nodes, with n1 held: n2 (4 CPUs), n3 (1), n4 (4) form
    one run, and the best fit takes a run from its start (n2, n3: 5 CPUs), so the job is
    busy. Once a job holds n3, n2 and n4 are two runs and give the 8. The busy answer must
    not outlive that start."""
    cluster, select = _linear(
        "NodeName=n[1-2] CPUs=4\nNodeName=n3 CPUs=1\nNodeName=n4 CPUs=4\n"
        "PartitionName=p Nodes=ALL Default=YES\n"
    )

    def start(job_id: int, node: str) -> None:
        holder = RealJob(job_id, JobRequest(), 0.0, "p")
        holder.nodes = (node,)
        holder.state = JobState.RUNNING
        select.select_job_begin(holder, cluster)

    job = RealJob(1, JobRequest(min_nodes=1, max_nodes=2, ntasks=8), 0.0, "p")
    nodes = cluster.bitmap(cluster.mask_of(cluster.config.node_names))
    start(2, "n1")
    assert _ask(select, job, nodes, [], cluster).status is SelectStatus.BUSY
    assert select.busy_tests  # remembered
    start(3, "n3")
    after = _ask(select, job, nodes, [], cluster)
    assert after.status is SelectStatus.SUCCESS and after.nodes == ("n2", "n4")


def test_a_failed_walk_is_remembered_only_while_nothing_it_read_changed() -> None:
    """select/linear remembers a preemption walk that found no room, and answers the same
    question busy at once. A question with other candidates, or one asked after the node
    use changed, must be answered as a select that was never asked before answers it."""
    modes = [PreemptBase.SUSPEND, PreemptBase.REQUEUE, PreemptBase.CANCEL]
    remembered = kept = changed = 0
    for seed in range(300):
        cluster, asked, jobs, rng = _built(seed)
        job = _random_request(rng, widest=12, contiguous=0.1)
        nodes = cluster.bitmap(rng.getrandbits(len(cluster.config.node_names)))
        pool = [Candidate(busy, rng.choice(modes), 0) for busy in jobs]
        first = rng.sample(pool, rng.randint(1, len(pool)))
        second = rng.sample(pool, rng.randint(1, len(pool)))
        ending = jobs.index(rng.choice(jobs))
        once = _ask(asked, job, nodes, first, cluster)
        assert _ask(asked, job, nodes, first, cluster) == once  # the same answer again
        remembered += bool(asked.failed_walks)
        fresh = _built(seed)[1]
        assert _ask(asked, job, nodes, second, cluster) == _ask(fresh, job, nodes, second, cluster)
        # a job starts (not a candidate): it only takes nodes, so a failed walk is kept,
        # and the answer must be that of a select that saw the same start
        starting = _a_start(rng, cluster)
        asked.select_job_begin(starting, cluster)
        fresh = _built(seed)[1]
        fresh.select_job_begin(starting, cluster)
        kept += bool(asked.failed_walks)
        assert _ask(asked, job, nodes, first, cluster) == _ask(fresh, job, nodes, first, cluster)
        # a job ends: the node use changed, and what was remembered no longer holds
        asked.select_job_fini(jobs[ending], cluster)
        _, fresh, fresh_jobs, _ = _built(seed)
        fresh.select_job_begin(starting, cluster)
        fresh.select_job_fini(fresh_jobs[ending], cluster)
        again = _ask(asked, job, nodes, first, cluster)
        assert again == _ask(fresh, job, nodes, first, cluster), seed
        changed += again != once
    # walks were remembered, kept over a start, and answers changed after an end
    assert remembered > 15 and kept > 8 and changed > 5


def test_a_shared_success_carries_the_nodes_of_the_tuple_it_answers() -> None:
    """Linear shares its successful answers by node tuple, found by the tuple's id (the
    answer holds the tuple, so no other tuple can take that id while the entry lasts).
    Tuples built and dropped call after call reuse ids all the time: each answer must carry
    the nodes asked for, also across the memo's emptying, and equal a fresh answer."""
    import plurm_select_linear

    cluster = Cluster.from_config(
        conf.parse_text(
            "ClusterName=c\nSlurmctldHost=h\nSelectType=select/linear\n"
            "NodeName=n[1-12] CPUs=1\nPartitionName=p Nodes=ALL Default=YES\n"
        )
    )
    select = LinearSelect(PluginContext(cluster.config, "select/linear"))
    select.select_node_init(cluster)
    names = cluster.config.node_names
    rng = random.Random(4)
    for _ in range(plurm_select_linear._MEMO_SIZE + 500):
        wanted = rng.sample(names, rng.randint(1, 4))
        nodes = tuple(wanted)  # a new tuple each time, dropped after the call
        result = select._success(nodes)
        assert result == SelectResult(SelectStatus.SUCCESS, tuple(wanted)), (wanted, result)
    # through the hook, on idle nodes: the same answer for the same placement, shared
    job = RealJob(1, JobRequest(min_nodes=2), 0.0, "p")
    usable = cluster.bitmap(0b111100)
    first = select.select_job_test(job, usable, SelectMode.TEST_ONLY, (), cluster)
    again = select.select_job_test(job, usable, SelectMode.TEST_ONLY, (), cluster)
    assert first == again == SelectResult(SelectStatus.SUCCESS, ("n3", "n4"))
    assert first is again
