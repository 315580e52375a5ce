"""Hypothesis state machines over every plugin combination: random submissions, cancels and
waits, with the invariants checked after every step.

- No resource is over-allocated beyond OverSubscribe: with FORCE:1 or NO, no two running
  jobs hold the same node (or, under cons_res, the same core).
- Every victim is preemptable by a job waiting for it, under the active preempt plugin.
- A suspended job runs again only once what suspended it has gone: a gang-suspended job
  never runs beside a running job on its resources (its shadow gone, or its slice come).
- Replay is deterministic: the same steps give the same history.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from plurm.model.job import JobState
from plurm.testing.cluster import TestCluster, build_cluster
from tests.combinations.test_invariants import (
    KNOWN_BROKEN,
    QOS,
    _combinations,
    _conf_text,
    _History,
)
from tests.combinations.test_invariants import Triple as Combination

PARTITIONS = ("low", "mid", "high")
QOS_NAMES = ("scavenger", "normal", "high")


def _build(combination: Combination, history: _History) -> TestCluster:
    workdir = Path(tempfile.mkdtemp(prefix="plurm-sm-"))
    mid_mode = "SUSPEND" if combination[2] == "gang" else "CANCEL"
    cluster = build_cluster(
        _conf_text(*combination),
        workdir,
        qos_text=QOS.format(mid_mode=mid_mode),
        observers=(history,),
    )
    history.plugins = cluster.plugins
    return cluster


def _machine(combination: Combination) -> type[RuleBasedStateMachine]:
    class Scheduling(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.history = _History()
            self.cluster = _build(combination, self.history)
            self.steps: list[tuple[str, tuple[object, ...]]] = []

        @rule(
            partition=st.sampled_from(PARTITIONS),
            qos=st.sampled_from(QOS_NAMES),
            nodes=st.integers(1, 6),
            runtime=st.integers(5, 900),
            limit=st.integers(1, 10),
        )
        def submit(self, partition: str, qos: str, nodes: int, runtime: int, limit: int) -> None:
            line = (
                f"sbatch -p {partition} --qos={qos} -N {nodes} -t {limit} --wrap='sleep {runtime}'"
            )
            self.steps.append(("command", (line,)))
            assert self.cluster.command(line).status == 0

        @precondition(lambda self: bool(self.cluster.controller.cluster.jobs))
        @rule(data=st.data())
        def cancel(self, data: st.DataObject) -> None:
            job_id = data.draw(st.sampled_from(sorted(self.cluster.controller.cluster.jobs)))
            self.steps.append(("command", (f"scancel {job_id}",)))
            self.cluster.command(f"scancel {job_id}")

        @rule(seconds=st.sampled_from([1, 2, 4, 15, 31, 120, 600]))
        def wait(self, seconds: int) -> None:
            self.steps.append(("wait", (seconds,)))
            clock = self.cluster.simulation.clock
            until = self.cluster.now + seconds
            while (due := clock.next_time()) is not None and due <= until:
                self.cluster.run_until(due)
                self.history.check_sharing(self.cluster.controller.cluster)
            self.cluster.run_until(until)

        @invariant()
        def nothing_overbooked(self) -> None:
            self.history.check_sharing(self.cluster.controller.cluster)
            assert self.history.overbooked == []

        @invariant()
        def victims_are_preemptable(self) -> None:
            assert self.history.unjustified == []

        @invariant()
        def states_are_consistent(self) -> None:
            for job in self.cluster.controller.cluster.jobs.values():
                assert bool(job.nodes) or not job.state.holds_resources, job
                if job.state is JobState.PENDING:
                    assert job.start_time is None

        def teardown(self) -> None:
            # Determinism: the same steps on a fresh cluster give the same history.
            again = _History()
            cluster = _build(combination, again)
            for kind, args in self.steps:
                if kind == "command":
                    cluster.command(str(args[0]))
                else:
                    cluster.run_until(cluster.now + int(str(args[0])))
            # Compare up to the same moment (the invariant steps ran to the same times), with
            # what is due at that moment run in both (a kill's first node releases come at
            # once, after the command).
            self.cluster.run_until(self.cluster.now)
            cluster.run_until(self.cluster.now)
            assert again.events == self.history.events

    # Derandomized so that CI runs the same histories every time (set it to False locally
    # to explore new ones; six random runs passed when this was written).
    Scheduling.TestCase.settings = settings(
        derandomize=True,
        max_examples=20,
        stateful_step_count=30,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    return Scheduling


@pytest.mark.parametrize(
    "combination",
    [
        pytest.param(c, marks=pytest.mark.skip(reason=KNOWN_BROKEN[c])) if c in KNOWN_BROKEN else c
        for c in _combinations()
    ],
    ids=",".join,
)
def test_invariants_hold_in_random_histories(combination: Combination) -> None:
    _machine(combination).TestCase().runTest()
