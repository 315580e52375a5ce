"""preempt/pbs's configuration: PBS's ``sched_config`` and ``qmgr.conf`` beside slurm.conf.

``sched_config`` is PBS's scheduler file: ``name: value [prime_option]`` lines, ``#``
comments, values with blanks in double quotes::

    preemptive_sched: true ALL
    preempt_prio: "express_queue, normal_jobs"
    preempt_order: "SCR 80 SC 50 S"

``qmgr.conf`` holds ``qmgr`` commands, one a line (see :mod:`plurm_preempt_pbs.qmgr`)::

    create queue expressq queue_type=execution,started=true,enabled=true,priority=200
    set queue workq max_run_soft = "[u:PBS_GENERIC=2]"
    set server preempt_targets_enable = true
    set sched preempt_order = "R 50 S"

qmgr.conf is read after sched_config, so a ``set sched`` wins over the same sched_config key.
A PBS queue is the slurm.conf partition of the same name. Settings preempt/pbs does not act
on are accepted (``PbsConfig.inactive``) when PBS knows them; unknown names are errors with a
"did you mean"; every error names the file, line and column.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

import attrs

from plurm.conf.source import SourceFile, split_logical_lines
from plurm.errors import (
    ConfError,
    ConfIncludeError,
    ConfKeyError,
    ConfSyntaxError,
    ConfValueError,
    SourceLocation,
    raise_collected,
)
from plurm.inputfile import MAX_CONF_BYTES, read_text
from plurm.numbers import is_digits
from plurm_preempt_pbs import keys
from plurm_preempt_pbs.qmgr import Attribute, BadSyntax, Command, parse_command
from plurm_preempt_pbs.values import (
    DEFAULT_ORDER,
    LEVELS,
    BadValue,
    OrderRange,
    PreemptOrder,
    SoftLimits,
    parse_bool,
    parse_count,
    parse_preempt_order,
    parse_preempt_prio,
    parse_soft_limits,
)

__all__ = [
    "LEVELS",
    "OrderRange",
    "PbsConfig",
    "PbsQueue",
    "PreemptOrder",
    "SoftLimits",
    "load",
    "parse",
]

SCHED_CONFIG = "sched_config"
QMGR_CONF = "qmgr.conf"
#: PBS queue priorities run from -1024 to 1024.
PRIORITY_RANGE = (-1024, 1024)
_PRIME_OPTIONS = ("all", "prime", "non_prime", "none")


@attrs.frozen
class PbsQueue:
    """A PBS queue (the partition of the same name) as qmgr.conf sets it."""

    name: str
    priority: int = 0
    max_run_soft: SoftLimits = SoftLimits()
    #: ``resources_default.preempt_targets``: the preempt_targets of the queue's jobs that
    #: give none, as written (``queue=normal,queue=scavenger`` or ``NONE``).
    default_preempt_targets: str | None = None
    #: The first line that names the queue, for the plugin's own messages.
    location: SourceLocation | None = attrs.field(default=None, eq=False)


@attrs.frozen
class PbsConfig:
    """Everything preempt/pbs reads, PBS's defaults where the files say nothing."""

    preemptive_sched: bool = True
    preempt_queue_prio: int = 150
    preempt_prio: tuple[frozenset[str], ...] = (
        frozenset({"express_queue"}),
        frozenset({"normal_jobs"}),
    )
    preempt_order: PreemptOrder = DEFAULT_ORDER
    #: ``min_time_since_start`` (youngest first), or None when unset (oldest first).
    preempt_sort: str | None = "min_time_since_start"
    #: How many times the scheduler looks for victims for one waiting job; None: no cap.
    max_preempt_attempts: int | None = None
    sched_preempt_enforce_resumption: bool = False
    preempt_targets_enable: bool = True
    server_max_run_soft: SoftLimits = SoftLimits()
    #: The server's ``resources_default.preempt_targets`` (for jobs whose queue sets none).
    server_default_preempt_targets: str | None = None
    queues: tuple[PbsQueue, ...] = ()
    #: The files read.
    files: tuple[str, ...] = attrs.field(default=(), eq=False)
    #: PBS settings accepted without effect: "FILE NAME" -> value as written.
    inactive: Mapping[str, str] = attrs.field(factory=dict, eq=False)

    def queue(self, name: str) -> PbsQueue | None:
        """The queue ``name``, or None when qmgr.conf does not name it."""
        return next((queue for queue in self.queues if queue.name == name), None)


