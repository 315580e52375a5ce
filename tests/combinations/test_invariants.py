"""Invariants every plugin combination must keep, on one seeded mixed workload.

The matrix is the issue's: select linear/cons_res x preempt none/partition_prio/qos x gang
off/on. tox runs this file once per combination (``tox -e combo-linear-qos-gang`` and so on,
which install only the plugin distributions the name gives and set ``PLURM_COMBINATION``);
there :func:`test_only_the_named_plugins_are_installed_and_loaded` proves that exactly that
set is installed and loaded. A plain ``pytest`` run covers every combination.

Whatever the policy: a node never runs more jobs than its partition lets share it; every
victim is preemptable, under the active preempt plugin, by a job that was waiting for it; no
job starts before it was submitted or outlives its time limit by more than Slurm's check
period plus KillWait and the teardown; every job eventually ends; preemption happens exactly
when a preempt plugin is configured; and the same input gives the same history.
"""

from __future__ import annotations

import itertools
import os
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest

from plurm import conf
from plurm._markers import hookimpl
from plurm.controller.controller import TIME_LIMIT_CHECK
from plurm.manager import Plugins
from plurm.model.cluster import Cluster
from plurm.model.job import Job, JobState
from plurm.registry import Registry
from plurm.sim.trace import TraceMapping, replay
from plurm.testing import TestCluster
from plurm.workload import clean, read_swf

SELECT = ("select/linear", "select/cons_res")
PREEMPT = ("preempt/none", "preempt/partition_prio", "preempt/qos")
GANG = ("nogang", "gang")
KILL_WAIT = 5
#: The simulated executor's longest teardown after a kill (SIGKILL + 3.35 s, rounded up).
TEARDOWN = 4

CONF = """
SelectType={select}
PreemptType={preempt}
PreemptMode={mode}
JobRequeue=1
KillWait={kill_wait}
NodeName=n[1-8] CPUs=1 RealMemory=1000
PartitionName=DEFAULT OverSubscribe={oversubscribe}
PartitionName=low Nodes=n[1-8] Default=YES PriorityTier=1 MaxTime=30
PartitionName=mid Nodes=n[1-6] PriorityTier=2 PreemptMode={mid_mode} GraceTime=20 MaxTime=30
PartitionName=high Nodes=n[3-8] PriorityTier=3 MaxTime=30
"""
QOS = """
QOS=scavenger Priority=0 PreemptMode={mid_mode}
QOS=normal Priority=10 Preempt=scavenger
QOS=high Priority=100 Preempt=normal,scavenger
"""

Combination = tuple[str, str, str]


def _combinations() -> list[Combination]:
    combos = list(itertools.product(SELECT, PREEMPT, GANG))
    wanted = os.environ.get("PLURM_COMBINATION")
    if wanted:
        combos = [c for c in combos if ",".join(c) == wanted]
        assert combos, f"PLURM_COMBINATION={wanted!r} names no combination"
    return combos


def _conf_text(select: str, preempt: str, gang: str) -> str:
    gang_on = gang == "gang"
    if preempt == "preempt/none":
        mode = mid_mode = "GANG" if gang_on else "OFF"
    else:
        mode = "REQUEUE,GANG" if gang_on else "REQUEUE"
        # Under gang scheduling the middle tier suspends its victims; otherwise it cancels.
        mid_mode = "SUSPEND" if gang_on else "CANCEL"
    text = CONF.format(
        select=select + ("\nSelectTypeParameters=CR_Core" if select == "select/cons_res" else ""),
        preempt=preempt,
        mode=mode,
        mid_mode=mid_mode,
        kill_wait=KILL_WAIT,
        oversubscribe="FORCE:1" if gang_on else "NO",
    )
    if preempt == "preempt/qos":
        # Tiers are partition_prio's ordering. Under gang scheduling a higher tier's jobs
        # cast shadows whatever the preempt plugin (so does Slurm's gang scheduler), which
        # would preempt jobs the QOS plugin protects: one tier here.
        text = text.replace("PriorityTier=2", "PriorityTier=1").replace(
            "PriorityTier=3", "PriorityTier=1"
        )
        if gang_on:
            # Slurm gang-schedules each partition on its own, so its documentation advises
            # against overlapping partitions without tiers between them (jobs of two such
            # partitions may share resources and both run): QOS preemption with gang is
            # configured on partitions that do not overlap.
            text = (
                text.replace("NodeName=n[1-8]", "NodeName=n[1-18]")
                .replace("Nodes=n[1-8] Default", "Nodes=n[1-6] Default")
                .replace("Nodes=n[1-6] PriorityTier", "Nodes=n[7-12] PriorityTier")
                .replace("Nodes=n[3-8] PriorityTier", "Nodes=n[13-18] PriorityTier")
            )
    return text + ("SchedulerTimeSlice=30\n" if gang_on else "")


