"""plurm trace export: accounting records as SWF, read back by Plurm's own reader; the
replay's use of what the header says (names, the controller's start, the sub-second phase)."""

from __future__ import annotations

import io
from pathlib import Path

import attrs
import pytest

from plurm import conf
from plurm.cli.main import main
from plurm.live.export import History, read_history, swf_lines, swf_status
from plurm.live.store import CONTROLLER_STARTS, StateStore
from plurm.live.wallclock import unix_seconds
from plurm.model.acct import JobRecord, StepRecord
from plurm.sim.trace import TraceMapping, replay
from plurm.workload import clean, parse_swf, read_swf
from plurm.workload.names import NamedId, read_names

CONF = """ClusterName=acct
SlurmctldHost=h
StateSaveLocation={state}
NodeName=n[1-4] CPUs=4 RealMemory=1000
PartitionName=debug Nodes=ALL Default=YES
PartitionName=big Nodes=n[1-4]
"""
#: A controller-clock time on a whole second (the clock's epoch is midnight UTC).
T0 = 5000.0


def _config(tmp_path: Path) -> conf.SlurmConfig:
    path = tmp_path / "slurm.conf"
    path.write_text(CONF.format(state=tmp_path / "state"))
    return conf.load(path)


def _record(job_id: int, **changes: object) -> JobRecord:
    base = JobRecord(
        job_id=job_id,
        name="wrap",
        user="alice",
        uid=1000,
        group="staff",
        gid=50,
        account=None,
        partition="debug",
        qos="normal",
        state="COMPLETED",
        submit=T0 + job_id,
        eligible=T0 + job_id,
        start=T0 + job_id + 1,
        end=T0 + job_id + 11,
        nodes=("n1",),
        alloc_cpus=4,
        req_cpus=2,
        timelimit=5,
    )
    return attrs.evolve(base, **changes)


RECORDS = (
    _record(1, submit=T0 + 0.25, start=T0 + 1.0, end=T0 + 31.5, suspended=10.0),
    _record(2, state="FAILED", name="fails", user="bob", uid=1001, req_mem=100, timelimit=None),
    # cancelled while it waited: Slurm sets its start to its end, nothing allocated
    _record(3, state="CANCELLED by 1000", start=T0 + 9, end=T0 + 9, nodes=(), alloc_cpus=0),
    _record(4, state="PREEMPTED", partition="big", qos=None, nodes=("n1", "n2"), alloc_cpus=8),
    _record(5, state="RUNNING", end=None),  # not ended: left out
    _record(
        6,
        state="TIMEOUT",
        steps=(
            StepRecord(job_id=6, step="batch", name="batch", state="CANCELLED", total_cpu=20.0),
        ),
    ),
)


def test_records_become_swf_lines_plurms_reader_reads_back(tmp_path: Path) -> None:
    history = History(RECORDS, controller_starts=(T0 - 100, T0 - 3.5, T0 + 100))
    text = "\n".join(swf_lines(history, _config(tmp_path))) + "\n"
    trace = read_swf(io.StringIO(text))
    assert not trace.notices
    header = trace.header
    assert header.unix_start_time == int(unix_seconds(T0))  # the first submission's second
    assert (header.max_nodes, header.max_procs, header.max_jobs) == (4, 16, 5)
    assert header.partition_names == {1: "debug", 2: "big"}
    assert header.queue_names == {1: "normal"}
    names = read_names(header)
    assert names.users == {1: NamedId("alice", 1000), 2: NamedId("bob", 1001)}
    assert names.groups == {1: NamedId("staff", 50)}
    assert names.executables == {1: "wrap", 2: "fails"}
    # the last start before the first submission, on the trace's clock
    assert names.controller_start == -3.5
    assert "1 jobs not ended at the export were left out" in header.notes

    jobs = {job.number: job for job in trace.jobs}
    assert sorted(jobs) == [1, 2, 3, 4, 6]
    one = jobs[1]
    # run time leaves out the 10 s suspended; requested time is the limit in seconds
    assert (one.submit_time, one.wait_time, one.run_time) == (0.25, 0.75, 20.5)
    assert (one.allocated_processors, one.requested_processors, one.requested_time) == (4, 2, 300)
    assert (one.status, one.user, one.group, one.queue, one.partition) == (1, 1, 1, 1, 1)
    two = jobs[2]
    assert (two.status, two.user, two.executable, two.requested_time) == (0, 2, 2, None)
    assert two.requested_memory == 100 * 1024 // 2  # 100 MiB per node, 2 CPUs asked for
    three = jobs[3]
    assert (three.status, three.wait_time, three.run_time, three.allocated_processors) == (
        5,
        None,
        None,
        None,
    )
    four = jobs[4]
    assert (four.status, four.queue, four.partition, four.allocated_processors) == (5, None, 2, 8)
    assert jobs[6].status == 0 and jobs[6].average_cpu_time == 5.0  # 20 CPU-s over 4


def test_whole_seconds_and_since(tmp_path: Path) -> None:
    history = History(RECORDS)
    lines = swf_lines(history, _config(tmp_path), whole_seconds=True, since=T0 + 2)
    trace = read_swf(io.StringIO("\n".join(lines)))
    assert [job.number for job in trace.jobs] == [2, 3, 4, 6]
    assert trace.jobs[0].submit_time == 0  # time 0 is the first exported submission's second
    assert all(isinstance(job.run_time, int | None) for job in trace.jobs)
    assert read_names(trace.header).controller_start is None  # no start recorded
    empty = swf_lines(History(()), _config(tmp_path))
    assert read_swf(io.StringIO("\n".join(empty))).jobs == ()


