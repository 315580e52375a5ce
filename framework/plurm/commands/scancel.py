"""scancel: cancel jobs by id."""

from __future__ import annotations

import signal
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from plurm.commands.base import SIMULATED, CommandError, CommandResult, Invocation
from plurm.commands.options import Option, parse_options
from plurm.errors import RequestError
from plurm.numbers import MAX_NUMBER_TEXT, is_digits

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


def _signal(text: str) -> str | None:
    """-s NAME, SIGNAME or a number, as Slurm 22.05's scancel reads it.

    Slurm refuses a name it does not know and the number 0 (``Unknown job signal: X``, exit
    1, tests/data/oracle/hostile/records.json), but takes any other number, even one that is
    no signal (99, -1), and says nothing: the nodes fail to send it. Plurm sends a number
    that names a signal and, for one that does not, sends nothing and says nothing (None).
    """
    name = text.upper().removeprefix("SIG")
    if name in _SIGNALS:
        return name
    digits = text[1:] if text[:1] in "+-" else text
    if is_digits(digits) and len(digits) <= MAX_NUMBER_TEXT and int(text) != 0:
        try:
            return signal.Signals(int(text)).name.removeprefix("SIG")
        except ValueError:
            return None
    raise CommandError(f"Unknown job signal: {text}")


def run(
    argv: Sequence[str], client: ClusterClient, cwd: Path, invocation: Invocation = SIMULATED
) -> CommandResult:
    found, ids = parse_options("scancel", argv, OPTIONS)
    values = dict(found)
    if not ids:
        raise CommandError("scancel: error: No job identification provided")
    verbose = "verbose" in values and "quiet" not in values
    signalled = "signal" in values
    sent = _signal(str(values["signal"])) if signalled else None
    said = []
    status = 0
    for word in ids:
        # a job id, or an array's id and one of its tasks (123_4)
        job_text, underscore, task_text = word.partition("_")
        if not is_digits(job_text) or (underscore and not is_digits(task_text)):
            raise CommandError(f"scancel: error: Invalid job id {word}")
        task = int(task_text) if underscore else None
        if verbose and not signalled:
            said.append(f"scancel: Terminating job {word}\n")
        try:
            if signalled:
                if sent is not None:
                    client.signal(int(job_text), sent)
            else:
                client.cancel(int(job_text), task)
        except RequestError as error:
            # Slurm's scancel reports an unknown or already finished job only with -v, and
            # still exits 0: the job is gone either way. Any other refusal (another user's
            # job: "Access/permission denied") is always reported, and the exit is 1.
            gone = error.message in _GONE
            if verbose or not gone:
                said.append(f"scancel: error: Kill job error on job id {word}: {error.message}\n")
            if not gone:
                status = 1
    return CommandResult(status, "", "".join(said))


#: The refusals scancel does not count as errors: the job is already over.
_GONE = frozenset({"Job/step already completing or completed", "Invalid job id specified"})
