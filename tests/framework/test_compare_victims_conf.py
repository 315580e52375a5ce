"""conf/compare-victims: the comparison files of docs/compare.md's victim-choice section parse,
name only files that exist, and load the victim choice and the guards each run asks for."""

from __future__ import annotations

from pathlib import Path

import pytest

from plurm.manager import Plugins
from plurm.sim.compare import Comparison
from tests.conftest import REPO

HERE = REPO / "conf" / "compare-victims"
FILES = sorted(p for p in HERE.glob("*.toml") if not p.name.startswith("map"))
MAPS = {"map.toml", "map-wide.toml", "map-slice.toml"}


def test_the_victim_comparisons_are_all_here() -> None:
    assert [f.name for f in FILES] == [
        "atlas-requeue.toml",
        "atlas-slice.toml",
        "atlas-suspend.toml",
        "sdsc-requeue.toml",
        "sdsc-suspend.toml",
        "sdsc-wide.toml",
    ]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_a_victim_comparison_is_well_formed(path: Path) -> None:
    pytest.importorskip("plurm_preempt_partition_prio")
    comparison = Comparison.load(path)
    comparison.check()
    assert Path(comparison.trace).name in {
        "SDSC-SP2-1998-4.2-cln.swf.gz",
        "LLNL-Atlas-2006-2.1-cln.swf.gz",
    }
    # (resolved on both sides: the shared folder may be a link, as on CI)
    assert Path(comparison.trace).resolve().parent == (REPO.parent / "shared" / "traces").resolve()
    assert Path(comparison.base_conf).is_file()
    first = path.read_text().splitlines()[0]
    assert first.startswith(f"# plurm compare conf/compare-victims/{path.name} ")
    choices = []
    for run in comparison.runs:
        assert Path(run.conf_path).is_file()
        assert Path(run.conf_path).parent == HERE
        loaded = {p.type_string for p in Plugins.load(run.config()).loaded}
        assert "preempt/partition_prio" in loaded
        params = dict(run.overrides)["PreemptParameters"]
        choice = params.split(",")[0].removeprefix("victims=")
        assert choice in ("slurm", "fewest", "least_lost_work")
        choices.append(choice)
        assert "preempt/victims" in loaded
        for guard in ("max_job_preempt", "no_preempt_run_time", "no_preempt_finish_time"):
            assert (f"preempt/{guard}" in loaded) == (f"{guard}=" in params)
    # Each configuration is compared under the three choices, in Slurm's, fewest, least order.
    assert len(choices) % 3 == 0
    assert choices == ["slurm", "fewest", "least_lost_work"] * (len(choices) // 3)


def test_every_file_of_the_folder_is_used() -> None:
    """No stray configuration: each .conf and map is named by some comparison."""
    named = set()
    for path in FILES:
        text = path.read_text()
        named |= {f.name for f in HERE.iterdir() if f'"{f.name}"' in text}
    expected = {f.name for f in HERE.iterdir() if f.suffix == ".conf"} | (
        MAPS & {f.name for f in HERE.iterdir()}
    )
    assert expected <= named
