"""The combination invariants, for any package to run against a combination with its plugin.

A :class:`Combination` names a select plugin, a preempt plugin and whether gang scheduling
is on; :func:`conf_text` makes the three-tier test cluster for it (qos.conf: :data:`QOS`),
:func:`run_workload` replays a seeded mixed workload of 60 jobs with a :class:`History`
observing every state change, and :func:`check_invariants` asserts, whatever the policy:

* a node never runs two jobs (OverSubscribe is NO, or FORCE:1 under gang);
* every victim is preemptable, under the loaded preempt plugin and guards, by a job that
  was waiting for it;
* no job starts before it was submitted, nor runs past its time limit by more than Slurm's
  check period plus KillWait and the teardown; every job ends; some time out;
* preemption happens exactly when a preempt plugin (not preempt/none) is configured.

:func:`check_deterministic` asserts that the same input gives the same history. A plugin
package runs them in its own tests::

    from plurm.testing.invariants import Combination, check_deterministic, check_invariants
    from plurm.testing.invariants import run_workload

    COMBINATION = Combination("select/linear", "preempt/demo", gang=False)

    def test_invariants(make_cluster):
        check_invariants(run_workload(make_cluster, COMBINATION), COMBINATION)

(``plugins={"preempt/demo": Demo}`` runs a factory that is not installed.)
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from plurm._markers import hookimpl
from plurm.controller.controller import TIME_LIMIT_CHECK
from plurm.manager import Plugins
from plurm.model.cluster import Cluster
from plurm.model.job import Job, JobState
from plurm.testing.cluster import TestCluster

__all__ = [
    "KILL_WAIT",
    "QOS",
    "TEARDOWN",
    "Combination",
    "History",
    "Run",
    "check_deterministic",
    "check_invariants",
    "conf_text",
    "run_workload",
    "workload",
]

KILL_WAIT = 5
#: The simulated executor's longest teardown after a kill (SIGKILL + 3.35 s, rounded up).
TEARDOWN = 4
NO_PREEMPTION = "preempt/none"

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
#: qos.conf of the test cluster (``mid_mode``: the scavenger QOS's PreemptMode).
QOS = """
QOS=scavenger Priority=0 PreemptMode={mid_mode}
QOS=normal Priority=10 Preempt=scavenger
QOS=high Priority=100 Preempt=normal,scavenger
"""


@attrs.frozen
class Combination:
    """A select plugin, a preempt plugin, gang scheduling on or off.

    ``select_parameters`` is SelectTypeParameters (``CR_Core`` for a select plugin that
    allocates cores). ``tiers`` False puts the three partitions in one PriorityTier (and,
    under gang, on separate nodes): for a policy that preempts by QOS, as gang scheduling
    suspends lower tiers whatever the preempt plugin says.
    """

    select: str
    preempt: str = NO_PREEMPTION
    gang: bool = False
    select_parameters: str = ""
    tiers: bool = True
    #: Guards stacked on the preempt plugin (PreemptGuards in plurm.conf).
    guards: tuple[str, ...] = ()
    #: PriorityType; another than priority/basic gets every factor weighted (age, size,
    #: partition, QOS) and a one-minute PriorityCalcPeriod, so that priorities move.
    priority: str = "priority/basic"
    #: False for a policy that takes its methods from its own files and wants slurm.conf's
    #: PreemptMode left out (preempt/pbs).
    preempt_mode: bool = True
    #: The policy's own files beside slurm.conf: (name, text) pairs.
    files: tuple[tuple[str, str], ...] = ()

    @property
    def id(self) -> str:
        return f"{self.select},{self.preempt},{'gang' if self.gang else 'nogang'}"

    @property
    def mid_mode(self) -> str:
        """The middle tier's PreemptMode: it suspends its victims under gang scheduling,
        otherwise it cancels them."""
        return "SUSPEND" if self.gang else "CANCEL"


def conf_text(combination: Combination) -> str:
    """slurm.conf of the test cluster for ``combination`` (without ClusterName and
    SlurmctldHost, which the ``make_cluster`` fixture adds)."""
    gang = combination.gang
    if combination.preempt == NO_PREEMPTION:
        mode = mid_mode = "GANG" if gang else "OFF"
    else:
        mode = "REQUEUE,GANG" if gang else "REQUEUE"
        mid_mode = combination.mid_mode
    select = combination.select
    if combination.select_parameters:
        select += f"\nSelectTypeParameters={combination.select_parameters}"
    text = CONF.format(
        select=select,
        preempt=combination.preempt,
        mode=mode,
        mid_mode=mid_mode,
        kill_wait=KILL_WAIT,
        oversubscribe="FORCE:1" if gang else "NO",
    )
    if not combination.tiers:
        text = text.replace("PriorityTier=2", "PriorityTier=1").replace(
            "PriorityTier=3", "PriorityTier=1"
        )
        if gang:
            # Slurm gang-schedules each partition on its own, so its documentation advises
            # against overlapping partitions without tiers between them (jobs of two such
            # partitions may share resources and both run).
            text = (
                text.replace("NodeName=n[1-8]", "NodeName=n[1-18]")
                .replace("Nodes=n[1-8] Default", "Nodes=n[1-6] Default")
                .replace("Nodes=n[1-6] PriorityTier", "Nodes=n[7-12] PriorityTier")
                .replace("Nodes=n[3-8] PriorityTier", "Nodes=n[13-18] PriorityTier")
            )
    if combination.priority != "priority/basic":
        text += (
            f"PriorityType={combination.priority}\nPriorityCalcPeriod=1\n"
            "PriorityWeightAge=1000\nPriorityMaxAge=1:00:00\nPriorityWeightJobSize=500\n"
            "PriorityWeightPartition=100\nPriorityWeightQOS=2000\n"
        )
    if not combination.preempt_mode:
        text = text.replace(f"PreemptMode={mode}\n", "", 1)
    return text + ("SchedulerTimeSlice=30\n" if gang else "")


class History:
    """An observer: records every state change and checks that each victim is preemptable
    by some job waiting at that moment; :meth:`check_sharing` runs after each instant."""

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


def workload(seed: int) -> list[tuple[float, str]]:
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


@attrs.frozen
class Run:
    """A finished workload: the cluster and what its History saw."""

    cluster: TestCluster
    history: History


def advance(cluster: TestCluster, history: History, until: float) -> None:
    """Run every instant up to ``until``, checking node sharing after each."""
    clock = cluster.simulation.clock
    while (due := clock.next_time()) is not None and due <= until:
        cluster.run_until(due)
        history.check_sharing(cluster.controller.cluster)
    cluster.run_until(until)


def run_workload(
    make_cluster: Callable[..., TestCluster],
    combination: Combination,
    *,
    plugins: Mapping[str, Callable[..., object]] | None = None,
    seed: int = 7,
) -> Run:
    """Replay the seeded workload on the test cluster of ``combination`` (``make_cluster``
    is the fixture; ``plugins`` factories take the place of installed plugins), then a
    day more, so that every job ends."""
    history = History()
    options: dict[str, Any] = {"qos_text": QOS.format(mid_mode=combination.mid_mode)}
    if plugins:
        options["plugins"] = plugins
    if combination.files:
        options["files"] = dict(combination.files)
    if combination.guards:
        options["plurm_text"] = f"PreemptGuards={','.join(combination.guards)}\n"
    cluster = make_cluster(conf_text(combination), observers=(history,), **options)
    history.plugins = cluster.plugins
    # A seed whose workload preempts (and times out) under every shipped combination.
    for when, line in workload(seed):
        advance(cluster, history, when)
        assert cluster.command(line).status == 0, line
    advance(cluster, history, 24 * 3600)
    return Run(cluster, history)


def check_invariants(run: Run, combination: Combination) -> None:
    """Assert the invariants (see the module's docstring) of a finished workload."""
    cluster, history = run.cluster, run.history
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
    assert preempted is (combination.preempt != NO_PREEMPTION)


def check_deterministic(
    make_cluster: Callable[..., TestCluster],
    combination: Combination,
    *,
    plugins: Mapping[str, Callable[..., object]] | None = None,
) -> None:
    """Assert that the workload gives the same history twice."""
    first = run_workload(make_cluster, combination, plugins=plugins).history.events
    second = run_workload(make_cluster, combination, plugins=plugins).history.events
    assert first == second
