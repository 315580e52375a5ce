"""select/cons_res (and cons_tres), through simulated clusters built from config text."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from plurm.conf.values import OverSubscribe, OverSubscribeKind
from plurm.model.cluster import Cluster
from plurm.model.job import Job as RealJob
from plurm.model.select import SelectMode, SelectStatus
from plurm.registry import Registry
from plurm.testing import JobBuilder, TestCluster
from plurm_select_cons_res import ConsResSelect
from plurm_select_cons_res.layout import Unit
from plurm_select_cons_res.needs import Needs

Make = Callable[..., TestCluster]
Job = Callable[[], JobBuilder]


def _conf(
    params: str, nodes: str, partitions: str = "PartitionName=p Nodes=ALL Default=YES"
) -> str:
    return f"SelectType=select/cons_res\nSelectTypeParameters={params}\n{nodes}\n{partitions}\n"


def alloc(cluster: TestCluster) -> dict[str, int]:
    """CPUs allocated per node, as sinfo and scontrol see them."""
    return cluster.plugins.select_node_alloc(cluster.controller.cluster)


def sinfo_states(cluster: TestCluster) -> str:
    return cluster.command("sinfo -h -N -o '%N %t'").stdout


def _job_id(sbatch_output: str) -> int:
    return int(sbatch_output.split()[-1])


# ----------------------------------------------------------------------------- loading


@pytest.mark.parametrize("name", ["select/cons_res", "select/cons_tres"])
def test_both_entry_points_serve_the_plugin(name: str) -> None:
    registry = Registry()
    assert name in registry.installed("select")
    assert registry.entry_point(name).load() is ConsResSelect


def test_cons_tres_is_the_same_plugin(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster(
        "SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\nNodeName=n1 CPUs=4\n"
        "PartitionName=p Nodes=ALL Default=YES\n"
    )
    for _ in range(4):
        cluster.submit(job().runtime(100))
    cluster.settle()
    assert [cluster.job(i).nodes for i in range(1, 5)] == [("n1",)] * 4


# ----------------------------------------------------------------------------- units


def test_cr_core_packs_jobs_on_a_node_core_by_core(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster(_conf("CR_Core", "NodeName=n[1-2] CPUs=4"))
    cluster.submit(job().runtime(100))
    cluster.settle()
    assert alloc(cluster) == {"n1": 1}
    assert sinfo_states(cluster) == "n1 mix\nn2 idle\n"
    for _ in range(3):
        cluster.submit(job().runtime(100))
    cluster.settle()
    assert alloc(cluster) == {"n1": 4}
    assert sinfo_states(cluster) == "n1 alloc\nn2 idle\n"
    fifth = cluster.submit(job().runtime(100))
    cluster.settle()
    assert cluster.job(fifth).nodes == ("n2",)


def test_cr_core_gives_whole_cores_and_cr_cpu_single_threads(make_cluster: Make, job: Job) -> None:
    node = "NodeName=n1 Sockets=1 CoresPerSocket=2 ThreadsPerCore=2"
    by_core = make_cluster(_conf("CR_Core", node))
    by_cpu = make_cluster(_conf("CR_CPU", node))
    for cluster in (by_core, by_cpu):
        for _ in range(3):
            cluster.submit(job().runtime(100))
        cluster.settle()
    # A core's two threads both go to the job under CR_Core: two jobs fill the node.
    assert alloc(by_core) == {"n1": 4}
    assert by_core.states() == {1: "RUNNING", 2: "RUNNING", 3: "PENDING"}
    assert alloc(by_cpu) == {"n1": 3}
    assert by_cpu.states() == {1: "RUNNING", 2: "RUNNING", 3: "RUNNING"}


def test_cr_socket_gives_whole_sockets(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster(_conf("CR_Socket", "NodeName=n1 Sockets=2 CoresPerSocket=2"))
    for _ in range(3):
        cluster.submit(job().runtime(100))
    cluster.settle()
    assert alloc(cluster) == {"n1": 4}
    assert cluster.states() == {1: "RUNNING", 2: "RUNNING", 3: "PENDING"}


def test_a_partition_may_count_sockets_under_cr_core(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster(
        _conf(
            "CR_Core",
            "NodeName=n1 Sockets=2 CoresPerSocket=2",
            "PartitionName=bysocket Nodes=ALL Default=YES SelectTypeParameters=CR_Socket\n"
            "PartitionName=bycore Nodes=ALL",
        )
    )
    cluster.submit(job().runtime(100))
    cluster.settle()
    assert alloc(cluster) == {"n1": 2}
    cluster.submit(job().partition("bycore").runtime(100))
    cluster.settle()
    assert alloc(cluster) == {"n1": 3}
    blocked = cluster.submit(job().runtime(100))  # no whole socket is free any more
    cluster.settle()
    assert cluster.state(blocked).name == "PENDING"


def test_cr_memory_shares_cpus_and_counts_memory(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster(_conf("CR_Memory", "NodeName=n1 CPUs=2 RealMemory=1000"))
    first = cluster.submit(job().tasks(2).mem(400).runtime(100))
    second = cluster.submit(job().tasks(2).mem(400).runtime(100))
    third = cluster.submit(job().mem(400).runtime(100))
    cluster.settle()
    assert cluster.states() == {first: "RUNNING", second: "RUNNING", third: "PENDING"}
    assert cluster.job(third).reason.value == "Resources"
    assert alloc(cluster) == {"n1": 2}


# ----------------------------------------------------------------------------- requests


def test_tasks_nodes_and_cpus_per_task(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster(_conf("CR_Core", "NodeName=n[1-4] CPUs=4"))
    spread = cluster.submit(job().nodes(2).tasks(2).runtime(100))  # one CPU on each of 2 nodes
    cluster.settle()
    assert cluster.job(spread).nodes == ("n1", "n2")
    assert alloc(cluster) == {"n1": 1, "n2": 1}
    wide = cluster.submit(job().tasks(2).cpus_per_task(3).runtime(100))  # 3 CPUs per task
    cluster.settle()
    assert cluster.job(wide).nodes == ("n1", "n2")  # each still has 3 free CPUs
    assert alloc(cluster) == {"n1": 4, "n2": 4}
    whole = cluster.submit(job().cpus_per_task(4).runtime(100))
    cluster.settle()
    assert cluster.job(whole).nodes == ("n3",)


def test_tasks_beyond_one_node_take_the_fewest_nodes(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster(_conf("CR_Core", "NodeName=n[1-4] CPUs=2"))
    three = cluster.submit(job().tasks(3).runtime(100))
    cluster.settle()
    assert cluster.job(three).nodes == ("n1", "n2")
    assert alloc(cluster) == {"n1": 2, "n2": 1}


def test_a_small_job_fills_a_partly_used_node_first(make_cluster: Make, job: Job) -> None:
    """Slurm's best fit: the node with the fewest free CPUs that still holds the job."""
    cluster = make_cluster(_conf("CR_Core", "NodeName=n[1-3] CPUs=2"))
    cluster.submit(job().nodelist("n2").runtime(100))
    cluster.settle()
    one = cluster.submit(job().runtime(100))
    cluster.settle()
    assert cluster.job(one).nodes == ("n2",)
    two = cluster.submit(job().tasks(2).runtime(100))  # n2 is full now: the first idle node
    cluster.settle()
    assert cluster.job(two).nodes == ("n1",)


