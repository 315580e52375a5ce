"""The plugin registry and facade: type strings to entry points, versions, conflicts."""

from __future__ import annotations

import textwrap
from importlib import metadata
from pathlib import Path

import pytest

from plurm import HOOK_API_VERSION, conf
from plurm.manager import Plugins
from plurm.registry import (
    PluginAPIVersionError,
    PluginConflictError,
    PluginContext,
    PluginLoadError,
    PluginNotFoundError,
    Registry,
)
from plurm.testing import TestCluster

CONF = "NodeName=n[1-4] CPUs=2\nPartitionName=p Nodes=ALL Default=YES\n"


def _config(tmp_path: Path, extra: str = "") -> conf.SlurmConfig:
    path = tmp_path / "slurm.conf"
    path.write_text("ClusterName=c\nSlurmctldHost=h\nSchedulerType=sched/builtin\n" + extra + CONF)
    return conf.load(path)


def test_type_string_resolves_to_the_entry_point_of_that_name() -> None:
    registry = Registry()
    entry = registry.entry_point("select/linear")
    assert (entry.group, entry.name) == ("plurm.select", "linear")
    assert registry.entry_point("sched/builtin").value.startswith("plurm.builtin.")


def test_builtins_register_through_entry_points_like_any_plugin() -> None:
    found = {(ep.group, ep.name) for ep in metadata.entry_points().select(group="plurm.sched")}
    assert ("plurm.sched", "builtin") in found
    for group, name in (
        ("plurm.preempt", "none"),
        ("plurm.auth", "none"),
        ("plurm.acct_gather", "none"),
    ):
        assert (group, name) in {
            (ep.group, ep.name) for ep in metadata.entry_points().select(group=group)
        }


def test_missing_plugin_is_named_with_the_installed_ones(tmp_path: Path) -> None:
    config = _config(tmp_path, "SelectType=select/nonesuch\n")
    with pytest.raises(PluginNotFoundError) as caught:
        Plugins.load(config)
    message = str(caught.value)
    assert "select/nonesuch" in message and "plurm.select" in message
    assert "select/linear" in message.partition("installed select plugins: ")[2]


def test_unknown_plugin_type_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(PluginLoadError, match="unknown plugin type 'frobnicate'"):
        Registry().load("frobnicate/tree", _config(tmp_path))


class _Select:
    PLURM_HOOK_API = HOOK_API_VERSION

    def __init__(self, context: PluginContext) -> None:
        self.context = context


def test_wrong_major_api_version_is_refused(tmp_path: Path) -> None:
    class Old(_Select):
        PLURM_HOOK_API = (HOOK_API_VERSION[0] + 1, 0)

    registry = Registry(factories={"select/old": Old})
    with pytest.raises(PluginAPIVersionError, match=r"needs hook API 2\.0"):
        registry.load("select/old", _config(tmp_path))


def test_newer_minor_api_version_is_accepted(tmp_path: Path) -> None:
    class Newer(_Select):
        PLURM_HOOK_API = (HOOK_API_VERSION[0], HOOK_API_VERSION[1] + 3)

    loaded = Registry(factories={"select/newer": Newer}).load("select/newer", _config(tmp_path))
    assert loaded.api == (HOOK_API_VERSION[0], HOOK_API_VERSION[1] + 3)


def test_a_plugin_written_for_hook_api_1_6_still_loads(tmp_path: Path) -> None:
    """1.7 added preempt_by_partition, preempt_suspend_in_partition and preempt_veto, 1.9 the
    priority hooks, 1.10 preempt_victim_cost and select_job_gres, 1.11 select_node_alloc_mem,
    1.12 BackfillStart.allowed and BackfillView.test_now/partly_free, 1.13
    select_partly_free, 1.14 select_answers_by_nodes: a plugin written for 1.6, which
    answers none of them, loads and gets their defaults."""

    class Written16(_Select):
        PLURM_HOOK_API = (1, 6)

    assert HOOK_API_VERSION == (1, 14)
    loaded = Registry(factories={"select/w16": Written16}).load("select/w16", _config(tmp_path))
    assert loaded.api == (1, 6)


