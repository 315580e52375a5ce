"""Plugin parameters: options a plugin declares (``PLURM_OPTIONS``) are read from
PreemptParameters or SchedulerParameters, typed, and checked with file, line and column."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from plurm import conf
from plurm.errors import ConfError
from plurm.manager import Plugins
from plurm.params import PluginOption, check_options
from plurm.registry import Registry
from plurm.testing import JobBuilder, TestCluster
from tests.conftest import REPO

sys.path.insert(0, str(REPO / "tests" / "data" / "thirdparty" / "preempt_max_age"))
from plurm_preempt_max_age import MaxAge

CONF = (
    "SelectType=select/linear\nPreemptType=preempt/partition_prio\nPreemptMode=REQUEUE\n"
    "JobRequeue=1\nNodeName=n[1-2] CPUs=1\n"
    "PartitionName=low Nodes=ALL Default=YES PriorityTier=1\n"
    "PartitionName=high Nodes=ALL PriorityTier=2\n"
)
GUARD = "PreemptGuards=preempt/max_age\n"


def test_a_declared_option_reaches_the_plugin_and_acts(
    make_cluster: Callable[..., TestCluster], job: Callable[[], JobBuilder]
) -> None:
    cluster = make_cluster(
        CONF + "PreemptParameters=max_age=120\n",
        plugins={"preempt/max_age": MaxAge},
        plurm_text=GUARD,
    )
    guard = next(p.plugin for p in cluster.plugins.loaded if p.type_string == "preempt/max_age")
    assert guard.max_age == 120
    old = cluster.submit(job().runtime(1000))
    cluster.run_until(50)
    young = cluster.submit(job().runtime(1000))
    cluster.run_until(150)  # old has run 149 s (spared), young about 99 s (a victim)
    urgent = cluster.submit(job().partition("high").runtime(10))
    cluster.settle()
    assert cluster.state(urgent).name == "RUNNING"
    assert cluster.job(old).restarts == 0 and cluster.state(old).name == "RUNNING"
    assert cluster.job(young).restarts == 1


def test_the_default_when_unset(make_cluster: Callable[..., TestCluster]) -> None:
    cluster = make_cluster(CONF, plugins={"preempt/max_age": MaxAge}, plurm_text=GUARD)
    guard = next(p.plugin for p in cluster.plugins.loaded if p.type_string == "preempt/max_age")
    assert guard.max_age == 3600


def _load(tmp_path: Path, extra: str) -> conf.SlurmConfig:
    (tmp_path / "slurm.conf").write_text("ClusterName=c\nSlurmctldHost=h\n" + CONF + extra)
    (tmp_path / "plurm.conf").write_text(GUARD)
    return conf.load(tmp_path / "slurm.conf")


def test_a_misspelt_option_names_file_line_column_and_the_declared_one(tmp_path: Path) -> None:
    config = _load(tmp_path, "PreemptParameters=strict_order,max_agee=60\n")
    with pytest.raises(ConfError) as caught:
        Plugins.load(config, registry=Registry(factories={"preempt/max_age": MaxAge}))
    text = str(caught.value)
    assert f"{tmp_path / 'slurm.conf'}:10:32" in text
    assert "unknown option max_agee" in text and "did you mean 'max_age'?" in text


def test_a_value_of_the_wrong_kind_is_refused(tmp_path: Path) -> None:
    config = _load(tmp_path, "PreemptParameters=max_age=soon\n")
    errors = check_options(config, {"preempt/max_age": MaxAge.PLURM_OPTIONS})
    assert len(errors) == 1
    assert "max_age must be a whole number, not 'soon' (preempt/max_age)" in str(errors[0])
    assert ":10:19" in str(errors[0])


def test_without_the_plugin_the_option_is_unknown(tmp_path: Path) -> None:
    config = _load(tmp_path, "PreemptParameters=max_age=60\n")
    errors = check_options(config, {"preempt/partition_prio": ()})
    assert len(errors) == 1 and "unknown option max_age" in str(errors[0])
    assert check_options(config, {"preempt/max_age": MaxAge.PLURM_OPTIONS}) == []


def test_two_plugins_cannot_declare_one_option(tmp_path: Path) -> None:
    config = _load(tmp_path, "")
    option = PluginOption("max_age", kind="int")
    errors = check_options(config, {"preempt/a": (option,), "preempt/b": (option,)})
    assert any("declared by both preempt/a and preempt/b" in str(e) for e in errors)


def test_a_scheduler_option_is_typed_too(tmp_path: Path) -> None:
    config = _load(tmp_path, "SchedulerParameters=bf_interval=30,my_depth=x\n")
    option = PluginOption("my_depth", kind="int", key="SchedulerParameters")
    errors = check_options(config, {"preempt/max_age": MaxAge.PLURM_OPTIONS, "sched/x": (option,)})
    assert len(errors) == 1 and "SchedulerParameters=my_depth=x" in str(errors[0])
    # Unknown SchedulerParameters options stay accepted, as Slurm accepts them.
    assert check_options(_load(tmp_path, "SchedulerParameters=nobody_knows\n"), {}) == []
