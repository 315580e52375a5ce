"""preempt/pbs scenarios, each a session file replayed by ``plurm simulate`` on a cluster
configured in PBS's own files (tests/data/pbs/NAME/ and conf/pbs-express/), asserting every
job's state and nodes at every snapshot. Each session's comments tell the story."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from plurm import conf
from plurm.sim.session import Simulation, parse_session
from tests.conftest import REPO

pytest.importorskip("plurm_preempt_pbs")

DATA = REPO / "tests" / "data" / "pbs"

Snapshot = dict[str, tuple[str, str]]


def _snapshots(transcript: str) -> dict[float, Snapshot]:
    """Each squeue of a transcript: job id -> (state, nodes), by time."""
    found: dict[float, Snapshot] = {}
    for block in transcript.split("[t=")[1:]:
        head, _, body = block.partition("\n")
        when, _, command = head.partition("s] $ ")
        if not command.startswith("squeue"):
            continue
        rows: Snapshot = {}
        for line in body.splitlines():
            words = line.split()
            if not words or words[0] == "JOBID":
                continue
            if "-o" in command:  # squeue -h -o '%i %t %N [...]'
                rows[words[0]] = (words[1], words[2] if len(words) > 2 else "")
            else:  # the default format: ... ST TIME NODES NODELIST(REASON)
                nodes = words[-1] if not words[-1].startswith("(") else ""
                rows[words[0]] = (words[4], nodes)
        found[float(when)] = rows
    return found


def _replay(directory: Path) -> str:
    config = conf.load(directory / "slurm.conf")
    simulation = Simulation(config)
    session = directory / "session"
    return simulation.run_lines(parse_session(str(session), session.read_text()), directory)


def _rows(text: str) -> Snapshot:
    """``"1 R n1; 2 PD"`` -> {"1": ("R", "n1"), "2": ("PD", "")}."""
    rows: Snapshot = {}
    for item in filter(None, (part.strip() for part in text.split(";"))):
        words = item.split()
        rows[words[0]] = (words[1], words[2] if len(words) > 2 else "")
    return rows


def _check(transcript: str, expected: dict[float, str]) -> None:
    snapshots = _snapshots(transcript)
    assert sorted(snapshots) == sorted(expected), transcript
    for when, rows in expected.items():
        assert snapshots[when] == _rows(rows), f"t={when:g}s\n{transcript}"


def test_express_over_normal_young_requeued_old_suspended_both_back() -> None:
    transcript = _replay(REPO / "conf" / "pbs-express")
    _check(
        transcript,
        {
            410: "1 R n1; 2 R n2; 3 R n3; 4 R n4",
            # Job 4 (97% left) is requeued (completing), job 3 (32% left) suspended; the
            # express job waits for job 4's teardown.
            421: "5 PD; 4 CG n4; 1 R n1; 2 R n2; 3 S n3",
            # Job 4 is back in the queue at once (PBS has no requeue hold-off), waiting for
            # resources while the express job runs on its node and job 3's.
            430: "5 R n[3-4]; 4 PD; 1 R n1; 2 R n2; 3 S n3",
            # The express job has ended: job 3 has resumed and job 4 has started again at
            # once (under Slurm's ~120 s requeue delay it would still be pending).
            530: "1 R n1; 2 R n2; 3 R n3; 4 R n4",
            560: "3 R n3; 4 R n4",
        },
    )
    at_430 = transcript.split("[t=430s]")[1].split("[t=530s]")[0]
    assert re.search(r"^ +4 +normal .* PD .*\(Resources\)$", at_430, re.MULTILINE), at_430


def test_the_example_session_runs_under_plurm_simulate() -> None:
    example = REPO / "conf" / "pbs-express"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "plurm.cli.main",
            "simulate",
            "--conf",
            str(example / "slurm.conf"),
            str(example / "session"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == _replay(example)


def test_soft_limit_level() -> None:
    _check(
        _replay(DATA / "soft-limits"),
        {
            5: "1 R n1; 2 R n2; 3 R n3; 4 R n4",
            11: "1 R n1; 2 R n2; 3 R n3; 5 R n4; 4 S n4",
            21: "1 R n1; 2 R n2; 5 R n4; 6 R n3; 3 S n3; 4 S n4",
            31: "7 PD; 1 R n1; 2 R n2; 5 R n4; 6 R n3; 3 S n3; 4 S n4",
            115: "1 R n1; 2 R n2; 6 R n3; 7 R n4; 3 S n3; 4 S n4",
            125: "1 R n1; 2 R n2; 3 R n3; 7 R n4; 4 S n4",
            215: "1 R n1; 2 R n2; 3 R n3; 4 R n4",
        },
    )


def test_preempt_targets() -> None:
    _check(
        _replay(DATA / "targets"),
        {
            5: "2 R n2; 3 R n3; 1 R n1",
            # Not job 3, the youngest: the express job may preempt scavenger jobs only.
            11: "4 PD; 2 R n2; 3 R n3; 1 CG n1",
            21: "5 PD; 4 R n1; 2 R n2; 3 R n3; 1 PD",
        },
    )


def test_trim_pass() -> None:
    _check(
        _replay(DATA / "trim"),
        {
            5: "1 R n1; 2 R n[2-3]; 3 R n4",
            11: "4 R n[2-3]; 1 R n1; 3 R n4; 2 S n[2-3]",
            115: "1 R n1; 2 R n[2-3]; 3 R n4",
        },
    )


def test_a_method_that_cannot_apply_falls_through() -> None:
    _check(
        _replay(DATA / "fallthrough"),
        {
            5: "1 R n1; 2 R n2",
            11: "3 PD; 1 CG n1; 2 CG n2",
            # Job 2 (--no-requeue) was deleted (D); job 1 went back to the queue (R).
            20: "3 R n[1-2]; 1 PD; 2 PR n2",
        },
    )


def test_the_seed_articles_example() -> None:
    transcript = _replay(DATA / "seed-article")
    _check(
        transcript,
        {
            30: "1 R master; 2 R master; 3 R master; 4 R master",
            # As in the article: the three most recently started (3 + 1 + 2 CPUs) are
            # suspended, the oldest runs on beside the urgent job.
            61: "5 R master; 1 R master; 2 S master; 3 S master; 4 S master",
            115: "5 R master; 2 S master; 3 S master; 4 S master",
            165: "2 R master; 3 R master; 4 R master",
        },
    )
    cpus = re.findall(r"^5 R master (\d+)$", transcript, re.MULTILINE)
    assert cpus == ["6", "6"]


def test_preempted_jobs_first_in_the_queue() -> None:
    transcript = _replay(DATA / "preempted-first")
    priorities = {row[0]: int(row[1][0]) for row in _snapshots(transcript)[6].items()}
    assert priorities["3"] > priorities["1"] > priorities["2"]
    _check(
        transcript,
        {
            6: "3 4294901857; 1 4294901759; 2 4294901758",  # squeue -o '%i %Q'
            20: "4 R n2; 3 PD; 2 PD; 1 R n1",
            # Job 2, requeued by the express job, starts before job 3 (higher priority).
            315: "3 PD; 1 R n1; 2 R n2",
        },
    )


def test_max_preempt_attempts_gives_up_preempting_for_a_job(tmp_path: Path) -> None:
    transcript = _replay(DATA / "max-attempts")
    _check(
        transcript,
        {
            5: "4 R n4; 1 R n1; 2 R n2; 3 R n3",
            11: "5 PD; 4 R n4; 1 R n1; 2 R n2; 3 R n3",
            101: "5 PD; 4 R n4; 6 PD; 1 R n1; 2 R n2; 3 R n3",
            # Job 4 has ended; the scheduler tried twice for job 5 and preempts no more.
            310: "5 PD; 6 PD; 1 R n1; 2 R n2; 3 R n3",
            1010: "5 R n[1-4]",
        },
    )
    # The same cluster without the cap: job 5 suspends the normal jobs once job 4 ends.
    uncapped = tmp_path / "uncapped"
    shutil.copytree(DATA / "max-attempts", uncapped)
    (uncapped / "sched_config").write_text("preempt_order: S\n")
    snapshots = _snapshots(_replay(uncapped))
    assert snapshots[310] == _rows("5 R n[1-4]; 6 PD; 1 S n1; 2 S n2; 3 S n3")


def test_sched_preempt_enforce_resumption_keeps_a_suspended_jobs_nodes(tmp_path: Path) -> None:
    transcript = _replay(DATA / "enforce-resumption")
    _check(
        transcript,
        {
            11: "2 R n1; 1 S n[1-2]",
            # n2 is free, but job 1 waits to resume on it: job 3 (normal) may not take it.
            21: "2 R n1; 3 PD; 1 S n[1-2]",
            # An express job is queued ahead of job 1: it may.
            31: "2 R n1; 4 R n2; 3 PD; 1 S n[1-2]",
            60: "2 R n1; 4 R n2; 3 PD; 1 S n[1-2]",
            # Both express jobs have ended: job 1 has resumed at once.
            115: "3 PD; 1 R n[1-2]",
        },
    )
    # Without the setting, job 3 takes n2 and job 1 stays suspended until job 3 ends.
    plain = tmp_path / "plain"
    shutil.copytree(DATA / "enforce-resumption", plain)
    (plain / "qmgr.conf").write_text("create queue express priority=200\n")
    snapshots = _snapshots(_replay(plain))
    assert snapshots[21] == _rows("2 R n1; 3 R n2; 1 S n[1-2]")
    assert snapshots[115] == _rows("3 R n2; 1 S n[1-2]")
