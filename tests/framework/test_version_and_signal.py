"""Every command answers --version as Slurm 22.05.8 does, and sbatch checks --signal."""

from __future__ import annotations

from pathlib import Path

import pytest

from plurm import conf
from plurm.commands.dispatch import version_asked
from plurm.sim.session import Simulation, parse_session

BASE = """\
ClusterName=c
SlurmctldHost=h
NodeName=n[1-3] CPUs=2 RealMemory=1000
PartitionName=p Nodes=n[1-3] Default=YES
"""


def _session(tmp_path: Path, lines: str) -> str:
    simulation = Simulation(conf.parse_text(BASE, path=tmp_path / "slurm.conf"))
    return simulation.run_lines(parse_session("s", lines), tmp_path)


@pytest.mark.parametrize(
    "line",
    [
        "sbatch --version",
        "squeue -V",
        "sinfo --version",
        "sacct -V",
        "scancel -V",
        "scontrol version",
        "scontrol --version",
    ],
)
def test_every_command_prints_its_version(tmp_path: Path, line: str) -> None:
    assert "slurm 22.05.8\n" in _session(tmp_path, f"0 {line}\n")


def test_sbatch_script_arguments_are_not_its_options() -> None:
    assert version_asked("sbatch", ["--version"])
    assert not version_asked("sbatch", ["job.sh", "--version"])
    assert version_asked("squeue", ["-h", "-V"])


def test_sbatch_takes_submitits_signal_and_wckey(tmp_path: Path) -> None:
    transcript = _session(
        tmp_path,
        "0 sbatch --signal=USR2@90 --wckey=submitit --wrap true\n"
        "0 sbatch --signal=B:SIGTERM --wrap true\n"
        "0 sbatch --signal=BOGUS@5 --wrap true\n"
        "0 sbatch --signal=USR1@70000 --wrap true\n",
    )
    assert transcript.count("Submitted batch job") == 2
    # Slurm 22.05's words, without the value (tests/data/oracle/jobcmds/records.json)
    assert transcript.count("sbatch: error: Invalid --signal specification\n") == 2
