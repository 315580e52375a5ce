"""scancel: cancel jobs by id."""

from __future__ import annotations

import signal
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from plurm.commands.base import SIMULATED, CommandError, CommandResult, Invocation
from plurm.commands.options import Option, parse_options
from plurm.errors import RequestError
from plurm.numbers import is_digits

if TYPE_CHECKING:
    from plurm.commands.client import ClusterClient

__all__ = ["run"]

OPTIONS = (
    Option("signal", "s", ("signal",)),
    Option("quiet", "Q", ("quiet",), takes_value=False),
    Option("verbose", "v", ("verbose",), takes_value=False),
)


#: Signal names scancel knows (without SIG), as the C library names them.
_SIGNALS = frozenset(
    sig.name.removeprefix("SIG") for sig in signal.Signals if not sig.name.startswith("SIG_")
)


def _signal(text: str) -> str:
    """-s NAME, SIGNAME or NUMBER (1 to 64); anything else is refused as Slurm refuses it."""
    name = text.upper().removeprefix("SIG")
    if name in _SIGNALS:
        return name
    if is_digits(text) and 1 <= int(text) <= 64:
        number = int(text)
        try:
            return signal.Signals(number).name.removeprefix("SIG")
        except ValueError:
            return text
    raise CommandError(f"scancel: error: Invalid job signal: {text}")


def run(
    argv: Sequence[str], client: ClusterClient, cwd: Path, invocation: Invocation = SIMULATED
) -> CommandResult:
    found, ids = parse_options("scancel", argv, OPTIONS)
    values = dict(found)
    if not ids:
        raise CommandError("scancel: error: No job identification provided")
    verbose = "verbose" in values and "quiet" not in values
    sent = _signal(str(values["signal"])) if "signal" in values else None
    said = []
    for word in ids:
        if not is_digits(word):
            raise CommandError(f"scancel: error: Invalid job id {word}")
        if verbose and "signal" not in values:
            said.append(f"scancel: Terminating job {word}\n")
        try:
            if "signal" in values:
                client.signal(int(word), str(sent))
            else:
                client.cancel(int(word))
        except RequestError as error:
            # Slurm's scancel reports an unknown or already finished job only with -v, and
            # still exits 0: the job is gone either way.
            if verbose:
                said.append(f"scancel: error: Kill job error on job id {word}: {error.message}\n")
    return CommandResult(0, "", "".join(said))
