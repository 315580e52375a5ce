"""Plurm's exception tree.

Every error Plurm raises on purpose derives from :class:`PlurmError`, so a caller can catch one
type at the boundary. Parsers (configuration, hostlists, workload traces) raise nothing else,
whatever the input.

* PlurmError
    * NumberError              - a number or time that is not ASCII digits, too long, not
                                 finite or outside its field's range (plurm.numbers)
    * InputFileError           - an input file that is not a regular file, is too large, or
                                 inflates past its cap (plurm.inputfile); an output path that
                                 cannot be written
    * HostlistError            - an invalid hostlist expression or an oversized expansion
    * ConfError                - a slurm.conf or qos.conf that Plurm (like Slurm) refuses
        * ConfSyntaxError      - the text does not follow slurm.conf's line syntax
        * ConfKeyError         - a key Slurm does not know, with a "did you mean" suggestion
        * ConfValueError       - a known key with a value Slurm would reject
        * ConfIncludeError     - an Include that is missing, unreadable or circular
        * ConfErrorGroup       - several of the above, found in one pass over the files
    * TraceError               - a workload trace (SWF) that cannot be read: a malformed job line,
                                 or a file that is missing, unreadable or a corrupt gzip stream
        * TraceErrorGroup      - several malformed lines, found in one pass over the trace
    * RequestError             - a command the controller refuses, with Slurm's message
    * CompareError             - a comparison file (plurm compare) that is malformed, or a run of
                                 it whose configuration Plurm refuses; names the file and the run

Configuration and trace errors carry a :class:`SourceLocation` (file, line, column and the text of
the line) so that the message can show the offending line with a caret under the column, the way
compilers do.
Expected outcomes of scheduling (a job that cannot run yet) are status values, never exceptions.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

__all__ = [
    "AuthError",
    "CompareError",
    "ConfError",
    "ConfErrorGroup",
    "ConfIncludeError",
    "ConfKeyError",
    "ConfSyntaxError",
    "ConfValueError",
    "HostlistError",
    "InputFileError",
    "NumberError",
    "PlurmError",
    "RequestError",
    "SourceLocation",
    "TraceError",
    "TraceErrorGroup",
]


class PlurmError(Exception):
    """The root of every error Plurm raises on purpose."""


class AuthError(PlurmError):
    """An auth plugin could not make a credential (its daemon missing or dead, a key not
    readable); the message says why, in the plugin's words."""


