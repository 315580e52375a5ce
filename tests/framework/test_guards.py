"""Guards: preempt plugins listed in plurm.conf's PreemptGuards that may only veto the
policy's victims (``preempt_veto``), stacked on partition_prio and on qos, on session files
in tests/data/guards/."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from plurm import HOOK_API_VERSION, conf, hookimpl
from plurm.errors import ConfError
from plurm.manager import Plugins
from plurm.model.job import Job
from plurm.registry import PluginConflictError, PluginContext, Registry
from plurm.sim.session import Simulation, parse_session
from tests.conftest import REPO

GUARDS = REPO / "tests" / "data" / "guards"


class SpareKeep:
    """A guard: never a victim, a job whose name starts with ``keep``."""

    PLURM_HOOK_API = HOOK_API_VERSION

    def __init__(self, context: PluginContext) -> None:
        self.asked: list[tuple[int, int]] = []

    @hookimpl
    def preempt_veto(self, preemptor: Job, preemptee: Job, cluster: object) -> bool:
        self.asked.append((preemptor.job_id, preemptee.job_id))
        return preemptee.name.startswith("keep")


class Greedy:
    """Not a guard: it answers an exclusive hook the policy answers."""

    PLURM_HOOK_API = HOOK_API_VERSION

    def __init__(self, context: PluginContext) -> None:
        pass

    @hookimpl
    def preempt_preemptable(self, preemptor: Job, preemptee: Job, cluster: object) -> bool:
        return True


def _replay(case: str, tmp_path: Path, guards: str | None) -> tuple[Simulation, str]:
    """Run the session of ``case`` with plurm.conf naming ``guards`` (None: no plurm.conf)."""
    work = tmp_path / f"{case}-{guards}"
    shutil.copytree(GUARDS / case, work)
    if guards is not None:
        (work / "plurm.conf").write_text(f"PreemptGuards={guards}\n")
    config = conf.load(work / "slurm.conf")
    registry = Registry(factories={"preempt/spare_keep": SpareKeep, "preempt/greedy": Greedy})
    simulation = Simulation(config, Plugins.load(config, registry=registry))
    lines = parse_session(str(work / "session"), (work / "session").read_text())
    transcript = simulation.run_lines(lines, work)
    return simulation, transcript


def _preempted(simulation: Simulation) -> dict[str, int]:
    """Each job's name and restarts (a REQUEUE victim restarts once)."""
    jobs = simulation.controller.cluster.jobs.values()
    return {job.name: job.restarts for job in jobs}


@pytest.mark.parametrize("case", ["prio", "qos"])
def test_a_guard_changes_only_the_victims_it_vetoes(case: str, tmp_path: Path) -> None:
    plain, plain_transcript = _replay(case, tmp_path, None)
    guarded, guarded_transcript = _replay(case, tmp_path, "preempt/spare_keep")
    before, after = _preempted(plain), _preempted(guarded)
    victims_before = {name for name, restarts in before.items() if restarts}
    victims_after = {name for name, restarts in after.items() if restarts}
    # Without the guard the policy takes the two oldest of equal rank, keep1 among them.
    assert "keep1" in victims_before and len(victims_before) == 2
    # With it no keep job is a victim; the policy's next choices take their place, and the
    # victims the guard did not veto stay victims.
    assert victims_after == {"a", "b"}
    assert victims_before - {"keep1", "keep2"} <= victims_after
    for transcript in (plain_transcript, guarded_transcript):
        assert "urgent RUNNING" in transcript
    guard = next(p.plugin for p in guarded.plugins.loaded if p.type_string == "preempt/spare_keep")
    assert guard.asked, "the guard was asked"
    loaded = [t for t in guarded.plugins.type_strings() if t.startswith("preempt/")]
    assert loaded[1:] == ["preempt/spare_keep"]  # after the policy


def test_a_guard_that_vetoes_everything_leaves_the_preemptor_waiting(tmp_path: Path) -> None:
    work = tmp_path / "all"
    shutil.copytree(GUARDS / "prio", work)
    session = (
        (work / "session").read_text().replace("-J a ", "-J keep3 ").replace("-J b ", "-J keep4 ")
    )
    (work / "session").write_text(session)
    (work / "plurm.conf").write_text("PreemptGuards=preempt/spare_keep\n")
    config = conf.load(work / "slurm.conf")
    registry = Registry(factories={"preempt/spare_keep": SpareKeep})
    simulation = Simulation(config, Plugins.load(config, registry=registry))
    transcript = simulation.run_lines(parse_session("session", session), work)
    assert "urgent PENDING" in transcript
    assert not any(job.restarts for job in simulation.controller.cluster.jobs.values())


def test_a_plugin_answering_the_policy_hooks_is_no_guard(tmp_path: Path) -> None:
    with pytest.raises(PluginConflictError, match=r"preempt_preemptable.*greedy"):
        _replay("prio", tmp_path, "preempt/greedy")


def test_the_policy_cannot_be_its_own_guard(tmp_path: Path) -> None:
    with pytest.raises(PluginConflictError, match="named twice"):
        _replay("prio", tmp_path, "preempt/partition_prio")


def test_plurm_conf_errors_name_file_line_column_and_the_nearest_key(tmp_path: Path) -> None:
    shutil.copytree(GUARDS / "prio", tmp_path / "c")
    (tmp_path / "c" / "plurm.conf").write_text(
        "# guards\nPreemptGuard=preempt/spare_keep\nPreemptGuards=spare_keep\n"
    )
    with pytest.raises(ConfError) as caught:
        conf.load(tmp_path / "c" / "slurm.conf")
    text = str(caught.value) + "".join(f"\n{e}" for e in caught.value.errors)
    assert "plurm.conf:2:1" in text and "did you mean 'PreemptGuards'" in text
    assert "plurm.conf:3:15" in text and "not a preempt plugin" in text


def test_slurm_conf_alone_keeps_its_meaning() -> None:
    config = conf.load(GUARDS / "prio" / "slurm.conf")
    assert config.preempt_guards == ()
    assert config.plugin_types()["preempt"] == ("preempt/partition_prio",)