def test_a_plugin_written_for_hook_api_1_7_still_loads(tmp_path: Path) -> None:
    """1.8 added preempt_methods, preempt_candidates, preempt_suspend_releases,
    preempt_trim_victims, preempt_check_mode and select_job_resumable: a plugin written for
    1.7, which answers none of them, loads and gets their defaults."""

    class Written17(_Select):
        PLURM_HOOK_API = (1, 7)

    loaded = Registry(factories={"select/w17": Written17}).load("select/w17", _config(tmp_path))
    assert loaded.api == (1, 7)


def test_a_plugin_written_for_hook_api_1_9_still_loads(tmp_path: Path) -> None:
    """1.10 added preempt_requeue_delay, preempt_suspended_reserve and
    preempt_suspended_counts: a plugin written for 1.9 loads and gets Slurm's behaviour
    (tests/framework/test_preempt_hooks_1_10.py)."""

    class Written19(_Select):
        PLURM_HOOK_API = (1, 9)

    loaded = Registry(factories={"select/w19": Written19}).load("select/w19", _config(tmp_path))
    assert loaded.api == (1, 9)


def test_plugin_without_api_declaration_is_refused(tmp_path: Path) -> None:
    registry = Registry(factories={"select/bare": lambda context: object()})
    with pytest.raises(PluginAPIVersionError, match="does not declare PLURM_HOOK_API"):
        registry.load("select/bare", _config(tmp_path))


def test_two_distributions_claiming_one_type_is_a_conflict(tmp_path: Path) -> None:
    class Dist:
        def __init__(self, name: str) -> None:
            self.name, self.version = name, "1.0"

    first = metadata.EntryPoint("linear", "a_pkg:Select", "plurm.select")
    second = metadata.EntryPoint("linear", "b_pkg:Select", "plurm.select")
    first = first._for(Dist("plurm-select-a"))  # type: ignore[attr-defined]
    second = second._for(Dist("plurm-select-b"))  # type: ignore[attr-defined]
    with pytest.raises(PluginConflictError, match="provided more than once"):
        Registry(entry_points=[first, second]).entry_point("select/linear")


def test_two_implementations_of_an_exclusive_hook_are_refused(tmp_path: Path) -> None:
    from plurm import hookimpl
    from plurm.model.select import SelectResult

    class Rival:
        @hookimpl
        def select_job_test(self, job, nodes, mode, candidates, cluster):  # type: ignore[no-untyped-def]
            return SelectResult.busy()

    with pytest.raises(PluginConflictError, match="select_job_test"):
        Plugins.load(_config(tmp_path), extra=[Rival()])


def test_hook_without_spec_is_refused(tmp_path: Path) -> None:
    from plurm import hookimpl

    class Typo:
        @hookimpl
        def select_job_tset(self) -> None:
            return None

    with pytest.raises(PluginLoadError, match="select_job_tset"):
        Plugins.load(_config(tmp_path), extra=[Typo()])


def test_disabled_plugins_are_not_loaded(tmp_path: Path) -> None:
    registry = Registry(disabled=["select/linear"])
    assert "select/linear" not in registry.installed("select")
    with pytest.raises(PluginNotFoundError):
        registry.load("select/linear", _config(tmp_path))


THIRD_PARTY = '''
"""A first-fit select plugin published by someone else."""
from plurm import HOOK_API_VERSION, hookimpl
from plurm.model.select import SelectResult, SelectStatus

class FirstFit:
    PLURM_HOOK_API = HOOK_API_VERSION

    def __init__(self, context):
        self.busy = set()

    @hookimpl
    def select_job_test(self, job, nodes, mode, candidates, cluster):
        free = [n for n in nodes if n not in self.busy]
        if len(free) < job.request.min_nodes:
            return SelectResult.busy()
        return SelectResult(SelectStatus.SUCCESS, tuple(free[-job.request.min_nodes:]))

    @hookimpl
    def select_job_begin(self, job, cluster):
        self.busy.update(job.nodes)
        return True

    @hookimpl
    def select_job_fini(self, job, cluster):
        self.busy.difference_update(job.nodes)
        return True
'''


