"""Slurm's user commands (sbatch, squeue, sinfo, scancel, scontrol) with Slurm's options and
byte-compatible output. Each command takes its argument list and a controller, and returns
(exit status, stdout, stderr): the simulator calls them directly; the live daemons will put
an RPC client where the controller is.
"""

from __future__ import annotations

from plurm.commands.base import CommandResult, run_command

__all__ = ["CommandResult", "run_command"]
