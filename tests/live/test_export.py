"""One controller, both ways: a live cluster's history, exported as SWF by ``plurm trace
export`` and replayed by ``plurm simulate --trace`` under the same slurm.conf, gives the
same schedule.

A dozen ``sleep`` jobs of different sizes, partitions and lengths run on four live nodes;
some wait for others (one for three nodes, one for the whole cluster), and backfill (every
2 s) may start some. The replay must give every job the same nodes, start the jobs in the
same order, and start and end each within the live run's own measured delays of its live
times.

Why the times agree so closely: the trace keeps milliseconds, and each job's run time is
its live run time as accounting saw it (from the controller's start decision to the node's
end report), so a simulated job ends where the live one was reported ended; the controller
passes fall on whole seconds of the same clock both ways (the replay keeps the trace's
phase), and the replay's controller starts where plurmctld started, so backfill ticks in
the same phase too. What is left: the live timers fire a few milliseconds late, so a live
end reported just after a whole second may be simulated just before it, and the pass that
follows it then runs a second earlier in the simulation; and the time a live job takes to
start is a real delay the simulation does not have. The tolerance is therefore measured on
the live run: the largest delay from the event that let a job start (its submission or
the end before its start) to its start, plus the largest delay from a job's last command
to the controller hearing of its end. A job that started at another job's end inherits
that job's difference (its end moved with its start), so the tolerance adds up along each
chain of waits: a job gets one tolerance more than the job whose end let it start.
"""

from __future__ import annotations

import io
import math
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from plurm import conf
from plurm.cli.main import main as plurm_main
from plurm.live.export import read_history
from plurm.live.wallclock import epoch_seconds
from plurm.model.acct import JobRecord
from plurm.sim.trace import JobRecord as SimRecord
from plurm.sim.trace import TraceMapping, replay
from plurm.workload import clean, read_swf
from plurm.workload.names import read_names
from tests.live.conftest import LiveCluster, make_cluster

pytestmark = pytest.mark.live

PARTITIONS = (
    "PartitionName=debug Nodes=n[1-4] Default=YES State=UP\n"
    "PartitionName=short Nodes=n[3-4] State=UP"
)
#: (partition, tasks, sleep seconds, time limit minutes), submitted in this order.
WORKLOAD = (
    ("debug", 8, 6, 1),  # n[1-2]
    ("short", 4, 3, 1),
    ("debug", 4, 9, 1),
    ("debug", 12, 3, 1),  # three nodes: waits
    ("short", 4, 2, 1),
    ("debug", 1, 2, 1),
    ("debug", 2, 4, 2),
    ("debug", 4, 2, 1),
    ("short", 3, 3, 1),
    ("debug", 16, 2, 1),  # the whole cluster
    ("debug", 1, 5, 1),
    ("short", 1, 2, 1),
)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveCluster]:
    live = make_cluster(
        tmp_path_factory.mktemp("export"),
        partitions=PARTITIONS,
        scheduler_parameters="sched_interval=1,bf_interval=2",
    )
    try:
        live.up()
        yield live
    finally:
        live.down()


def _run_workload(cluster: LiveCluster) -> dict[int, tuple[float, float]]:
    """Submit WORKLOAD, wait for every job's end; each job's own first and last moments
    (controller clock), as its script wrote them."""
    times = cluster.root / "times"
    times.mkdir()
    ids = []
    for number, (partition, tasks, seconds, limit) in enumerate(WORKLOAD, start=1):
        script = (
            f"date +%s.%N > {times}/$SLURM_JOB_ID; sleep {seconds}; "
            f"date +%s.%N >> {times}/$SLURM_JOB_ID"
        )
        ids.append(
            cluster.sbatch(
                "-J", f"w{number}", "-p", partition, "-n", str(tasks), "-t", str(limit),
                "-o", "/dev/null", "--wrap", script,
            )
        )  # fmt: skip

    def all_ended() -> bool:
        out = cluster.run("squeue", "-h", "-t", "all", "-o", "%i %T").stdout.split("\n")
        states = dict(line.split() for line in out if line)
        return all(states.get(str(i)) == "COMPLETED" for i in ids)

    cluster.wait_for(all_ended, timeout=120, what="the workload's end")
    moments = {}
    for job_id in ids:
        first, last = (times / str(job_id)).read_text().split()
        moments[job_id] = (epoch_seconds(float(first)), epoch_seconds(float(last)))
    return moments


