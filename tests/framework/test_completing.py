"""A killed multi-node job frees its nodes one by one, as Slurm 22.05 does
(tests/data/oracle/cli: linear/178, linear/196-A5, requeue/015-R3, requeue/016): the nodes
that run nothing of a batch job at once, its batch host (the first node) once its script is
gone. Meanwhile it stays COMPLETING and squeue and scontrol list only the nodes it holds."""

from __future__ import annotations

from collections.abc import Callable

from plurm.testing.cluster import TestCluster

LINEAR = """
SelectType=select/linear
KillWait=5
NodeName=n[1-3] CPUs=1 RealMemory=1000
PartitionName=p Nodes=n[1-3] Default=YES
"""

CONS_RES = """
SelectType=select/cons_res
SelectTypeParameters=CR_Core
KillWait=5
NodeName=n[1-2] CPUs=2 RealMemory=1000
PartitionName=p Nodes=n[1-2] Default=YES
"""

MakeCluster = Callable[..., TestCluster]


def squeue(cluster: TestCluster, job_id: int) -> str:
    return cluster.command(f"squeue -h -t all -j {job_id} -o '%t %D %N'").stdout.strip()


def show_job(cluster: TestCluster, job_id: int) -> dict[str, str]:
    text = cluster.command(f"scontrol show job {job_id}").stdout
    return dict(word.split("=", 1) for word in text.split() if "=" in word)


def test_a_cancelled_two_node_job_frees_its_second_node_at_once(make_cluster: MakeCluster) -> None:
    cluster = make_cluster(LINEAR)
    cluster.command("sbatch -N 2 --wrap='sleep 300'")
    cluster.command("sbatch -N 2 --wrap='sleep 300'")  # waits: only n3 is free
    cluster.run_until(2)
    assert squeue(cluster, 1) == "R 2 n[1-2]"
    cluster.command("scancel 1")
    cluster.run_until(2.5)
    # job 1 keeps only its batch host; job 2 starts at once on n2 and n3
    assert squeue(cluster, 1) == "CG 1 n1"
    assert squeue(cluster, 2) == "R 2 n[2-3]"
    assert cluster.command("sinfo -h -N -o '%N %t'").stdout.split("\n")[0] == "n1 alloc"
    cluster.run_until(5.8)  # the batch host is free 3.7 s after the kill
    # a finished job shows its whole allocation again
    assert squeue(cluster, 1) == "CA 2 n[1-2]"
    assert cluster.command("sinfo -h -N -o '%N %t'").stdout.split("\n")[0] == "n1 idle"


def test_the_batch_host_stays_busy_until_the_job_is_gone(make_cluster: MakeCluster) -> None:
    cluster = make_cluster(LINEAR)
    cluster.command("sbatch -N 3 --wrap='sleep 300'")
    cluster.run_until(2)
    cluster.command("scancel 1")
    cluster.command("sbatch -N 3 --wrap='sleep 300'")
    cluster.run_until(5.6)
    assert squeue(cluster, 1) == "CG 1 n1"
    assert squeue(cluster, 2) == "PD 3"  # n2 and n3 are free, n1 is not yet
    cluster.run_until(5.8)
    assert squeue(cluster, 2) == "R 3 n[1-3]"  # the release triggers a pass at once


def test_a_job_with_steps_keeps_all_its_nodes_until_its_end(make_cluster: MakeCluster) -> None:
    cluster = make_cluster(LINEAR)
    cluster.command("sbatch -N 2 --wrap='srun sleep 300'")
    cluster.run_until(2)
    cluster.command("scancel 1")
    cluster.run_until(5.6)
    assert squeue(cluster, 1) == "CG 2 n[1-2]"  # its steps run on every node


