"""GRES (GPUs) against real Slurm 22.05: each scenario of tests/data/gres (recorded with
record_gres_oracle.py on the oracle, see its README.md) replayed by ``plurm simulate``'s
session: the scenario's slurm.conf with its gres.conf beside it, its commands at their times,
the same states, nodes and reasons at every snapshot (``squeue -t all -o '%i|%P|%T|%N|%r'``,
the fields the oracle records), and every ``squeue -O ...tres-alloc`` and ``sinfo -N -O
NodeList,Gres,GresUsed,CPUsState`` it showed, byte for byte."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest

from plurm.testing import TestCluster
from tests.support.recordings import replay_recording

Make = Callable[..., TestCluster]

DATA = Path(__file__).resolve().parents[1] / "data" / "gres"

#: Where ``squeue -O 'JobID:6,Partition:4,State:12,NodeList:8,...'`` prints the nodes.
_NODES = slice(22, 30)


def _unplaced(text: str, jobs: frozenset[int]) -> str:
    """``squeue -O`` text with the NODELIST cells of ``jobs`` blanked."""
    lines = []
    for line in text.splitlines(keepends=True):
        if int(line.split()[0]) in jobs:
            line = line[: _NODES.start] + " " * (_NODES.stop - _NODES.start) + line[_NODES.stop :]
        lines.append(line)
    return "".join(lines)


def replay(
    make_cluster: Make,
    name: str,
    *,
    until: float | None = None,
    nodes_differ: frozenset[int] = frozenset(),
) -> None:
    """Replay scenario ``name`` and compare it with its recording at every step (before
    ``until`` seconds, if given); the nodes of the jobs in ``nodes_differ`` (ordinals) are
    left out of the snapshots."""
    scenario = tomllib.loads((DATA / f"{name}.toml").read_text())
    recorded = json.loads((DATA / f"{name}.json").read_text())
    cluster = make_cluster(scenario["conf"], files={"gres.conf": scenario["gres"]})

    def compare(command: str, got: str, wanted: str, where: str) -> None:
        if nodes_differ and command.startswith("squeue"):
            got, wanted = _unplaced(got, nodes_differ), _unplaced(wanted, nodes_differ)
        assert got == wanted, (where, command)

    replay_recording(
        cluster, name, scenario, recorded, compare, until=until, nodes_differ=nodes_differ
    )


@pytest.mark.parametrize(
    "name",
    [
        "gpu-preempt-requeue",
        "gpu-preempt-suspend-gang",
        "gpu-preempt-suspend-gang-force",
        "gpu-typed",
    ],
)
def test_the_recorded_gres_scenario_replays_as_slurm_ran_it(make_cluster: Make, name: str) -> None:
    replay(make_cluster, name)


def test_one_gpu_jobs_go_two_per_node_and_the_fifth_waits(make_cluster: Make) -> None:
    """gpu-two-per-node's main pass (5 s): as Slurm ran it, GRES_USED and CPUS included."""
    replay(make_cluster, "gpu-two-per-node", until=36.0)


def test_backfill_starts_cpu_jobs_beside_gpu_jobs(make_cluster: Make) -> None:
    """gpu-two-per-node through 36 s: the backfill pass plans job 5 on g1 from the first
    GPU job's end, so the CPU-only jobs 6 and 7, whose runs reach past it, start on g2's
    free CPUs beside its GPU jobs (g1's are reserved for job 5)."""
    replay(make_cluster, "gpu-two-per-node")


def test_gpus_per_task_spread_over_nodes(make_cluster: Make) -> None:
    """gpu-per-task: -n4 --gpus-per-task=1 takes g[1-2] (two tasks, two GPUs each), the
    -n2 one waits for a node with two free GPUs and then runs on g1; the CPU-only job 3
    starts with it (on a node the next test tells)."""
    replay(make_cluster, "gpu-per-task", nodes_differ=frozenset({3}))


@pytest.mark.xfail(
    strict=True,
    reason="node choice: at 26 s Slurm put the CPU-only -n4 job 3 on c1 (the node without "
    "GPUs, last in the node table), Plurm on g2 (the first node with 4 CPUs free)",
)
def test_a_cpu_only_job_goes_where_slurm_put_it(make_cluster: Make) -> None:
    replay(make_cluster, "gpu-per-task")


@pytest.mark.xfail(
    strict=True,
    reason="file-less GPUs: Slurm 22.05's slurmd drops GPUs without File= and the nodes go "
    "INVAL+DRAIN (gres/gpu count reported lower than configured (0 < 2)); Plurm keeps "
    "count-only GPUs schedulable (fake GPUs for tests) and runs the jobs",
)
def test_file_less_gpus_drain_the_nodes(make_cluster: Make) -> None:
    replay(make_cluster, "gpu-fileless")