class _History:
    """Records every state change and checks that each victim is preemptable by some job
    waiting at that moment; :meth:`check_sharing` runs after each instant."""

    def __init__(self) -> None:
        self.events: list[tuple[float, int, str, str]] = []
        self.overbooked: list[str] = []
        self.unjustified: list[str] = []
        #: Killed jobs whose kill may be a preemption: the verdict, given at their end.
        self._killed: dict[int, list[str]] = {}
        self.plugins: Plugins | None = None

    def check_sharing(self, cluster: Cluster) -> None:
        """No node runs two jobs once the controller is done with an instant (a gang
        scheduler may start a job and suspend another in the same instant)."""
        seen: dict[str, int] = {}
        for job in cluster.jobs_unordered(JobState.RUNNING):
            for name in job.nodes:
                if name in seen:
                    self.overbooked.append(f"t={cluster.now} {name}: {seen[name]}, {job.job_id}")
                seen[name] = job.job_id

    @hookimpl
    def plurm_job_state_changed(
        self, job: Job, old: JobState, new: JobState, cluster: Cluster
    ) -> None:
        self.events.append((cluster.now, job.job_id, old.name, new.name))
        if old is JobState.COMPLETING:
            # A kill is a preemption only if it ends as one (scancel ends CANCELLED).
            verdict = self._killed.pop(job.job_id, None)
            if verdict is not None and new is not JobState.CANCELLED:
                self.unjustified.extend(verdict)
            return
        if job.preempt_time != cluster.now or old is not JobState.RUNNING:
            return
        assert self.plugins is not None
        # The preemptor waits, or has just started (and may have been gang-suspended).
        waiting = [
            j
            for j in cluster.jobs_in(JobState.PENDING, JobState.RUNNING, JobState.SUSPENDED)
            if j is not job and (j.start_time is None or j.start_time == cluster.now)
        ]
        verdict = []
        if not any(self.plugins.preempt_preemptable(j, job, cluster) for j in waiting):
            verdict = [f"t={cluster.now} job {job.job_id} -> {new.name}"]
        if new is JobState.COMPLETING:
            self._killed[job.job_id] = verdict
        else:
            self.unjustified.extend(verdict)


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


def _run(make_cluster: Callable[..., TestCluster], combination: Combination) -> dict[str, Any]:
    history = _History()
    text = _conf_text(*combination)
    mid_mode = "SUSPEND" if combination[2] == "gang" else "CANCEL"
    cluster = make_cluster(text, qos_text=QOS.format(mid_mode=mid_mode), observers=(history,))
    history.plugins = cluster.plugins
    # A seed whose workload preempts (and times out) under every policy combination.
    for when, line in _workload(seed=7):
        _advance(cluster, history, when)
        assert cluster.command(line).status == 0, line
    _advance(cluster, history, 24 * 3600)
    return {"cluster": cluster, "history": history}


def _advance(cluster: TestCluster, history: _History, until: float) -> None:
    """Run every instant up to ``until``, checking node sharing after each."""
    clock = cluster.simulation.clock
    while (due := clock.next_time()) is not None and due <= until:
        cluster.run_until(due)
        history.check_sharing(cluster.controller.cluster)
    cluster.run_until(until)


#: Combinations that break an invariant today, with what breaks (strict: must still fail).
#: Combinations that break an invariant today, with what breaks (strict: must still fail).
KNOWN_BROKEN: dict[Combination, str] = {}


def _marked(combos: list[Combination]) -> list[Any]:
    return [
        pytest.param(c, marks=pytest.mark.xfail(reason=KNOWN_BROKEN[c], strict=True))
        if c in KNOWN_BROKEN
        else c
        for c in combos
    ]


@pytest.mark.parametrize("combination", _marked(_combinations()), ids=",".join)
def test_policies_keep_the_invariants(
    make_cluster: Callable[..., TestCluster], combination: Combination
) -> None:
    run = _run(make_cluster, combination)
    cluster: TestCluster = run["cluster"]
    history: _History = run["history"]
    assert history.overbooked == []
    assert history.unjustified == []
    jobs = cluster.controller.cluster.jobs
    assert all(job.state.finished for job in jobs.values()), cluster.states()
    starts: dict[int, float] = {}
    running: dict[int, float] = {}
    for when, job_id, old, new in history.events:
        job = jobs[job_id]
        if new == "RUNNING" and old == "PENDING":
            assert when >= job.submit_time
            starts[job_id] = when
            running[job_id] = 0.0
        # Run time (suspended time excluded) never exceeds the limit by more than the
        # check period, KillWait and the teardown.
        if old == "RUNNING" and job_id in starts:
            running[job_id] += when - starts[job_id]
            limit = (job.time_limit or 0) * 60
            assert running[job_id] <= limit + TIME_LIMIT_CHECK + KILL_WAIT + TEARDOWN
        if new == "RUNNING" and old == "SUSPENDED":
            starts[job_id] = when
    finals = {job.state for job in jobs.values()}
    assert JobState.TIMEOUT in finals
    preempted = any(
        job.restarts or job.state is JobState.PREEMPTED or job.preempt_time is not None
        for job in jobs.values()
    )
    # Preemption happens if and only if a preempt plugin is configured.
    assert preempted is (combination[1] != "preempt/none")


