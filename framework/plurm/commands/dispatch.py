"""The dispatcher: a command line to the command module that runs it, as the invocation's
user.

Each command module imports only :mod:`plurm.commands.base` and the client it is handed;
this module is the one place that knows them all.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from plurm.commands import sacct, sbatch, scancel, scontrol, sinfo, squeue
from plurm.commands.base import SIMULATED, CommandError, CommandResult, Invocation
from plurm.commands.client import ClusterClient
from plurm.commands.showconfig import SLURM_VERSION

__all__ = ["COMMANDS", "run_command"]

Command = Callable[[Sequence[str], ClusterClient, Path, Invocation], CommandResult]


def _versioned(command: Command) -> Command:
    """Every command prints its Slurm version for -V or --version among its options (the
    words before sbatch's script), and does nothing else, as Slurm's do."""

    def run(
        argv: Sequence[str], client: ClusterClient, cwd: Path, invocation: Invocation
    ) -> CommandResult:
        for word in argv:
            if word in ("-V", "--version"):
                return CommandResult(0, f"slurm {SLURM_VERSION}\n")
            if word == "--" or (command is sbatch.run and not word.startswith("-")):
                break
        return command(argv, client, cwd, invocation)

    return run


#: Slurm's commands by name.
COMMANDS: Mapping[str, Command] = {
    "sacct": _versioned(sacct.run),
    "sbatch": _versioned(sbatch.run),
    "squeue": _versioned(squeue.run),
    "sinfo": _versioned(sinfo.run),
    "scancel": _versioned(scancel.run),
    "scontrol": _versioned(scontrol.run),
}


def run_command(
    argv: Sequence[str], client: ClusterClient, cwd: Path, invocation: Invocation = SIMULATED
) -> CommandResult:
    """Run one command line (already split into words) against the cluster ``client`` talks
    to; relative paths (sbatch scripts) resolve against ``cwd``."""
    if not argv:
        return CommandResult()
    command = COMMANDS.get(argv[0])
    if command is None:
        return CommandResult(127, "", f"{argv[0]}: command not found\n")
    try:
        return command(argv[1:], client, cwd, invocation)
    except CommandError as error:
        text = error.text if error.text.endswith("\n") else error.text + "\n"
        return CommandResult(error.status, "", text)
