"""The SUSPEND,GANG example of Slurm's preemption page, live and simulated.

conf/seed-suspend-gang (five 1-CPU nodes, select/linear, preempt/partition_prio,
PreemptMode=SUSPEND,GANG, OverSubscribe=FORCE:1; partitions ``active`` and the higher-tier
``hipri``) on a live cluster of five plurmd, its session's commands run at their times with
real ``sleep`` jobs: five 1-node jobs fill the nodes, a 3-node ``hipri`` job suspends three
of them, and when it ends they resume. Each job writes its shell's and its sleep's pids,
so the test sees the suspended jobs' processes stopped in /proc (state T) and continued
after. The same session runs in-process on :class:`~plurm.sim.session.Simulation` under the
same slurm.conf, its controller started where plurmctld started (so that the gang time
slicer ticks in the same phase), and at every step squeue's job, partition, name, state,
node count and node list columns, sinfo and scontrol's output are the same both ways.

The live node names are n[1-5] (make_cluster's) for the example's n[12-16], and the jobs'
commands write their pids before their ``sleep`` (the simulation reads the ``sleep`` for the
run time as it does in the example). The session keeps the example's times (25 s).
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from plurm import conf
from plurm.commands import CommandResult
from plurm.commands.base import CommandError
from plurm.commands.dispatch import COMMANDS
from plurm.live.client import RpcClient, invocation
from plurm.live.store import CONTROLLER_STARTS, StateStore
from plurm.live.wallclock import epoch_seconds
from plurm.model.acct import AcctQuery, records_from_jobs
from plurm.sim.session import SessionLine, Simulation, parse_session
from tests.live.conftest import LiveCluster, make_cluster
from tests.live.test_cluster import _proc_states

pytestmark = pytest.mark.live

SEED = Path(__file__).parents[2] / "conf" / "seed-suspend-gang"
#: A job's command: its shell's pid and its sleep's go to {to} (PIDS/<job id>), then it waits.
JOB = "--wrap='echo $$ > {to}; sleep {seconds} & echo $! >> {to}; wait'"


def _seed_conf() -> tuple[str, str]:
    """The example's slurm.conf lines but its cluster name, host and node line (which
    make_cluster writes), on n[1-5]: (other lines, partition lines)."""
    extra, partitions = [], []
    for line in (SEED / "slurm.conf").read_text().splitlines():
        key = line.split("=", 1)[0]
        if not line or line.startswith("#") or key in ("ClusterName", "SlurmctldHost", "NodeName"):
            continue
        line = line.replace("n[12-16]", "n[1-5]")
        (partitions if key == "PartitionName" else extra).append(line)
    return "\n".join(extra), "\n".join(partitions)


def _seed_session(pids: Path) -> list[SessionLine]:
    """The example's session, its jobs writing their pids, and squeue also at 20 s, once
    the hipri job has ended."""
    text = (SEED / "session").read_text()
    text = re.sub(
        r"--wrap='sleep ([0-9]+)'",
        lambda m: JOB.format(to=f"{pids}/$SLURM_JOB_ID", seconds=m[1]),
        text,
    )
    assert text.count("echo $$") == 6
    text = text.replace("\n25 squeue", "\n20 squeue\n25 squeue")
    return parse_session(str(SEED / "session"), text)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveCluster]:
    extra, partitions = _seed_conf()
    live = make_cluster(
        tmp_path_factory.mktemp("gang"), nodes=5, cpus=1, extra=extra, partitions=partitions
    )
    try:
        live.up()
        yield live
    finally:
        live.down()


def _live_command(client: RpcClient, argv: tuple[str, ...], cwd: Path) -> CommandResult:
    """A command against the live cluster, as its console script runs it (in-process, so
    that it runs at its time: a new Python per command takes a good part of a second)."""
    try:
        return COMMANDS[argv[0]](argv[1:], client, cwd, invocation())
    except CommandError as error:
        return CommandResult(error.status, "", error.text)


def _squeue_rows(text: str) -> tuple[dict[str, tuple[str, ...]], dict[str, str]]:
    """squeue's rows by job id: (partition, name, state, nodes, nodelist), and the TIME
    column apart (it differs by how late each command ran)."""
    lines = text.splitlines()
    assert lines[0].split() == [
        "JOBID", "PARTITION", "NAME", "USER", "ST", "TIME", "NODES", "NODELIST(REASON)",
    ]  # fmt: skip
    rows, times = {}, {}
    for line in lines[1:]:
        job, partition, name, _user, state, elapsed, nodes, where = line.split()
        rows[job] = (partition, name, state, nodes, where)
        times[job] = elapsed
    return rows, times


def _at(moment: float | None, base: float) -> str:
    return "-" if moment is None else f"{moment - base:.3f}"


def _stopped(pids: Path, job: int) -> list[str]:
    return _proc_states(pids / str(job))


def test_the_suspend_gang_example_live_matches_the_simulation(cluster: LiveCluster) -> None:
    pids = cluster.root / "pids"
    pids.mkdir()
    lines = _seed_session(pids)
    assert [line.time for line in lines] == [0, 0.2, 0.4, 0.6, 0.8, 4, 4, 5, 9, 9, 20, 25]
    client = RpcClient(conf.load(str(cluster.conf)))

    # The session starts on a whole second, as a simulated one does: the controller's
    # passes fall on whole seconds of its clock.
    now = time.time()
    t0 = math.floor(now) + 1
    time.sleep(t0 - now)
    live: list[tuple[SessionLine, CommandResult, float]] = []
    checks: dict[float, dict[int, list[str]]] = {}
    for line in lines:
        delay = t0 + line.time - time.time()
        if delay > 0:
            time.sleep(delay)
        ran_at = time.time() - t0
        live.append((line, _live_command(client, line.argv, cluster.root), ran_at))
        if line.argv[0] == "squeue":
            # the processes as squeue saw the jobs (wait for the pid files: a job's
            # first command runs a moment after squeue shows it RUNNING)
            cluster.wait_for(
                lambda: all(
                    (pids / str(job)).exists() and len((pids / str(job)).read_text().split()) == 2
                    for job in range(1, 6)
                ),
                timeout=5,
                what="the jobs' pids",
            )
            checks[line.time] = {job: _stopped(pids, job) for job in range(1, 6)}

    starts = StateStore(cluster.root / "state" / "plurmctld.sqlite", readonly=True)
    with starts:
        started = starts.load_value(CONTROLLER_STARTS)[-1]
    simulation = Simulation(conf.load(str(cluster.conf)), start=started - epoch_seconds(t0))
    report = []
    for line, result, ran_at in live:
        simulation.run_until(line.time)
        expected = simulation.command(line.argv, cluster.root)
        assert result.status == expected.status == 0, (line.text, result, expected)
        if line.argv[0] == "squeue":
            live_rows, live_times = _squeue_rows(result.stdout)
            sim_rows, sim_times = _squeue_rows(expected.stdout)
            assert live_rows == sim_rows, (line.time, result.stdout, expected.stdout)
            report.append(
                f"t={line.time:g} (ran at {ran_at:.3f}): live TIME {live_times}, "
                f"simulated {sim_times}"
            )
        elif line.argv[0] == "sbatch":
            assert result.stdout == expected.stdout, line.text  # the same job ids
        else:
            assert result.stdout == expected.stdout, (line.text, result.stdout, expected.stdout)
    # how close the times are: accounting's start, end and time suspended, both ways
    base = epoch_seconds(t0)
    live_records = {r.job_id: r for r in client.records(AcctQuery())}
    sim_records = {
        r.job_id: r for r in records_from_jobs(simulation.controller.cluster.jobs.values(), 25.0)
    }
    for job in range(1, 7):
        ours, theirs = live_records[job], sim_records[job]
        assert ours.state == theirs.state and ours.nodes == theirs.nodes, (ours, theirs)
        assert ours.start is not None and theirs.start is not None
        report.append(
            f"job {job}: start live {ours.start - base:.3f} sim {theirs.start:.3f}; "
            f"end live {_at(ours.end, base)} sim {_at(theirs.end, 0.0)}; "
            f"suspended live {ours.suspended:.3f} sim {theirs.suspended:.3f}"
        )
    print("\n".join(report))

    # the example's steps, as squeue showed them (both ways, as just compared)
    states = {
        line.time: _squeue_rows(out.stdout)[0] for line, out, _ in live if line.argv[0] == "squeue"
    }
    assert [states[4][str(j)][2] for j in range(1, 6)] == ["R"] * 5
    assert [states[9][str(j)][2] for j in range(1, 7)] == ["S", "S", "S", "R", "R", "R"]
    assert states[9]["6"][4] == "n[1-3]"
    assert [states[20][str(j)][2] for j in range(1, 6)] == ["R"] * 5 and "6" not in states[20]
    assert states[25]["6"][2] == "CD"

    # and the processes: stopped while suspended, running before and after
    assert all("T" not in checks[4][job] for job in range(1, 6)), checks
    assert all(checks[9][job] == ["T", "T"] for job in (1, 2, 3)), checks
    assert all("T" not in checks[9][job] and checks[9][job] for job in (4, 5)), checks
    assert all("T" not in checks[20][job] and checks[20][job] for job in range(1, 6)), checks

    for job in range(1, 6):
        cluster.run("scancel", str(job))
    cluster.wait_for(
        lambda: all(_stopped(pids, job) == [] for job in range(1, 6)), what="the jobs' end"
    )
