"""Replay a command session on a simulated cluster and print it as a terminal transcript.

A session file has one command per line, ``<seconds> <command line>``: the time (seconds
since the start, fractions allowed, never decreasing) and a command as a shell would split it.
``#`` starts a comment. Time moves only between lines; commands at the same time run in file
order. The same session always prints the same bytes.

Besides Slurm's commands, ``slurmd stop NODES`` and ``slurmd start NODES`` (a hostlist) stop
and restart nodes' slurmd in the simulated world: the controller finds a stopped one silent
at its pings, and hears from a restarted one when it registers.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from pathlib import Path

import attrs

from plurm import hostlist
from plurm.commands import CommandResult, run_command
from plurm.commands.client import LocalClient
from plurm.conf.model import SlurmConfig
from plurm.controller import Controller
from plurm.errors import NumberError, PlurmError
from plurm.manager import Plugins
from plurm.numbers import parse_float
from plurm.sim.engine import SimClock
from plurm.sim.executor import SimExecutor

__all__ = ["MAX_SESSION_TIME", "SessionError", "SessionLine", "Simulation", "parse_session"]

#: The latest time a session line may name, in seconds (about 115 days of simulated time).
MAX_SESSION_TIME = 10_000_000.0


class SessionError(PlurmError):
    """A session file that cannot be replayed; the message names the file and line."""


@attrs.frozen
class SessionLine:
    """One command of a session."""

    line: int
    time: float
    argv: tuple[str, ...]
    text: str


def parse_session(path: str, text: str) -> list[SessionLine]:
    """The commands of a session file, checked."""
    lines = []
    previous = 0.0
    for number, raw in enumerate(text.splitlines(), start=1):
        try:
            words = shlex.split(raw, comments=True)
        except ValueError as error:
            raise SessionError(f"{path}:{number}: {error}: {raw.strip()!r}") from None
        if not words:
            continue
        try:
            when = parse_float(words[0], what="time")
        except NumberError:
            raise SessionError(
                f"{path}:{number}: a line starts with the time in seconds, not {words[0]!r}"
            ) from None
        if when > MAX_SESSION_TIME:
            raise SessionError(
                f"{path}:{number}: time {words[0]} is past the last time a session may name "
                f"({MAX_SESSION_TIME:g} s)"
            )
        if when < previous:
            raise SessionError(
                f"{path}:{number}: time {words[0]} is before the previous line's {previous:g}"
            )
        if len(words) < 2:
            raise SessionError(f"{path}:{number}: no command after the time")
        previous = when
        command = raw.strip()[len(raw.strip().split(None, 1)[0]) :].strip()
        lines.append(SessionLine(number, when, tuple(words[1:]), command))
    return lines


class Simulation:
    """A controller on a simulated clock with a pretend executor."""

    def __init__(
        self, config: SlurmConfig, plugins: Plugins | None = None, *, start: float = 0.0
    ) -> None:
        """``start`` is when the controller starts; periodic work (the gang timeslicer)
        keeps that phase, as slurmctld's threads do."""
        self.config = config
        self.clock = SimClock(start)
        self.executor = SimExecutor(self.clock)
        self.plugins = plugins or Plugins.load(config)
        self.controller = Controller(config, self.plugins, self.clock, self.executor)
        self.executor.on_end = self.controller.job_ended
        self.executor.on_register = self.controller.node_registered
        self.executor.on_silence = self.controller.nodes_may_be_silent
        self.executor.on_release = self.controller.nodes_released
        if self.plugins.acct_gather_active():
            from plurm.sim.gather import SimGather

            SimGather(self.config, self.plugins, self.clock, self.executor, self.controller)
        self.client = LocalClient(self.controller, advance=self.clock.run_until)

    def run_until(self, when: float) -> None:
        self.clock.run_until(when)

    def command(self, argv: Sequence[str], cwd: Path) -> CommandResult:
        """Run one command line now: a Slurm command, or ``slurmd stop|start NODES``."""
        if argv and argv[0] == "slurmd":
            return self._slurmd(argv[1:])
        return run_command(argv, self.client, cwd)

    def _slurmd(self, args: Sequence[str]) -> CommandResult:
        usage = "usage: slurmd stop|start NODES\n"
        if len(args) != 2 or args[0] not in ("stop", "start"):
            return CommandResult(2, "", usage)
        try:
            names = hostlist.expand(args[1])
        except PlurmError as error:
            return CommandResult(2, "", f"slurmd: {error}\n")
        unknown = [name for name in names if name not in self.controller.cluster.node_index]
        if unknown:
            return CommandResult(1, "", f"slurmd: no node {unknown[0]} in the configuration\n")
        for name in names:
            if args[0] == "stop":
                self.executor.stop_slurmd(name)
            else:
                self.executor.start_slurmd(name)
        return CommandResult()

    def run_lines(
        self,
        lines: Sequence[SessionLine],
        cwd: Path,
        write: Callable[[str], object] | None = None,
    ) -> str:
        """Replay ``lines``; the transcript shows each command, then what it printed.

        With ``write``, each command's part of the transcript goes to it as soon as the
        command has run (so that nothing printed is lost if a later line fails), and the
        return value is empty; without, the whole transcript is returned.
        """
        out: list[str] = []
        emit = write if write is not None else out.append
        for line in lines:
            self.run_until(line.time)
            emit(f"[t={line.time:g}s] $ {line.text}\n")
            result = self.command(line.argv, cwd)
            emit(f"{result.stdout}{result.stderr}")
        return "".join(out)