class RequestError(PlurmError):
    """A command the controller refuses; ``message`` is Slurm's text for it. (Defined here,
    not in the controller, so that a command can catch it without importing the controller;
    ``plurm.controller`` re-exports it.) ``detail``, when given, is the reason slurmctld
    sends with some refusals, which the client prints on a line of its own first."""

    def __init__(self, message: str, detail: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.detail = detail


class NumberError(PlurmError, ValueError):
    """A number or time Plurm refuses: not ASCII digits, too long, not finite, out of range."""


class InputFileError(PlurmError, OSError):
    """An input file Plurm will not read (not a regular file, too large, a gzip stream that
    inflates past its cap), or an output path it cannot write.

    ``strerror`` is the reason alone (``not a regular file``), so that callers that print
    ``cannot read PATH: REASON`` for an ``OSError`` print this one the same way.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.strerror = reason

    def __str__(self) -> str:
        return str(self.strerror)


class HostlistError(PlurmError, ValueError):
    """An invalid hostlist expression, or one that expands past the size cap."""


@attrs.frozen
class SourceLocation:
    """Where a problem in a file (a configuration, a trace) is: 1-based line and column.

    ``text`` is the physical line as it stands in the file (without its line break), so that a
    message can quote it. ``column`` 0 means the problem concerns the whole line, and ``line``
    0 the whole file (a key that is missing altogether, for instance).
    """

    file: str
    line: int
    column: int = 0
    text: str = ""

    def __str__(self) -> str:
        if not self.line:
            return self.file
        if self.column:
            return f"{self.file}:{self.line}:{self.column}"
        return f"{self.file}:{self.line}"

    def excerpt(self) -> str:
        """The offending line and, when the column is known, a caret under it."""
        if not self.text:
            return ""
        shown = self.text.expandtabs(1)
        lines = [f"    {shown}"]
        if self.column:
            lines.append("    " + " " * (self.column - 1) + "^")
        return "\n".join(lines)


def _located(message: str, location: SourceLocation | None) -> str:
    """``file:line:column: message`` and the excerpt under it, or the bare message."""
    if location is None:
        return message
    excerpt = location.excerpt()
    head = f"{location}: {message}"
    return f"{head}\n{excerpt}" if excerpt else head


class ConfError(PlurmError):
    """A configuration Plurm refuses, as Slurm 22.05 refuses it.

    ``location`` is None only for whole-configuration problems (for example a missing
    ``ClusterName``, which Slurm reports without a line either).
    """

    def __init__(self, message: str, location: SourceLocation | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.location = location

    @property
    def errors(self) -> tuple[ConfError, ...]:
        """Every individual error; a single error is a group of one."""
        return (self,)

    def __str__(self) -> str:
        return _located(self.message, self.location)


class ConfSyntaxError(ConfError):
    """The text does not follow slurm.conf's line syntax (key=value pairs, Include lines)."""


class ConfKeyError(ConfError):
    """A key that Slurm 22.05 does not recognise; Slurm treats it as fatal."""

    def __init__(
        self,
        key: str,
        location: SourceLocation | None,
        *,
        record: str | None = None,
        suggestion: str | None = None,
    ) -> None:
        where = f" in a {record} line" if record else ""
        message = f"unrecognized key {key!r}{where}"
        if suggestion:
            message += f"; did you mean {suggestion!r}?"
        super().__init__(message, location)
        self.key = key
        self.record = record
        self.suggestion = suggestion


class ConfValueError(ConfError):
    """A known key whose value Slurm would reject."""

    def __init__(
        self, key: str, value: str, reason: str, location: SourceLocation | None = None
    ) -> None:
        super().__init__(f"{key}={value}: {reason}", location)
        self.key = key
        self.value = value
        self.reason = reason


class ConfIncludeError(ConfError):
    """An Include that cannot be followed; ``chain`` lists the including files, outermost first."""

    def __init__(
        self, message: str, location: SourceLocation | None, chain: Sequence[str] = ()
    ) -> None:
        if chain:
            message += " (include chain: " + " -> ".join(chain) + ")"
        super().__init__(message, location)
        self.chain = tuple(chain)


class ConfErrorGroup(ConfError):
    """Several configuration errors found in one pass, in file order."""

    def __init__(self, errors: Sequence[ConfError]) -> None:
        super().__init__(f"{len(errors)} errors in the configuration")
        self._errors = tuple(errors)

    @property
    def errors(self) -> tuple[ConfError, ...]:
        return self._errors

    def __str__(self) -> str:
        return "\n".join(str(error) for error in self._errors)


class TraceError(PlurmError):
    """A workload trace that Plurm cannot read.

    ``location`` names the file and the 1-based line (line 0 for the file as a whole: missing,
    unreadable, a corrupt gzip stream), with the column of the field at fault when there is one.
    ``field`` is that field's 1-based SWF number (1 = job number ... 18 = think time), or None
    when the line as a whole is wrong (a wrong field count) or no line is concerned.
    """

    def __init__(
        self, message: str, location: SourceLocation | None = None, *, field: int | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.location = location
        self.field = field

    @property
    def errors(self) -> tuple[TraceError, ...]:
        """Every individual error; a single error is a group of one."""
        return (self,)

    def __str__(self) -> str:
        return _located(self.message, self.location)


class TraceErrorGroup(TraceError):
    """Several malformed lines of one trace, in line order.

    ``truncated`` is true when the reader stopped collecting at its limit, so that the trace
    may hold more bad lines than ``errors`` lists. The group's own ``location`` is the file as a
    whole (line 0).
    """

    def __init__(self, errors: Sequence[TraceError], *, truncated: bool = False) -> None:
        first = errors[0].location if errors else None
        where = f" in {first.file}" if first is not None else ""
        more = " (the first ones; there are more)" if truncated else ""
        super().__init__(
            f"{len(errors)} errors{where}{more}",
            SourceLocation(first.file, 0) if first is not None else None,
        )
        self._errors = tuple(errors)
        self.truncated = truncated

    @property
    def errors(self) -> tuple[TraceError, ...]:
        return self._errors

    def __str__(self) -> str:
        lines = [str(error) for error in self._errors]
        if self.truncated:
            lines.append(f"(stopped after {len(self._errors)} errors; there are more)")
        return "\n".join(lines)


class CompareError(PlurmError):
    """A comparison (``plurm compare``) that cannot run: a malformed comparison file (missing or
    unknown keys, duplicate run names), or a run whose configuration or plugins Plurm refuses.
    The message names the file and, when one is concerned, the run."""


def raise_collected(errors: Sequence[ConfError]) -> None:
    """Raise nothing, the one error, or a group, so a caller sees every problem at once."""
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise ConfErrorGroup(errors)
