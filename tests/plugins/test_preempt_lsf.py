"""preempt/lsf on session files (tests/data/lsf/CASE: lsb.queues, lsb.params, session)
replayed by the simulator under select/linear and select/cons_res, asserting every job's
state and nodes at every squeue snapshot; the scenarios come from the LSF preemption
chapter and pbs-lsf.md §2."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from plurm import conf
from plurm.errors import ConfError
from plurm.manager import Plugins
from plurm.model.job import Job
from plurm.sim.session import Simulation, parse_session
from plurm.testing import TestCluster
from tests.conftest import REPO

pytest.importorskip("plurm_preempt_lsf")

CASES = REPO / "tests" / "data" / "lsf"

SELECTS = {
    "linear": "SelectType=select/linear\n",
    "cons_res": "SelectType=select/cons_res\nSelectTypeParameters=CR_Core\n",
}


def _slurm_conf(queues: list[str], select: str) -> str:
    partitions = "".join(
        f"PartitionName={name} Nodes=ALL{' Default=YES' if index == 0 else ''}\n"
        for index, name in enumerate(queues)
    )
    return (
        "ClusterName=lsf\nSlurmctldHost=head\nPreemptType=preempt/lsf\nJobRequeue=1\n"
        + SELECTS[select]
        + "NodeName=n[1-4] CPUs=1\n"
        + partitions
    )


def replay(case: str, select: str, tmp_path: Path) -> tuple[Simulation, dict[float, dict]]:
    """Run the case; each squeue snapshot by time: job name -> (state, nodes)."""
    work = tmp_path / f"{case}-{select}"
    shutil.copytree(CASES / case, work)
    queues = re.findall(r"QUEUE_NAME\s*=\s*(\S+)", (work / "lsb.queues").read_text())
    (work / "slurm.conf").write_text(_slurm_conf(queues, select))
    config = conf.load(work / "slurm.conf")
    simulation = Simulation(config, Plugins.load(config))
    lines = parse_session("session", (work / "session").read_text())
    transcript = simulation.run_lines(lines, work)
    snapshots: dict[float, dict[str, tuple[str, str]]] = {}
    current: dict[str, tuple[str, str]] | None = None
    for line in transcript.splitlines():
        found = re.match(r"\[t=([\d.]+)s\] \$ (\S+)", line)
        if found:
            current = None
            if found.group(2) == "squeue":
                current = snapshots[float(found.group(1))] = {}
            continue
        if current is not None and not line.startswith("NAME"):
            name, state, *nodes = line.split()
            current[name] = (state, nodes[0] if nodes else "")
    return simulation, snapshots


R, S, P = "RUNNING", "SUSPENDED", "PENDING"

EXPECTED = {
    # PREEMPTIVE[low_q1+2 low_q2] with LEAST_RUN_TIME; resumption when resources free up.
    "preference": {
        60: {"q2a": (R, "n1"), "q2b": (R, "n2"), "q1a": (R, "n3"), "q1b": (R, "n4")},
        301: {
            "hi1": (R, "n4"),
            "q1b": (S, "n4"),
            "q1a": (R, "n3"),
            "q2a": (R, "n1"),
            "q2b": (R, "n2"),
        },
        401: {
            "hi1": (R, "n4"),
            "hi2": (R, "n[2-3]"),
            "q1a": (S, "n3"),
            "q1b": (S, "n4"),
            "q2a": (R, "n1"),
            "q2b": (S, "n2"),
        },
        # hi1 ended at 500: q1b resumes at once, while hi2 still runs on q1a's and q2b's nodes
        510: {
            "hi2": (R, "n[2-3]"),
            "q1b": (R, "n4"),
            "q1a": (S, "n3"),
            "q2a": (R, "n1"),
            "q2b": (S, "n2"),
        },
        710: {"q1a": (R, "n3"), "q1b": (R, "n4"), "q2a": (R, "n1"), "q2b": (R, "n2")},
    },
    # NO_PREEMPT_RUN_TIME=5 and NO_PREEMPT_FINISH_TIME=50%: only b may be a victim.
    "guards": {
        399: {"a": (R, "n1"), "d": (R, "n2"), "b": (R, "n3"), "c": (R, "n4")},
        411: {
            "a": (R, "n1"),
            "d": (R, "n2"),
            "b": (S, "n3"),
            "c": (R, "n4"),
            "hi1": (R, "n3"),
            "hi2": (P, ""),
        },
        495: {"a": (R, "n1"), "d": (R, "n2"), "b": (S, "n3"), "hi1": (R, "n3"), "hi2": (R, "n4")},
        505: {"a": (R, "n1"), "d": (R, "n2"), "b": (R, "n3"), "hi2": (R, "n4")},
    },
    # PREEMPTABLE[top] without PREEMPTIVE anywhere.
    "preemptable": {
        101: {"o1": (R, "n1"), "l1": (R, "n2"), "l2": (R, "n3"), "o2": (R, "n4"), "m": (P, "")},
        201: {
            "o1": (R, "n1"),
            "l1": (S, "n2"),
            "l2": (R, "n3"),
            "o2": (R, "n4"),
            "m": (P, ""),
            "t": (R, "n2"),
        },
        302: {"o1": (R, "n1"), "l1": (R, "n2"), "l2": (R, "n3"), "o2": (R, "n4"), "m": (P, "")},
    },
    # JOB_CONTROLS=SUSPEND[brequeue]: requeued, pending at once (no requeue hold-off), and
    # started again as soon as the preemptor ends (under Slurm's delay: pending until 221 s).
    "brequeue": {
        120: {"hi": (R, "n[2-3]"), "r": (P, "")},
        160: {"hi": ("COMPLETED", "n[2-3]"), "r": (R, "n[1-4]")},
    },
    # MAX_JOB_PREEMPT=1.
    "max_preempt": {
        101: {"l": (S, "n[1-4]"), "hi1": (R, "n[1-4]")},
        152: {"l": (R, "n[1-4]")},
        201: {"l": (R, "n[1-4]"), "hi2": (P, "")},
        1051: {"hi2": (R, "n1")},
    },
}


@pytest.mark.parametrize("select", sorted(SELECTS))
@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_lsf_scenario(case: str, select: str, tmp_path: Path) -> None:
    _, snapshots = replay(case, select, tmp_path)
    assert snapshots == {float(t): jobs for t, jobs in EXPECTED[case].items()}


@pytest.mark.parametrize("select", sorted(SELECTS))
def test_terminate_when_preempt_cancels_and_brequeue_requeues(select: str, tmp_path: Path) -> None:
    simulation, snapshots = replay("terminate", select, tmp_path)
    jobs = {job.name: job for job in simulation.controller.cluster.jobs.values()}
    assert jobs["killed"].state.name == "PREEMPTED"
    assert jobs["requeued"].restarts == 1 and jobs["requeued"].state.name == "PENDING"
    assert snapshots[120.0]["hi"] == (R, "n[1-4]")


def test_a_queue_that_is_no_partition_is_refused_at_its_line(tmp_path: Path) -> None:
    shutil.copytree(CASES / "guards", tmp_path / "c")
    (tmp_path / "c" / "slurm.conf").write_text(_slurm_conf(["high"], "linear"))
    config = conf.load(tmp_path / "c" / "slurm.conf")
    with pytest.raises(ConfError, match=r"lsb\.queues:7: queue low is no partition"):
        Plugins.load(config)


def test_preempt_mode_may_be_omitted_or_anything(tmp_path: Path) -> None:
    shutil.copytree(CASES / "guards", tmp_path / "c")
    text = _slurm_conf(["high", "low"], "linear") + "PreemptMode=SUSPEND\n"
    (tmp_path / "c" / "slurm.conf").write_text(text)
    config = conf.load(tmp_path / "c" / "slurm.conf")
    assert Plugins.load(config).type_strings()[1] == "preempt/lsf"


RUNLIMIT_QUEUES = """
Begin Queue
QUEUE_NAME = low
PRIORITY   = 10
RUNLIMIT   = 10 30
End Queue