def load(directory: str | os.PathLike[str]) -> PbsConfig:
    """Read ``sched_config`` and ``qmgr.conf`` in ``directory`` (either may be missing)."""
    texts: list[str | None] = []
    paths = [Path(directory) / SCHED_CONFIG, Path(directory) / QMGR_CONF]
    for path in paths:
        if not path.exists():
            texts.append(None)
            continue
        try:
            texts.append(read_text(path, limit=MAX_CONF_BYTES))
        except OSError as error:
            raise ConfIncludeError(f"cannot read {path}: {error.strerror or error}", None) from None
    config = parse(
        texts[0] or "", texts[1] or "", sched_path=str(paths[0]), qmgr_path=str(paths[1])
    )
    files = tuple(str(path) for path, text in zip(paths, texts, strict=True) if text is not None)
    return attrs.evolve(config, files=files)


def parse(
    sched_text: str,
    qmgr_text: str,
    *,
    sched_path: str = SCHED_CONFIG,
    qmgr_path: str = QMGR_CONF,
) -> PbsConfig:
    """The configuration ``sched_text`` and ``qmgr_text`` describe. Raises every problem
    found at once (:func:`plurm.errors.raise_collected`)."""
    builder = _Builder()
    builder.read_sched_config(split_logical_lines(sched_path, sched_text))
    builder.read_qmgr(split_logical_lines(qmgr_path, qmgr_text))
    raise_collected(builder.errors)
    return builder.result()


_SCHED_LINE = re.compile(r"\s*([^\s:]+)\s*:(.*)$")


