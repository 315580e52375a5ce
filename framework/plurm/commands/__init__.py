"""Slurm's user commands (sbatch, squeue, sinfo, scancel, scontrol) with Slurm's options and
byte-compatible output. Each command takes its argument list and a cluster client
(:mod:`plurm.commands.client`), and returns (exit status, stdout, stderr): a simulation hands
it the controller of its own process, live mode an RPC client of ``plurmctld``.
"""

from __future__ import annotations

from plurm.commands.base import CommandResult
from plurm.commands.dispatch import run_command

__all__ = ["CommandResult", "run_command"]
