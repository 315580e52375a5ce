"""The source documents' examples, replayed in the simulator, against what real Slurm 22.05
did with them (tests/data/scenarios/*.json, recorded with ../shared/oracle/oracle.py).

Each scenario's steps become a session: ``cmd`` steps run as they are, and each ``snap`` runs
squeue with the recorder's own format (``%i|%P|%T|%N|%r``). The test compares every job's state,
node list, partition and reason at every snapshot, and the squeue text itself.
"""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from pathlib import Path
from typing import Any

import pytest

from plurm import conf
from plurm.sim.session import SessionLine, Simulation
from tests.conftest import DATA

SCENARIOS = DATA / "scenarios"
SNAP_FORMAT = "%i|%P|%T|%N|%r"
# The recorder adds these lines to every scenario (SchedulerType stays Slurm's default,
# sched/backfill, as in the recordings).
HEADER = "ClusterName=oracle\nSlurmctldHost=localhost\n"


#: Snapshots Plurm does not match yet, with the reason.
_FAST_RELEASE = (
    "real Slurm released this killed job's node within ~0.03 s instead of the usual 3.7 s; "
    "it does so now and then, not reproducibly (PREEMPTION.md); Plurm always takes 3.7 s"
)
_SIGKILL_RELEASE = (
    "after a SIGKILL (a victim ignoring SIGTERM), real Slurm released the node 5 to 8.4 s "
    "after the kill, varying between victims of one run; Plurm always takes KillWait + 3.35 s"
)
_WHOLE_SECOND = (
    "Slurm compares times on its whole-second wall clock (grace retries, exemption end, "
    "requeue eligibility) and its 1 s passes drift; the recording's wall-clock phase put "
    "this event on the other side of the snapshot"
)
KNOWN_GAPS = {
    **{("requeue", snap): _FAST_RELEASE for snap in ("t006", "t007", "t008", "t128")},
    ("requeue", "t130"): _WHOLE_SECOND,
    **{("oversubscribe", snap): _FAST_RELEASE for snap in ("t12", "t18", "t24")},
    **{("cancel-grace", snap): _SIGKILL_RELEASE for snap in ("t42", "t44")},
    **{("cancel-grace-late", snap): _SIGKILL_RELEASE for snap in ("t52", "t54")},
    **{("cancel-grace-four", snap): _SIGKILL_RELEASE for snap in ("t28", "t30")},
    **{("cancel-grace-mixed", snap): _WHOLE_SECOND for snap in ("t44", "t50")},
    ("exempt", "t61"): _WHOLE_SECOND,
    **{
        ("qos-suspend-gang-cons-tres", snap): (
            "a job that gang suspends in the pass that starts it races its own launch in "
            "Slurm: here its script was stopped before `sleep 20` began, so the sleep counted "
            "from the first resume (+18.41) and the job ended at the resume at +38.41; in the "
            "select/linear recording the sleep ran from the start (PREEMPTION.md); Plurm "
            "counts from the start"
        )
        for snap in ("t27", "t29", "t32")
    },
    **{("backfill-window-edge", snap): _FAST_RELEASE for snap in ("t088", "t089", "t090", "t091")},
}


def _scenario(name: str) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
    spec = tomllib.loads((SCENARIOS / f"{name}.toml").read_text())
    recorded = json.loads((SCENARIOS / f"{name}.json").read_text())
    return spec, recorded


def _config(spec: dict[str, Any], tmp_path: Path) -> conf.SlurmConfig:
    path = tmp_path / "slurm.conf"
    path.write_text(HEADER + spec["conf"])
    # QOS scenarios: the same QOS the recorder created with sacctmgr, in Plurm's qos.conf.
    (tmp_path / "qos.conf").unlink(missing_ok=True)
    if "qos" in spec:
        (tmp_path / "qos.conf").write_text(spec["qos"])
    return conf.load(path)


def _controller_start(name: str) -> float:
    """When slurmctld started, in seconds from the first step, where the recording's log
    says so (``slurmctld started at -2.129``); periodic threads keep that phase."""
    log = SCENARIOS / f"{name}.log"
    found = re.search(r"slurmctld started at (-?[\d.]+)", log.read_text()) if log.exists() else None
    return float(found.group(1)) if found else 0.0


