"""The job commands real clients call, in a simulation: scontrol update JobId=..., scontrol
show config and --version, squeue --start / -O / %a %q, sbatch --test-only / --wait /
--signal and the options it carries. Expected texts are Slurm 22.05.8's, as recorded in
tests/data/oracle/jobcmds (records.json, records_users.json)."""

from __future__ import annotations

import shlex
from collections.abc import Callable

import pytest

from plurm.commands.base import CommandResult
from plurm.commands.client import LocalClient
from plurm.commands.dispatch import run_command
from plurm.model.job import JobState
from plurm.testing.cluster import TestCluster

CONF = """
SelectType=select/linear
NodeName=n[1-4] CPUs=2 RealMemory=1000
PartitionName=p Nodes=n[1-4] Default=YES MaxTime=60
PartitionName=q Nodes=n[1-2] MaxTime=120
"""

#: A user's uid for the permission tests (the simulated commands run as root otherwise).
USER = 1000


@pytest.fixture
def cluster(make_cluster: Callable[..., TestCluster]) -> TestCluster:
    return make_cluster(CONF)


def as_user(cluster: TestCluster, line: str, uid: int = USER) -> CommandResult:
    client = LocalClient(cluster.controller, uid=uid)
    return run_command(shlex.split(line), client, cluster.workdir)


def result(cluster: TestCluster, line: str) -> tuple[int, str, str]:
    out = cluster.command(line)
    return out.status, out.stdout, out.stderr


def submit_three(cluster: TestCluster) -> None:
    """Job 1 runs (10 min), 2 waits for Resources (-N 4), 3 waits for its begin time."""
    for line in (
        "sbatch -t 10 -J run1 --wrap='sleep 300'",
        "sbatch -N 4 -t 30 -J big --wrap='sleep 300'",
        "sbatch -t 20 -J later --begin=now+3600 --wrap='sleep 300'",
    ):
        assert cluster.command(line).status == 0
    cluster.run_until(3)


# ----------------------------------------------------------------------------- scontrol update


def test_update_refusals_and_command_line_errors_read_as_slurms(cluster: TestCluster) -> None:
    submit_three(cluster)
    expected = {
        "scontrol update JobId=1 Partition=q": (
            1,
            "",
            "Job is no longer pending execution for job 1\n",
        ),
        "scontrol update JobId=1 NumNodes=2": (
            1,
            "",
            "Requested operation not supported on this system for job 1\n",
        ),
        "scontrol update JobId=1 NumTasks=2": (
            1,
            "",
            "Job is no longer pending execution for job 1\n",
        ),
        "scontrol update JobId=1 StartTime=now+60": (
            1,
            "",
            "Job is no longer pending execution for job 1\n",
        ),
        "scontrol update JobId=1 Partition=nosuch": (
            1,
            "",
            "Job is no longer pending execution for job 1\n",
        ),
        "scontrol update JobId=2 Partition=nosuch": (
            1,
            "",
            "Invalid partition name specified for job 2\n",
        ),
        "scontrol update JobId=2 NumNodes=9": (
            1,
            "",
            "Node count specification invalid for job 2\n",
        ),
        "scontrol update JobId=1 TimeLimit=-500": (
            1,
            "",
            "scontrol: error: TimeLimit decrement larger than current time limit (500 > 10)\n",
        ),
        "scontrol update JobId=1 Foo=bar": (
            1,
            "",
            "Update of this parameter is not supported: Foo=bar\nRequest aborted\n",
        ),
        "scontrol update JobId=1": (1, "", "No changes specified\n"),
        "scontrol update JobId=99 TimeLimit=5": (1, "", "Invalid job id specified for job 99\n"),
        "scontrol update JobId=abc TimeLimit=5": (1, "", "Invalid job id specified for job abc\n"),
        "scontrol update JobId=1 TimeLimit=abc": (
            1,
            "",
            "scontrol: error: Invalid TimeLimit value\n",
        ),
        "scontrol update JobId=1 Priority=abc": (
            1,
            "",
            "scontrol: error: Invalid Priority value: abc\n",
        ),
        "scontrol update JobId=1 NumNodes=abc": (
            0,
            "",
            'scontrol: error: Invalid numeric value "abc" for requested node count.\n',
        ),
    }
    for line, answer in expected.items():
        assert result(cluster, line) == answer, line
    assert cluster.job(2).partition == "p" and cluster.job(1).time_limit == 10