@pytest.mark.parametrize(
    ("state", "status"),
    [
        ("COMPLETED", 1),
        ("CANCELLED by 0", 5),
        ("PREEMPTED", 5),
        ("FAILED", 0),
        ("TIMEOUT", 0),
        ("NODE_FAIL", 0),
        ("OUT_OF_MEMORY", 0),
    ],
)
def test_status_codes(state: str, status: int) -> None:
    assert swf_status(state) == status


def test_the_history_comes_from_the_sqlite_store(tmp_path: Path) -> None:
    path = tmp_path / "plurmctld.sqlite"
    with StateStore(path) as store:
        # a job never eligible (held, then cancelled), which sacct lists only by id
        store.record_job(_record(7, eligible=None, state="CANCELLED", nodes=(), alloc_cpus=0))
        store.record_job(_record(8))
        store.save_value(CONTROLLER_STARTS, [T0 - 1])
        history = read_history(str(path))
    assert [r.job_id for r in history.records] == [7, 8]
    assert history.controller_starts == (T0 - 1,)


def test_the_command_refuses_what_it_cannot_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _config(tmp_path)
    conf_path = str(tmp_path / "slurm.conf")
    assert main(["trace", "export", "-f", conf_path]) == 1
    assert capsys.readouterr().err == (
        f"plurm: error: no accounting store at {tmp_path}/state/plurmctld.sqlite "
        f"(has plurmctld run with {conf_path}?)\n"
    )
    (tmp_path / "state").mkdir()
    StateStore(tmp_path / "state" / "plurmctld.sqlite").close()
    assert main(["trace", "export", "-f", conf_path, "--since", "3pm-ish"]) == 1
    assert capsys.readouterr().err == (
        "plurm: error: --since: invalid time specification: 3pm-ish\n"
    )
    out = io.StringIO()
    assert main(["trace", "export", "-f", conf_path, "--since", "now-1hour"], out=out) == 0
    assert out.getvalue().startswith("; Version: 2.2\n")


# ----------------------------------------------------------------------------- replay

REPLAY_CONF = """ClusterName=t
SlurmctldHost=h
NodeName=n[1-2] CPUs=1 RealMemory=1000
PartitionName=one Nodes=n1 Default=YES
PartitionName=two Nodes=n2
"""


def test_the_replay_keeps_the_sub_second_phase(tmp_path: Path) -> None:
    (tmp_path / "slurm.conf").write_text(REPLAY_CONF)
    config = conf.load(tmp_path / "slurm.conf")
    trace = clean(parse_swf("1 0.6 -1 10 1 -1 -1 1 60 -1 1 1 1 1 -1 -1 -1 -1\n"))
    [record] = replay(trace, config)
    # submitted 0.6 s into a second, it starts at the pass on the next whole second
    assert (record.submit, record.start, record.end) == (0.6, 1.0, 11.0)


def test_the_replay_starts_its_controller_where_the_trace_says(tmp_path: Path) -> None:
    (tmp_path / "slurm.conf").write_text(REPLAY_CONF)
    config = conf.load(tmp_path / "slurm.conf")
    # a 1-minute limit, 100 s of work: killed at the first 30 s time-limit check after 61 s
    trace = clean(parse_swf("1 0 -1 100 1 -1 -1 1 60 -1 1 1 1 1 -1 -1 -1 -1\n"))
    [from_zero] = replay(trace, config)
    [from_before] = replay(trace, config, controller_start=-10.0)
    assert from_zero.state == from_before.state == "TIMEOUT"
    # started at 1; the checks run at 30, 60, 90 from a controller started at 0, and at
    # 20, 50, 80 from one started at -10 (its end comes the executor's teardown later)
    assert (from_zero.start, from_zero.run) == (1.0, 89.0)
    assert (from_before.start, from_before.run) == (1.0, 79.0)


def test_header_names_fill_what_the_mapping_leaves(tmp_path: Path) -> None:
    (tmp_path / "slurm.conf").write_text(REPLAY_CONF)
    config = conf.load(tmp_path / "slurm.conf")
    mapping = TraceMapping(partitions={1: "two"})
    filled, taken = mapping.with_names(
        {1: "one", 2: "two", 3: "absent"}, {1: "normal", 2: "nosuchqos"}, config
    )
    assert filled.partitions == {1: "two", 2: "two"}  # the mapping's own number wins
    assert filled.queues == {1: "normal"}
    assert taken == ["partition 2 = two", "queue 1 = QOS normal"]


def test_simulate_maps_an_exported_trace_by_its_header(tmp_path: Path) -> None:
    (tmp_path / "slurm.conf").write_text(REPLAY_CONF)
    swf = tmp_path / "t.swf"
    swf.write_text(
        "; Partition: 1 one\n; Partition: 2 two\n"
        "; Note: Controller started at -10 s\n"
        "1 0 -1 100 1 -1 -1 1 60 -1 1 1 1 1 -1 2 -1 -1\n"
    )
    out = io.StringIO()
    argv = ["simulate", "--conf", str(tmp_path / "slurm.conf"), "--trace", str(swf)]
    assert main([*argv, "--out", str(tmp_path / "o"), "--no-report"], out=out) == 0
    assert "mapped from the trace header: partition 1 = one, partition 2 = two\n" in out.getvalue()
    csv_text = (tmp_path / "o" / "jobs.csv").read_text()
    # its partition, and killed at the time-limit check of its controller's phase (80)
    assert "\n1,1,two,,False,TIMEOUT,0.0,1,83.7,1.0,79.0," in csv_text