@pytest.mark.parametrize("combination", _combinations(), ids=",".join)
def test_the_same_input_gives_the_same_history(
    make_cluster: Callable[..., TestCluster], combination: Combination
) -> None:
    first = _run(make_cluster, combination)["history"].events
    second = _run(make_cluster, combination)["history"].events
    assert first == second


@pytest.mark.skipif(
    not os.environ.get("PLURM_COMBINATION"), reason="tox's combo-* envs install one set only"
)
def test_only_the_named_plugins_are_installed_and_loaded(tmp_path: Any) -> None:
    (select, preempt, gang) = _combinations()[0]
    registry = Registry()
    expected_select = (
        ["select/cons_res", "select/cons_tres"] if select == "select/cons_res" else [select]
    )
    assert registry.installed("select") == expected_select
    assert registry.installed("preempt") == sorted({"preempt/none", preempt})
    builtin_sched = ["sched/backfill", "sched/builtin"]
    assert registry.installed("sched") == sorted(
        [*builtin_sched, "sched/gang"] if gang == "gang" else builtin_sched
    )
    path = tmp_path / "slurm.conf"
    path.write_text("ClusterName=c\nSlurmctldHost=h\n" + _conf_text(select, preempt, gang))
    if preempt == "preempt/qos":
        (tmp_path / "qos.conf").write_text(QOS.format(mid_mode="CANCEL"))
    loaded = set(Plugins.load(conf.load(path), registry=registry).type_strings())
    policy = {t for t in loaded if t.split("/")[0] in ("select", "preempt", "sched")}
    assert policy == {select, preempt, "sched/backfill"} | (
        {"sched/gang"} if gang == "gang" else set()
    )


TRACES = Path(__file__).resolve().parents[2].parent / "shared" / "traces"
FINISHED = {state.name for state in JobState if state.finished}
TRACE_CONF = """
ClusterName=replay
SlurmctldHost=localhost
SelectType={select}
PreemptType={preempt}
PreemptMode={mode}
JobRequeue=1
KillWait=5
NodeName=n[1-64] CPUs=8 RealMemory=64000
PartitionName=DEFAULT OverSubscribe={oversubscribe}
PartitionName=batch Nodes=n[1-64] Default=YES PriorityTier=1
PartitionName=high Nodes=n[1-64] PriorityTier={high_tier}
"""


@pytest.mark.skipif(not TRACES.is_dir(), reason="needs ../shared/traces beside the checkout")
@pytest.mark.parametrize("combination", _combinations(), ids=",".join)
def test_the_shipped_traces_replay(tmp_path: Path, combination: Combination) -> None:
    """Each shipped trace (its first 60 jobs, 10% marked high priority) replays without
    error under the combination, and every job ends or is refused with a reason."""
    select, preempt, gang = combination
    gang_on = gang == "gang"
    if preempt == "preempt/none":
        mode = "GANG" if gang_on else "OFF"
    else:
        mode = "SUSPEND,GANG" if gang_on else "REQUEUE"
    text = TRACE_CONF.format(
        select=select + ("\nSelectTypeParameters=CR_Core" if select == "select/cons_res" else ""),
        preempt=preempt,
        mode=mode,
        oversubscribe="FORCE:1" if gang_on else "NO",
        high_tier=1 if preempt == "preempt/qos" else 2,
    )
    path = tmp_path / "slurm.conf"
    path.write_text(text)
    if preempt == "preempt/qos":
        (tmp_path / "qos.conf").write_text("QOS=normal\nQOS=urgent Priority=100 Preempt=normal\n")
    config = conf.load(path)
    mapping = TraceMapping(
        high_priority_fraction=0.1,
        high_priority_partition="high",
        high_priority_qos="urgent" if preempt == "preempt/qos" else None,
        seed=5,
    )
    names = sorted(TRACES.glob("*.swf.gz"))
    assert names
    for name in names:
        cleaned = clean(read_swf(name), machine_size=64 * 8)
        cleaned = attrs.evolve(cleaned, jobs=cleaned.jobs[:60])
        records = replay(cleaned, config, mapping)
        assert len(records) == len(cleaned.jobs)
        for record in records:
            assert record.rejected is not None or record.state in FINISHED, (name, record)
        assert any(record.state == "COMPLETED" for record in records), name
