"""preempt/pbs as a loaded plugin: its files are read beside slurm.conf when the plugins are
built (``plurm conf check``, ``plurm simulate``), its queues must be partitions, and it
judges slurm.conf's PreemptMode itself (left out, as it takes its methods from PBS's files)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from plurm import conf
from plurm.errors import ConfError
from plurm.manager import Plugins
from plurm.model.cluster import Cluster
from plurm.model.job import Job, JobRequest, JobState
from tests.conftest import REPO
from tests.support.cli import plurm

pytest.importorskip("plurm_preempt_pbs")

EXAMPLE = REPO / "conf" / "pbs-express"


def _copy(tmp_path: Path) -> Path:
    target = tmp_path / "pbs"
    shutil.copytree(EXAMPLE, target)
    return target


def test_the_example_loads_with_pbs_settings() -> None:
    plugins = Plugins.load(conf.load(EXAMPLE / "slurm.conf"))
    assert "preempt/pbs" in plugins.type_strings()


def test_conf_check_reports_a_bad_qmgr_conf_with_file_line_and_column(tmp_path: Path) -> None:
    directory = _copy(tmp_path)
    with (directory / "qmgr.conf").open("a") as stream:
        stream.write("set queue express priorty = 3\n")
    result = plurm("conf", "check", str(directory / "slurm.conf"))
    assert result.returncode == 1
    assert f"{directory / 'qmgr.conf'}:5:19: unrecognized key 'priorty'" in result.stderr
    assert "did you mean 'priority'?" in result.stderr
    assert "Traceback" not in result.stderr


def test_simulate_refuses_a_malformed_sched_config(tmp_path: Path) -> None:
    directory = _copy(tmp_path)
    (directory / "sched_config").write_text('preempt_order: "R 50 X"\n')
    result = plurm("simulate", "--conf", str(directory / "slurm.conf"), str(directory / "session"))
    assert result.returncode != 0
    assert f"{directory / 'sched_config'}:1:22:" in result.stderr
    assert "'X' is not a preemption method" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_queue_must_be_a_partition(tmp_path: Path) -> None:
    directory = _copy(tmp_path)
    (directory / "qmgr.conf").write_text("# queues\nset queue expres priority = 200\n")
    with pytest.raises(ConfError) as caught:
        Plugins.load(conf.load(directory / "slurm.conf"))
    assert str(caught.value.location) == f"{directory / 'qmgr.conf'}:2:11"
    assert "no partition 'expres'" in str(caught.value)


def test_preempt_mode_is_left_out(tmp_path: Path) -> None:
    directory = _copy(tmp_path)
    slurm_conf = directory / "slurm.conf"
    slurm_conf.write_text(slurm_conf.read_text() + "PreemptMode=SUSPEND,GANG\n")
    with pytest.raises(ConfError, match="leave PreemptMode out"):
        Plugins.load(conf.load(slurm_conf))


def test_without_pbs_files_the_defaults_apply(tmp_path: Path) -> None:
    directory = _copy(tmp_path)
    (directory / "sched_config").unlink()
    (directory / "qmgr.conf").unlink()
    plugins = Plugins.load(conf.load(directory / "slurm.conf"))
    assert "preempt/pbs" in plugins.type_strings()


def _plugin(directory: Path) -> tuple[object, Cluster]:
    from plurm.registry import PluginContext
    from plurm_preempt_pbs import PbsPreemption

    config = conf.load(directory / "slurm.conf")
    return PbsPreemption(PluginContext(config, "preempt/pbs")), Cluster.from_config(config)


def _running(job_id: int, start: float, partition: str = "normal") -> Job:
    request = JobRequest(partitions=(partition,), time_limit=10)
    job = Job(job_id, request, 0.0, partition, start_time=start, time_limit=10)
    job.state = JobState.RUNNING
    return job


@pytest.mark.parametrize(("sort", "first"), [("", "young"), ("unset sched preempt_sort\n", "old")])
def test_victims_by_preempt_priority_then_preempt_sort(
    tmp_path: Path, sort: str, first: str
) -> None:
    directory = _copy(tmp_path)
    with (directory / "qmgr.conf").open("a") as stream:
        stream.write(sort)
    plugin, cluster = _plugin(directory)
    old, young, express = _running(1, 0.0), _running(2, 300.0), _running(3, 400.0, "express")
    keys = {job.job_id: plugin.preempt_priority(job, cluster) for job in (old, young, express)}  # type: ignore[attr-defined]
    order = sorted(keys, key=keys.__getitem__)
    assert order == ([2, 1, 3] if first == "young" else [1, 2, 3])


def test_only_strictly_lower_preempt_priority_is_preemptable(tmp_path: Path) -> None:
    plugin, cluster = _plugin(_copy(tmp_path))
    normal, other, express = _running(1, 0.0), _running(2, 0.0), _running(3, 0.0, "express")
    preemptable = plugin.preempt_preemptable  # type: ignore[attr-defined]
    assert preemptable(express, normal, cluster)
    assert not preemptable(normal, express, cluster)
    assert not preemptable(other, normal, cluster)  # the same level: never


def test_suspended_jobs_are_no_candidates(tmp_path: Path) -> None:
    from plurm.conf.values import PreemptBase
    from plurm.model.select import Candidate

    plugin, cluster = _plugin(_copy(tmp_path))
    running, suspended = _running(1, 0.0), _running(2, 0.0)
    suspended.state = JobState.SUSPENDED
    offered = [Candidate(job, PreemptBase.REQUEUE, 0) for job in (running, suspended)]
    kept = plugin.preempt_candidates(_running(3, 0.0, "express"), offered, cluster)  # type: ignore[attr-defined]
    assert [c.job.job_id for c in kept] == [1]