class _Builder:
    """Collects settings and errors over both files."""

    def __init__(self) -> None:
        self.settings: dict[str, object] = {}
        self.queues: dict[str, PbsQueue] = {}
        self.server_soft = SoftLimits()
        self.server_targets: str | None = None
        self.inactive: dict[str, str] = {}
        self.errors: list[ConfError] = []

    def result(self) -> PbsConfig:
        return PbsConfig(
            **self.settings,  # type: ignore[arg-type]
            server_max_run_soft=self.server_soft,
            server_default_preempt_targets=self.server_targets,
            queues=tuple(self.queues.values()),
            inactive=dict(self.inactive),
        )

    # -------------------------------------------------------------------- sched_config

    def read_sched_config(self, source: SourceFile) -> None:
        for index, line in enumerate(source.lines):
            if not line.text.strip():
                continue
            match = _SCHED_LINE.match(line.text)
            if match is None:
                column = len(line.text) - len(line.text.lstrip()) + 1
                self.errors.append(
                    ConfSyntaxError(
                        "expected 'name: value [prime_option]'", source.locate(index, column)
                    )
                )
                continue
            key, key_column = match.group(1), match.start(1) + 1
            lowered = key.lower()
            if lowered not in keys.SCHED_CONFIG_KEYS:
                self.errors.append(
                    ConfKeyError(
                        key,
                        source.locate(index, key_column),
                        record="sched_config",
                        suggestion=keys.suggest(lowered, keys.SCHED_CONFIG_KEYS),
                    )
                )
                continue
            try:
                value, value_offset, prime = _split_sched_value(match.group(2))
            except BadValue as error:
                column = match.start(2) + error.offset + 1
                self.errors.append(ConfSyntaxError(error.reason, source.locate(index, column)))
                continue
            value_column = match.start(2) + value_offset + 1
            if lowered not in keys.SETTINGS and lowered != "preempt_targets_enable":
                self.inactive[f"{SCHED_CONFIG} {lowered}"] = match.group(2).strip()
                continue
            if prime is not None and prime[0].lower() != "all":
                reason = (
                    "Plurm models no prime time: a preemption setting applies at all times "
                    f"(write ALL or nothing, not {prime[0]!r})"
                )
                location = source.locate(index, match.start(2) + prime[1] + 1)
                self.errors.append(ConfValueError(key, value, reason, location))
                continue
            self._setting(lowered, value, source, index, value_column)

    def _setting(
        self, key: str, value: str, source: SourceFile, index: int, column: int, op: str = "="
    ) -> None:
        """Set the preemption setting ``key`` (lower case) from its text ``value``."""
        if op != "=":
            location = source.locate(index, column)
            self.errors.append(ConfValueError(key, value, f"{op} does not apply here", location))
            return
        try:
            parsed = _SETTING_PARSERS[key](value)
        except BadValue as error:
            location = source.locate(index, column + error.offset)
            self.errors.append(ConfValueError(key, value, error.reason, location))
            return
        self.settings[key] = parsed

    # -------------------------------------------------------------------------- qmgr

    def read_qmgr(self, source: SourceFile) -> None:
        for index, line in enumerate(source.lines):
            try:
                command = parse_command(line.text)
            except BadSyntax as error:
                self.errors.append(
                    ConfSyntaxError(error.reason, source.locate(index, error.column))
                )
                continue
            if command is not None:
                self._command(command, source, index)

    def _command(self, command: Command, source: SourceFile, index: int) -> None:
        if command.kind in ("server", "sched") and command.verb == "create":
            location = source.locate(index, command.name_column)
            self.errors.append(
                ConfSyntaxError(f"the {command.kind} object exists already; use set", location)
            )
            return
        if command.kind not in ("server", "sched", "queue"):
            # Nodes, resources and hooks: Plurm takes its nodes from slurm.conf.
            self.inactive[f"{QMGR_CONF} {command.kind} {command.name}".rstrip()] = ", ".join(
                f"{a.name}{a.op}{a.value}" for a in command.attributes
            )
            return
        if command.kind == "queue" and command.name not in self.queues:
            location = source.locate(index, command.name_column)
            self.queues[command.name] = PbsQueue(command.name, location=location)
        for attribute in command.attributes:
            if command.verb == "unset":
                self._unset(command, attribute, source, index)
            else:
                self._attribute(command, attribute, source, index)

    def _known(
        self,
        table: tuple[str, ...],
        attribute: Attribute,
        source: SourceFile,
        index: int,
        kind: str,
    ) -> str | None:
        """The attribute's lower-case base name when ``table`` knows it, else an error."""
        name = attribute.name.lower()
        base, dot, _ = name.partition(".")
        if base in table and (not dot or base in keys.DOTTED):
            return name
        self.errors.append(
            ConfKeyError(
                attribute.name,
                source.locate(index, attribute.name_column),
                record=f"qmgr {kind}",
                suggestion=keys.suggest(base, table),
            )
        )
        return None

    def _attribute(
        self, command: Command, attribute: Attribute, source: SourceFile, index: int
    ) -> None:
        table = {
            "server": keys.SERVER_ATTRIBUTES,
            "sched": keys.SCHED_ATTRIBUTES,
            "queue": keys.QUEUE_ATTRIBUTES,
        }[command.kind]
        name = self._known(table, attribute, source, index, command.kind)
        if name is None:
            return
        column = attribute.value_column
        location = source.locate(index, column)
        if "_res_soft" in name:
            reason = "Plurm models soft limits on running jobs only (max_run_soft)"
            self.errors.append(ConfValueError(attribute.name, attribute.value, reason, location))
            return
        if (command.kind == "sched" and name in keys.SETTINGS) or name == "preempt_targets_enable":
            self._setting(name, attribute.value, source, index, column, attribute.op)
            return
        if name in ("max_run_soft", "max_user_run_soft", "max_group_run_soft"):
            self._soft_limit(command, name, attribute, source, index)
            return
        if command.kind == "queue" and name == "priority":
            try:
                priority = _parse_priority(attribute.value)
            except BadValue as error:
                self.errors.append(
                    ConfValueError(attribute.name, attribute.value, error.reason, location)
                )
                return
            queue = self.queues[command.name]
            self.queues[command.name] = attrs.evolve(queue, priority=priority)
            return
        if name == "resources_default.preempt_targets" and command.kind != "sched":
            if attribute.op != "=" or not attribute.value.strip():
                reason = "expected = and a list such as queue=normal,queue=scavenger, or NONE"
                self.errors.append(
                    ConfValueError(attribute.name, attribute.value, reason, location)
                )
            elif command.kind == "server":
                self.server_targets = attribute.value.strip()
            else:
                queue = self.queues[command.name]
                self.queues[command.name] = attrs.evolve(
                    queue, default_preempt_targets=attribute.value.strip()
                )
            return
        where = f"{command.kind} {command.name}".rstrip()
        self.inactive[f"{QMGR_CONF} {where} {name}"] = attribute.value

    def _soft_limit(
        self, command: Command, name: str, attribute: Attribute, source: SourceFile, index: int
    ) -> None:
        current = (
            self.server_soft if command.kind == "server" else self.queues[command.name].max_run_soft
        )
        try:
            if name == "max_run_soft":
                if attribute.op == "-=":
                    raise BadValue("-= is not supported; set the whole limit with =")
                base = current if attribute.op == "+=" else None
                limits = parse_soft_limits(attribute.value, base)
            else:
                if attribute.op != "=":
                    raise BadValue(f"{attribute.op} does not apply to a number")
                count = parse_count(attribute.value)
                limits = _with_generic(current, name, count)
        except BadValue as error:
            location = source.locate(index, attribute.value_column + error.offset)
            self.errors.append(
                ConfValueError(attribute.name, attribute.value, error.reason, location)
            )
            return
        if command.kind == "server":
            self.server_soft = limits
        else:
            queue = self.queues[command.name]
            self.queues[command.name] = attrs.evolve(queue, max_run_soft=limits)

    def _unset(
        self, command: Command, attribute: Attribute, source: SourceFile, index: int
    ) -> None:
        table = {
            "server": keys.SERVER_ATTRIBUTES,
            "sched": keys.SCHED_ATTRIBUTES,
            "queue": keys.QUEUE_ATTRIBUTES,
        }[command.kind]
        name = self._known(table, attribute, source, index, command.kind)
        if name is None:
            return
        if (command.kind == "sched" and name in keys.SETTINGS) or name == "preempt_targets_enable":
            if name == "preempt_sort":
                self.settings[name] = None  # unset: the oldest job first
            else:
                self.settings.pop(name, None)
        elif name in ("max_run_soft", "max_user_run_soft", "max_group_run_soft"):
            if command.kind == "server":
                self.server_soft = (
                    SoftLimits()
                    if name == "max_run_soft"
                    else _with_generic(self.server_soft, name, None)
                )
            else:
                queue = self.queues[command.name]
                limits = (
                    SoftLimits()
                    if name == "max_run_soft"
                    else _with_generic(queue.max_run_soft, name, None)
                )
                self.queues[command.name] = attrs.evolve(queue, max_run_soft=limits)
        elif command.kind == "queue" and name == "priority":
            self.queues[command.name] = attrs.evolve(self.queues[command.name], priority=0)


