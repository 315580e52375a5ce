"""The dispatcher: a command line to the command module that runs it, as the invocation's
user.

Each command module imports only :mod:`plurm.commands.base` and the client it is handed;
this module is the one place that knows them all.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from plurm.commands import sacct, sbatch, scancel, scontrol, sinfo, sprio, squeue, sshare, sstat
from plurm.commands.base import (
    SIMULATED,
    VERSION_LINE,
    CommandError,
    CommandResult,
    Invocation,
    version_asked,
)
from plurm.commands.client import ClusterClient

__all__ = ["COMMANDS", "VERSION_LINE", "run_command", "version_asked"]

Command = Callable[[Sequence[str], ClusterClient, Path, Invocation], CommandResult]


#: Slurm's commands by name.
COMMANDS: Mapping[str, Command] = {
    "sacct": sacct.run,
    "sbatch": sbatch.run,
    "squeue": squeue.run,
    "sinfo": sinfo.run,
    "scancel": scancel.run,
    "scontrol": scontrol.run,
    "sstat": sstat.run,
    "sprio": sprio.run,
    "sshare": sshare.run,
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
    if version_asked(argv[0], argv[1:]):
        return CommandResult(0, VERSION_LINE + "\n")
    try:
        return command(argv[1:], client, cwd, invocation)
    except CommandError as error:
        text = error.text if error.text.endswith("\n") else error.text + "\n"
        return CommandResult(error.status, "", text)
