"""sacct: Slurm 22.05's output over accounting records, and in a simulated session."""

from __future__ import annotations

import shlex
from pathlib import Path

import attrs
import pytest

from plurm import conf
from plurm.commands.sacct import render
from plurm.model.acct import JobRecord, StepRecord
from plurm.sim.session import Simulation

NOW = 3600.0  # 01:00 on the simulated day


def _job(job_id: int, **changes: object) -> JobRecord:
    base = JobRecord(
        job_id=job_id,
        name="wrap",
        user="root",
        uid=0,
        group="root",
        gid=0,
        account="acct",
        partition="debug",
        qos="normal",
        state="COMPLETED",
        submit=10.0,
        eligible=10.0,
        start=11.0,
        end=71.0,
        nodes=("n1",),
        alloc_cpus=1,
        timelimit=60,
        steps=(
            StepRecord(
                job_id,
                "batch",
                "batch",
                "COMPLETED",
                start=11.0,
                end=71.0,
                nodes=("n1",),
                alloc_cpus=1,
            ),
        ),
    )
    return attrs.evolve(base, **changes)


RECORDS = [
    _job(1),
    _job(
        2,
        name="a-rather-long-name",
        state="CANCELLED",
        cancelled_by=0,
        steps=(
            StepRecord(
                2,
                "batch",
                "batch",
                "CANCELLED",
                exit_signal=15,
                start=11.0,
                end=20.0,
                nodes=("n1",),
                alloc_cpus=1,
            ),
        ),
        end=20.0,
    ),
    _job(3, state="FAILED", exit_code=2, steps=()),
    _job(
        10,
        array_job_id=10,
        array_tasks="1-3",
        state="PENDING",
        start=None,
        end=None,
        nodes=(),
        alloc_cpus=0,
        steps=(),
    ),
    _job(14, array_job_id=10, array_task_id=4, state="RUNNING", end=None, steps=()),
]


def out(*argv: str, records: list[JobRecord] = RECORDS, user: str | None = "root") -> str:
    result = render(list(argv), records, NOW, user=user)
    assert result.status == 0, result.stderr
    return result.stdout


def test_default_format() -> None:
    assert out() == (
        "JobID           JobName  Partition    Account  AllocCPUS      State ExitCode \n"
        "------------ ---------- ---------- ---------- ---------- ---------- -------- \n"
        "1                  wrap      debug       acct          1  COMPLETED      0:0 \n"
        "1.batch           batch                  acct          1  COMPLETED      0:0 \n"
        "2            a-rather-+      debug       acct          1 CANCELLED+      0:0 \n"
        "2.batch           batch                  acct          1  CANCELLED     0:15 \n"
        "3                  wrap      debug       acct          1     FAILED      2:0 \n"
        "10_[1-3]           wrap      debug       acct          0    PENDING      0:0 \n"
        "10_4               wrap      debug       acct          1    RUNNING      0:0 \n"
    )


def test_parsable2_parsable_and_allocations() -> None:
    assert out("-X", "-P", "-o", "JobID,State,NodeList", "-j", "2,10_[1-4]") == (
        "JobID|State|NodeList\n"
        "2|CANCELLED by 0|n1\n"
        "10_[1-3]|PENDING|None assigned\n"
        "10_4|RUNNING|n1\n"
    )
    assert out("-p", "-n", "-b", "-j", "2") == ("2|CANCELLED by 0|0:0|\n2.batch|CANCELLED|0:15|\n")


def test_widths_and_case_insensitive_prefixes() -> None:
    assert out("-X", "--noheader", "--format=jobid,state%20,jobname%-5", "--job", "1,2") == (
        "1                       COMPLETED wrap  \n2                  CANCELLED by 0 a-ra+ \n"
    )
    assert out("-X", "-o", "jobidraw,elapsed,ELAPSEDRAW,start,end%10", "-j", "14") == (
        "JobIDRaw        Elapsed ElapsedRaw               Start        End \n"
        "------------ ---------- ---------- ------------------- ---------- \n"
        "14             00:59:49       3589 2026-01-12T00:00:11    Unknown \n"
    )


def test_states_filter_and_window() -> None:
    text = out("-X", "-n", "-o", "jobid", "-s", "ca,F", "-S", "00:00", "-E", "now")
    assert text.split() == ["2", "3"]
    text = out("-X", "-n", "-o", "jobid", "-s", "RUNNING")  # now..now: running now
    assert text.split() == ["10_4"]
    # without -j, -s: since midnight; a job that ended before -S is left out
    assert out("-X", "-n", "-o", "jobid", "-S", "00:00:30").split() == [
        "1",
        "3",
        "10_[1-3]",
        "10_4",
    ]