Begin Queue
QUEUE_NAME = capped
PRIORITY   = 20
RUNLIMIT   = 0:20
End Queue

Begin Queue
QUEUE_NAME = plain
PRIORITY   = 30
End Queue
"""


def _runlimit_cluster(make_cluster: Callable[..., TestCluster]) -> TestCluster:
    return make_cluster(
        "SelectType=select/linear\nPreemptType=preempt/lsf\nJobRequeue=1\nKillWait=5\n"
        "NodeName=n[1-4] CPUs=1\n"
        "PartitionName=low Nodes=ALL Default=YES\n"
        "PartitionName=capped Nodes=ALL\n"
        "PartitionName=plain Nodes=ALL DefaultTime=5\n",
        files={"lsb.queues": RUNLIMIT_QUEUES},
    )


def test_a_job_without_t_is_killed_at_its_queues_runlimit(
    make_cluster: Callable[..., TestCluster],
) -> None:
    """RUNLIMIT's default (10 minutes of ``10 30``), or its one value (the maximum,
    ``0:20``), is the time limit of a job that gives no -t; a job's own -t wins; a queue
    without RUNLIMIT leaves the partition's DefaultTime."""
    cluster = _runlimit_cluster(make_cluster)
    ids = {
        name: cluster.command(f"sbatch -p {part} {limit}-J {name} --wrap='sleep 3000'")
        for name, part, limit in (
            ("default", "low", ""),
            ("maximum", "capped", ""),
            ("own", "low", "-t 40 "),
            ("plain", "plain", ""),
        )
    }
    assert all(result.status == 0 for result in ids.values())
    jobs = {job.name: job for job in cluster.controller.cluster.jobs.values()}
    assert {name: job.time_limit for name, job in jobs.items()} == {
        "default": 10,
        "maximum": 20,
        "own": 40,
        "plain": 5,
    }
    shown = cluster.command("squeue -h -o '%j %l'").stdout.split("\n")
    assert "default 10:00" in shown and "maximum 20:00" in shown
    cluster.run_until(4000)
    assert {name: job.state.name for name, job in jobs.items()} == {
        "default": "TIMEOUT",
        "maximum": "TIMEOUT",
        "own": "TIMEOUT",
        "plain": "TIMEOUT",
    }
    # killed at the limit (within Slurm's 30 s check period and KillWait), not at the end
    for name, minutes in (("default", 10), ("maximum", 20), ("own", 40), ("plain", 5)):
        job = jobs[name]
        assert job.start_time is not None and job.end_time is not None
        assert minutes * 60 <= job.end_time - job.start_time <= minutes * 60 + 30 + 5 + 4, name