def test_required_and_excluded_nodes(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster(_conf("CR_Core", "NodeName=n[1-4] CPUs=2"))
    pinned = cluster.submit(job().nodelist("n3").runtime(100))
    avoiding = cluster.submit(job().tasks(2).exclude("n1", "n2").runtime(100))
    cluster.settle()
    assert cluster.job(pinned).nodes == ("n3",)
    assert cluster.job(avoiding).nodes == ("n4",)
    both = cluster.submit(job().nodes(2).nodelist("n3", "n1").runtime(100))
    cluster.settle()
    assert cluster.job(both).nodes == ("n1", "n3")
    assert alloc(cluster) == {"n1": 1, "n3": 2, "n4": 2}


def test_contiguous_needs_consecutive_nodes(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster(_conf("CR_Core", "NodeName=n[1-5] CPUs=1"))
    cluster.submit(job().nodelist("n3").runtime(100))
    cluster.settle()
    loose = cluster.submit(job().nodes(3).runtime(100))
    cluster.settle()
    assert cluster.job(loose).nodes == ("n1", "n2", "n4")
    cluster.command(f"scancel {loose}")
    cluster.settle()
    tight = cluster.command("sbatch -N3 --contiguous --wrap='sleep 100'")
    cluster.settle()
    assert cluster.state(_job_id(tight.stdout)).name == "PENDING"  # n[1-2] and n[4-5] only
    cluster.command(f"scancel {_job_id(tight.stdout)}")
    fits = cluster.command("sbatch -N2 --contiguous --wrap='sleep 100'")
    cluster.settle()
    assert cluster.job(_job_id(fits.stdout)).nodes == ("n1", "n2")


def test_exclusive_takes_an_idle_node_and_all_its_cpus(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster(_conf("CR_Core", "NodeName=n[1-2] CPUs=4"))
    cluster.submit(job().runtime(100))
    cluster.settle()
    whole = cluster.submit(job().exclusive().runtime(100))
    cluster.settle()
    assert cluster.job(whole).nodes == ("n2",)
    assert alloc(cluster) == {"n1": 1, "n2": 4}
    blocked = cluster.submit(job().exclusive().runtime(100))
    small = cluster.submit(job().partition("p").runtime(100))
    cluster.settle()
    assert cluster.state(blocked).name == "PENDING"
    assert cluster.state(small).name == "PENDING"  # behind the exclusive job (same partition)
    cluster.command(f"scancel {blocked}")
    cluster.settle()
    assert cluster.job(small).nodes == ("n1",)  # never beside the exclusive job on n2


# ----------------------------------------------------------------------------- memory


def test_memory_per_cpu_defaults_and_requests(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster(
        _conf("CR_Core_Memory", "DefMemPerCPU=300\nNodeName=n1 CPUs=4 RealMemory=1000")
    )
    three = cluster.submit(job().tasks(3).runtime(100))  # 900 MiB by default
    one = cluster.submit(job().runtime(100))  # 300 more: too much
    cluster.settle()
    assert cluster.states() == {three: "RUNNING", one: "PENDING"}
    cluster.command(f"scancel {one}")
    small = cluster.command("sbatch --mem-per-cpu=100 --wrap='sleep 100'")
    cluster.settle()
    assert cluster.state(_job_id(small.stdout)).name == "RUNNING"


def test_without_a_default_a_job_takes_the_whole_memory(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster(_conf("CR_Core_Memory", "NodeName=n1 CPUs=4 RealMemory=1000"))
    first = cluster.submit(job().runtime(100))
    second = cluster.submit(job().runtime(100))
    cluster.settle()
    assert cluster.states() == {first: "RUNNING", second: "PENDING"}
    assert alloc(cluster) == {"n1": 1}  # three cores idle, but no memory left


def test_mem_zero_is_the_whole_node(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster(
        _conf("CR_Core_Memory", "DefMemPerCPU=100\nNodeName=n1 CPUs=4 RealMemory=1000")
    )
    cluster.submit(job().runtime(100))
    greedy = cluster.submit(job().mem(0).runtime(100))
    cluster.settle()
    assert cluster.state(greedy).name == "PENDING"


def test_partition_default_memory_wins_over_the_cluster(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster(
        _conf(
            "CR_CPU_Memory",
            "DefMemPerCPU=100\nNodeName=n1 CPUs=4 RealMemory=1000",
            "PartitionName=big Nodes=ALL Default=YES DefMemPerNode=600\n"
            "PartitionName=small Nodes=ALL",
        )
    )
    first = cluster.submit(job().runtime(100))  # 600
    third = cluster.submit(job().partition("small").tasks(2).runtime(100))  # 2 x 100
    second = cluster.submit(job().runtime(100))  # 600 more: waits
    cluster.settle()
    assert cluster.states() == {first: "RUNNING", second: "PENDING", third: "RUNNING"}


def test_max_mem_per_node_refuses_bigger_jobs(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster(
        _conf(
            "CR_Core_Memory",
            "MaxMemPerNode=500\nNodeName=n1 CPUs=4 RealMemory=1000",
            "PartitionName=p Nodes=ALL Default=YES\n"
            "PartitionName=roomy Nodes=ALL MaxMemPerNode=800",
        )
    )
    over = cluster.submit(job().mem(600).runtime(100))
    roomy = cluster.submit(job().partition("roomy").mem(600).runtime(100))
    cluster.settle()
    assert cluster.states() == {over: "PENDING", roomy: "RUNNING"}
    result = cluster.plugins.select_job_test(
        cluster.job(over), ["n1"], SelectMode.TEST_ONLY, (), cluster.controller.cluster
    )
    assert result.status is SelectStatus.NEVER


def test_max_mem_per_cpu_raises_the_cpus_per_task(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster(
        _conf("CR_Core_Memory", "MaxMemPerCPU=100\nNodeName=n1 CPUs=4 RealMemory=1000")
    )
    cluster.command("sbatch --mem-per-cpu=250 --wrap='sleep 100'")
    cluster.settle()
    # 250 MiB per CPU is over 100: the task gets 3 CPUs at 84 MiB each.
    assert alloc(cluster) == {"n1": 3}


def test_memory_of_a_suspended_job_stays_taken(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster(_conf("CR_Core_Memory", "NodeName=n1 CPUs=2 RealMemory=1000"))
    first = cluster.submit(job().mem(800).runtime(100))
    cluster.settle()
    cluster.command(f"scontrol suspend {first}")
    cluster.settle()
    assert alloc(cluster) == {}  # its core is free ...
    small = cluster.submit(job().mem(100).runtime(100))
    big = cluster.submit(job().mem(300).runtime(100))
    cluster.settle()
    assert cluster.state(small).name == "RUNNING"
    assert cluster.state(big).name == "PENDING"  # ... its memory is not


# ----------------------------------------------------------------------------- rows


def _sharing(make_cluster: Make, oversubscribe: str) -> TestCluster:
    return make_cluster(
        _conf(
            "CR_Core",
            "NodeName=n1 CPUs=1",
            f"PartitionName=p Nodes=ALL Default=YES OverSubscribe={oversubscribe}",
        )
    )


def test_oversubscribe_no_gives_one_job_per_core(make_cluster: Make, job: Job) -> None:
    cluster = _sharing(make_cluster, "NO")
    cluster.submit(job().runtime(100))
    cluster.submit(job().oversubscribe().runtime(100))
    cluster.settle()
    assert cluster.states() == {1: "RUNNING", 2: "PENDING"}


def test_oversubscribe_yes_shares_only_with_the_option(make_cluster: Make, job: Job) -> None:
    cluster = _sharing(make_cluster, "YES:2")
    cluster.submit(job().runtime(100))
    cluster.submit(job().oversubscribe().runtime(100))
    cluster.settle()
    assert cluster.states() == {1: "RUNNING", 2: "PENDING"}
    cluster.command("scancel 1")
    cluster.submit(job().oversubscribe().runtime(100))
    cluster.submit(job().oversubscribe().runtime(100))
    cluster.settle()
    assert cluster.states() == {1: "CANCELLED", 2: "RUNNING", 3: "RUNNING", 4: "PENDING"}


def test_oversubscribe_force_always_shares_up_to_n(make_cluster: Make, job: Job) -> None:
    cluster = _sharing(make_cluster, "FORCE:3")
    for _ in range(4):
        cluster.submit(job().runtime(100))
    cluster.settle()
    assert cluster.states() == {1: "RUNNING", 2: "RUNNING", 3: "RUNNING", 4: "PENDING"}
    assert alloc(cluster) == {"n1": 1}


def test_oversubscribe_exclusive_takes_whole_nodes(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster(
        _conf(
            "CR_Core",
            "NodeName=n[1-2] CPUs=4",
            "PartitionName=p Nodes=ALL Default=YES OverSubscribe=EXCLUSIVE",
        )
    )
    for _ in range(3):
        cluster.submit(job().runtime(100))
    cluster.settle()
    assert cluster.states() == {1: "RUNNING", 2: "RUNNING", 3: "PENDING"}
    assert alloc(cluster) == {"n1": 4, "n2": 4}


def _two_partitions(make_cluster: Make) -> TestCluster:
    return make_cluster(
        _conf(
            "CR_Core",
            "NodeName=n1 CPUs=1",
            "PartitionName=p1 Nodes=n1 OverSubscribe=YES Default=YES\n"
            "PartitionName=p3 Nodes=n1 OverSubscribe=FORCE:2",
        )
    )


def test_rows_are_counted_per_partition(make_cluster: Make, job: Job) -> None:
    """Slurm's test_151_4 with cons_res: a p1 job does not use up one of p3's two places."""
    cluster = _two_partitions(make_cluster)
    cluster.command("sbatch -p p1 --oversubscribe --wrap='sleep 100'")
    cluster.settle()
    for _ in range(3):
        cluster.command("sbatch -p p3 --wrap='sleep 100'")
    cluster.settle()
    assert cluster.states() == {1: "RUNNING", 2: "RUNNING", 3: "RUNNING", 4: "PENDING"}
    assert cluster.job(4).reason.value == "Resources"


def test_a_job_that_does_not_share_keeps_its_cores(make_cluster: Make, job: Job) -> None:
    """Cores are shared only between jobs that both allow it (cons_tres_share.html)."""
    cluster = _two_partitions(make_cluster)
    cluster.command("sbatch -p p1 --wrap='sleep 100'")
    cluster.settle()
    cluster.command("sbatch -p p3 --wrap='sleep 100'")
    cluster.settle()
    assert cluster.states() == {1: "RUNNING", 2: "PENDING"}


def test_a_gang_suspended_job_keeps_its_row(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster(
        _conf(
            "CR_Core",
            "PreemptMode=GANG\nSchedulerTimeSlice=10\nNodeName=n1 CPUs=2",
            "PartitionName=p Nodes=ALL Default=YES OverSubscribe=FORCE:2",
        )
    )
    for _ in range(3):
        cluster.submit(job().tasks(2).runtime(300))
    cluster.settle()
    assert cluster.states() == {1: "RUNNING", 2: "SUSPENDED", 3: "PENDING"}
    cluster.run_until(25)  # the jobs take turns; the third still waits for a row
    assert cluster.states() == {1: "SUSPENDED", 2: "RUNNING", 3: "PENDING"}
    assert alloc(cluster) == {"n1": 2}


def test_an_admin_suspension_frees_the_cores(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster(_conf("CR_Core", "NodeName=n1 CPUs=2"))
    first = cluster.submit(job().tasks(2).runtime(300))
    second = cluster.submit(job().tasks(2).runtime(300))
    cluster.settle()
    assert alloc(cluster) == {"n1": 2}
    cluster.command(f"scontrol suspend {first}")
    cluster.settle()
    assert cluster.states() == {first: "SUSPENDED", second: "RUNNING"}
    assert alloc(cluster) == {"n1": 2}
    cluster.command(f"scontrol resume {first}")  # back on its cores, beside the other job
    cluster.settle()
    assert cluster.states() == {first: "RUNNING", second: "RUNNING"}


def test_reconfigure_reshapes_the_rows(make_cluster: Make, job: Job) -> None:
    cluster = _sharing(make_cluster, "FORCE:1")
    cluster.submit(job().runtime(100))
    cluster.submit(job().runtime(100))
    cluster.settle()
    assert cluster.states() == {1: "RUNNING", 2: "PENDING"}
    cluster.controller.update_partition(
        "p", oversubscribe=OverSubscribe(OverSubscribeKind.FORCE, 2)
    )
    cluster.settle()
    assert cluster.states() == {1: "RUNNING", 2: "RUNNING"}


# ----------------------------------------------------------------------------- test modes


def test_test_only_asks_whether_the_job_could_ever_fit(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster(_conf("CR_Core", "NodeName=n[1-2] CPUs=2"))
    cluster.submit(job().tasks(4).runtime(100))
    cluster.settle()
    state = cluster.controller.cluster
    waiting = cluster.job(cluster.submit(job().tasks(2)))
    huge = cluster.job(cluster.submit(job().tasks(5)))
    test_only = cluster.plugins.select_job_test
    assert test_only(waiting, ["n1", "n2"], SelectMode.TEST_ONLY, (), state).status is (
        SelectStatus.SUCCESS
    )
    assert test_only(waiting, ["n1", "n2"], SelectMode.RUN_NOW, (), state).status is (
        SelectStatus.BUSY
    )
    assert test_only(huge, ["n1", "n2"], SelectMode.WILL_RUN, (), state).status is (
        SelectStatus.NEVER
    )


def test_job_test_is_a_dry_run(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster(_conf("CR_Core", "NodeName=n1 CPUs=2"))
    pending = cluster.job(cluster.submit(job().tasks(2)))
    state = cluster.controller.cluster
    for _ in range(3):
        result = cluster.plugins.select_job_test(pending, ["n1"], SelectMode.RUN_NOW, (), state)
        assert result.status is SelectStatus.SUCCESS and result.nodes == ("n1",)
    assert alloc(cluster) == {}


# ----------------------------------------------------------------------------- preemption

TIERS = (
    "SelectType=select/cons_res\nSelectTypeParameters=CR_Core\n"
    "PreemptType=preempt/partition_prio\nPreemptMode={mode}\n{extra}"
    "NodeName=n[1-14] CPUs=1\n"
    "PartitionName=low Nodes=ALL PriorityTier=1 Default=YES\n"
    "PartitionName=high Nodes=ALL PriorityTier=2\n"
)


def _three_victims(make_cluster: Make, job: Job, extra: str = "") -> TestCluster:
    """Jobs of 2, 4 and 8 nodes fill 14 nodes; then an 8-node job arrives in a higher tier."""
    cluster = make_cluster(TIERS.format(mode="CANCEL", extra=extra))
    for count in (2, 4, 8):
        cluster.submit(job().nodes(count).runtime(1000))
    cluster.settle()
    assert [cluster.job(i).nodes[0] for i in (1, 2, 3)] == ["n1", "n3", "n7"]
    cluster.submit(job().nodes(8).partition("high").runtime(50))
    cluster.settle()
    cluster.settle()
    return cluster


def test_preemption_reorders_to_the_one_job_that_is_enough(make_cluster: Make, job: Job) -> None:
    """The preemption page's example: of the candidates of 2, 4 and 8 nodes (smallest first),
    removing all three makes room; the reorder puts the 8-node job first, and it alone goes."""
    cluster = _three_victims(make_cluster, job)
    assert cluster.states() == {1: "RUNNING", 2: "RUNNING", 3: "PREEMPTED", 4: "RUNNING"}
    assert cluster.job(4).nodes == tuple(f"n{i}" for i in range(7, 15))


def test_strict_order_also_keeps_the_others(make_cluster: Make, job: Job) -> None:
    cluster = _three_victims(make_cluster, job, "SchedulerParameters=preempt_strict_order\n")
    assert cluster.states() == {1: "RUNNING", 2: "RUNNING", 3: "PREEMPTED", 4: "RUNNING"}


@pytest.mark.parametrize(
    ("extra", "survivor"),
    [
        # The reorder puts the job that made room first, then the others by how many of the
        # chosen nodes they held: B (2 of them) before A (1): A survives.
        ("", "A"),
        # strict_order keeps the others' order: A before B, and B survives.
        ("SchedulerParameters=preempt_strict_order\n", "B"),
    ],
)
def test_the_reorder_ranks_earlier_candidates_by_overlap(
    make_cluster: Make, job: Job, extra: str, survivor: str
) -> None:
    cluster = make_cluster(TIERS.format(mode="CANCEL", extra=extra).replace("n[1-14]", "n[1-6]"))
    a, b, c = (cluster.submit(job().nodes(count).runtime(1000)) for count in (1, 2, 3))
    cluster.settle()
    high = cluster.submit(job().nodes(4).partition("high").runtime(50))
    cluster.settle()
    cluster.settle()
    running = {
        name
        for name, ident in (("A", a), ("B", b), ("C", c))
        if cluster.state(ident).name == "RUNNING"
    }
    assert running == {survivor}
    assert cluster.state(high).name == "RUNNING"


def test_without_reorder_every_removed_candidate_goes(make_cluster: Make, job: Job) -> None:
    cluster = _three_victims(make_cluster, job, "SchedulerParameters=preempt_reorder_count=0\n")
    assert cluster.states() == {1: "PREEMPTED", 2: "PREEMPTED", 3: "PREEMPTED", 4: "RUNNING"}
    # The victims free all but their batch hosts (n1, n3, n7) at once: n2, n4-6 and n8-14;
    # the preemptor starts on eight of those (the run n8-14 first) without waiting for the rest.
    assert cluster.job(4).nodes == ("n2", *(f"n{i}" for i in range(8, 15)))


def test_only_candidates_on_the_chosen_nodes_are_victims(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster(
        "SelectType=select/cons_res\nSelectTypeParameters=CR_Core\n"
        "PreemptType=preempt/partition_prio\nPreemptMode=REQUEUE\nJobRequeue=1\n"
        "NodeName=n[1-2] CPUs=2\n"
        "PartitionName=low Nodes=ALL PriorityTier=1 Default=YES\n"
        "PartitionName=high Nodes=ALL PriorityTier=2\n"
    )
    for _ in range(4):
        cluster.submit(job().runtime(1000))
    cluster.settle()
    high = cluster.submit(job().partition("high").tasks(2).runtime(50))
    cluster.settle()
    cluster.settle()
    # The first candidate (job 1, on n1) is not enough; job 2 (also on n1) makes room there.
    assert cluster.job(high).nodes == ("n1",)
    assert [cluster.job(i).restarts for i in (1, 2, 3, 4)] == [1, 1, 0, 0]
    assert cluster.job(1).reason.value == "BeginTime"


def test_a_cancel_candidate_is_not_removed_without_need(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster(TIERS.format(mode="CANCEL", extra=""))
    cluster.submit(job().nodes(10).runtime(1000))
    cluster.settle()
    fits = cluster.submit(job().nodes(4).partition("high").runtime(50))
    cluster.settle()
    assert cluster.states() == {1: "RUNNING", fits: "RUNNING"}
    assert cluster.job(fits).nodes == ("n11", "n12", "n13", "n14")


SEED_FUTURE = (
    "SelectType=select/cons_res\nSelectTypeParameters=CR_Core\n"
    "PreemptType=preempt/partition_prio\nPreemptMode=SUSPEND,GANG\n{extra}"
    "NodeName=n[1-5] CPUs=2 RealMemory=1000\n"
    "PartitionName=DEFAULT OverSubscribe=FORCE:1 Nodes=n[1-5]\n"
    "PartitionName=active PriorityTier=1 Default=YES\n"
    "PartitionName=hipri PriorityTier=2\n"
)


def test_suspend_gang_places_the_preemptor_on_lower_tier_jobs(make_cluster: Make, job: Job) -> None:
    """The preemption page's "future ideas" example, as Slurm 22.05 ran it: the hipri job
    takes n[1-3], on top of all three jobs (not the idle n[4-5]), and gang suspends them."""
    cluster = make_cluster(SEED_FUTURE.format(extra=""))
    for _ in range(3):
        cluster.submit(job().tasks(2).runtime(300))
    cluster.settle()
    assert [cluster.job(i).nodes for i in (1, 2, 3)] == [("n1",), ("n2",), ("n3",)]
    hipri = cluster.submit(job().nodes(3).tasks(6).partition("hipri").runtime(10))
    cluster.settle()
    assert cluster.states() == {1: "SUSPENDED", 2: "SUSPENDED", 3: "SUSPENDED", 4: "RUNNING"}
    assert cluster.job(hipri).nodes == ("n1", "n2", "n3")
    # Suspended by gang, the jobs keep their rows: their nodes still count as allocated.
    assert alloc(cluster) == {"n1": 2, "n2": 2, "n3": 2}
    cluster.run_until(15)
    assert cluster.states() == {1: "RUNNING", 2: "RUNNING", 3: "RUNNING", 4: "COMPLETED"}


def test_exempt_jobs_keep_their_cores(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster(SEED_FUTURE.format(extra="PreemptExemptTime=00:01:00\n"))
    for _ in range(5):
        cluster.submit(job().tasks(2).runtime(300))
    cluster.settle()
    hipri = cluster.submit(job().tasks(2).partition("hipri").runtime(10))
    cluster.settle()
    assert cluster.state(hipri).name == "PENDING"
    cluster.run_until(119)  # the exemption ended at 61, but only a periodic pass notices it
    assert cluster.state(hipri).name == "PENDING"
    cluster.run_until(121)
    assert cluster.state(hipri).name == "RUNNING"
    assert cluster.job(hipri).nodes == ("n1",)
    assert cluster.state(1).name == "SUSPENDED"


def test_a_higher_tier_job_is_never_placed_on(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster(SEED_FUTURE.format(extra=""))
    cluster.submit(job().nodes(5).tasks(10).partition("hipri").runtime(300))
    cluster.settle()
    low = cluster.submit(job().runtime(10))
    cluster.settle()
    assert cluster.states() == {1: "RUNNING", low: "PENDING"}


QOS_CONF = (
    "SelectType=select/cons_res\nSelectTypeParameters=CR_Core\n"
    "PreemptType=preempt/qos\nPreemptMode=SUSPEND,GANG\nSchedulerTimeSlice=10\n"
    "NodeName=n1 CPUs=2\nPartitionName=p Nodes=ALL Default=YES OverSubscribe=FORCE:1\n"
)
QOS_TEXT = "QOS=normal Priority=10\nQOS=high Priority=100 Preempt=normal\n"


def test_qos_suspension_stacks_the_preemptor_in_the_extra_row(make_cluster: Make, job: Job) -> None:
    """preempt/qos with SUSPEND,GANG in one FORCE:1 partition: the high-QOS job is placed on
    the running job's cores (the extra row) and the two are gang scheduled."""
    cluster = make_cluster(QOS_CONF, qos_text=QOS_TEXT)
    cluster.submit(job().tasks(2).runtime(300))
    cluster.settle()
    plain = cluster.submit(job().tasks(2).runtime(300))
    high = cluster.submit(job().tasks(2).qos("high").runtime(300))
    cluster.settle()
    assert cluster.state(high).name in ("RUNNING", "SUSPENDED")
    assert cluster.state(plain).name == "PENDING"
    assert {cluster.state(1).name, cluster.state(high).name} == {"RUNNING", "SUSPENDED"}


TEST_128_1 = (
    "SelectType=select/cons_res\nSelectTypeParameters=CR_Core\n"
    "PreemptType=preempt/partition_prio\nPreemptMode={mode},GANG\nNodeName=n1 CPUs=2\n"
    "PartitionName=partition1 Nodes=n1 PriorityTier=1 Default=YES\n"
    "PartitionName=partition2 Nodes=n1 PriorityTier=2 PreemptMode=OFF\n"
)


@pytest.mark.parametrize(
    ("mode", "low_during", "low_after"),
    [("SUSPEND", "SUSPENDED", "RUNNING"), ("CANCEL", "PREEMPTED", "PREEMPTED")],
)
def test_exclusive_jobs_preempt_across_tiers(
    make_cluster: Make, job: Job, mode: str, low_during: str, low_after: str
) -> None:
    """Slurm's test_128_1: -N1 --exclusive jobs on one node shared by two tiers."""
    cluster = make_cluster(TEST_128_1.format(mode=mode))
    low = cluster.submit(job().exclusive().runtime(300))
    cluster.settle()
    high = cluster.submit(job().exclusive().partition("partition2").runtime(20))
    cluster.settle()
    cluster.settle()
    assert (cluster.state(low).name, cluster.state(high).name) == (low_during, "RUNNING")
    cluster.run_until(40)
    assert (cluster.state(low).name, cluster.state(high).name) == (low_after, "COMPLETED")


def test_the_qos_extra_row_does_not_make_a_partition_sharing(make_cluster: Make, job: Job) -> None:
    """preempt/qos gives every partition one more row; jobs that do not share still pack."""
    cluster = make_cluster(
        "SelectType=select/cons_res\nSelectTypeParameters=CR_Core\n"
        "PreemptType=preempt/qos\nPreemptMode=REQUEUE\nNodeName=n1 CPUs=2\n"
        "PartitionName=a Nodes=ALL Default=YES\nPartitionName=b Nodes=ALL\n",
        qos_text=QOS_TEXT,
    )
    cluster.submit(job().runtime(100))
    cluster.submit(job().partition("b").runtime(100))
    cluster.settle()
    assert cluster.states() == {1: "RUNNING", 2: "RUNNING"}
    assert alloc(cluster) == {"n1": 2}


# ----------------------------------------------------------------------------- fast path

# Few node shapes (sockets, cores per socket, threads per core), so that runs tie.
_NODE = st.sampled_from([(1, 1, 1), (1, 4, 1), (2, 2, 1), (1, 2, 2), (2, 3, 2)])
_RUNNING = st.tuples(
    st.integers(0, 2**14 - 1),  # the nodes it is tested or started on (a bitmap)
    st.integers(1, 12),  # tasks
    st.integers(1, 3),  # CPUs per task
    st.booleans(),  # started where select placed it, or on the nodes as given
    st.sampled_from(["run", "exclusive", "admin-suspended", "ended"]),
)


def _busy_select(
    params: str, nodes: list[tuple[int, int, int]], running: list[tuple[int, int, int, bool, str]]
) -> tuple[Cluster, ConsResSelect]:
    """A cluster of ``nodes`` (sockets, cores per socket, threads per core) and its cons_res
    plugin with the ``running`` jobs begun on it (see ``_RUNNING``)."""
    from plurm import conf
    from plurm.model.cluster import Cluster
    from plurm.model.job import Job as RealJob
    from plurm.model.job import JobRequest, JobState
    from plurm.registry import PluginContext

    lines = "".join(
        f"NodeName=n{i:02d} CPUs={s * c * t} Sockets={s} CoresPerSocket={c} ThreadsPerCore={t}\n"
        for i, (s, c, t) in enumerate(nodes)
    )
    config = conf.parse_text(f"ClusterName=c\nSlurmctldHost=h\n{_conf(params, lines.rstrip())}")
    cluster = Cluster.from_config(config)
    select = ConsResSelect(PluginContext(config, "select/cons_res"))
    select.select_node_init(cluster)
    every = (1 << len(nodes)) - 1
    for job_id, (where, count, per_task, placed, fate) in enumerate(running, start=1):
        request = JobRequest(ntasks=count, cpus_per_task=per_task, exclusive=fate == "exclusive")
        busy = RealJob(job_id, request, 0.0, "p")
        on = cluster.bitmap(where & every or 1)
        result = select.select_job_test(busy, on, SelectMode.RUN_NOW, (), cluster)
        if placed and result.status is SelectStatus.SUCCESS:
            busy.nodes = result.nodes
        else:
            busy.nodes = tuple(on)  # the core may start a job where select would not
        busy.state = JobState.RUNNING
        select.select_job_begin(busy, cluster)
        if fate == "admin-suspended":
            select.select_job_suspend(busy, True, cluster)
        elif fate == "ended":
            select.select_job_fini(busy, cluster)
    return cluster, select


def _test_job(
    select: ConsResSelect,
    cluster: Cluster,
    tasks: int,
    cpus_per_task: int,
    min_nodes: int,
    max_nodes: int | None,
) -> tuple[RealJob, Needs]:
    """Job 99 of partition p (at most ``max_nodes`` more nodes than ``min_nodes``), and
    its needs."""
    from plurm.model.job import JobRequest

    request = JobRequest(
        min_nodes=min_nodes,
        max_nodes=None if max_nodes is None else min_nodes + max_nodes,
        ntasks=tasks,
        cpus_per_task=cpus_per_task,
    )
    job = RealJob(99, request, 0.0, "p")
    needs = select._needs(job, cluster)
    assert needs is not None
    return job, needs


@settings(max_examples=1000, deadline=None, derandomize=True)
@given(
    params=st.sampled_from(["CR_Core", "CR_CPU"]),
    nodes=st.lists(_NODE, min_size=1, max_size=14),
    running=st.lists(_RUNNING, max_size=8),
    tasks=st.integers(1, 12),
    cpus_per_task=st.integers(1, 3),
    min_nodes=st.integers(1, 3),
    max_nodes=st.sampled_from([None, 0, 2]),
    mask=st.one_of(st.just(2**14 - 1), st.integers(0, 2**14 - 1)),
)
def test_free_core_placement_matches_the_general_code(
    params: str,
    nodes: list[tuple[int, int, int]],
    running: list[tuple[int, int, int, bool, str]],
    tasks: int,
    cpus_per_task: int,
    min_nodes: int,
    max_nodes: int | None,
    mask: int,
) -> None:
    """FreeCores (the common case on bitmaps) gives the placement the general code gives on
    the same usage: on random clusters of mixed nodes, with running jobs placed by select or
    started anywhere (overlapping cores), exclusive, admin-suspended or ended."""
    from plurm_select_cons_res.free_cores import on_free_cores
    from plurm_select_cons_res.usage import Usage

    cluster, select = _busy_select(params, nodes, running)
    every = (1 << len(nodes)) - 1
    _, needs = _test_job(select, cluster, tasks, cpus_per_task, min_nodes, max_nodes)
    unit = select.resource.unit
    assert on_free_cores(needs, unit)
    names = tuple(cluster.bitmap(mask & every))
    tester = select._tester(cluster)
    for free, usage in ((select.free_cores, select.usage), (select.idle_cores, Usage())):
        fast = free.place(needs, mask & every, unit)
        slow = tester.test(needs, names, "p", usage)
        assert fast == slow
        assert (fast and fast.nodes) == (slow and slow.nodes)


# A partition: (first node, last node + 1, PriorityTier, OverSubscribe, PreemptMode or "").
_GANG_PARTITION = st.tuples(
    st.integers(0, 9),
    st.integers(1, 10),
    st.integers(1, 3),
    st.sampled_from(["NO", "FORCE:1", "YES", "FORCE:2", "EXCLUSIVE"]),
    st.sampled_from(["", "", "", "OFF"]),
)
# A job begun before the test: its partition, then as ``_RUNNING`` (whose fates include
# gang suspension), and whether it asks to share (--oversubscribe).
_GANG_RUNNING = st.tuples(
    st.integers(0, 2),
    st.integers(0, 2**10 - 1),
    st.integers(1, 12),
    st.integers(1, 3),
    st.booleans(),
    st.sampled_from(["run", "run", "exclusive", "gang-suspended", "admin-suspended", "ended"]),
    st.booleans(),
)


def _gang_select(
    params: str,
    traits: tuple[bool, bool],
    nodes: list[tuple[int, int, int]],
    partitions: list[tuple[int, int, int, str, str]],
    running: list[tuple[int, int, int, int, bool, str, bool]],
) -> tuple[Cluster, ConsResSelect, list[RealJob]]:
    """A gang-scheduled cluster of ``nodes`` in ``partitions`` (``_GANG_PARTITION``) with
    the preemption ``traits`` (by partition, suspending within partitions), and its cons_res
    plugin with the ``running`` jobs (``_GANG_RUNNING``) begun on it; and those jobs."""
    from plurm import conf
    from plurm.model.cluster import Cluster
    from plurm.model.job import JobRequest, JobState
    from plurm.model.traits import PreemptTraits
    from plurm.registry import PluginContext

    begun = []
    count = len(nodes)
    lines = "".join(
        f"NodeName=n{i:02d} CPUs={s * c * t} Sockets={s} CoresPerSocket={c} ThreadsPerCore={t}\n"
        for i, (s, c, t) in enumerate(nodes)
    )
    spans = []
    for index, (first, end, tier, oversubscribe, mode) in enumerate(partitions):
        first = min(first, count - 1)
        end = max(first + 1, min(end, count))
        spans.append(((1 << end) - 1) & ~((1 << first) - 1))
        lines += (
            f"PartitionName=p{index} Nodes=n[{first:02d}-{end - 1:02d}] PriorityTier={tier}"
            f" OverSubscribe={oversubscribe}" + (f" PreemptMode={mode}" if mode else "") + "\n"
        )
    config = conf.parse_text(
        f"ClusterName=c\nSlurmctldHost=h\nSelectType=select/cons_res\n"
        f"SelectTypeParameters={params}\nPreemptType=preempt/partition_prio\n"
        f"PreemptMode=SUSPEND,GANG\n{lines}"
    )
    cluster = Cluster.from_config(config)
    by_partition, suspend_in_partition = traits
    cluster.preempt_traits = PreemptTraits(
        by_partition=by_partition, suspend_in_partition=suspend_in_partition
    )
    select = ConsResSelect(PluginContext(config, "select/cons_res"))
    select.select_node_init(cluster)
    for job_id, (part, where, size, per_task, placed, fate, share) in enumerate(running, 1):
        part %= len(partitions)
        request = JobRequest(
            ntasks=size,
            cpus_per_task=per_task,
            exclusive=fate == "exclusive",
            oversubscribe=share,
        )
        busy = RealJob(job_id, request, 0.0, f"p{part}")
        on = cluster.bitmap(where & spans[part] or spans[part])
        result = select.select_job_test(busy, on, SelectMode.RUN_NOW, (), cluster)
        if placed and result.status is SelectStatus.SUCCESS:
            busy.nodes = result.nodes
        else:
            busy.nodes = tuple(on)  # the core may start a job where select would not
        busy.state = JobState.RUNNING
        select.select_job_begin(busy, cluster)
        begun.append(busy)
        if fate == "gang-suspended":
            select.select_job_suspend(busy, False, cluster)
        elif fate == "admin-suspended":
            select.select_job_suspend(busy, True, cluster)
        elif fate == "ended":
            select.select_job_fini(busy, cluster)
            busy.state = JobState.COMPLETED
    return cluster, select, begun


#: What the explicit examples of the gang test below share.
_GANG_EXAMPLE = {
    "params": "CR_Core",
    "cpus_per_task": 1,
    "min_nodes": 1,
    "max_nodes": None,
    "shares": False,
}


@settings(max_examples=700, deadline=None, derandomize=True)
@given(
    params=st.sampled_from(["CR_Core", "CR_CPU"]),
    traits=st.sampled_from([(True, False), (True, False), (False, False), (False, True)]),
    nodes=st.lists(_NODE, min_size=1, max_size=10),
    partitions=st.lists(_GANG_PARTITION, min_size=1, max_size=3),
    running=st.lists(_GANG_RUNNING, max_size=10),
    partition=st.integers(0, 2),
    tasks=st.integers(1, 12),
    cpus_per_task=st.integers(1, 3),
    min_nodes=st.integers(1, 3),
    max_nodes=st.sampled_from([None, 0, 2]),
    shares=st.booleans(),
    mask=st.one_of(st.just(2**10 - 1), st.integers(1, 2**10 - 1)),
)
# a job of a FORCE:1 partition goes on top of the sharing job of another of its tier
@example(
    **_GANG_EXAMPLE,
    traits=(True, False),
    nodes=[(1, 4, 1)],
    partitions=[(0, 1, 1, "FORCE:1", ""), (0, 1, 1, "FORCE:1", "")],
    running=[(1, 1, 4, 1, True, "run", False)],
    partition=0,
    tasks=1,
    mask=1,
)
# without victims by partition, a job goes on top of a higher tier's
@example(
    **_GANG_EXAMPLE,
    traits=(False, False),
    nodes=[(1, 4, 1)],
    partitions=[(0, 1, 1, "NO", ""), (0, 1, 2, "NO", "")],
    running=[(1, 1, 4, 1, True, "run", False)],
    partition=0,
    tasks=1,
    mask=1,
)
# an exclusive job of a lower tier that the core started on more nodes than select chose
# holds one core of each: step 1 may use the other three (FreeCores would not)
@example(
    **_GANG_EXAMPLE,
    traits=(True, False),
    nodes=[(1, 4, 1), (1, 4, 1), (1, 4, 1)],
    partitions=[(0, 3, 1, "NO", ""), (0, 3, 2, "NO", "")],
    running=[(0, 0b101, 1, 1, False, "exclusive", False)],
    partition=1,
    tasks=3,
    mask=0b111,
)
# a job of a higher tier goes on top of a lower one's, whose other job on the node ended
@example(
    **_GANG_EXAMPLE,
    traits=(True, False),
    nodes=[(1, 4, 1)],
    partitions=[(0, 1, 1, "NO", ""), (0, 1, 2, "NO", "")],
    running=[(0, 1, 2, 1, True, "run", False), (0, 1, 2, 1, True, "ended", False)],
    partition=1,
    tasks=4,
    mask=1,
)
def test_gang_tests_on_free_cores_match_the_general_code(
    params: str,
    traits: tuple[bool, bool],
    nodes: list[tuple[int, int, int]],
    partitions: list[tuple[int, int, int, str, str]],
    running: list[tuple[int, int, int, int, bool, str, bool]],
    partition: int,
    tasks: int,
    cpus_per_task: int,
    min_nodes: int,
    max_nodes: int | None,
    shares: bool,
    mask: int,
) -> None:
    """Under gang scheduling a RUN_NOW test takes step 1 on FreeCores and, when that finds
    no room and only jobs that keep their cores from the job are on its nodes, ends there
    (``ConsResSelect._test_now``): the same answer, nodes and cores as the general code on
    the whole usage (the plugin's reference), on random clusters of partitions of several
    tiers, sharing or not, with jobs placed by select or started anywhere, exclusive, gang-
    or admin-suspended, or ended; the policy choosing victims by partition (as
    preempt/partition_prio) or not, suspending within partitions (preempt/qos) or not."""
    from plurm.model.job import JobRequest
    from plurm_select_cons_res.free_cores import first_on_free_cores
    from plurm_select_cons_res.usage import Usage

    every = (1 << len(nodes)) - 1
    cluster, select, _ = _gang_select(params, traits, nodes, partitions, running)
    request = JobRequest(
        min_nodes=min_nodes,
        max_nodes=None if max_nodes is None else min_nodes + max_nodes,
        ntasks=tasks,
        cpus_per_task=cpus_per_task,
        oversubscribe=shares,
    )
    job = RealJob(99, request, 0.0, f"p{partition % len(partitions)}")
    on = cluster.bitmap(mask & every or every)
    answers = []
    for reference in (False, True):
        select.reference = reference
        select.tested.clear()
        result = select.select_job_test(job, on, SelectMode.RUN_NOW, (), cluster)
        tested = select.tested.get(99)
        answers.append((result.status, result.nodes, tested and tested.placement))
    assert answers[0] == answers[1]
    # and on an idle cluster, FreeCores's step 1 alone for a job that shares too
    needs = select._needs(job, cluster)
    unit = select.resource.for_partition(cluster.partition(job.partition))
    if needs is not None and first_on_free_cores(needs, unit):
        idle = select._tester(cluster).test(needs, tuple(on), job.partition, Usage())
        assert select.idle_cores.place(needs, on.mask, unit) == idle


#: What the explicit examples of the preemption memory test below share: jobs 1 and 3 are
#: no candidates, job 2 is one (REQUEUE).
_SEARCH_EXAMPLE = {
    "params": "CR_Core",
    "traits": (False, False),
    "partition": 0,
    "tasks": 4,
    "modes": ["none", "none", "REQUEUE", *["none"] * 7],
}


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    params=st.sampled_from(["CR_Core", "CR_CPU"]),
    traits=st.sampled_from([(True, False), (False, False), (False, True)]),
    nodes=st.lists(_NODE, min_size=1, max_size=8),
    partitions=st.lists(_GANG_PARTITION, min_size=1, max_size=3),
    running=st.lists(_GANG_RUNNING, max_size=10),
    partition=st.integers(0, 2),
    tasks=st.integers(1, 24),
    modes=st.lists(
        st.sampled_from(["REQUEUE", "REQUEUE", "CANCEL", "SUSPEND", "none"]),
        min_size=10,
        max_size=10,
    ),
    order=st.randoms(use_true_random=False),
    changes=st.lists(
        st.tuples(
            st.sampled_from(["end", "suspend", "resume", "offer", "withdraw", "none"]),
            st.integers(0, 9),
        ),
        max_size=4,
    ),
    mask=st.one_of(st.just(2**8 - 1), st.integers(1, 2**8 - 1)),
)
# the job that is no candidate ends: removing the candidate is enough now
@example(
    **_SEARCH_EXAMPLE,
    nodes=[(1, 4, 1)],
    partitions=[(0, 1, 1, "NO", "")],
    running=[(0, 1, 2, 1, True, "run", False), (0, 1, 2, 1, True, "run", False)],
    order=random.Random(0),
    changes=[("end", 0), ("none", 0)],
    mask=1,
)
# the policy offers the other job too, after the first: removing both is enough
@example(
    **_SEARCH_EXAMPLE,
    nodes=[(1, 4, 1)],
    partitions=[(0, 1, 1, "NO", "")],
    running=[(0, 1, 2, 1, True, "run", False), (0, 1, 2, 1, True, "run", False)],
    order=random.Random(1),  # (running jobs 2, 1)
    changes=[("offer", 0), ("offer", 1)],
    mask=1,
)
# job 1 ends on the first node: its search (a dry run) comes between that end and the
# test on both nodes, which must still see the end
@example(
    **_SEARCH_EXAMPLE,
    nodes=[(1, 4, 1), (1, 4, 1)],
    partitions=[(0, 2, 1, "NO", "")],
    running=[
        (0, 0b01, 2, 1, True, "run", False),
        (0, 0b01, 2, 1, True, "run", False),
        (0, 0b10, 4, 1, True, "run", False),
    ],
    order=random.Random(0),  # (running jobs 1, 3, 2)
    changes=[("end", 0)],
    mask=0b01,
)
# the policy offers the wider job in place of the other: removing it is enough
@example(
    **_SEARCH_EXAMPLE,
    nodes=[(1, 8, 1)],
    partitions=[(0, 1, 1, "NO", "")],
    running=[
        (0, 1, 4, 1, True, "run", False),
        (0, 1, 2, 1, True, "run", False),
        (0, 1, 2, 1, True, "run", False),
    ],
    order=random.Random(0),  # (running jobs 1, 3, 2)
    changes=[("offer", 0), ("withdraw", 2)],
    mask=1,
)
def test_a_preemption_search_that_found_nothing_is_remembered_while_it_holds(
    params: str,
    traits: tuple[bool, bool],
    nodes: list[tuple[int, int, int]],
    partitions: list[tuple[int, int, int, str, str]],
    running: list[tuple[int, int, int, int, bool, str, bool]],
    partition: int,
    tasks: int,
    modes: list[str],
    order: random.Random,
    changes: list[tuple[str, int]],
    mask: int,
) -> None:
    """A RUN_NOW test with candidates that found no placement is remembered with the view's
    refusals (``ConsResSelect._preempt``): tested again and again while jobs (candidates or
    not: ``none``) end, are suspended by gang scheduling or resume, or the policy offers
    one more or one less, it gives what the reference (no memory) gives on the same usage,
    victims included."""
    from plurm.conf.values import PreemptBase
    from plurm.model.job import JobRequest, JobState
    from plurm.model.select import Candidate

    every = (1 << len(nodes)) - 1
    cluster, select, begun = _gang_select(params, traits, nodes, partitions, running)
    job = RealJob(99, JobRequest(ntasks=tasks), 0.0, f"p{partition % len(partitions)}")
    on = cluster.bitmap(mask & every or every)
    running_jobs = [busy for busy in begun if busy.state is JobState.RUNNING]
    order.shuffle(running_jobs)
    mode_of = {busy.job_id: modes[busy.job_id % 10] for busy in begun}

    def answers() -> list[object]:
        candidates = tuple(
            Candidate(busy, PreemptBase[mode_of[busy.job_id]], 0)
            for busy in running_jobs
            if busy.state is JobState.RUNNING and mode_of[busy.job_id] != "none"
        )
        found = []
        # (a search on some nodes between the changes and a test on all of them: the
        # search's dry run leaves what the changes marked)
        for where in (on, cluster.bitmap(every)):
            for reference in (False, False, True):  # (the second may be remembered)
                select.reference = reference
                select.tested.clear()
                result = select.select_job_test(job, where, SelectMode.RUN_NOW, candidates, cluster)
                found.append((result.status, result.nodes, result.victims))
        select.reference = False
        return found

    first = answers()
    assert first[0] == first[1] == first[2]
    assert first[3] == first[4] == first[5]
    for change, which in changes:
        if running_jobs:
            busy = running_jobs[which % len(running_jobs)]
            if change == "end" and busy.state is JobState.RUNNING:
                select.select_job_fini(busy, cluster)
                busy.state = JobState.COMPLETED
            elif change == "suspend" and busy.state is JobState.RUNNING:
                select.select_job_suspend(busy, False, cluster)
            elif change == "resume":
                select.select_job_resume(busy, False, cluster)
            elif change == "offer":  # (a candidate more, the usage as it was)
                mode_of[busy.job_id] = "REQUEUE"
            elif change == "withdraw":  # (a candidate less)
                mode_of[busy.job_id] = "none"
        found = answers()
        assert found[0] == found[1] == found[2]
        assert found[3] == found[4] == found[5]


@settings(max_examples=500, deadline=None, derandomize=True)
@given(
    params=st.sampled_from(["CR_Core", "CR_CPU"]),
    node=_NODE,
    count=st.integers(1, 14),
    running=st.lists(_RUNNING, max_size=8),
    tasks=st.integers(1, 40),
    cpus_per_task=st.integers(1, 3),
    min_nodes=st.integers(1, 4),
    max_nodes=st.sampled_from([None, 0, 1, 3]),
    mask=st.one_of(st.just(2**14 - 1), st.integers(0, 2**14 - 1)),
)
def test_on_nodes_of_one_layout_a_job_placed_now_is_placed_on_an_idle_cluster(
    params: str,
    node: tuple[int, int, int],
    count: int,
    running: list[tuple[int, int, int, bool, str]],
    tasks: int,
    cpus_per_task: int,
    min_nodes: int,
    max_nodes: int | None,
    mask: int,
) -> None:
    """What select_job_test relies on to place a job before its idle test, on a cluster
    whose nodes all have one layout: whatever runs, a job FreeCores places on the cores
    free now, it also places on the idle cluster (so the idle test would not refuse it),
    and select_job_test answers what testing idle first would."""

    cluster, select = _busy_select(params, [node] * count, running)
    assert select.free_cores.one_layout
    every = (1 << count) - 1
    job, needs = _test_job(select, cluster, tasks, cpus_per_task, min_nodes, max_nodes)
    unit = select.resource.unit
    now = select.free_cores.place(needs, mask & every, unit)
    idle = select.idle_cores.place(needs, mask & every, unit)
    if now is not None:
        assert idle is not None
    result = select.select_job_test(
        job, cluster.bitmap(mask & every), SelectMode.RUN_NOW, (), cluster
    )
    if idle is None:
        assert result.status is SelectStatus.NEVER
    elif now is None:
        assert result.status is SelectStatus.BUSY
    else:
        assert result.status is SelectStatus.SUCCESS and result.nodes == now.nodes


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    params=st.sampled_from(["CR_Core", "CR_CPU"]),
    nodes=st.lists(_NODE, min_size=1, max_size=6),
    running=st.lists(_RUNNING, max_size=6),
    shape=st.tuples(
        st.integers(1, 20),  # tasks
        st.integers(1, 3),  # CPUs per task
        st.integers(1, 3),  # nodes at least
    ),
    asks=st.lists(
        st.tuples(
            st.integers(1, 63),  # nodes offered (a bitmap)
            st.sampled_from(["bitmap", "names", "reversed"]),
        ),
        min_size=1,
        max_size=6,
    ),
)
# two lists out of table order: the first never fits, the second does
@example(
    params="CR_Core",
    nodes=[(1, 2, 1), (1, 2, 1), (1, 4, 1)],
    running=[],
    shape=(5, 1, 1),
    asks=[(0b011, "reversed"), (0b101, "reversed")],
)
def test_the_idle_tests_remembered_answer_whichever_way_the_nodes_come(
    params: str,
    nodes: list[tuple[int, int, int]],
    running: list[tuple[int, int, int, bool, str]],
    shape: tuple[int, int, int],
    asks: list[tuple[int, str]],
) -> None:
    """The idle test's memory is keyed by the nodes' bitmap when they come in table order (a
    bitmap, or names in that order: one tuple of names per bitmap), else by their names:
    asked in any of these ways, one after another, select answers each test as a plugin that
    remembers nothing yet."""

    def offered_on(cluster: Cluster, mask: int, way: str) -> Sequence[str]:
        names = list(cluster.bitmap(mask))
        return {"bitmap": cluster.bitmap(mask), "names": names, "reversed": names[::-1]}[way]

    cluster, select = _busy_select(params, nodes, running)
    every = (1 << len(nodes)) - 1
    for offered, way in asks:
        job, _ = _test_job(select, cluster, *shape, None)
        on = offered_on(cluster, offered & every, way)
        result = select.select_job_test(job, on, SelectMode.RUN_NOW, (), cluster)
        other, fresh = _busy_select(params, nodes, running)
        on = offered_on(other, offered & every, way)
        expected = fresh.select_job_test(job, on, SelectMode.RUN_NOW, (), other)
        assert (result.status, result.nodes) == (expected.status, expected.nodes)


def test_on_nodes_of_two_layouts_the_idle_test_still_comes_first() -> None:
    """Slurm's node choice is not monotonic on mixed nodes: here a job fits the cores free
    now but not an idle cluster (idle, the best fit is two one-slot nodes, of which it may
    take one; now the 12-CPU node, half busy, ties them and comes first). The idle test
    refuses it for ever, as before the shortcut for one layout."""
    from plurm.model.job import Job as RealJob
    from plurm.model.job import JobRequest

    nodes = [(2, 3, 2), (1, 1, 1), (1, 4, 1), (1, 4, 1)]
    running = [(0, 1, 1, False, "run"), (0, 1, 1, False, "run")]  # two 1-CPU jobs on n00
    cluster, select = _busy_select("CR_Core", nodes, running)
    assert not select.free_cores.one_layout
    job = RealJob(99, JobRequest(min_nodes=1, max_nodes=1, ntasks=2, cpus_per_task=3), 0.0, "p")
    needs = select._needs(job, cluster)
    assert needs is not None
    usable = 0b1101  # n00, n02 and n03
    assert select.free_cores.place(needs, usable, select.resource.unit) is not None
    assert select.idle_cores.place(needs, usable, select.resource.unit) is None
    result = select.select_job_test(job, cluster.bitmap(usable), SelectMode.RUN_NOW, (), cluster)
    assert result.status is SelectStatus.NEVER


def _filled(slots: list[int], tasks: int, **request: int | None) -> list[int]:
    from plurm_select_cons_res.needs import Needs, Sharing
    from plurm_select_cons_res.placement import fill_tasks_in_order

    fields: dict[str, object] = {"cpus_per_task": 1, "min_nodes": 1, "ntasks_per_node": None}
    fields.update(request)
    needs = Needs(
        tasks=tasks,
        max_nodes=None,
        required=(),
        contiguous=False,
        sharing=Sharing.ONE_ROW,
        **fields,  # type: ignore[arg-type]
    )
    return fill_tasks_in_order(slots, [1] * len(slots), needs)


def test_cpus_fill_each_node_in_turn_as_slurm_splits_them() -> None:
    """Slurm 22.05 (cons_res/cons_tres) gives a job's CPUs node by node in the order the
    nodes were taken, each as full as it can be, keeping one core back for every other
    node the job must still have (tests/data/priority/fairtree-uneven-split,
    tests/data/select/cons-res-cpu-split)."""
    assert _filled([4, 4], 6) == [4, 2]
    assert _filled([4, 4], 5) == [4, 1]
    assert _filled([8, 8], 8, min_nodes=2) == [7, 1]
    assert _filled([4, 4, 4], 3, min_nodes=3) == [1, 1, 1]
    assert _filled([4, 4], 6, min_nodes=2, ntasks_per_node=3) == [3, 3]
    assert _filled([2, 2], 3, cpus_per_task=2) == [2, 1]
    assert _filled([4, 4], 2, min_nodes=2, cpus_per_task=3) == [1, 1]


@settings(max_examples=500, deadline=None, derandomize=True)
@given(
    slots=st.lists(st.integers(1, 9), min_size=1, max_size=12),
    tasks=st.integers(1, 120),
    per_task=st.integers(1, 3),
    min_nodes=st.integers(1, 12),
)
def test_the_fill_places_every_task_within_the_slots(
    slots: list[int], tasks: int, per_task: int, min_nodes: int
) -> None:
    """On nodes whose slots hold the tasks, every node gets a task, none more than its
    slots, and all the tasks are placed."""
    tasks = max(min(tasks, sum(slots)), len(slots))
    dealt = _filled(slots, tasks, cpus_per_task=per_task, min_nodes=min(min_nodes, len(slots)))
    assert all(1 <= count <= most for count, most in zip(dealt, slots, strict=True))
    assert sum(dealt) >= tasks


@settings(max_examples=500, deadline=None, derandomize=True)
@given(
    sockets=st.integers(1, 4),
    cores_per_socket=st.integers(1, 8),
    threads=st.integers(1, 2),
    fewer_cpus=st.integers(0, 3),
    free=st.sets(st.integers(0, 31)),
    unit=st.sampled_from([Unit.CORE, Unit.CPU]),
    exclusive=st.booleans(),
    per_task=st.integers(1, 5),
)
def test_slots_by_free_core_count_are_the_slots(
    sockets: int,
    cores_per_socket: int,
    threads: int,
    fewer_cpus: int,
    free: set[int],
    unit: Unit,
    exclusive: bool,
    per_task: int,
) -> None:
    """Per core or per CPU without memory, a test counts a node's slots from how many of
    its cores are free (``slots_of_count``): the same as ``slots`` on the free cores."""
    from plurm_select_cons_res.layout import Layout
    from plurm_select_cons_res.needs import Sharing
    from plurm_select_cons_res.placement import slots, slots_of_count

    cores = sockets * cores_per_socket
    cpus = max(1, cores * threads - fewer_cpus)
    layout = Layout(cores, threads, cores_per_socket, cpus, 1000)
    mine = frozenset(core for core in free if core < cores)
    sharing = Sharing.RESERVED if exclusive else Sharing.ONE_ROW
    needs = Needs(1, per_task, 1, None, (), False, sharing)
    expected = slots(layout, mine, unit, needs, None)
    assert slots_of_count(layout, len(mine), exclusive, per_task) == expected


_STEP = st.tuples(
    st.sampled_from(["place", "anywhere", "release", "rehold"]),
    st.integers(0, 2**12 - 1),  # nodes (a bitmap), or which held job
    st.integers(1, 40),  # tasks
    st.integers(1, 3),  # CPUs per task
    st.booleans(),  # exclusive
)


def _free_cores_state(free: object) -> tuple[object, ...]:
    """Everything FreeCores derives, and each node's jobs (those held by runs included)."""
    from plurm_select_cons_res.free_cores import FreeCores

    assert isinstance(free, FreeCores)
    jobs_on = {index: dict(on) for index, on in free._jobs_on.items()}
    for index in range(len(free.table)):
        if free._solo >> index & 1:
            assert index not in jobs_on
            jobs_on[index] = {free._owner[index]: free._union[index]}
    # the nodes with CPUs held and CPUs free, kept as it goes, are those held_cpus gives
    node_of = {name: index for index, name in enumerate(free.table)}
    partly = 0
    for name, cpus in free.held_cpus():
        if 0 < cpus < free.layouts[node_of[name]].cpus:
            partly |= 1 << node_of[name]
    assert free.partly == partly
    return (
        free.busy,
        free.free_cpus,
        free._by_free,
        free.barred,
        free._union,
        free._weight,
        free._occupied,
        jobs_on,
    )


@settings(max_examples=600, deadline=None, derandomize=True)
@given(nodes=st.lists(_NODE, min_size=1, max_size=12), steps=st.lists(_STEP, max_size=14))
def test_free_cores_by_runs_keeps_what_node_by_node_keeps(
    nodes: list[tuple[int, int, int]], steps: list[tuple[str, int, int, int, bool]]
) -> None:
    """FreeCores holds and releases placements by runs of nodes when it can (slices, not a
    loop per node). Beside a FreeCores given the same allocations without their runs (node
    by node only) and that places afresh each time (no remembered placement), every derived
    value, every node's jobs and every placement stay the same, through jobs placed on top
    of run-held nodes, releases and holds again."""
    import attrs as attrs_

    from plurm_select_cons_res.free_cores import FreeCores
    from plurm_select_cons_res.layout import Layout
    from plurm_select_cons_res.needs import Needs, Sharing
    from plurm_select_cons_res.usage import Allocation

    table = [f"n{i:02d}" for i in range(len(nodes))]
    layouts = {
        name: Layout(s * c, t, c, s * c * t, 1000)
        for name, (s, c, t) in zip(table, nodes, strict=True)
    }
    index = {name: i for i, name in enumerate(table)}
    by_runs = FreeCores(table, index, layouts)
    by_node = FreeCores(table, index, layouts)
    every = (1 << len(table)) - 1
    held: list[Allocation] = []
    ran_by_runs = False
    for job_id, (kind, where, tasks, per_task, exclusive) in enumerate(steps, start=1):
        sharing = Sharing.RESERVED if exclusive else Sharing.ONE_ROW
        if kind == "place":
            needs = Needs(tasks, per_task, 1, None, (), False, sharing)
            placed = by_runs.place(needs, where & every, Unit.CORE)
            by_node._on_runs.clear()  # its placements are made afresh, by_runs's remembered
            assert placed == by_node.place(needs, where & every, Unit.CORE)
            assert by_runs._on_runs_nodes <= 3 * len(table)  # the memo stays bounded
            if placed is None:
                continue
            allocation = placed.allocation(job_id, "p", sharing)
        elif kind == "anywhere":  # cores chosen elsewhere, maybe overlapping others
            on = [name for i, name in enumerate(table) if (where & every) >> i & 1]
            if not on:
                continue
            cores = {name: frozenset(range(min(tasks, layouts[name].cores))) for name in on}
            allocation = Allocation(job_id, "p", cores, {}, {}, sharing)
        else:
            if not held:
                continue
            allocation = held[where % len(held)]
            if kind == "release":
                held.remove(allocation)
                by_runs.release(allocation.job_id)
                by_node.release(allocation.job_id)
                assert _free_cores_state(by_runs) == _free_cores_state(by_node)
                continue
        if kind != "rehold":
            held.append(allocation)
        by_runs.hold(allocation)
        by_node.hold(attrs_.evolve(allocation, runs=()))
        ran_by_runs |= bool(by_runs._held[allocation.job_id][2])
        assert not by_node._solo
        assert _free_cores_state(by_runs) == _free_cores_state(by_node)
    for allocation in held:
        by_runs.release(allocation.job_id)
        by_node.release(allocation.job_id)
    assert _free_cores_state(by_runs) == _free_cores_state(by_node)
    assert not by_runs._occupied and not by_runs._solo


def test_free_cores_keeps_the_partly_free_nodes_of_jobs_held_by_runs() -> None:
    """A job held by runs with some of its nodes' cores (placements by runs take whole
    nodes today, but an allocation may carry runs of fewer cores) leaves those nodes with
    CPUs free; releasing it, by slices or node by node once another job came on, leaves
    none."""
    from plurm_select_cons_res.free_cores import FreeCores
    from plurm_select_cons_res.layout import Layout
    from plurm_select_cons_res.needs import Sharing
    from plurm_select_cons_res.usage import Allocation

    table = [f"n{i}" for i in range(4)]
    layouts = dict.fromkeys(table, Layout(4, 2, 4, 8, 1000))  # 4 cores of 2 CPUs
    free = FreeCores(table, {name: i for i, name in enumerate(table)}, layouts)

    def runs_of(job_id: int, cores: frozenset[int], first: int, last: int) -> Allocation:
        on = table[first:last]
        mask = sum(1 << core for core in cores)
        return Allocation(
            job_id, "p", dict.fromkeys(on, cores), {}, {}, Sharing.ONE_ROW, ((first, last, mask),)
        )

    free.hold(runs_of(1, frozenset({0, 1}), 0, 3))
    assert free._held[1][2]  # (held by runs)
    assert free.partly == 0b0111
    _free_cores_state(free)  # (the same as held_cpus gives)
    free.hold(runs_of(2, frozenset({0, 1, 2, 3}), 3, 4))
    assert free.partly == 0b0111  # a whole node has no CPU free
    free.release(1)
    assert free.partly == 0
    free.hold(runs_of(3, frozenset({0}), 0, 2))
    free.hold(Allocation(4, "p", {"n1": frozenset({1, 2, 3})}, {}, {}, Sharing.ONE_ROW))
    assert free.partly == 0b0001  # n1 is full now
    free.release(3)  # (n1 has left the run: node by node there)
    assert free.partly == 0b0010
    _free_cores_state(free)


def test_free_cores_remembers_placements_on_a_run_by_run_and_core_count() -> None:
    """A placement on a run of wholly free nodes is remembered by the run and the cores per
    node it takes: the same job again gets the same placement object, a job taking fewer
    cores per node on that run its own, each what a FreeCores without memory gives; and
    the memory stays within twice the node table (plus one run)."""
    from plurm_select_cons_res.free_cores import FreeCores
    from plurm_select_cons_res.layout import Layout
    from plurm_select_cons_res.needs import Needs, Sharing

    table = [f"n{i:02d}" for i in range(30)]
    layouts = dict.fromkeys(table, Layout(3, 2, 3, 6, 1000))  # 3 cores of 2 CPUs
    index = {name: i for i, name in enumerate(table)}
    every = (1 << len(table)) - 1

    def needs(tasks: int, per_task: int, nodes: int) -> Needs:
        return Needs(tasks, per_task, nodes, None, (), False, Sharing.ONE_ROW)

    free = FreeCores(table, index, layouts)
    # one 4-CPU task per node takes 2 cores there, six 1-CPU tasks all 3: one run, two counts
    for wanted in (needs(2, 4, 2), needs(12, 1, 2), needs(2, 4, 2)):
        placed = free.place(wanted, every, Unit.CORE)
        assert placed is not None and placed.runs == ((0, 2, placed.runs[0][2]),)
        assert placed == FreeCores(table, index, layouts).place(wanted, every, Unit.CORE)
    assert free.place(needs(2, 4, 2), every, Unit.CORE) is placed
    two = free.place(needs(12, 1, 2), every, Unit.CORE)
    assert two is not None and two.cores["n00"] == frozenset({0, 1, 2}) != placed.cores["n00"]
    placed_nodes = 0
    for length in range(1, 8):
        for first in range(len(table) - length + 1):
            run = ((1 << length) - 1) << first
            wanted = needs(6 * length, 1, length)
            placed = free.place(wanted, run, Unit.CORE)
            assert placed == FreeCores(table, index, layouts).place(wanted, run, Unit.CORE)
            placed_nodes += length
            assert free._on_runs_nodes <= 2 * len(table) + length
    assert placed_nodes > 3 * len(table)  # (so the memory was emptied on the way)


def test_free_cores_holds_a_whole_node_placement_by_runs() -> None:
    """On an idle cluster a job of whole nodes is held by one run, and released by it; a job
    that comes onto one of the run's nodes takes that node out of the run. A twin given the
    same allocations without runs keeps the same state throughout."""
    import attrs as attrs_

    from plurm_select_cons_res.free_cores import FreeCores
    from plurm_select_cons_res.layout import Layout
    from plurm_select_cons_res.needs import Needs, Sharing
    from plurm_select_cons_res.usage import Allocation

    table = [f"n{i}" for i in range(8)]
    layouts = dict.fromkeys(table, Layout(4, 1, 4, 4, 1000))
    index = {name: i for i, name in enumerate(table)}
    free = FreeCores(table, index, layouts)
    twin = FreeCores(table, index, layouts)

    def hold(allocation: Allocation) -> None:
        free.hold(allocation)
        twin.hold(attrs_.evolve(allocation, runs=()))
        assert _free_cores_state(free) == _free_cores_state(twin)

    def release(job_id: int) -> None:
        free.release(job_id)
        twin.release(job_id)
        assert _free_cores_state(free) == _free_cores_state(twin)

    needs = Needs(12, 1, 1, None, (), False, Sharing.ONE_ROW)
    placed = free.place(needs, 0b11111111, Unit.CORE)
    assert placed is not None
    assert placed.nodes == ("n0", "n1", "n2")
    assert placed.runs == ((0, 3, 0b1111),)
    hold(placed.allocation(1, "p", Sharing.ONE_ROW))
    assert free._held[1] == ([], 1, ((0, 3, 0b1111),))
    assert free._solo == free._occupied == 0b111
    assert free.free_cpus == [0, 0, 0, 4, 4, 4, 4, 4]
    release(1)
    assert free._solo == free._occupied == 0
    assert free.free_cpus == [4] * 8
    # Another job comes onto the run's middle node: the others stay held by the run; the
    # run's release empties them and leaves that job where it is.
    hold(placed.allocation(1, "p", Sharing.ONE_ROW))
    hold(Allocation(2, "p", {"n1": frozenset({3})}, {}, {}, Sharing.ONE_ROW))
    assert (free._solo, free._occupied) == (0b101, 0b111)
    assert free._jobs_on == {1: {1: 0b1111, 2: 0b1000}}
    release(1)
    assert (free._solo, free._occupied) == (0, 0b10)
    assert free._jobs_on == {1: {2: 0b1000}}
    assert free.free_cpus == [4, 3, 4, 4, 4, 4, 4, 4]
    # A run is held by slices only on nodes no job holds: an exclusive job's run on n1 now
    # goes node by node, and bars its nodes the same way.
    exclusive = Needs(8, 1, 1, None, (), False, Sharing.RESERVED)
    placed = free.place(exclusive, 0b11111101, Unit.CORE)
    assert placed is not None and placed.runs == ((2, 4, 0b1111),)
    hold(placed.allocation(3, "p", Sharing.RESERVED))
    assert free.barred == 0b1100
    hold(attrs_.evolve(placed.allocation(4, "p", Sharing.ONE_ROW), job_id=4))
    assert free._held[4][2] == ()  # its nodes were held: node by node
    release(3)
    release(4)
    release(2)
    assert free._occupied == free._solo == free.barred == 0


def test_a_jobs_needs_follow_its_partition_and_request() -> None:
    """The plugin remembers the last job's needs; a new partition (a multi-partition job
    tried in the next one, or an update) or a new request gives new needs."""
    import attrs as attrs_

    from plurm import conf
    from plurm.model.cluster import Cluster
    from plurm.model.job import Job as RealJob
    from plurm.model.job import JobRequest
    from plurm.registry import PluginContext
    from plurm_select_cons_res.needs import Sharing

    partitions = "PartitionName=a Nodes=ALL Default=YES\nPartitionName=b Nodes=ALL"
    config = conf.parse_text(
        "ClusterName=c\nSlurmctldHost=h\n"
        + _conf("CR_Core", "NodeName=n[1-2] CPUs=4", partitions + " OverSubscribe=EXCLUSIVE")
    )
    cluster = Cluster.from_config(config)
    select = ConsResSelect(PluginContext(config, "select/cons_res"))
    select.select_node_init(cluster)
    job = RealJob(1, JobRequest(ntasks=2), 0.0, "a")

    def needs() -> tuple[Sharing, int]:
        found = select._needs(job, cluster)
        assert found is not None
        return found.sharing, found.tasks

    assert needs() == (Sharing.ONE_ROW, 2)
    job.partition = "b"
    assert needs() == (Sharing.RESERVED, 2)
    job.request = attrs_.evolve(job.request, ntasks=3)
    assert needs() == (Sharing.RESERVED, 3)
    cluster.partitions["b"] = attrs_.evolve(
        cluster.partitions["b"], oversubscribe=cluster.partitions["a"].oversubscribe
    )
    assert needs()[0] is Sharing.ONE_ROW


_SHAPE_FIELDS: dict[str, st.SearchStrategy[object]] = {
    "ntasks": st.none() | st.integers(1, 9),
    "min_nodes": st.integers(1, 3),
    "max_nodes": st.none() | st.integers(1, 4),
    "cpus_per_task": st.integers(1, 3),
    "mem_per_node": st.sampled_from([None, None, None, 0, 100, 3000]),  # mostly per CPU
    "mem_per_cpu": st.none() | st.sampled_from([50, 200, 900]),
    "nodelist": st.sampled_from([(), ("n1",), ("n2", "n1")]),
    "exclusive": st.booleans(),
    "contiguous": st.booleans(),
    "oversubscribe": st.booleans(),
    # not read by needs_of: jobs differing only here share their needs
    "time_limit": st.none() | st.integers(1, 60),
}
_SHAPES = st.fixed_dictionaries(_SHAPE_FIELDS)


_PLAIN_SHAPE = {name: None for name in ("ntasks", "max_nodes", "mem_per_node", "time_limit")}


@example(  # --oversubscribe matters only where a partition says YES: found for sure here
    pool=[
        {
            **_PLAIN_SHAPE,
            "min_nodes": 1,
            "cpus_per_task": 1,
            "mem_per_cpu": None,
            "nodelist": (),
            "exclusive": False,
            "contiguous": False,
            "oversubscribe": False,
        },
        {
            **_PLAIN_SHAPE,
            "min_nodes": 1,
            "cpus_per_task": 1,
            "mem_per_cpu": None,
            "nodelist": (),
            "exclusive": False,
            "contiguous": False,
            "oversubscribe": True,
        },
    ],
    steps=[(0, "oversubscribe", "a", False)],
)
@settings(max_examples=80, deadline=None)
@given(
    st.lists(_SHAPES, min_size=2, max_size=3),
    st.lists(
        st.tuples(
            st.integers(0, 2),
            st.sampled_from(sorted(_SHAPE_FIELDS)),
            st.sampled_from(["a", "a", "b", "c"]),  # a: where --oversubscribe matters
            st.booleans(),
        ),
        min_size=1,
        max_size=8,
    ),
)
def test_needs_kept_by_request_shape_are_what_needs_of_gives(
    pool: list[dict[str, object]], steps: list[tuple[int, str, str, bool]]
) -> None:
    """Needs are kept per partition object and request shape: whatever jobs come, in any
    partition, and whatever partition update happens between them, the plugin's needs are
    what needs_of works out afresh, and jobs of one shape in one partition share them."""
    import attrs as attrs_

    from plurm import conf
    from plurm.model.cluster import Cluster
    from plurm.model.job import Job as RealJob
    from plurm.model.job import JobRequest
    from plurm.registry import PluginContext
    from plurm_select_cons_res.needs import needs_of

    config = conf.parse_text(
        "ClusterName=c\nSlurmctldHost=h\nMaxMemPerCPU=300\n"
        + _conf(
            "CR_Core_Memory",
            "NodeName=n[1-2] CPUs=4 RealMemory=4000",
            "PartitionName=a Nodes=ALL Default=YES OverSubscribe=YES DefMemPerCPU=100\n"
            "PartitionName=b Nodes=ALL OverSubscribe=EXCLUSIVE MaxMemPerNode=2000\n"
            "PartitionName=c Nodes=n1 OverSubscribe=FORCE MaxMemPerCPU=500",
        )
    )
    cluster = Cluster.from_config(config)
    select = ConsResSelect(PluginContext(config, "select/cons_res"))
    select.select_node_init(cluster)
    seen: dict[tuple[object, ...], object] = {}
    parts = []  # every partition object stays alive: ids in the keys below stay unique
    job_ids = iter(range(1, 1000))
    for which, field, partition, update in steps:
        if update:  # an scontrol update: a new partition object, with another sharing
            part = cluster.partitions[partition]
            kinds = [OverSubscribeKind.NO, OverSubscribeKind.YES, OverSubscribeKind.FORCE]
            now = part.oversubscribe.kind
            kind = kinds[(kinds.index(now) + 1) % 3] if now in kinds else OverSubscribeKind.NO
            cluster.partitions[partition] = attrs_.evolve(
                part, oversubscribe=OverSubscribe(kind, 2)
            )
        part = cluster.partitions[partition]
        parts.append(part)
        # a shape of the pool, then the same with one field of the next shape of the pool
        shape = pool[which % len(pool)]
        mixed = {**shape, field: pool[(which + 1) % len(pool)][field]}
        for request in (shape, mixed):
            job = RealJob(next(job_ids), JobRequest(**request), 0.0, partition)  # type: ignore[arg-type]
            found = select._needs(job, cluster)
            assert found == needs_of(job, part, config, memory=True)
            key = (id(part), *(value for name, value in request.items() if name != "time_limit"))
            if key in seen:
                assert found is seen[key]
            seen[key] = found


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["add", "remove", "unplace", "place", "copy", "reshape"]),
            st.integers(1, 6),
            st.sampled_from(["p", "q"]),
            st.integers(1, 3),
        ),
        max_size=30,
    )
)
def test_usage_finds_each_jobs_row_as_a_scan_of_the_rows_would(
    steps: list[tuple[str, int, str, int]],
) -> None:
    """Usage keeps the row each job is in: after any sequence of additions, removals,
    suspensions (unplace), resumptions (place), copies and reshapes, ``in_rows`` says what
    a scan of every row says, and a job is in at most one row."""
    from plurm_select_cons_res.needs import Sharing
    from plurm_select_cons_res.usage import Allocation, Usage

    usage = Usage()
    counts = {"p": 1, "q": 2}
    for action, job_id, partition, cores in steps:
        if action == "add":
            usage.remove(job_id)  # (select_job_begin takes a job out first)
            held = {"n1": frozenset(range(cores)), "n2": frozenset({cores})}
            allocation = Allocation(job_id, partition, held, {}, {}, Sharing.ONE_ROW)
            usage.add(allocation, counts[partition])
        elif action == "remove":
            usage.remove(job_id)
        elif action == "unplace":
            usage.unplace(job_id)
        elif action == "place":
            if job_id in usage.allocations and not usage.in_rows(job_id):
                usage.place(job_id, counts[usage.allocations[job_id].partition])
        elif action == "copy":
            usage = usage.copy()
        else:
            counts[partition] = cores
            usage.reshape(counts)
        rows = [row for per_partition in usage.rows.values() for row in per_partition]
        for known in range(1, 7):
            assert usage.in_rows(known) == any(known in row for row in rows)
            assert sum(known in row for row in rows) <= 1


def test_job_resources_of_a_placement_by_runs() -> None:
    """select_job_resources gives every (node, core) pair a job holds, whether its
    placement came by runs of whole nodes or node by node."""
    from plurm import conf
    from plurm.model.cluster import Cluster
    from plurm.model.job import Job as RealJob
    from plurm.model.job import JobRequest, JobState
    from plurm.registry import PluginContext

    config = conf.parse_text(
        "ClusterName=c\nSlurmctldHost=h\n" + _conf("CR_Core", "NodeName=n[1-4] CPUs=4")
    )
    cluster = Cluster.from_config(config)
    select = ConsResSelect(PluginContext(config, "select/cons_res"))
    select.select_node_init(cluster)
    held = {}
    for job_id, tasks in ((1, 4), (2, 8), (3, 3)):
        job = RealJob(job_id, JobRequest(ntasks=tasks), 0.0, "p")
        result = select.select_job_test(
            job, cluster.config.node_names, SelectMode.RUN_NOW, (), cluster
        )
        assert result.status is SelectStatus.SUCCESS
        job.nodes, job.state = result.nodes, JobState.RUNNING
        select.select_job_begin(job, cluster)
        held[job_id] = select.select_job_resources(job, cluster)
    assert select.usage.allocations[2].runs == ((1, 3, 0b1111),)
    assert held == {
        1: {("n1", core) for core in range(4)},
        2: {(name, core) for name in ("n2", "n3") for core in range(4)},
        3: {("n4", 0), ("n4", 1), ("n4", 2)},
    }


def test_a_request_built_with_a_list_of_nodes_still_runs(tmp_path: Path) -> None:
    """The Python API lets a caller give ``nodelist`` as a list: the plugin's needs, kept
    by hashable request shapes, are worked out for it afresh rather than refused."""
    from plurm.model.job import JobRequest
    from plurm.testing.cluster import build_cluster

    cluster = build_cluster(_conf("CR_Core", "NodeName=n[1-2] CPUs=2"), tmp_path)
    job_id = cluster.submit(JobRequest(nodelist=["n2"], sim_runtime=30))  # type: ignore[arg-type]
    cluster.run_until(5)
    assert cluster.states() == {job_id: "RUNNING"}
    assert cluster.controller.job(job_id).nodes == ("n2",)


_TAKEN = st.dictionaries(
    st.sampled_from(["n1", "n2", "n3"]),
    st.frozensets(st.integers(0, 3), max_size=4),
    max_size=3,
)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(names=st.lists(st.sampled_from(["n1", "n2", "n3"]), unique=True), one=_TAKEN, other=_TAKEN)
def test_a_test_skips_a_fit_only_on_the_very_cores_of_a_refused_one(
    names: list[str], one: dict[str, frozenset[int]], other: dict[str, frozenset[int]]
) -> None:
    """Within one test, a fit on blocked cores that take, on every node tested, the same
    cores as a fit that found no room is not run again (``_same_on``): only then."""
    from plurm_select_cons_res.layout import core_mask
    from plurm_select_cons_res.steps import _same_on

    same = all((one.get(name) or set()) == (other.get(name) or set()) for name in names)
    masks = [{name: core_mask(cores) for name, cores in taken.items()} for taken in (one, other)]
    assert _same_on(names, *masks) is same


_ALLOC_JOB = st.tuples(
    st.sampled_from(["low", "high"]),
    st.integers(1, 12),  # tasks
    st.integers(1, 2),  # CPUs per task
    st.integers(10, 400),  # run time
    st.booleans(),  # exclusive
)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    jobs=st.lists(_ALLOC_JOB, min_size=1, max_size=14),
    suspended=st.lists(st.integers(1, 14), max_size=3),
    stops=st.lists(st.integers(1, 600), min_size=1, max_size=4),
)
def test_the_cpus_held_per_node_are_the_sum_of_the_jobs_in_rows(
    tmp_path_factory: pytest.TempPathFactory,
    jobs: list[tuple[str, int, int, int, bool]],
    suspended: list[int],
    stops: list[int],
) -> None:
    """``select_node_alloc`` reads each node's held cores from FreeCores, kept as jobs
    start, end, are suspended by gang scheduling or an administrator and resume: at any
    time, the same CPUs per node as summing the cores of every job in a row (the plugin's
    reference); and ``select_partly_free`` the nodes among them with CPUs left."""
    from plurm.testing.cluster import build_cluster

    cluster = build_cluster(
        "SelectType=select/cons_res\nSelectTypeParameters=CR_Core\n"
        "PreemptType=preempt/partition_prio\nPreemptMode=SUSPEND,GANG\nSchedulerTimeSlice=30\n"
        "NodeName=n[1-3] CPUs=8 Sockets=2 CoresPerSocket=2 ThreadsPerCore=2\n"
        "NodeName=m[1-2] CPUs=4\n"
        "PartitionName=low Nodes=ALL Default=YES PriorityTier=1 OverSubscribe=FORCE:2\n"
        "PartitionName=high Nodes=n[1-3],m1 PriorityTier=2 OverSubscribe=NO\n",
        tmp_path_factory.mktemp("alloc"),
    )
    plugins = cluster.controller.plugins.manager.get_plugins()
    plugin = next(p for p in plugins if isinstance(p, ConsResSelect))
    state = cluster.controller.cluster
    for partition, tasks, per_task, runtime, exclusive in jobs:
        builder = JobBuilder().partition(partition).tasks(tasks).cpus_per_task(per_task)
        cluster.submit((builder.exclusive() if exclusive else builder).runtime(runtime))
    for when in sorted(stops):
        cluster.run_until(when)
        for job_id in suspended:
            if when == stops[0] and job_id <= len(jobs):
                cluster.command(f"scontrol suspend {job_id}")
        kept = plugin.select_node_alloc(state)
        partly = plugin.select_partly_free(state)
        plugin.reference = True
        try:
            summed = plugin.select_node_alloc(state)
            assert kept == summed
            assert plugin.select_partly_free(state) is None  # (the core's rule, below)
        finally:
            plugin.reference = False
        # the nodes with CPUs held and CPUs free, as the core works them out without it
        node = state.config.node
        assert partly == state.mask_of(
            [name for name, cpus in summed.items() if 0 < cpus < node(name).cpus]
        )


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.frozensets(st.integers(0, 70), max_size=12), max_size=6))
def test_core_sets_and_their_bitmasks_go_both_ways(sets: list[frozenset[int]]) -> None:
    """Tests sum cores up as core bitmasks (``View``, blocked maps) and pick them as sets:
    each is the other's, remembered or not, past 64 cores too."""
    from plurm_select_cons_res.layout import core_mask, core_set

    for cores in sets * 2:  # (the second time from memory)
        mask = core_mask(cores)
        assert mask == sum(1 << core for core in cores)
        assert core_set(mask) == cores
        assert core_set(mask | 0) is core_set(mask)
