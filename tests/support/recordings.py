"""Replaying a scenario recorded on real Slurm 22.05 (tests/data/*/NAME.toml and NAME.json,
made by the oracle's harness) in a simulated cluster, and comparing it step by step: the
same states, nodes and reasons at every snapshot, and each recorded command output as the
caller's comparison says."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from plurm.testing import TestCluster

#: The oracle's snapshot: squeue's fields, as oracle.py's SQUEUE_FORMAT gives them.
SNAP_COMMAND = "squeue -h -t all -o '%i|%P|%T|%N|%r'"

#: Compares one recorded show: (its command, Plurm's output, Slurm's output, where).
CompareShow = Callable[[str, str, str, str], None]


def snap(text: str) -> list[dict[str, Any]]:
    """The rows of a snapshot's squeue output, in job order, as the recording keeps them."""
    rows = []
    for line in text.splitlines():
        job, partition, state, nodes, reason = line.split("|")
        rows.append(
            {"job": int(job), "partition": partition, "state": state, "nodes": nodes}
            | {"reason": reason}
        )
    return sorted(rows, key=lambda row: row["job"])


def replay_recording(
    cluster: TestCluster,
    name: str,
    scenario: Mapping[str, Any],
    recorded: Mapping[str, Any],
    compare_show: CompareShow,
    *,
    until: float | None = None,
    nodes_differ: frozenset[int] = frozenset(),
    run_show: Callable[[str], str] | None = None,
) -> None:
    """Run ``scenario``'s steps on ``cluster`` and compare each with ``recorded`` (before
    ``until`` seconds, if given); the nodes of the jobs in ``nodes_differ`` (ordinals) are
    left out of the snapshots, and every recorded show must be replayed. ``run_show`` gives
    Plurm's output of a show (default: the command's standard output), for shows that are
    shell lines."""
    shows = iter(recorded["shows"])

    def masked(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [
            {k: v for k, v in row.items() if k != "nodes" or row["job"] not in nodes_differ}
            for row in rows
        ]

    # a snapshot lists these only, by submission ordinal, as oracle.py's does (a refused
    # job takes an id too)
    submitted: dict[int, int] = {}
    for step in scenario["step"]:
        if until is not None and step["at"] >= until:
            return
        cluster.run_until(step["at"])
        where = f"{name} t={step['at']}"
        if "cmd" in step:
            result = cluster.command(step["cmd"])
            assert "Submitted batch job" in result.stdout, (where, result.stderr)
            submitted[int(result.stdout.split()[-1])] = len(submitted) + 1
        if "snap" in step:
            got = snap(cluster.command(SNAP_COMMAND).stdout)
            got = [row | {"job": submitted[row["job"]]} for row in got if row["job"] in submitted]
            assert masked(got) == masked(recorded["snaps"][step["snap"]]), where
        if "show" in step:
            show = next(shows)
            assert show["cmd"] == step["show"]
            got = run_show(step["show"]) if run_show else cluster.command(step["show"]).stdout
            compare_show(step["show"], got, show["out"], where)
    assert next(shows, None) is None, f"{name}: a recorded show was not replayed"
