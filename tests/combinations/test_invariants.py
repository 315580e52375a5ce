"""Invariants every plugin combination must keep, on one seeded mixed workload.

tox runs this file once per combination (``tox -e combo-qos-backfill`` and so on, which set
``PLURM_COMBINATION``); a plain ``pytest`` run covers them all. Whatever the policy, a node
never runs more jobs than its partition lets share it, no job starts before it is eligible
or outlives its time limit by more than Slurm's check period plus KillWait, every job
eventually ends, and the same input gives the same history.
"""

from __future__ import annotations

import itertools
import os
import random
from collections.abc import Callable
from typing import Any

import pytest

from plurm._markers import hookimpl
from plurm.controller.controller import TIME_LIMIT_CHECK
from plurm.model.cluster import Cluster
from plurm.model.job import Job, JobState
from plurm.testing import TestCluster

PREEMPT = ("preempt/partition_prio", "preempt/qos")
SCHED = ("sched/builtin", "sched/backfill")
KILL_WAIT = 5

CONF = """
SelectType=select/linear
PreemptType={preempt}
SchedulerType={sched}
PreemptMode=REQUEUE
JobRequeue=1
KillWait={kill_wait}
NodeName=n[1-8] CPUs=1 RealMemory=1000
PartitionName=low Nodes=n[1-8] Default=YES PriorityTier=1 MaxTime=30
PartitionName=mid Nodes=n[1-6] PriorityTier=2 PreemptMode=CANCEL GraceTime=20 MaxTime=30
PartitionName=high Nodes=n[3-8] PriorityTier=3 MaxTime=30
"""
QOS = """
QOS=scavenger Priority=0 PreemptMode=CANCEL
QOS=normal Priority=10 Preempt=scavenger
QOS=high Priority=100 Preempt=normal,scavenger
"""


def _combinations() -> list[tuple[str, str]]:
    wanted = os.environ.get("PLURM_COMBINATION")
    combos = list(itertools.product(PREEMPT, SCHED))
    if wanted:
        combos = [c for c in combos if ",".join(c) == wanted]
        assert combos, f"PLURM_COMBINATION={wanted!r} names no combination"
    return combos


class _History:
    """Records every state change, and checks node sharing at each start."""

    def __init__(self) -> None:
        self.events: list[tuple[float, int, str, str]] = []
        self.overbooked: list[str] = []

    @hookimpl
    def plurm_job_state_changed(
        self, job: Job, old: JobState, new: JobState, cluster: Cluster
    ) -> None:
        self.events.append((cluster.now, job.job_id, old.name, new.name))
        if new is JobState.RUNNING:
            running = [j for j in cluster.jobs_in(JobState.RUNNING) if j is not job]
            for name in job.nodes:
                sharing = [j.job_id for j in running if name in j.nodes]
                if sharing:
                    self.overbooked.append(f"t={cluster.now} job {job.job_id} on {name}: {sharing}")


def _workload(seed: int) -> list[tuple[float, str]]:
    """(time, sbatch line): sizes 1-6 nodes, every partition and QOS, some over-long runs."""
    rng = random.Random(seed)
    lines = []
    now = 0.0
    for _ in range(60):
        now += rng.choice([0, 0, 5, 20, 60, 150])
        partition = rng.choice(["low", "low", "mid", "high"])
        qos = rng.choice(["scavenger", "normal", "normal", "high"])
        nodes = rng.randint(1, 6)
        limit = rng.randint(1, 10)
        runtime = rng.randint(10, 900)  # some outlive their limit and time out
        lines.append(
            (
                now,
                f"sbatch -p {partition} --qos={qos} -N {nodes} -t {limit} --wrap='sleep {runtime}'",
            )
        )
    return lines


def _run(make_cluster: Callable[..., TestCluster], preempt: str, sched: str) -> dict[str, Any]:
    history = _History()
    text = CONF.format(preempt=preempt, sched=sched, kill_wait=KILL_WAIT)
    cluster = make_cluster(text, qos_text=QOS, observers=(history,))
    # A seed whose workload preempts (and times out) under every policy combination.
    for when, line in _workload(seed=7):
        cluster.run_until(when)
        assert cluster.command(line).status == 0, line
    cluster.run_until(24 * 3600)
    return {"cluster": cluster, "history": history}


@pytest.mark.parametrize(("preempt", "sched"), _combinations())
def test_policies_keep_the_invariants(
    make_cluster: Callable[..., TestCluster], preempt: str, sched: str
) -> None:
    run = _run(make_cluster, preempt, sched)
    cluster: TestCluster = run["cluster"]
    history: _History = run["history"]
    assert history.overbooked == []
    jobs = cluster.controller.cluster.jobs
    assert all(job.state.finished for job in jobs.values()), cluster.states()
    starts: dict[int, float] = {}
    for when, job_id, old, new in history.events:
        job = jobs[job_id]
        if new == "RUNNING" and old == "PENDING":
            assert when >= job.submit_time
            starts[job_id] = when
        if old in ("RUNNING", "SUSPENDED") and job_id in starts:
            limit = (job.time_limit or 0) * 60
            assert when - starts[job_id] <= limit + TIME_LIMIT_CHECK + KILL_WAIT + 1
    # The workload does exercise preemption and time limits under every policy.
    finals = {job.state for job in jobs.values()}
    assert JobState.TIMEOUT in finals
    assert any(job.restarts or job.state is JobState.PREEMPTED for job in jobs.values())


@pytest.mark.parametrize(("preempt", "sched"), _combinations())
def test_the_same_input_gives_the_same_history(
    make_cluster: Callable[..., TestCluster], preempt: str, sched: str
) -> None:
    first = _run(make_cluster, preempt, sched)["history"].events
    second = _run(make_cluster, preempt, sched)["history"].events
    assert first == second