def _saved_and_read_back(simulation: Simulation, path: Path) -> list[Job]:
    """The simulation's jobs written to a real state file (the live StateStore) and read
    back, as a restarted plurmctld takes them."""
    from plurm.live.store import StateStore

    with StateStore(path) as store:
        store.save_jobs(
            simulation.controller.cluster.jobs.values(),
            next_job_id=simulation.controller.next_job_id,
        )
    with StateStore(path, readonly=True) as store:
        return list(store.load_jobs())


@pytest.mark.parametrize("forget", [False, True])
def test_max_job_preempt_survives_a_controller_restart(tmp_path: Path, forget: bool) -> None:
    """MAX_JOB_PREEMPT=1 (tests/data/lsf/max_preempt): job l, suspended once for hi1 and
    resumed, is saved to a real state file (the live StateStore) and taken back by a new
    controller with a new preempt/lsf; hi2, submitted after the restart, may not preempt it.
    With the count zeroed before the restart (``forget``: what a count kept in the plugin's
    memory amounted to), hi2 suspends it: the count is what protects it."""
    work = tmp_path / "max_preempt"
    shutil.copytree(CASES / "max_preempt", work)
    (work / "slurm.conf").write_text(_slurm_conf(["high", "low"], "linear"))
    # the session's first part only: l suspended for hi1 at 100 s, resumed when it ends
    (work / "session").write_text(
        "0 sbatch -N4 -p low -J l --wrap='sleep 1000'\n"
        "100 sbatch -N4 -p high -J hi1 --wrap='sleep 50'\n"
        "152 squeue -o '%j %T %N'\n"
    )
    config = conf.load(work / "slurm.conf")
    simulation = Simulation(config, Plugins.load(config))
    transcript = simulation.run_lines(
        parse_session("session", (work / "session").read_text()), work
    )
    assert transcript.endswith("l RUNNING n[1-4]\n"), transcript
    simulation.run_until(160)
    saved = _saved_and_read_back(simulation, tmp_path / "state.db")
    (low,) = [job for job in saved if job.name == "l"]
    assert low.preemptions == 1
    if forget:
        low.preemptions = 0
    restarted = Simulation(config, Plugins.load(config), start=160)
    restarted.controller.restore(saved, simulation.controller.next_job_id)
    result = restarted.command(
        ["sbatch", "-N1", "-p", "high", "-J", "hi2", "--wrap=sleep 50"], work
    )
    assert result.status == 0, result.stderr
    restarted.run_until(170)
    states = {job.name: job.state.name for job in restarted.controller.cluster.jobs.values()}
    if forget:
        assert states["l"] == S and states["hi2"] == R
    else:
        assert states["l"] == R and states["hi2"] == P