def test_root_updates_a_running_and_a_pending_job(cluster: TestCluster) -> None:
    submit_three(cluster)
    for line in (
        "scontrol update JobId=1 TimeLimit=+5",
        "scontrol update JobId=1 TimeLimit=-5",
        "scontrol update JobId=1 TimeLimit=999",  # an administrator passes MaxTime
        "scontrol update JobId=1 JobName=renamed2 Requeue=0 Priority=5",
        "scontrol update jobid=1 nice=10",  # taken and ignored: no longer pending
        "scontrol update TimeLimit=7 JobId=1",
        "scontrol update JobId=2 Partition=q NumNodes=2 Nice=100 Comment=hello",
        "scontrol update JobId=3 StartTime=now+60 NumTasks=2",
    ):
        assert result(cluster, line) == (0, "", ""), line
    running, big, later = cluster.job(1), cluster.job(2), cluster.job(3)
    assert (running.name, running.time_limit, running.priority) == ("renamed2", 7, 5)
    assert not running.requeue and running.request.nice == 0
    assert (big.partition, big.request.min_nodes, big.request.comment) == ("q", 2, "hello")
    assert big.request.nice == 100
    assert later.eligible_time == 63 and later.request.ntasks == 2
    show = cluster.command("scontrol show job 1").stdout
    assert "   Priority=5 Nice=0 Account=(null) QOS=(null)\n" in show
    assert "   RunTime=00:00:02 TimeLimit=00:07:00 TimeMin=N/A\n" in show
    assert "StartTime=2026-01-12T00:00:01 EndTime=2026-01-12T00:07:01 " in show
    assert "   Priority=" in cluster.command("scontrol show job 2").stdout
    assert " Nice=100 " in cluster.command("scontrol show job 2").stdout


def test_a_new_time_limit_ends_a_running_job_at_the_new_limit(cluster: TestCluster) -> None:
    cluster.command("sbatch -t 10 --wrap='sleep 3000'")
    cluster.command("sbatch -t 1 --wrap='sleep 3000'")
    cluster.run_until(3)
    assert cluster.command("scontrol update JobId=1 TimeLimit=2").status == 0
    assert cluster.command("scontrol update JobId=2 TimeLimit=30").status == 0
    cluster.run_until(200)
    # the check runs every 30 s: 2 min from the start at 1 s is seen at 150 s
    assert (cluster.state(1), cluster.job(1).end_time) == (JobState.TIMEOUT, 150.0)
    assert cluster.state(2) is JobState.RUNNING  # its old 1-minute limit no longer applies
    # backfill's kept end moved with the limit
    assert cluster.controller._running_ends[2][1] == 1 + 30 * 60