def _with_generic(limits: SoftLimits, name: str, count: int | None) -> SoftLimits:
    """``limits`` with the every-user (max_user_run_soft) or every-group
    (max_group_run_soft) limit set to ``count``."""
    if name == "max_user_run_soft":
        return attrs.evolve(limits, generic_user=count)
    return attrs.evolve(limits, generic_group=count)


def _split_sched_value(text: str) -> tuple[str, int, tuple[str, int] | None]:
    """A sched_config value: (the value, its 0-based offset in ``text``, and the prime
    option with its offset, or None)."""
    stripped = text.lstrip()
    start = len(text) - len(stripped)
    if not stripped.strip():
        raise BadValue("missing value", start)
    if stripped[0] == '"':
        end = stripped.find('"', 1)
        if end == -1:
            raise BadValue('unclosed " quote', start)
        value, value_offset = stripped[1:end], start + 1
        rest_offset = start + end + 1
    else:
        word = stripped.split()[0]
        value, value_offset = word, start
        rest_offset = start + len(word)
    rest = text[rest_offset:]
    words = rest.split()
    if not words:
        return value, value_offset, None
    prime_offset = rest_offset + len(rest) - len(rest.lstrip())
    if len(words) > 1 or words[0].lower() not in _PRIME_OPTIONS:
        raise BadValue(
            f"unexpected {rest.strip()!r} after the value (a value with blanks goes in double "
            "quotes; after it may come one of ALL, prime, non_prime, none)",
            prime_offset,
        )
    return value, value_offset, (words[0], prime_offset)


def _parse_priority(text: str) -> int:
    word = text.strip()
    digits = word[1:] if word[:1] in "+-" else word
    low, high = PRIORITY_RANGE
    if not is_digits(digits) or not low <= int(word) <= high:
        raise BadValue(f"{word!r} is not a queue priority (a whole number from {low} to {high})")
    return int(word)


def _preempt_sort(text: str) -> str:
    word = text.strip().lower()
    if word != "min_time_since_start":
        raise BadValue(f"{text.strip()!r}: the only preempt_sort is min_time_since_start")
    return word


def _signed(text: str) -> int:
    word = text.strip()
    digits = word[1:] if word[:1] in "+-" else word
    if not is_digits(digits) or abs(int(word)) > 2**31 - 1:
        raise BadValue(f"{word!r} is not a whole number")
    return int(word)


_SETTING_PARSERS = {
    "preemptive_sched": parse_bool,
    "preempt_queue_prio": _signed,
    "preempt_prio": parse_preempt_prio,
    "preempt_order": parse_preempt_order,
    "preempt_sort": _preempt_sort,
    "max_preempt_attempts": parse_count,
    "sched_preempt_enforce_resumption": parse_bool,
    "preempt_targets_enable": parse_bool,
}