def test_a_requeued_job_shows_its_restart_and_batch_host_while_it_completes(
    make_cluster: MakeCluster,
) -> None:
    cluster = make_cluster(LINEAR + "PreemptType=preempt/partition_prio\nPreemptMode=REQUEUE\n")
    cluster.command("sbatch -N 2 --wrap='sleep 300'")
    cluster.run_until(2)
    cluster.command("scontrol requeue 1")
    cluster.run_until(5)
    fields = show_job(cluster, 1)
    assert (fields["JobState"], fields["Restarts"]) == ("COMPLETING", "1")
    assert (fields["NodeList"], fields["BatchHost"], fields["NumNodes"]) == ("n1", "n1", "1")
    assert fields["NumCPUs"] == "1"
    assert fields["TRES"] == "cpu=2,node=2,billing=2"  # what it was given
    assert fields["StartTime"] != "Unknown"
    assert "PreemptEligibleTime" not in fields  # shown neither for a job back in the queue
    cluster.run_until(6)
    fields = show_job(cluster, 1)
    assert (fields["JobState"], fields["Reason"], fields["Restarts"]) == (
        "PENDING",
        "BeginTime",
        "1",  # counted once
    )


def test_a_timed_out_job_shows_its_reason_while_it_completes(make_cluster: MakeCluster) -> None:
    cluster = make_cluster(LINEAR)
    cluster.command("sbatch -N 2 -t 1 --wrap='sleep 300'")
    cluster.run_until(91)  # killed by the time-limit check at 90
    out = cluster.command("squeue -h -t all -o '%t %r %N'").stdout
    assert out == "CG TimeLimit n1\n"


def test_cons_res_frees_the_cores_of_the_released_node(make_cluster: MakeCluster) -> None:
    cluster = make_cluster(CONS_RES)
    cluster.command("sbatch -N 2 -n 4 --wrap='sleep 300'")
    cluster.command("sbatch -N 1 -n 2 --wrap='sleep 300'")  # waits for a whole node
    cluster.run_until(2)
    assert squeue(cluster, 2) == "PD 1"
    cluster.command("scancel 1")
    cluster.run_until(2.5)
    assert squeue(cluster, 1) == "CG 1 n1"
    assert squeue(cluster, 2) == "R 1 n2"
    assert show_job(cluster, 1)["NumCPUs"] == "2"
    assert show_job(cluster, 1)["TRES"] == "cpu=4,node=2,billing=4"


def test_gang_resumes_a_job_on_a_released_node(make_cluster: MakeCluster) -> None:
    cluster = make_cluster(
        "SelectType=select/linear\nPreemptType=preempt/partition_prio\n"
        "PreemptMode=SUSPEND,GANG\nSchedulerTimeSlice=60\n"
        "NodeName=n[1-2] CPUs=1 RealMemory=1000\n"
        "PartitionName=p Nodes=n[1-2] Default=YES OverSubscribe=FORCE:2\n"
    )
    cluster.command("sbatch -N 2 --wrap='sleep 300'")
    cluster.run_until(2)
    cluster.command("sbatch -w n2 --wrap='sleep 300'")  # shares n2 with job 1: waits its turn
    cluster.run_until(3)
    assert squeue(cluster, 2) == "S 1 n2"
    cluster.command("scancel 1")
    cluster.run_until(3.5)  # job 1 still completes on n1; n2 is job 2's alone
    assert (squeue(cluster, 1), squeue(cluster, 2)) == ("CG 1 n1", "R 1 n2")


def test_gang_resumes_a_job_under_the_shadow_of_a_released_node(make_cluster: MakeCluster) -> None:
    """The released node leaves the shadow a higher-tier job casts on other partitions."""
    cluster = make_cluster(
        "SelectType=select/linear\nPreemptType=preempt/partition_prio\n"
        "PreemptMode=SUSPEND,GANG\nSchedulerTimeSlice=60\nKillWait=5\n"
        "NodeName=n[1-2] CPUs=1 RealMemory=1000\n"
        "PartitionName=lo Nodes=n[1-2] Default=YES PriorityTier=1\n"
        "PartitionName=hi Nodes=n[1-2] PriorityTier=2\n"
    )
    cluster.command("sbatch -p lo -w n2 --wrap='sleep 300'")
    cluster.run_until(2)
    cluster.command("sbatch -p hi -N 2 --wrap='sleep 300'")  # suspends job 1 under it
    cluster.run_until(4)
    assert (squeue(cluster, 1), squeue(cluster, 2)) == ("S 1 n2", "R 2 n[1-2]")
    cluster.command("scancel 2")
    cluster.run_until(4.5)  # job 2 still completes on n1; n2 is out of its shadow
    assert (squeue(cluster, 1), squeue(cluster, 2)) == ("R 1 n2", "CG 1 n1")
