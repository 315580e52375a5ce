"""scancel: cancel jobs by id."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from plurm.commands.base import SIMULATED, CommandError, CommandResult, Invocation
from plurm.commands.client import ClusterClient
from plurm.commands.options import Option, parse_options
from plurm.controller import RequestError

__all__ = ["run"]

OPTIONS = (
    Option("signal", "s", ("signal",)),
    Option("quiet", "Q", ("quiet",), takes_value=False),
    Option("verbose", "v", ("verbose",), takes_value=False),
)


def run(
    argv: Sequence[str], client: ClusterClient, cwd: Path, invocation: Invocation = SIMULATED
) -> CommandResult:
    found, ids = parse_options("scancel", argv, OPTIONS)
    values = dict(found)
    if not ids:
        raise CommandError("scancel: error: No job identification provided")
    verbose = "verbose" in values and "quiet" not in values
    said = []
    for word in ids:
        if not word.isdigit():
            raise CommandError(f"scancel: error: Invalid job id {word}")
        if verbose and "signal" not in values:
            said.append(f"scancel: Terminating job {word}\n")
        try:
            if "signal" in values:
                client.signal(int(word), str(values["signal"]).upper().removeprefix("SIG"))
            else:
                client.cancel(int(word))
        except RequestError as error:
            # Slurm's scancel reports an unknown or already finished job only with -v, and
            # still exits 0: the job is gone either way.
            if verbose:
                said.append(f"scancel: error: Kill job error on job id {word}: {error.message}\n")
    return CommandResult(0, "", "".join(said))
