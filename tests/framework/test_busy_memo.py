"""BUSY answers kept while nothing changes on their nodes (plurm.controller.busy).

The scheduling pass does not test again a pending job that select found BUSY while select
answers from the job and its nodes alone (``select_answers_by_nodes``), the job can have
no preemption candidate and nothing changed on its usable nodes. Random replays must come
out the same, job for job, as with every job tested at every pass.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from plurm.controller.busy import KEPT_CHANGES, BusyAnswers, ChangeLog
from plurm.manager import Plugins
from plurm.testing.cluster import JobBuilder, TestCluster

Make = Callable[..., TestCluster]
_Outcome = dict[int, tuple[str, float | None, float | None, tuple[str, ...], int, str]]


def test_an_answer_holds_until_a_change_touches_its_nodes() -> None:
    log = ChangeLog()
    answers: BusyAnswers[str] = BusyAnswers(log)
    answers.keep(1, ("request", 1), "BUSY", pending=1)
    log.changed(0b1100)  # elsewhere
    assert answers.answer(1, ("request", 1), 0b0011) == "BUSY"
    assert answers.answer(1, ("request", 2), 0b0011) is None  # asked something else
    assert answers.answer(2, ("request", 1), 0b0011) is None  # never found BUSY
    log.changed(0b0110)
    assert answers.answer(1, ("request", 1), 0b0011) is None
    assert answers.answer(1, ("request", 1), 0b0011) is None  # (until found BUSY again)
    answers.keep(1, ("request", 1), "BUSY", pending=1)
    assert answers.answer(1, ("request", 1), 0b0011) == "BUSY"
    answers.forget(1)
    assert answers.answer(1, ("request", 1), 0b0011) is None


def test_an_answer_older_than_the_changes_kept_is_not_kept() -> None:
    log = ChangeLog()
    answers: BusyAnswers[str] = BusyAnswers(log)
    answers.keep(1, "key", "BUSY", pending=2)
    answers.keep(2, "key", "BUSY", pending=2)
    for _ in range(KEPT_CHANGES):
        log.changed(0b10)
    assert answers.answer(1, "key", 0b01) == "BUSY"  # (and known to hold from now on)
    for _ in range(KEPT_CHANGES):
        log.changed(0b10)
    assert answers.answer(1, "key", 0b01) == "BUSY"
    assert answers.answer(2, "key", 0b01) is None  # its changes were let go
    assert log.count() == 2 * KEPT_CHANGES and len(log.changes) < 2 * KEPT_CHANGES


def test_the_answers_of_jobs_no_longer_pending_are_let_go() -> None:
    answers: BusyAnswers[str] = BusyAnswers(ChangeLog())
    for job_id in range(2 * 3 + KEPT_CHANGES + 1):
        answers.keep(job_id, "key", "BUSY", pending=3)
    answers.keep(1000, "key", "BUSY", pending=3)  # over the bound: the others go
    assert answers.answer(1000, "key", 1) == "BUSY"
    assert answers.answer(0, "key", 1) is None


_LINEAR = (
    "SelectType=select/linear\n"
    "PreemptType=preempt/partition_prio\nPreemptMode=REQUEUE\nJobRequeue=1\n"
    "NodeName=n[1-8] CPUs=1 RealMemory=1000\n"
    "PartitionName=low Nodes=n[1-6] Default=YES PriorityTier=1\n"
    "PartitionName=side Nodes=n[5-8] PriorityTier=1\n"
    "PartitionName=high Nodes=n[1-4] PriorityTier=2\n"
)
_CONS_RES = (
    "SelectType=select/cons_res\nSelectTypeParameters=CR_Core\n"
    "PreemptType=preempt/partition_prio\nPreemptMode=SUSPEND,GANG\nSchedulerTimeSlice=20\n"
    "NodeName=n[1-3] CPUs=4 RealMemory=1000\nNodeName=n[4-5] CPUs=2 RealMemory=1000\n"
    "PartitionName=low Nodes=n[1-5] Default=YES PriorityTier=1 OverSubscribe=FORCE:1\n"
    "PartitionName=side Nodes=n[3-5] PriorityTier=1 OverSubscribe=NO\n"
    "PartitionName=high Nodes=n[1-2] PriorityTier=2 OverSubscribe=FORCE:1\n"
)
_BACKFILL = "SchedulerType=sched/backfill\nSchedulerParameters=bf_interval=10\n"


def _replay(make_cluster: Make, text: str, seed: int, cores: bool) -> tuple[_Outcome, int]:
    """Jobs of random partitions, sizes, limits and run times come every few seconds; now and
    then one is cancelled, suspended or resumed, a node drained or resumed. Each job's
    state, start, end, nodes, restarts and reason, and how many BUSY answers were kept."""
    rng = random.Random(seed)
    cluster = make_cluster(text)
    kept = 0
    for answers in (cluster.controller._busy, cluster.controller._busy_now):
        found = answers.answer

        def counted(job_id: int, key: object, nodes: int, found: Any = found) -> object:
            nonlocal kept
            answer = found(job_id, key, nodes)
            kept += answer is not None
            return answer

        answers.answer = counted  # type: ignore[method-assign]
    nodes = [f"n{i}" for i in range(1, 6 if cores else 9)]
    for second in range(0, 900, 8):
        cluster.run_until(second)
        for _ in range(rng.randint(0, 2)):
            size = f"-n{rng.randint(1, 6)}" if cores else f"-N{rng.randint(1, 4)}"
            exclude = f" -x {rng.choice(nodes)}" if rng.random() < 0.15 else ""
            cluster.command(
                f"sbatch -p {rng.choice(['low', 'low', 'side', 'high'])} {size}{exclude} "
                f"-t {rng.randint(1, 4)} --wrap='sleep {rng.randint(10, 200)}'"
            )
        jobs = sorted(cluster.controller.cluster.jobs)
        roll = rng.random()
        if jobs and roll < 0.06:
            cluster.command(f"scancel {rng.choice(jobs)}")
        elif jobs and roll < 0.12:
            cluster.command(f"scontrol {rng.choice(['suspend', 'resume'])} {rng.choice(jobs)}")
        elif roll < 0.16:
            state = rng.choice(["drain reason=test", "resume"])
            cluster.command(f"scontrol update nodename={rng.choice(nodes)} state={state}")
    for name in nodes:  # (the drained nodes come back for the queue's rest)
        cluster.command(f"scontrol update nodename={name} state=resume")
    cluster.run_until(20000)
    outcome = {
        job_id: (
            job.state.name,
            job.start_time,
            job.end_time,
            job.nodes,
            job.restarts,
            job.reason.name,
        )
        for job_id, job in cluster.controller.cluster.jobs.items()
    }
    return outcome, kept


@pytest.mark.parametrize(
    ("text", "cores"),
    [
        (_LINEAR, False),
        (_LINEAR + _BACKFILL, False),
        (_CONS_RES, True),
        (_CONS_RES + _BACKFILL, True),
    ],
    ids=["linear", "linear-backfill", "cons_res-gang", "cons_res-gang-backfill"],
)
def test_replays_are_the_same_with_busy_answers_kept(
    make_cluster: Make, monkeypatch: pytest.MonkeyPatch, text: str, cores: bool
) -> None:
    seeds = range(4)
    kept = {seed: _replay(make_cluster, text, seed, cores) for seed in seeds}
    monkeypatch.setattr(Plugins, "select_answers_by_nodes", lambda self, cluster: False)
    asked = {seed: _replay(make_cluster, text, seed, cores) for seed in seeds}
    assert {seed: outcome for seed, (outcome, _) in kept.items()} == {
        seed: outcome for seed, (outcome, _) in asked.items()
    }
    assert all(count == 0 for _, count in asked.values())
    assert sum(count for _, count in kept.values()) > 50  # (the answers were kept)


def test_an_answer_that_changes_with_the_clock_is_asked_again(
    make_cluster: Make, job: Callable[[], JobBuilder]
) -> None:
    """Under gang scheduling a running job's cores are closed to others for its
    PreemptExemptTime, so select/cons_res does not let BUSY answers be kept: a job that
    waited for the exemption to end starts at the next pass, though nothing changed on its
    node (here a pass for a job elsewhere)."""
    cluster = make_cluster(
        "SelectType=select/cons_res\nSelectTypeParameters=CR_Core\n"
        "PreemptType=preempt/partition_prio\nPreemptMode=SUSPEND,GANG\n"
        "PreemptExemptTime=00:01:00\n"
        "NodeName=n[1-2] CPUs=2 RealMemory=1000\n"
        "PartitionName=p Nodes=n1 Default=YES OverSubscribe=FORCE:1\n"
        "PartitionName=q Nodes=n1 OverSubscribe=FORCE:1\n"
        "PartitionName=r Nodes=n2\n"
    )
    first = cluster.submit(job().tasks(2).runtime(300))
    cluster.run_until(5)
    waiting = cluster.submit(job().tasks(2).partition("q").runtime(100))
    cluster.run_until(150)  # its test at 6 said BUSY: the first job is exempt until 61
    assert cluster.state(waiting).name == "PENDING"
    elsewhere = cluster.submit(job().partition("r").runtime(100))
    cluster.run_until(152)
    assert cluster.states() == {first: "RUNNING", waiting: "RUNNING", elsewhere: "RUNNING"}
    assert cluster.job(waiting).start_time == 151.0


@pytest.mark.parametrize(
    "select",
    ["SelectType=select/linear\n", "SelectType=select/cons_res\nSelectTypeParameters=CR_Core\n"],
)
def test_a_suspension_is_a_change_on_the_jobs_nodes(
    make_cluster: Make, job: Callable[[], JobBuilder], select: str
) -> None:
    """An administrator's suspension frees the job's resources: the job found BUSY on them
    is tested again, and starts."""
    cluster = make_cluster(
        select + "NodeName=n1 CPUs=2 RealMemory=1000\nPartitionName=p Nodes=ALL Default=YES\n"
    )
    first = cluster.submit(job().tasks(2).runtime(300))
    cluster.run_until(5)
    waiting = cluster.submit(job().tasks(2).runtime(100))
    cluster.run_until(20)
    assert cluster.state(waiting).name == "PENDING"
    controller = cluster.controller
    kept = controller._busy_key(cluster.job(waiting), 0)
    assert kept is not None and controller._busy.answer(waiting, *kept) is not None  # (kept)
    assert cluster.command(f"scontrol suspend {first}").status == 0
    cluster.run_until(22)
    assert cluster.states() == {first: "SUSPENDED", waiting: "RUNNING"}


def _linear(make_cluster: Make, nodes: int, *partitions: str) -> TestCluster:
    """A select/linear cluster of ``nodes`` one-CPU nodes and these partition lines."""
    lines = "".join(f"PartitionName={partition}\n" for partition in partitions)
    return make_cluster(
        f"SelectType=select/linear\nNodeName=n[1-{nodes}] CPUs=1 RealMemory=1000\n{lines}"
    )


def test_an_answer_is_kept_only_for_the_same_nodes_withheld(make_cluster: Make) -> None:
    """A pass withholds a blocked job's partition from the jobs after it: the side job is
    BUSY on what is left of its nodes. Once the blocked job is gone, the side job is tested
    on all of them, and starts."""
    cluster = _linear(make_cluster, 8, "low Nodes=n[1-6] Default=YES", "side Nodes=n[5-8]")
    cluster.sbatch("-p side -N2 -w n[7-8]", "sleep 1000")
    cluster.sbatch("-p low -N4 -w n[1-4]", "sleep 1000")
    cluster.run_until(2)
    blocked = cluster.sbatch("-p low -N4", "sleep 100")  # only n[5-6] of low are free
    side = cluster.sbatch("-p side -N2", "sleep 100")  # n[5-6] are withheld from it
    cluster.run_until(10)
    assert (cluster.state(blocked).name, cluster.state(side).name) == ("PENDING", "PENDING")
    assert cluster.command(f"scancel {blocked}").status == 0
    cluster.run_until(12)
    assert cluster.state(side).name == "RUNNING"
    assert cluster.job(side).nodes == ("n5", "n6")


def test_an_answer_is_kept_only_for_the_same_request(make_cluster: Make) -> None:
    """A pending job whose request changes (scontrol update NumNodes) is tested anew."""
    cluster = _linear(make_cluster, 4, "p Nodes=ALL Default=YES")
    cluster.sbatch("-N2", "sleep 1000")
    cluster.run_until(2)
    waiting = cluster.sbatch("-N3", "sleep 100")
    cluster.run_until(10)
    assert cluster.state(waiting).name == "PENDING"
    assert cluster.command(f"scontrol update jobid={waiting} numnodes=2").status == 0
    cluster.run_until(12)
    assert cluster.state(waiting).name == "RUNNING"


def test_a_job_of_several_partitions_is_tested_every_time(make_cluster: Make) -> None:
    """A job submitted to two partitions is tried in each: a change on either one's nodes
    may let it start, so its BUSY answer is not kept."""
    cluster = _linear(make_cluster, 4, "a Nodes=n[1-2] Default=YES", "b Nodes=n[3-4]")
    cluster.sbatch("-p a -N2", "sleep 1000")
    cluster.sbatch("-p b -N2", "sleep 50")
    cluster.run_until(2)
    waiting = cluster.sbatch("-p a,b -N2", "sleep 100")
    cluster.run_until(10)
    assert cluster.state(waiting).name == "PENDING"
    cluster.run_until(60)  # the job on b ended at 51
    assert cluster.state(waiting).name == "RUNNING"
    assert cluster.job(waiting).nodes == ("n3", "n4")


def test_a_test_beside_running_jobs_is_kept_only_for_the_same_nodes(make_cluster: Make) -> None:
    """Backfill tests a job beside running jobs on the nodes no earlier job reserved for
    its run. Here the job needs the free cores of n1 and n2, and the second job's
    reservation of n2 keeps it to n1 (BUSY); once that job is cancelled, nothing changed on
    either node, but the job is tested on both, and starts. (The first job, blocked on n3,
    keeps it from the main pass.)"""
    cluster = make_cluster(
        "SelectType=select/cons_res\nSelectTypeParameters=CR_Core\n"
        "SchedulerType=sched/backfill\nSchedulerParameters=bf_interval=10\n"
        "NodeName=n[1-3] CPUs=4 RealMemory=1000\nPartitionName=p Nodes=ALL Default=YES\n"
    )
    cluster.sbatch("-n2 -w n1 -t 10", "sleep 1000")
    cluster.sbatch("-n2 -w n2 -t 3", "sleep 1000")  # n2's cores come back at 180
    cluster.sbatch("-n4 -w n3 -t 3", "sleep 1000")
    cluster.run_until(2)
    cluster.sbatch("-N1 -n4 -w n3 -t 10", "sleep 100")  # waits for n3 (reserved from 180)
    reserving = cluster.sbatch("-N1 -n4 -w n2 -t 10", "sleep 100")  # reserves n2 from 180
    waiting = cluster.sbatch("-n4 -t 5", "sleep 100")  # two cores of n1 and two of n2
    cluster.run_until(45)
    assert cluster.state(waiting).name == "PENDING"
    kept = cluster.controller._busy_now.answer
    key = (cluster.job(waiting).request, "p", 0b001, cluster.controller.config)
    assert kept(waiting, key, 0b001) is not None  # its BUSY answer on n1 is kept
    assert cluster.command(f"scancel {reserving}").status == 0
    cluster.run_until(70)
    assert cluster.state(waiting).name == "RUNNING"
    assert cluster.job(waiting).nodes == ("n1", "n2")
