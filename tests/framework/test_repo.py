"""The repository keeps its promises: the README's commands are the ones CI and tox run."""

from __future__ import annotations

import re

from tests.conftest import REPO


def _readme_commands() -> list[str]:
    text = (REPO / "README.md").read_text()
    return re.findall(r"```sh\n(python3 -m venv[^\n]*)\n```", text)


def test_readme_has_exactly_two_commands_main_job_and_tests() -> None:
    commands = _readme_commands()
    assert len(commands) == 2
    assert commands[0].endswith("tox -e demo")
    assert commands[1].endswith("tox")


def test_ci_runs_the_readme_test_command() -> None:
    script = (REPO / ".ci" / "run").read_text().splitlines()
    assert _readme_commands()[1] in script


def test_demo_checks_every_example() -> None:
    tox = (REPO / "tox.ini").read_text()
    for example in sorted((REPO / "conf").glob("*/slurm.conf")):
        assert str(example.relative_to(REPO)) in tox


def test_framework_names_no_policy() -> None:
    """The core must stay policy-free: no plugin package is imported from framework/."""
    for path in (REPO / "framework" / "plurm").rglob("*.py"):
        text = path.read_text()
        assert not re.search(r"^\s*(from|import)\s+plurm_", text, re.M), path
