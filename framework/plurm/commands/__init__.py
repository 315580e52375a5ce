"""Slurm's user commands (sbatch, squeue, sinfo, scancel, scontrol) with Slurm's options and
byte-compatible output. Each command takes its argument list and a cluster client
(:mod:`plurm.commands.client`), and returns (exit status, stdout, stderr): a simulation hands
it the controller of its own process, live mode an RPC client of ``plurmctld``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from plurm.commands.base import CommandResult

if TYPE_CHECKING:
    from plurm.commands.dispatch import run_command

__all__ = ["CommandResult", "run_command"]


def __getattr__(name: str) -> Any:
    # The dispatcher imports every command; a live command (one process, one command)
    # imports only its own module, so the package loads it only when asked.
    if name == "run_command":
        from plurm.commands.dispatch import run_command

        return run_command
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