def test_third_party_plugin_installed_as_a_package_is_found_and_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A package with a ``plurm.select`` entry point, installed on sys.path as pip would."""
    site = tmp_path / "site"
    (site / "lastfit_select").mkdir(parents=True)
    (site / "lastfit_select" / "__init__.py").write_text(textwrap.dedent(THIRD_PARTY))
    info = site / "lastfit_select-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: lastfit-select\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[plurm.select]\nlastfit = lastfit_select:FirstFit\n")
    monkeypatch.syspath_prepend(str(site))
    registry = Registry()
    assert "select/lastfit" in registry.installed("select")
    config = _config(tmp_path, "SelectType=select/lastfit\n")
    plugins = Plugins.load(config, registry=registry)
    assert "select/lastfit" in plugins.type_strings()
    assert any(p.distribution == "lastfit-select 1.0" for p in plugins.loaded)
    from plurm.sim.session import Simulation

    cluster = TestCluster(Simulation(config, plugins), tmp_path)
    first = cluster.command("sbatch -N2 --wrap='sleep 10'")
    assert first.stdout == "Submitted batch job 1\n"
    cluster.settle()
    assert cluster.job(1).nodes == ("n3", "n4")  # the third party's choice, not linear's


def test_loaded_plugins_follow_the_configuration(tmp_path: Path) -> None:
    plain = Plugins.load(_config(tmp_path))
    assert plain.type_strings() == (
        "select/linear",
        "preempt/none",
        "sched/builtin",
        "jobacct_gather/none",
        "priority/basic",
        "accounting_storage/none",
    )
    gang = Plugins.load(
        _config(tmp_path, "PreemptType=preempt/partition_prio\nPreemptMode=SUSPEND,GANG\n")
    )
    assert gang.type_strings() == (
        "select/linear",
        "preempt/partition_prio",
        "sched/builtin",
        "sched/gang",
        "jobacct_gather/none",
        "priority/basic",
        "accounting_storage/none",
    )


def test_hooks_called_directly_still_see_later_plugins_and_monitoring(tmp_path: Path) -> None:
    """The manager calls a hook's one implementation without pluggy's loop; a plugin
    registered later, or hook-call monitoring, must still be honoured."""
    from plurm import hookimpl
    from plurm.model.job import Job, JobRequest, JobState
    from plurm.testing.cluster import HookRecorder

    plugins = Plugins.load(_config(tmp_path))
    job = Job(1, JobRequest(), 0.0, "p")
    seen: list[tuple[JobState, JobState]] = []

    class Observer:
        @hookimpl
        def plurm_job_state_changed(
            self, job: Job, old: JobState, new: JobState, cluster: object
        ) -> None:
            seen.append((old, new))

    cluster = object()
    plugins.plurm_job_state_changed(job, JobState.PENDING, JobState.RUNNING, cluster)  # type: ignore[arg-type]
    plugins.manager.register(Observer())
    plugins.plurm_job_state_changed(job, JobState.RUNNING, JobState.COMPLETED, cluster)  # type: ignore[arg-type]
    assert seen == [(JobState.RUNNING, JobState.COMPLETED)]
    recorder = HookRecorder(plugins.manager)
    assert plugins.preempt_job_preempt_check(job, job, cluster) is False  # type: ignore[arg-type]
    recorder.close()
    assert recorder.names() == ["preempt_job_preempt_check"]


def test_gang_hooks_unimplemented_answer_nothing_until_a_plugin_comes(tmp_path: Path) -> None:
    """Without a gang plugin the manager answers gang hooks with the shared empty decision
    without a call; a gang plugin registered later is asked, and monitoring sees calls."""
    from plurm import hookimpl
    from plurm.model.job import Job, JobRequest
    from plurm.model.select import GangDecision
    from plurm.testing.cluster import HookRecorder

    plugins = Plugins.load(_config(tmp_path))
    job = Job(1, JobRequest(), 0.0, "p")
    cluster = object()
    assert not plugins.sched_gang_job_start(job, cluster)  # type: ignore[arg-type]
    recorder = HookRecorder(plugins.manager)
    plugins.sched_gang_job_fini(job, cluster)  # type: ignore[arg-type]
    recorder.close()
    assert recorder.names() == ["sched_gang_job_fini"]

    class Gang:
        @hookimpl
        def sched_gang_job_start(self, job: Job, cluster: object) -> GangDecision:
            return GangDecision(suspend=(7,))

    plugins.manager.register(Gang())
    assert plugins.sched_gang_job_start(job, cluster).suspend == (7,)  # type: ignore[arg-type]