def test_a_user_may_lower_but_not_raise_a_running_jobs_limit(cluster: TestCluster) -> None:
    cluster.command(f"sbatch --uid={USER} -t 10 --wrap='sleep 300'")
    cluster.command(f"sbatch --uid={USER} -t 10 -N 4 --wrap='sleep 300'")
    cluster.command("sbatch -t 10 -N 4 -J rootjob --wrap='sleep 300'")
    cluster.run_until(2)
    expected = {
        "scontrol update JobId=1 TimeLimit=20": "Access/permission denied for job 1\n",
        "scontrol update JobId=1 TimeLimit=5": "",
        "scontrol update JobId=1 TimeLimit=UNLIMITED": "Access/permission denied for job 1\n",
        "scontrol update JobId=2 TimeLimit=20": "",  # pending: up to the partition's MaxTime
        "scontrol update JobId=2 TimeLimit=90": "Access/permission denied for job 2\n",
        "scontrol update JobId=2 TimeLimit=3": "",
        "scontrol update JobId=2 Priority=1": (
            "Changes to job priority are not persistent, change nice instead for job 2\n"
        ),
        "scontrol update JobId=2 Nice=-5": "Access/permission denied for job 2\n",
        "scontrol update JobId=2 Nice=5": "",
        "scontrol update JobId=2 Comment=mine Partition=q NumNodes=2": "",
        "scontrol update JobId=3 TimeLimit=5": "Invalid user id for job 3\n",
        "scontrol update JobId=1 Name=running Comment=c": "",
    }
    for line, stderr in expected.items():
        answer = as_user(cluster, line)
        assert (answer.status, answer.stderr) == (1 if stderr else 0, stderr), line
    assert cluster.job(1).time_limit == 5 and cluster.job(1).name == "running"
    assert cluster.job(2).time_limit == 3 and cluster.job(2).partition == "q"
    cluster.command("scancel 1")
    cluster.run_until(20)
    answer = as_user(cluster, "scontrol update JobId=1 TimeLimit=3")
    assert (answer.status, answer.stderr) == (1, "Job has already finished for job 1\n")


# ----------------------------------------------------------------------------- show config, -V


def test_show_config_lists_the_settings_plurm_knows_in_slurms_layout(
    cluster: TestCluster,
) -> None:
    text = cluster.command("scontrol show config").stdout
    lines = text.splitlines()
    assert lines[0] == "Configuration data as of 2026-01-12T00:00:00"
    for line in (
        "AccountingStorageType   = accounting_storage/none",
        "AccountingStorageEnforce = none",
        "ClusterName             = test",
        "JobRequeue              = 1",
        "KillWait                = 30 sec",
        "MinJobAge               = 300 sec",
        "PreemptExemptTime       = 00:00:00",
        "SchedulerType           = sched/backfill",
        "SelectType              = select/linear",
        "SlurmctldHost[0]        = localhost",
        "SLURM_VERSION           = 22.05.8",
    ):
        assert line in lines, line
    keys = [line.split(" = ")[0].strip() for line in lines[1:-2]]
    assert keys.index("MinJobAge") < keys.index("SelectType") < keys.index("SLURM_VERSION")
    assert text.endswith("\nSlurmctld(primary) at localhost is UP\n")


@pytest.mark.parametrize("command", ["sbatch", "squeue", "sinfo", "scancel", "scontrol", "sacct"])
@pytest.mark.parametrize("flag", ["-V", "--version"])
def test_every_command_prints_its_version(cluster: TestCluster, command: str, flag: str) -> None:
    assert result(cluster, f"{command} {flag}") == (0, "slurm 22.05.8\n", "")


# ----------------------------------------------------------------------------- squeue


def test_squeue_start_lists_pending_jobs_with_their_expected_starts(cluster: TestCluster) -> None:
    submit_three(cluster)
    header = (
        "             JOBID PARTITION     NAME     USER ST          START_TIME  NODES "
        "SCHEDNODES           NODELIST(REASON)\n"
    )
    assert cluster.command("squeue --start").stdout == header + (
        "                 2         p      big     root PD 2026-01-12T00:10:01      4 "
        "(null)               (Resources)\n"
        "                 3         p    later     root PD 2026-01-12T01:00:00      1 "
        "(null)               (BeginTime)\n"
    )
    assert cluster.command("squeue --start -t all").stdout.splitlines()[1] == (
        "                 1         p     run1     root  R 2026-01-12T00:00:01      1 "
        "(null)               n1"
    )


