"""What the commands share: the result type, errors, and the dispatcher."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import attrs

from plurm.controller import Controller
from plurm.errors import PlurmError

__all__ = ["CommandError", "CommandResult", "run_command"]


@attrs.frozen
class CommandResult:
    """A command's exit status and what it printed."""

    status: int = 0
    stdout: str = ""
    stderr: str = ""


class CommandError(PlurmError):
    """A command-line problem; ``text`` is printed to stderr as it is, exit status 1."""

    def __init__(self, text: str, status: int = 1) -> None:
        super().__init__(text)
        self.text = text
        self.status = status


Command = Callable[[Sequence[str], Controller, Path], CommandResult]


def _commands() -> dict[str, Command]:
    from plurm.commands import sacct, sbatch, scancel, scontrol, sinfo, squeue

    return {
        "sacct": sacct.run,
        "sbatch": sbatch.run,
        "squeue": squeue.run,
        "sinfo": sinfo.run,
        "scancel": scancel.run,
        "scontrol": scontrol.run,
    }


def run_command(argv: Sequence[str], controller: Controller, cwd: Path) -> CommandResult:
    """Run one command line (already split into words) against ``controller``; relative
    paths (sbatch scripts) resolve against ``cwd``."""
    if not argv:
        return CommandResult()
    commands = _commands()
    name = argv[0]
    if name not in commands:
        return CommandResult(127, "", f"{name}: command not found\n")
    try:
        return commands[name](argv[1:], controller, cwd)
    except CommandError as error:
        text = error.text if error.text.endswith("\n") else error.text + "\n"
        return CommandResult(error.status, "", text)
