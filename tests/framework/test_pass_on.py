"""SchedulerPassOn (plurm.conf): the pass that answers an event runs at the next whole
second (``tick``, the default: Slurm's way) or at once (``event``), on the session in
tests/data/pass_on/."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from plurm import conf
from plurm.errors import ConfError
from plurm.manager import Plugins
from plurm.sim.session import Simulation, parse_session
from tests.conftest import REPO

CASE = REPO / "tests" / "data" / "pass_on"


def _replay(tmp_path: Path, plurm_text: str | None) -> tuple[Simulation, list[float]]:
    """The simulation after the session, and the time of every scheduling pass."""
    work = tmp_path / "case"
    shutil.copytree(CASE, work)
    if plurm_text is not None:
        (work / "plurm.conf").write_text(plurm_text)
    config = conf.load(work / "slurm.conf")
    simulation = Simulation(config, Plugins.load(config))
    controller = simulation.controller
    passes: list[float] = []
    schedule = controller.schedule

    def recorded(*, full: bool = True) -> None:
        passes.append(controller.now)
        schedule(full=full)

    controller.schedule = recorded  # type: ignore[method-assign]
    lines = parse_session(str(work / "session"), (work / "session").read_text())
    simulation.run_lines(lines, work)
    return simulation, passes


def _starts(simulation: Simulation) -> dict[int, float | None]:
    jobs = simulation.controller.cluster.jobs.values()
    return {job.job_id: job.start_time for job in jobs}


@pytest.mark.parametrize("plurm_text", [None, "SchedulerPassOn=tick\n"])
def test_by_default_jobs_start_on_the_next_whole_second(
    tmp_path: Path, plurm_text: str | None
) -> None:
    simulation, _ = _replay(tmp_path, plurm_text)
    assert simulation.controller.config.scheduler_pass_on == "tick"
    # submitted at 0.5, started by the pass at 1; the first two end at 3.3, the others
    # start at 4
    assert _starts(simulation) == {1: 1.0, 2: 1.0, 3: 4.0, 4: 4.0}


def test_with_event_passes_jobs_start_at_the_event_itself(tmp_path: Path) -> None:
    simulation, _ = _replay(tmp_path, "SchedulerPassOn=event\n")
    # started at the submission; the others at the first two's end (0.5 + 2.3)
    starts = _starts(simulation)
    assert starts[1] == starts[2] == 0.5
    assert starts[3] == starts[4] == pytest.approx(2.8)
    jobs = simulation.controller.cluster.jobs
    assert jobs[1].end_time == jobs[2].end_time == pytest.approx(2.8)
    assert jobs[3].end_time == jobs[4].end_time == pytest.approx(3.8)


def test_event_passes_are_one_per_instant(tmp_path: Path) -> None:
    _, passes = _replay(tmp_path, "SchedulerPassOn=event\n")
    # each sbatch is a command of its own (as each is an RPC of its own live), answered by
    # a pass before the next; the two ends at 2.8 share one pass; the ends at 3.8 find no
    # job waiting and cost none
    assert passes == [0.5] * 4 + [pytest.approx(2.8)]


def test_a_bad_value_is_refused_with_file_line_and_column(tmp_path: Path) -> None:
    work = tmp_path / "c"
    shutil.copytree(CASE, work)
    (work / "plurm.conf").write_text("# trigger\nSchedulerPassOn=soon\n")
    with pytest.raises(ConfError) as caught:
        conf.load(work / "slurm.conf")
    text = str(caught.value) + "".join(f"\n{e}" for e in getattr(caught.value, "errors", ()))
    assert "plurm.conf:2:17" in text and "expected tick or event" in text


def test_conf_check_shows_the_setting_only_when_not_the_default(tmp_path: Path) -> None:
    from plurm.conf.render import render

    work = tmp_path / "c"
    shutil.copytree(CASE, work)
    assert "SchedulerPassOn" not in render(conf.load(work / "slurm.conf"))
    (work / "plurm.conf").write_text("schedulerpasson=EVENT\n")
    config = conf.load(work / "slurm.conf")
    assert config.scheduler_pass_on == "event"
    assert "# plurm.conf: SchedulerPassOn=event" in render(config).splitlines()
