"""What the commands share: the result type and the error a command line raises."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import attrs

from plurm.errors import PlurmError

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "COMMAND_NAMES",
    "SIMULATED",
    "SLURM_VERSION",
    "VERSION_LINE",
    "CommandError",
    "CommandResult",
    "Invocation",
    "version_asked",
]

#: Slurm's commands Plurm has: each is the module ``plurm.commands.<name>``, with ``run``.
COMMAND_NAMES = (
    "sacct",
    "sbatch",
    "squeue",
    "sinfo",
    "scancel",
    "scontrol",
    "sstat",
    "sprio",
    "sshare",
)
#: The Slurm release Plurm stands for (scontrol show config, every command's --version).
SLURM_VERSION = "22.05.8"
#: What every command prints for ``--version`` (``-V``).
VERSION_LINE = f"slurm {SLURM_VERSION}"


def version_asked(name: str, argv: Sequence[str]) -> bool:
    """Whether a command line asks for the version: ``-V`` or ``--version`` among its
    options (sbatch's end at its script, every command's at ``--``), or ``scontrol
    version``. The command then prints it and does nothing else, as Slurm's do."""
    if name == "scontrol" and argv[:1] == ["version"]:
        return True
    for word in argv:
        if word in ("-V", "--version"):
            return True
        if word == "--" or (name == "sbatch" and not word.startswith("-")):
            return False
    return False


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


@attrs.frozen
class Invocation:
    """Who runs a command, and from where. Live mode's commands pass their own process's
    user, environment, host and standard input; a simulation runs every command as root,
    with no environment to pass on."""

    uid: int = 0
    gid: int = 0
    user: str = "root"
    group: str = "root"
    environ: Mapping[str, str] = attrs.field(factory=dict)
    host: str = ""
    #: Reads the command's standard input (sbatch reads its script there without a file).
    stdin: Callable[[], bytes] | None = None
    #: Reads a script file (sbatch's), where the command does not run as the user itself
    #: (plurmctld, for the thin client); None: from the file system.
    read_file: Callable[[Path], bytes] | None = None


#: A simulation's commands: run as root, with no environment to pass on.
SIMULATED = Invocation()