def test_squeue_long_format_names_widths_and_letters(cluster: TestCluster) -> None:
    submit_three(cluster)
    cluster.command("scontrol update JobId=2 Comment=hello")
    assert cluster.command("squeue -t all -o '%i|%a|%q|%.5a|%.5q'").stdout == (
        "JOBID|ACCOUNT|QOS|ACCOU|  QOS\n"
        "2|(null)|(null)|(null|(null\n"
        "3|(null)|(null)|(null|(null\n"
        "1|(null)|(null)|(null|(null\n"
    )
    assert cluster.command("squeue -t all -O jobid:5,name:.10,state:.3").stdout == (
        "JOBID      NAMESTA\n2           bigPEN\n3         laterPEN\n1          run1RUN\n"
    )
    assert cluster.command("squeue -t all -O jobid:,name").stdout == (
        "JOBIDNAME                \n2big                 \n3later               \n"
        "1run1                \n"
    )
    fields = "tres-alloc,submittime,starttime,endtime,comment,numtasks,userid,timelimit"
    assert cluster.command(f"squeue -t all -O {fields}").stdout.splitlines() == [
        "TRES_ALLOC          SUBMIT_TIME         START_TIME          END_TIME            "
        "COMMENT             TASKS               UID                 TIME_LIMIT          ",
        "cpu=4,mem=4000M,node2026-01-12T00:00:00 2026-01-12T00:10:01 N/A                 "
        "hello               4                   0                   30:00               ",
        "cpu=1,mem=1000M,node2026-01-12T00:00:00 2026-01-12T01:00:00 2026-01-12T01:20:00 "
        "(null)              1                   0                   20:00               ",
        "cpu=2,node=1,billing2026-01-12T00:00:00 2026-01-12T00:00:01 2026-01-12T00:10:01 "
        "(null)              1                   0                   10:00               ",
    ]
    bogus = cluster.command("squeue -t all -O bogus")
    assert (bogus.status, bogus.stdout, bogus.stderr) == (
        0,
        "\n\n\n\n",
        "squeue: error: Invalid job format specification: bogus\n",
    )
    assert cluster.command("squeue --me --name=run1,big --noheader -o %i").stdout == "2\n1\n"


# ----------------------------------------------------------------------------- sbatch


def test_sbatch_test_only_says_when_and_uses_up_a_job_id(cluster: TestCluster) -> None:
    assert result(cluster, "sbatch --test-only -t 5 --wrap='sleep 1'") == (
        0,
        "",
        "sbatch: Job 1 to start at 2026-01-12T00:00:00 using 2 processors on nodes n1 "
        "in partition p\n",
    )
    cluster.command("sbatch -N 4 -t 10 --wrap='sleep 300'")
    cluster.run_until(5)
    assert result(cluster, "sbatch --test-only -p q -t 5 --parsable --wrap='sleep 1'") == (
        0,
        "",
        "sbatch: Job 3 to start at 2026-01-12T00:10:01 using 2 processors on nodes n1 "
        "in partition q\n",
    )
    assert cluster.command("sbatch --wrap='sleep 1'").stdout == "Submitted batch job 4\n"
    assert sorted(cluster.controller.cluster.jobs) == [2, 4]


def test_sbatch_wait_returns_the_jobs_exit_code(cluster: TestCluster) -> None:
    assert result(cluster, "sbatch --wait -t 5 --wrap='exit 3'") == (
        3,
        "Submitted batch job 1\n",
        "",
    )
    assert result(cluster, "sbatch -W --wrap='sleep 20'") == (0, "Submitted batch job 2\n", "")
    assert cluster.state(2) is JobState.COMPLETED and cluster.now >= 21


def test_sbatch_signal_warns_before_the_time_limit(cluster: TestCluster) -> None:
    cluster.command("sbatch -t 2 --signal=B:USR2@40 --wrap='sleep 500'")
    cluster.command("sbatch -t 2 --signal=USR1 --wrap='srun sleep 500'")
    cluster.command("sbatch -t 3 --signal=SIGHUP@200 --wrap='sleep 500'")
    cluster.run_until(2)
    cluster.command("scontrol update JobId=2 TimeLimit=4")  # the warning moves with it
    cluster.run_until(400)
    # started at 1 s; the warnings come at the 30 s checks, once
    assert cluster.signals(1) == [(90.0, "USR2 (batch)"), (150.0, "CONT"), (150.0, "TERM")]
    assert cluster.signals(2) == [(210.0, "USR1 (steps)"), (270.0, "CONT"), (270.0, "TERM")]
    assert cluster.signals(3)[0] == (30.0, "HUP (steps)")


