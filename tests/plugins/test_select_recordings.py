"""How select/cons_res and cons_tres place jobs, against real Slurm 22.05: each scenario of
tests/data/select (recorded on the oracle with tests/data/gres/record_gres_oracle.py, see
its README.md) replayed by ``plurm simulate``'s session: the same states, nodes and reasons
at every snapshot and every ``squeue -O ...tres-alloc`` and ``sinfo -N -O ...CPUsState``
it showed, byte for byte."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable
from pathlib import Path

from plurm.testing import TestCluster
from tests.support.recordings import replay_recording

Make = Callable[..., TestCluster]

DATA = Path(__file__).resolve().parents[1] / "data" / "select"


def replay(make_cluster: Make, name: str) -> None:
    scenario = tomllib.loads((DATA / f"{name}.toml").read_text())
    recorded = json.loads((DATA / f"{name}.json").read_text())
    cluster = make_cluster(scenario["conf"])

    def compare(command: str, got: str, wanted: str, where: str) -> None:
        assert got == wanted, (where, command)

    replay_recording(cluster, name, scenario, recorded, compare)


def test_cons_res_fills_each_node_in_turn(make_cluster: Make) -> None:
    """cons-res-cpu-split: -n5 on three idle 4-CPU nodes takes 4 CPUs of n1 and 1 of n2, so
    a later -n3 fits on n2 alone; -N2 -n8 on two idle 8-CPU nodes keeps one CPU of the first
    back for the second (7 and 1)."""
    replay(make_cluster, "cons-res-cpu-split")
