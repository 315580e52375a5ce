"""What the commands share: the result type and the error a command line raises."""

from __future__ import annotations

import attrs

from plurm.errors import PlurmError

__all__ = ["CommandError", "CommandResult"]


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