def test_sbatch_accepts_and_checks_the_options_tools_write(cluster: TestCluster) -> None:
    line = (
        "sbatch --ntasks-per-node=2 -N 2 --comment=hi --mail-type=END,FAIL --mail-user=a@b "
        "--wckey=wk --signal=R:USR1@30 -t 5 --begin=now+600 --wrap='sleep 1'"
    )
    assert result(cluster, line) == (0, "Submitted batch job 1\n", "")
    request = cluster.job(1).request
    assert (request.comment, request.wckey, request.ntasks, request.ntasks_per_node) == (
        "hi",
        "wk",
        4,
        2,
    )
    assert (request.warn_signal, request.warn_time, request.warn_batch_only) == ("USR1", 30, False)
    refusals = {
        "sbatch --gres=gpu:1 --wrap='sleep 1'": (
            1,
            "sbatch: error: Invalid generic resource (gres) specification\n",
        ),
        "sbatch --gpus=1 --wrap='sleep 1'": (
            1,
            "sbatch: error: Invalid generic resource (gres) specification\n",
        ),
        "sbatch --signal=FOO@30 --wrap='sleep 1'": (
            255,
            "sbatch: error: Invalid --signal specification\n",
        ),
        "sbatch --signal=USR1@abc --wrap='sleep 1'": (
            255,
            "sbatch: error: Invalid --signal specification\n",
        ),
        "sbatch --signal=X:USR1 --wrap='sleep 1'": (
            255,
            "sbatch: error: Invalid --signal specification\n",
        ),
        "sbatch --mail-type=BOGUS --wrap='sleep 1'": (
            255,
            "sbatch: error: Invalid --mail-type specification\n",
        ),
    }
    for line, (status, stderr) in refusals.items():
        assert result(cluster, line) == (status, "", stderr), line


def test_sbatch_gres_that_a_node_has_is_carried(make_cluster: Callable[..., TestCluster]) -> None:
    cluster = make_cluster(
        "GresTypes=gpu\nNodeName=g1 CPUs=4 Gres=gpu:2\nPartitionName=p Nodes=g1 Default=YES"
    )
    assert cluster.command("sbatch --gres=gpu:1 --gpus-per-node=1 --wrap='sleep 1'").status == 0
    assert cluster.job(1).request.gres == ("gpu:1", "gpus-per-node=1")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ([], "changes: not an object"),
        ({"bogus": 1}, "'bogus' is not a job field"),
        ({"time_limit": "10"}, "time_limit: not an integer"),
        ({"time_limit": True}, "time_limit: not an integer"),
        ({"nice": 1 << 40}, "nice: not an integer"),
        ({"priority": -1}, "priority: not an integer"),
        ({"begin_time": float("nan")}, "begin_time: not a finite number"),
        ({"requeue": 1}, "requeue: not true or false"),
        ({"comment": "x" * 2000}, "comment: not a text"),
        ({"max_nodes": 3}, "max_nodes without min_nodes"),
    ],
)
def test_job_changes_are_checked_on_arrival(changes: object, message: str) -> None:
    from plurm.live.rpc import RpcError
    from plurm.live.updates import job_changes

    with pytest.raises(RpcError, match=message):
        job_changes(changes)


def test_job_changes_decode_what_the_command_sends() -> None:
    from plurm.live.updates import job_changes, job_changes_to_dict

    sent = {"time_limit": None, "min_nodes": 2, "max_nodes": None, "requeue": False, "nice": -3}
    assert job_changes(job_changes_to_dict(sent)) == sent