def _the_others(cluster: LiveCluster) -> tuple[int, int]:
    """A job that fails (exit 3) and one cancelled before its begin time: what SWF calls
    status 0 and 5, submitted once the workload is over so that they change nothing in
    its schedule."""
    failing = cluster.sbatch("-J", "fails", "-t", "1", "-o", "/dev/null", "--wrap", "exit 3")
    held = cluster.sbatch(
        "-J", "held", "--begin=now+1hour", "-t", "1", "-o", "/dev/null", "--wrap", "true"
    )
    cluster.run("scancel", str(held))
    cluster.wait_for(lambda: cluster.state(failing) == "FAILED", what="FAILED")
    cluster.wait_for(lambda: cluster.state(held) == "CANCELLED", what="CANCELLED")
    return failing, held


def _delays(
    live: dict[int, JobRecord], moments: dict[int, tuple[float, float]]
) -> dict[str, float]:
    """The live run's delays, each the largest over the workload's jobs (seconds)."""
    events = sorted(
        [r.submit for r in live.values() if r.submit is not None]
        + [r.end for r in live.values() if r.end is not None]
    )
    schedule, launch, report = [], [], []
    for job_id, (first, last) in moments.items():
        record = live[job_id]
        assert record.start is not None and record.end is not None
        before = [moment for moment in events if moment <= record.start]
        schedule.append(record.start - before[-1])
        launch.append(first - record.start)
        report.append(record.end - last)
    return {
        "event to start": max(schedule),
        "start to the job's first command": max(launch),
        "the job's last command to its end report": max(report),
    }


def _links(live: dict[int, JobRecord]) -> dict[int, int]:
    """Each job's place in its chain of waits in the live run: 1 for a job that started at
    its submission's pass, one more than the job whose end came last before its start."""
    events = sorted(
        [(r.submit, 0, i) for i, r in live.items() if r.submit is not None]
        + [(r.end, 1, i) for i, r in live.items() if r.end is not None]
    )
    links: dict[int, int] = {}
    for job_id in sorted(live, key=lambda i: (live[i].start or 0.0, i)):
        start = live[job_id].start
        assert start is not None
        _, kind, other = [event for event in events if event[0] <= start][-1]
        links[job_id] = 1 if kind == 0 else links.get(other, 1) + 1
    return links


def _replay(path: Path, swf: Path) -> dict[int, SimRecord]:
    """What ``plurm simulate --trace`` does, in-process, keeping each job's record."""
    config = conf.load(str(path))
    trace = read_swf(swf)
    names = read_names(trace.header)
    mapping, _ = TraceMapping().with_names(names.partitions, names.queues, config)
    records = replay(clean(trace), config, mapping, controller_start=names.controller_start)
    return {record.trace_number: record for record in records}


