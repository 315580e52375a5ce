"""plurm simulate: session files, transcripts, determinism."""

from __future__ import annotations

from pathlib import Path

import pytest

from plurm.sim.session import SessionError, parse_session
from tests.conftest import REPO
from tests.support.cli import simulate

EXAMPLE = REPO / "conf" / "seed-suspend-gang"


def test_session_lines_keep_file_order_and_times() -> None:
    lines = parse_session("s", "# comment\n0 sbatch --wrap='sleep 1'\n\n1.5 squeue -h # note\n")
    assert [(entry.line, entry.time, entry.argv) for entry in lines] == [
        (2, 0.0, ("sbatch", "--wrap=sleep 1")),
        (4, 1.5, ("squeue", "-h")),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("5 squeue\n3 squeue\n", "s:2: time 3 is before"),
        ("soon squeue\n", "s:1: a line starts with the time"),
        ("4\n", "s:1: no command"),
        ("1 sbatch --wrap='sleep\n", "s:1: No closing quotation"),
    ],
)
def test_bad_sessions_say_where(text: str, message: str) -> None:
    with pytest.raises(SessionError, match=message):
        parse_session("s", text)


def test_the_example_transcript_is_deterministic_and_shows_the_preemption() -> None:
    first = simulate(EXAMPLE / "slurm.conf", EXAMPLE / "session")
    second = simulate(EXAMPLE / "slurm.conf", EXAMPLE / "session")
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout
    after = first.stdout.split("[t=9s] $ squeue\n", 1)[1].split("[t=", 1)[0]
    rows = [line.split() for line in after.splitlines()[1:]]
    states = {row[0]: (row[4], row[-1]) for row in rows}
    assert states == {
        "1": ("S", "n12"),
        "2": ("S", "n13"),
        "3": ("S", "n14"),
        "4": ("R", "n15"),
        "5": ("R", "n16"),
        "6": ("R", "n[12-14]"),
    }


def test_unknown_command_and_bad_options_show_in_the_transcript(tmp_path: Path) -> None:
    session = tmp_path / "session"
    session.write_text("0 sbatch --nodes=abc --wrap='sleep 1'\n0 frobnicate\n0 squeue -h\n")
    result = simulate(EXAMPLE / "slurm.conf", session)
    assert result.returncode == 0
    assert "sbatch: error:" in result.stdout
    assert "frobnicate: command not found" in result.stdout


def test_a_bad_session_file_exits_1_with_the_line(tmp_path: Path) -> None:
    session = tmp_path / "session"
    session.write_text("1 squeue\n0 squeue\n")
    result = simulate(EXAMPLE / "slurm.conf", session)
    assert result.returncode == 1
    assert f"{session}:2:" in result.stderr