def test_a_victim_requeued_during_a_restart_keeps_its_policys_delay(tmp_path: Path) -> None:
    """brequeue: the victim r, killed at 100 s to be requeued with LSF's delay of 0, is saved
    while its teardown runs and taken back by a new controller. When its processes are
    reported gone, it is pending at once, as without the restart (not held for Slurm's
    121 s: the delay the policy gave is saved with the job)."""
    work = tmp_path / "brequeue"
    shutil.copytree(CASES / "brequeue", work)
    (work / "slurm.conf").write_text(_slurm_conf(["high", "requeue"], "linear"))
    (work / "session").write_text(
        "0 sbatch -N4 -p requeue -J r --wrap='sleep 1000'\n"
        "100 sbatch -N2 -p high -J hi --wrap='sleep 50'\n"
    )
    config = conf.load(work / "slurm.conf")
    simulation = Simulation(config, Plugins.load(config))
    simulation.run_lines(parse_session("session", (work / "session").read_text()), work)
    simulation.run_until(101)  # within its teardown
    (victim,) = [j for j in simulation.controller.cluster.jobs.values() if j.name == "r"]
    assert victim.state.name == "COMPLETING" and victim.requeued
    saved = _saved_and_read_back(simulation, tmp_path / "state.db")
    now = simulation.controller.now
    restarted = Simulation(config, Plugins.load(config), start=now)
    restarted.controller.restore(saved, simulation.controller.next_job_id)
    restarted.controller.job_ended(victim.job_id, signal=9)
    job = restarted.controller.cluster.job(victim.job_id)
    assert job.state.name == "PENDING" and job.restarts == 1
    assert job.reason.name == "NONE" and job.eligible_time <= now + 1


def _replay_own(directory: Path) -> str:
    """A case with its own slurm.conf (and accounts.conf), replayed by the simulator."""
    config = conf.load(directory / "slurm.conf")
    simulation = Simulation(config, Plugins.load(config))
    lines = parse_session("session", (directory / "session").read_text())
    return simulation.run_lines(lines, directory)


def _squeue_at(transcript: str, when: int) -> list[str]:
    block = transcript.split(f"[t={when}s] $ squeue")[1].split("\n[t=")[0]
    return block.splitlines()[2:]  # (the command's rest, the header)


@pytest.mark.parametrize(
    ("group_max", "theory_grp_jobs", "l2"),
    [
        (True, True, "l2 RUNNING n2 None"),
        (False, True, "l2 PENDING  AssocGrpJobsLimit"),
        (False, False, "l2 RUNNING n2 None"),
    ],
)
def test_preempt_for_says_which_limits_count_suspended_jobs(
    tmp_path: Path, group_max: bool, theory_grp_jobs: bool, l2: str
) -> None:
    """tests/data/lsf/limits: a job suspended by preemption never counts against its own
    association's MaxJobs (LSF's user total); against its account's GrpJobs (a user group's
    total) only without PREEMPT_FOR=GROUP_MAX."""
    work = tmp_path / "limits"
    shutil.copytree(CASES / "limits", work)
    if not group_max:
        (work / "lsb.params").write_text("Begin Parameters\nEnd Parameters\n")
    if not theory_grp_jobs:
        accounts = (work / "accounts.conf").read_text()
        (work / "accounts.conf").write_text(accounts.replace(" GrpJobs=1", ""))
    transcript = _replay_own(work)
    assert _squeue_at(transcript, 11) == ["hi RUNNING n1 None", "l1 SUSPENDED n[1-2] None"]
    rows = _squeue_at(transcript, 21)
    assert rows[0] == "hi RUNNING n1 None" and rows[2] == "l1 SUSPENDED n[1-2] None", rows
    assert rows[1] == l2