def test_an_exported_live_history_replays_to_the_same_schedule(
    cluster: LiveCluster, tmp_path: Path
) -> None:
    moments = _run_workload(cluster)
    workload = sorted(moments)
    failing, held = _the_others(cluster)

    swf = tmp_path / "jobs.swf"
    cluster.run("plurm", "trace", "export", "-o", str(swf))
    text = swf.read_text()
    assert "; Partition: 1 debug\n; Partition: 2 short\n" in text
    assert "; Queue: 1 normal\n" in text
    trace = read_swf(swf)
    names = read_names(trace.header)
    assert names.executables[1] == "w1" and names.controller_start is not None
    by_number = {job.number: job for job in trace.jobs}
    assert sorted(by_number) == [*workload, failing, held]
    assert by_number[failing].status == 0 and by_number[held].status == 5
    assert by_number[held].run_time is None and by_number[held].wait_time is None
    assert {by_number[i].partition for i in workload} == {1, 2}

    state = cluster.root / "state" / "plurmctld.sqlite"
    live = {r.job_id: r for r in read_history(str(state)).records}
    delays = _delays({i: live[i] for i in workload}, moments)
    tolerance = delays["event to start"] + delays["the job's last command to its end report"]

    # the CLI replays it, naming the mapping it took from the header
    out = io.StringIO()
    status = plurm_main(
        ["simulate", "--conf", str(cluster.conf), "--trace", str(swf), "--out",
         str(tmp_path / "sim"), "--no-report"],
        out=out,
    )  # fmt: skip
    assert status == 0
    assert (
        "mapped from the trace header: partition 1 = debug, partition 2 = short" in out.getvalue()
    )
    assert "run-time" in out.getvalue()  # the cleaning report: the held job is dropped

    simulated = _replay(cluster.conf, swf)
    assert sorted(simulated) == [*workload, failing]  # (held never ran: cleaned out)
    origin = epoch_seconds(float(trace.header.unix_start_time or 0))
    gaps = []
    for job_id in [*workload, failing]:
        record, sim = live[job_id], simulated[job_id]
        assert record.start is not None and record.end is not None
        assert sim.start is not None and sim.end is not None
        assert sim.partition == record.partition, job_id
        # a failed job replays as one that ran its time: SWF keeps no exit code to replay
        assert sim.state == "COMPLETED"
        assert record.state == ("FAILED" if job_id == failing else "COMPLETED")
        assert sim.node_names == record.nodes, (job_id, sim.node_names, record.nodes)
        start_gap = sim.start - (record.start - origin)
        end_gap = sim.end - (record.end - origin)
        gaps.append((job_id, start_gap, end_gap))
    live_order = sorted([*workload, failing], key=lambda i: (live[i].start or 0.0, i))
    sim_order = sorted([*workload, failing], key=lambda i: (simulated[i].start or 0.0, i))
    assert sim_order == live_order
    links = _links({i: live[i] for i in [*workload, failing]})
    report = (
        f"measured live delays (max): {delays}; tolerance {tolerance:.3f} s per link; "
        "per job (id, links, start, end): "
        + ", ".join(f"({i}, {links[i]}, {s:+.3f}, {e:+.3f})" for i, s, e in gaps)
    )
    print(report)
    for job_id, start_gap, end_gap in gaps:
        assert max(abs(start_gap), abs(end_gap)) <= links[job_id] * tolerance, report
    # the waits are real: some jobs waited for others, live and simulated alike
    assert sum(1 for i in workload if (simulated[i].wait or 0.0) > 1.5) >= 3, report


def test_since_leaves_out_earlier_jobs(cluster: LiveCluster, tmp_path: Path) -> None:
    now = time.time()
    boundary = math.floor(now) + 1  # every job so far was submitted before it
    time.sleep(boundary - now + 0.05)
    job_id = cluster.sbatch("-J", "late", "-t", "1", "-o", "/dev/null", "--wrap", "true")
    cluster.wait_for(lambda: cluster.state(job_id) == "COMPLETED", what="COMPLETED")
    since = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(boundary))  # the clock is UTC
    swf = tmp_path / "late.swf"
    cluster.run("plurm", "trace", "export", "--since", since, "-o", str(swf))
    assert [job.number for job in read_swf(swf).jobs] == [job_id]
    bad = cluster.run("plurm", "trace", "export", "--since", "yesterdayish", check=False)
    assert bad.returncode == 1
    assert bad.stderr == "plurm: error: --since: invalid time specification: yesterdayish\n"
