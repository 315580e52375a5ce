"""Usage figures: how sacct and sstat print them (Slurm's exact unit conversion), the
JobAcctGather settings, a node's usage report checked field by field, a job's memory
limit on a node, and OUT_OF_MEMORY as a job state."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from plurm import conf
from plurm.commands.dispatch import run_command
from plurm.commands.sstat import format_steps
from plurm.commands.usagefmt import cpu_time, size_text, usage_value
from plurm.gather.memlimit import memory_limit
from plurm.model.acct import StepRecord
from plurm.model.job import Job, JobRequest, JobState
from plurm.model.usage import (
    OOM_SIGNAL,
    SIG_OOM,
    GatherSettings,
    StepUsage,
    UsageError,
    step_usage,
    with_usage,
)
from plurm.testing import JobBuilder, TestCluster


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0, "0"),
        (1000, "1000"),
        (4096, "4K"),
        (10702848, "10452K"),  # 10452 KiB: not a whole number of MiB
        (200 * 1024 * 1024, "200M"),
        (3 * 1024**3, "3G"),
        (1536 * 1024 * 1024, "1536M"),
        (5266672 * 1024, "5266672K"),
    ],
)
def test_sizes_print_with_slurms_exact_conversion(value: int, text: str) -> None:
    assert size_text(value) == text


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "00:00:00"), (1.234, "00:01.234"), (61, "00:01:01"), (3725.5, "01:02:05"),
     (90061, "1-01:01:01")],
)  # fmt: skip
def test_cpu_times(seconds: float, text: str) -> None:
    assert cpu_time(seconds) == text


def _step(**usage: object) -> StepRecord:
    step = StepRecord(job_id=5, step=0, name="a.out", state="RUNNING", ntasks=2, nodes=("n1",))
    return with_usage(step, StepUsage(**usage))  # type: ignore[arg-type]


def test_usage_fields_of_a_step() -> None:
    step = _step(
        max_rss=204800 * 1024,
        max_rss_node="n1",
        max_rss_task=1,
        ave_rss=150000.4 * 1024,
        max_pages=3,
        ave_cpu=12.7,
        min_cpu=2.2,
        total_cpu=25.4,
    )
    assert usage_value("MaxRSS")(step) == "200M"
    assert usage_value("MaxRSSNode")(step) == "n1"
    assert usage_value("MaxRSSTask")(step) == 1
    assert usage_value("AveRSS")(step) == "150000K"
    assert usage_value("MaxPages")(step) == "3"
    assert usage_value("AveCPU")(step) == "00:00:12"  # whole seconds
    assert usage_value("MinCPU")(step) == "00:00:02"
    assert usage_value("TotalCPU")(step) == "00:25.400"
    assert step_usage(step) is not None and step_usage(step).max_rss_task == 1  # type: ignore[union-attr]
    bare = StepRecord(job_id=5, step="batch", name="batch", state="RUNNING")
    assert usage_value("MaxRSS")(bare) is None and step_usage(bare) is None


def test_sstat_lines() -> None:
    step = _step(max_rss=4096 * 1024, max_rss_task=0, ave_cpu=1.0)
    fields = [("JobID", 12), ("MaxRSS", 10), ("AveCPU", 10), ("NTasks", 8)]
    assert format_steps([step], fields, delimiter="|") == (
        "JobID|MaxRSS|AveCPU|NTasks\n5.0|4M|00:00:01|2\n"
    )
    assert format_steps([step], fields, delimiter="|", trailing=True, header=False) == (
        "5.0|4M|00:00:01|2|\n"
    )
    fixed = format_steps([step], fields).splitlines()
    assert fixed[0] == "       JobID     MaxRSS     AveCPU   NTasks "
    assert fixed[1] == "------------ ---------- ---------- -------- "
    assert fixed[2] == "         5.0         4M   00:00:01        2 "


def test_gather_settings() -> None:
    assert GatherSettings.from_values(None, None) == GatherSettings(30, frozenset())
    assert GatherSettings.from_values("task=1", "OverMemoryKill").over_memory_kill
    assert GatherSettings.from_values("5", None).frequency == 5
    assert GatherSettings.from_values("energy=10,task=2,network=3", None).frequency == 2
    assert GatherSettings.from_values("task=0", "NoShared,UsePss").frequency == 0
    assert not GatherSettings.from_values(None, "NoShared").over_memory_kill
    with pytest.raises(UsageError, match="invalid task frequency 'often'"):
        GatherSettings.from_values("task=often", None)


def test_usage_reports_are_checked() -> None:
    usage = StepUsage(max_rss=10, max_rss_node="n1", ave_cpu=1.5)
    assert StepUsage.from_dict(usage.to_dict()) == usage
    assert StepUsage.from_dict({"total_cpu": 3}) == StepUsage(total_cpu=3.0)
    for bad in (
        [],
        {"max_rss": -1},
        {"max_rss": 1.5},
        {"max_rss": True},
        {"ave_cpu": float("nan")},
        {"max_rss_node": 3},
        {"owner": "root"},
    ):
        with pytest.raises(UsageError):
            StepUsage.from_dict(bad)


CONF = """\
ClusterName=c
SlurmctldHost=localhost
DefMemPerCPU=100
MaxMemPerNode=1500
NodeName=n1 CPUs=8 RealMemory=4000
PartitionName=p Nodes=n1 Default=YES
PartitionName=q Nodes=n1 DefMemPerCPU=300 MaxMemPerNode=2000
"""


def _job(partition: str = "p", **request: object) -> Job:
    return Job(job_id=1, request=JobRequest(**request), submit_time=0.0, partition=partition)  # type: ignore[arg-type]


def test_memory_limit_on_a_node(tmp_path: Path) -> None:
    path = tmp_path / "slurm.conf"
    path.write_text(CONF)
    config = conf.load(str(path))
    assert memory_limit(_job(mem_per_node=100), 4, config) == 100
    assert memory_limit(_job(mem_per_cpu=200), 4, config) == 800
    assert memory_limit(_job(), 4, config) == 400  # the cluster's DefMemPerCPU
    assert memory_limit(_job("q"), 4, config) == 1200  # the partition's
    assert memory_limit(_job(mem_per_node=3000), 4, config) == 1500  # MaxMemPerNode
    assert memory_limit(_job("q", mem_per_node=3000), 4, config) == 2000


def test_out_of_memory_is_slurms_state_and_status() -> None:
    assert JobState.OUT_OF_MEMORY.code == "OOM" and JobState.OUT_OF_MEMORY.finished
    assert (SIG_OOM, OOM_SIGNAL) == (253, 125)


def test_sstat_command_line(
    make_cluster: Callable[..., TestCluster], job: Callable[[], JobBuilder]
) -> None:
    cluster = make_cluster(
        "SelectType=select/linear\nNodeName=n1 CPUs=4 RealMemory=1000\n"
        "PartitionName=p Nodes=n1 Default=YES\n"
    )
    job_id = cluster.submit(job().runtime(60))
    cluster.run_until(5)

    def sstat(*argv: str) -> tuple[int, str, str]:
        result = run_command(["sstat", *argv], cluster.simulation.client, cluster.workdir)
        return result.status, result.stdout, result.stderr

    assert sstat("-j", str(job_id), "-P", "-o", "jobid,ntasks,maxrss") == (
        0,
        f"JobID|NTasks|MaxRSS\n{job_id}.batch|1|\n",  # jobacct_gather/none: no figures
        "",
    )
    assert sstat("-j", f"{job_id}.batch", "-n", "-p", "-o", "JobID") == (
        0,
        f"{job_id}.batch|\n",
        "",
    )
    assert sstat()[::2] == (1, "sstat: error: You must specify a job (-j JOBID[.STEP])\n")
    assert sstat("-j", "99", "-n")[::2] == (1, "sstat: error: couldn't get steps for job 99\n")
    assert sstat("-j", "1.x")[2] == "sstat: error: Invalid job step id: 1.x\n"
    assert sstat("-j", "1", "-o", "JobID,bogus")[2] == (
        'sstat: error: Invalid field requested: "bogus"\n'
    )
    cluster.run_until(100)
    assert sstat("-j", str(job_id), "-n")[::2] == (
        1,
        f"sstat: error: couldn't get steps for job {job_id}\n",
    )
