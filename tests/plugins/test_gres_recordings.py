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
from typing import Any

import pytest

from plurm.testing import TestCluster

Make = Callable[..., TestCluster]

DATA = Path(__file__).resolve().parents[1] / "data" / "gres"

#: The oracle's snapshot: squeue's fields, as oracle.py's SQUEUE_FORMAT gives them.
SNAP_COMMAND = "squeue -h -t all -o '%i|%P|%T|%N|%r'"


def _snap(text: str) -> list[dict[str, Any]]:
    rows = []
    for line in text.splitlines():
        job, partition, state, nodes, reason = line.split("|")
        rows.append(
            {"job": int(job), "partition": partition, "state": state, "nodes": nodes}
            | {"reason": reason}
        )
    return sorted(rows, key=lambda row: row["job"])


def replay(make_cluster: Make, name: str) -> None:
    """Replay scenario ``name`` and compare it with its recording at every step."""
    scenario = tomllib.loads((DATA / f"{name}.toml").read_text())
    recorded = json.loads((DATA / f"{name}.json").read_text())
    cluster = make_cluster(scenario["conf"], files={"gres.conf": scenario["gres"]})
    shows = iter(recorded["shows"])
    for step in scenario["step"]:
        cluster.run_until(step["at"])
        where = f"{name} t={step['at']}"
        if "cmd" in step:
            result = cluster.command(step["cmd"])
            assert "Submitted batch job" in result.stdout, (where, result.stderr)
        if "snap" in step:
            got = _snap(cluster.command(SNAP_COMMAND).stdout)
            assert got == recorded["snaps"][step["snap"]], where
        if "show" in step:
            show = next(shows)
            assert show["cmd"] == step["show"]
            assert cluster.command(step["show"]).stdout == show["out"], (where, show["cmd"])
    assert next(shows, None) is None, f"{name}: a recorded show was not replayed"


SCENARIOS = [
    "gpu-two-per-node",
    "gpu-preempt-requeue",
    "gpu-preempt-suspend-gang",
    "gpu-preempt-suspend-gang-force",
    "gpu-per-task",
    "gpu-typed",
    "gpu-fileless",
]


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_recorded_gres_scenario_replays_as_slurm_ran_it(make_cluster: Make, name: str) -> None:
    replay(make_cluster, name)