def test_a_date_with_a_capital_t_reads_as_slurm_writes_it() -> None:
    # sacct reads -S/-E case-insensitively; the T between date and time is upper case as
    # Slurm prints dates, and must read as the lower case t does
    for form in ("2026-01-12T00:00:30", "2026-01-12t00:00:30", "2026-01-12-00:00:30"):
        assert out("-X", "-n", "-o", "jobid", "-S", form).split() == [
            "1",
            "3",
            "10_[1-3]",
            "10_4",
        ], form


def test_users_default_to_the_caller() -> None:
    records = [*RECORDS, _job(20, user="alice", uid=1000, steps=())]
    assert out("-X", "-n", "-o", "jobid", records=records, user="alice").split() == ["20"]
    assert len(out("-X", "-n", "-o", "jobid", "-a", records=records, user="alice").split()) == 6
    assert out("-X", "-n", "-o", "user", "-u", "1000", records=records).split() == ["alice"]


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (["-o", "Foo"], 'sacct: error: Invalid field requested: "Foo"\n'),
        (["-o", "state%x"], 'sacct: error: Invalid field requested: "state%x"\n'),
        (["-j", "1x"], "sacct: fatal: Bad job/step specified: 1x\n"),
        (["-j", "\u0661"], "sacct: fatal: Bad job/step specified: \u0661\n"),
        (["-j", "99999999999"], "sacct: fatal: Bad job/step specified: 99999999999\n"),
        (["-s", "NOPE"], "sacct: error: Invalid state: NOPE\n"),
        (
            ["-S", "yesterdayish"],
            "sacct: error: Invalid time specification (pos=0): yesterdayish\n",
        ),
        (["--bogus"], "sacct: unrecognized option '--bogus'\n"),
    ],
)
def test_errors_as_slurm_prints_them(argv: list[str], error: str) -> None:
    result = render(argv, RECORDS, NOW, user="root")
    assert result.status == 1
    assert result.stderr.startswith(error)


def test_clusters_is_accepted() -> None:
    assert (
        out(
            "-X",
            "--parsable2",
            "--clusters",
            "all",
            "--noheader",
            "--format=JobIdRaw,State",
            "--starttime",
            "00:00",
            "--endtime",
            "now",
            "--name",
            "wrap",
        )
        == "1|COMPLETED\n3|FAILED\n10|PENDING\n14|RUNNING\n"
    )


def test_helpformat_lists_fields() -> None:
    text = out("-e")
    assert text.startswith(
        "Account             AdminComment        AllocCPUS           AllocNodes\n"
    )


CONF = """\
ClusterName=c
SlurmctldHost=n1
SelectType=select/linear
NodeName=n[1-2] CPUs=2 RealMemory=1000
PartitionName=debug Nodes=n[1-2] Default=YES MaxTime=60
"""


def test_a_simulated_session(tmp_path: Path) -> None:
    (tmp_path / "slurm.conf").write_text(CONF)
    sim = Simulation(conf.load(tmp_path / "slurm.conf"))

    def run(at: float, line: str) -> str:
        sim.run_until(at)
        result = sim.command(shlex.split(line), tmp_path)
        assert result.status == 0, result.stderr
        return result.stdout

    run(0, "sbatch -J done --wrap='sleep 5'")
    run(0, "sbatch -J cancelled -t 10 --wrap='sleep 1000'")
    run(0, "sbatch -J late -t 1 --wrap='sleep 1000'")
    run(0, "sbatch -J queued --wrap='sleep 5'")
    run(1, "scancel 2")
    run(1, "scancel 4")
    text = run(300, "sacct -o JobID,JobName,State,ExitCode,AllocCPUS,NodeList,Timelimit")
    lines = text.splitlines()
    assert lines[0] == (
        "JobID           JobName      State ExitCode  AllocCPUS        NodeList  Timelimit "
    )
    rows = [line.split() for line in lines[2:]]
    assert rows[0][:5] == ["1", "done", "COMPLETED", "0:0", "2"]
    assert rows[1][:4] == ["1.batch", "batch", "COMPLETED", "0:0"]
    assert rows[2][:5] == ["2", "cancelled", "CANCELLED+", "0:0", "2"]
    assert rows[3][:4] == ["2.batch", "batch", "CANCELLED", "0:15"]
    assert rows[4][:4] == ["3", "late", "TIMEOUT", "0:0"]
    assert rows[4][-1] == "00:01:00"
    assert rows[5][:3] == ["3.batch", "batch", "CANCELLED"]
    assert rows[6] == ["4", "queued", "CANCELLED+", "0:0", "0", "None", "assigned", "01:00:00"]
    assert len(rows) == 7