def _replay(spec: dict[str, Any], tmp_path: Path, start: float = 0.0) -> dict[str, str]:
    """Run the scenario; the squeue text at each snapshot."""
    simulation = Simulation(_config(spec, tmp_path), start=start)
    texts = {}
    for number, step in enumerate(spec["step"], start=1):
        if "cmd" in step:
            line = SessionLine(number, step["at"], tuple(shlex.split(step["cmd"])), step["cmd"])
        else:
            argv = ("squeue", "-t", "all", "-h", "-S", "i", "-o", SNAP_FORMAT)
            line = SessionLine(number, step["at"], argv, " ".join(argv))
        output = simulation.run_lines([line], tmp_path)
        if "snap" in step:
            texts[step["snap"]] = output.split("\n", 1)[1]
    return texts


def _expected_text(rows: list[dict[str, Any]]) -> str:
    return "".join(
        f"{r['job']}|{r['partition']}|{r['state']}|{r['nodes']}|{r['reason']}\n" for r in rows
    )


@pytest.mark.parametrize(
    "name",
    [
        "seed-suspend-gang",
        "seed-three-partitions",
        # Gang time slicing (SchedulerTimeSlice=10, snapshots every 2 s): two jobs taking
        # turns; three jobs on FORCE:2 (the third pends: a gang-suspended job keeps its
        # place) and on FORCE:3 (all three rotate).
        "gang-linear-two",
        "gang-linear-three-force2",
        "gang-linear-three-force3",
        # The preemption page's "future ideas" example (select/cons_res, SUSPEND,GANG):
        # the hipri job goes on n[1-3], over all three jobs, not on the idle n[4-5].
        "seed-future-cons-res",
        # More gang: a job arriving late in a slice; time slicing under a higher tier;
        # cons_res cores (see tests/data/scenarios/*.log for the gang debug lines).
        "gang-linear-two-late",
        "gang-tiers-timeslice",
        "gang-cons-res-three",
        "gang-cons-res-fillers",
        # sched/backfill (snapshots every second): a short job ahead of a blocked one on the
        # bf_interval tick, a long one held back; bf_interval=5; jobs without limits;
        # bf_window, including its edge (tests/data/scenarios/BACKFILL.md).
        "backfill-small-ahead",
        "backfill-interval",
        "backfill-no-limit",
        "backfill-window",
        "backfill-window-edge",
        # Backfill beside running jobs under select/cons_res (issue #29): a job shares a
        # node not reserved for a higher job within its run; select/linear keeps nodes whole.
        "backfill-share-cpus",
        "backfill-share-reserved",
        "backfill-share-linear",
        "backfill-share-no-limit",
        # Preemption (tests/data/scenarios/PREEMPTION.md): CANCEL without and with GraceTime
        # (victims that ignore SIGTERM, plain batch scripts, an srun step, grace of 10 to
        # 40 s), REQUEUE with its restart, QOS-based CANCEL and REQUEUE, WITHIN,
        # PreemptExemptTime, youngest_first against the default order, weight tiers and
        # OverSubscribe YES:2 beside EXCLUSIVE.
        "cancel-nograce",
        "cancel-grace",
        "cancel-grace-dies",
        "cancel-grace-srun",
        "cancel-grace-late",
        "cancel-grace-mixed",
        "cancel-grace-four",
        "requeue",
        "qos-requeue",
        "qos-cancel",
        "qos-within",
        "youngest-first",
        "youngest-first-control",
        "exempt",
        "weight-tiers",
        "oversubscribe",
        # Gang runs per partition: under preempt/qos a job of an overlapping partition of
        # the same tier is placed on a running job's cores (the QOS extra row), and both run.
        "qos-extra-row",
        # preempt/qos SUSPEND,GANG in one FORCE:1 partition (tests/data/scenarios/PREEMPTION.md):
        # the high-QOS job is placed over two running low jobs and gang time-slices it with
        # them; when it ends they resume at once.
        "qos-suspend-gang",
        "qos-suspend-gang-cons-tres",
    ],
)
def test_scenario_matches_real_slurm(name: str, tmp_path: Path) -> None:
    spec, recorded = _scenario(name)
    texts = _replay(spec, tmp_path, _controller_start(name))
    assert set(texts) == set(recorded)
    for snap, rows in recorded.items():
        gap = KNOWN_GAPS.get((name, snap))
        if gap:  # must still differ: a gap that closes has to leave the list
            assert texts[snap] != _expected_text(rows), f"snapshot {snap!r} matches now: {gap}"
        else:
            assert texts[snap] == _expected_text(rows), f"snapshot {snap!r}"


def test_replay_is_deterministic(tmp_path: Path) -> None:
    spec, _ = _scenario("seed-suspend-gang")
    assert _replay(spec, tmp_path) == _replay(spec, tmp_path)
