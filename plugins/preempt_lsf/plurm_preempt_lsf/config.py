"""preempt/lsf's configuration: LSF's ``lsb.queues`` and ``lsb.params`` beside slurm.conf.

Both files are made of sections, ``KEY = value`` lines between ``Begin NAME`` and
``End NAME``; ``#`` starts a comment and a line ending in ``\\`` continues on the next::

    Begin Queue
    QUEUE_NAME   = high
    PRIORITY     = 50
    PREEMPTION   = PREEMPTIVE[low_q1+2 low_q2]
    RUNLIMIT     = 60 120          # default and maximum, [hour:]minute
    End Queue

    Begin Parameters
    PREEMPT_FOR         = LEAST_RUN_TIME GROUP_MAX
    NO_PREEMPT_RUN_TIME = 50%      # minutes, or a share of the run limit
    End Parameters

``lsb.queues`` holds ``Queue`` sections (a queue is the slurm.conf partition of the same
name), ``lsb.params`` one ``Parameters`` section. Keys LSF knows but preempt/lsf does not act
on are accepted (``LsfConfig.inactive``); unknown keys are errors with "did you mean"; every
error names the file, line and column.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
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
from plurm_preempt_lsf import keys
from plurm_preempt_lsf.values import (
    BadValue,
    Guard,
    Preemption,
    Target,
    parse_count,
    parse_guard,
    parse_job_controls,
    parse_keywords,
    parse_preemption,
    parse_run_limit,
)

__all__ = ["Guard", "LsfConfig", "LsfParams", "LsfQueue", "Target", "load", "parse"]

LSB_QUEUES = "lsb.queues"
LSB_PARAMS = "lsb.params"


@attrs.frozen
class LsfQueue:
    """One ``Begin Queue`` section."""

    name: str
    priority: int = 1
    preemptive: bool = False
    #: The queues PREEMPTIVE lists; () means every queue of lower PRIORITY.
    preemptive_targets: tuple[Target, ...] = ()
    preemptable: bool = False
    #: The queues PREEMPTABLE lists; () means every queue of higher PRIORITY.
    preemptable_by: tuple[str, ...] = ()
    #: RUNLIMIT's default (the two-value form) and maximum, in seconds.
    run_limit_default: int | None = None
    run_limit_max: int | None = None
    no_preempt_run_time: Guard | None = None
    no_preempt_finish_time: Guard | None = None
    max_job_preempt: int | None = None
    #: TERMINATE_WHEN's words (WINDOW, PREEMPT, LOAD), upper case.
    terminate_when: frozenset[str] = frozenset()
    #: JOB_CONTROLS's SUSPEND action (``brequeue $LSB_JOBID``, ``SIGTSTP``), as written.
    job_controls_suspend: str | None = None
    #: The ``Begin Queue`` line, for the plugin's own messages.
    location: SourceLocation | None = attrs.field(default=None, eq=False)

    @property
    def run_limit(self) -> int | None:
        """The run limit of a job that gives none (seconds): the default, else the maximum."""
        return self.run_limit_default if self.run_limit_default is not None else self.run_limit_max

    def preference(self, victim_queue: str) -> int:
        """The ``+N`` this queue's PREEMPTIVE list gives ``victim_queue`` (0 if none)."""
        return next((t.preference for t in self.preemptive_targets if t.queue == victim_queue), 0)


@attrs.frozen
class LsfParams:
    """The ``Begin Parameters`` section of lsb.params."""

    preempt_for: frozenset[str] = frozenset()
    no_preempt_run_time: Guard | None = None
    no_preempt_finish_time: Guard | None = None
    max_job_preempt: int | None = None
    preempt_jobtype: frozenset[str] = frozenset()


@attrs.frozen
class LsfConfig:
    """Everything preempt/lsf reads, LSF's defaults where the files say nothing."""

    queues: tuple[LsfQueue, ...] = ()
    params: LsfParams = LsfParams()
    #: The files read.
    files: tuple[str, ...] = attrs.field(default=(), eq=False)
    #: Keys accepted without effect: "FILE [QUEUE] KEY" -> value as written.
    inactive: Mapping[str, str] = attrs.field(factory=dict, eq=False)

    def queue(self, name: str) -> LsfQueue | None:
        """The queue ``name``, or None when lsb.queues has no such section."""
        return next((queue for queue in self.queues if queue.name == name), None)


def load(directory: str | os.PathLike[str]) -> LsfConfig:
    """Read ``lsb.queues`` and ``lsb.params`` in ``directory`` (either may be missing)."""
    paths = [Path(directory) / LSB_QUEUES, Path(directory) / LSB_PARAMS]
    texts: list[str | None] = []
    for path in paths:
        if not path.exists():
            texts.append(None)
            continue
        try:
            texts.append(read_text(path, limit=MAX_CONF_BYTES))
        except OSError as error:
            raise ConfIncludeError(f"cannot read {path}: {error.strerror or error}", None) from None
    config = parse(
        texts[0] or "", texts[1] or "", queues_path=str(paths[0]), params_path=str(paths[1])
    )
    files = tuple(str(path) for path, text in zip(paths, texts, strict=True) if text is not None)
    return attrs.evolve(config, files=files)


def parse(
    queues_text: str,
    params_text: str,
    *,
    queues_path: str = LSB_QUEUES,
    params_path: str = LSB_PARAMS,
) -> LsfConfig:
    """The configuration the two texts describe. Raises every problem found at once."""
    errors: list[ConfError] = []
    inactive: dict[str, str] = {}
    queues_source = split_logical_lines(queues_path, queues_text)
    params_source = split_logical_lines(params_path, params_text)
    queue_sections = _sections(queues_source, "Queue", errors)
    param_sections = _sections(params_source, "Parameters", errors)
    queues: list[LsfQueue] = []
    references: list[tuple[str, SourceLocation]] = []
    for section in queue_sections:
        queue = _queue(section, queues_source, errors, inactive, references)
        if queue is None:
            continue
        if any(q.name == queue.name for q in queues):
            errors.append(
                ConfValueError(
                    "QUEUE_NAME",
                    queue.name,
                    "a queue of this name is defined already",
                    section.values["QUEUE_NAME"].location(queues_source),
                )
            )
            continue
        queues.append(queue)
    names = {queue.name for queue in queues}
    for name, location in references:
        if name not in names:
            errors.append(
                ConfValueError(
                    "PREEMPTION", name, f"no queue {name!r} is defined in lsb.queues", location
                )
            )
    if len(param_sections) > 1:
        errors.append(
            ConfSyntaxError(
                "lsb.params holds one Parameters section",
                params_source.whole_line(param_sections[1].begin),
            )
        )
    params = LsfParams()
    if param_sections:
        params = _params(param_sections[0], params_source, errors, inactive)
    errors.sort(key=_order)
    raise_collected(errors)
    return LsfConfig(tuple(queues), params, inactive=inactive)


def _order(error: ConfError) -> tuple[str, int, int]:
    location = error.location
    return (location.file, location.line, location.column) if location else ("", 0, 0)


# ------------------------------------------------------------------------------ sections


@attrs.frozen
class _Value:
    key: str
    value: str
    index: int
    key_column: int
    value_column: int

    def location(self, source: SourceFile, offset: int = 0) -> SourceLocation:
        return source.locate(self.index, self.value_column + offset)


@attrs.define
class _Section:
    begin: int
    values: dict[str, _Value] = attrs.field(factory=dict)


_BEGIN_END = re.compile(r"\s*(Begin|End)(?:\s+(\S+))?\s*$", re.IGNORECASE)
_PAIR = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$")


def _sections(source: SourceFile, kind: str, errors: list[ConfError]) -> list[_Section]:
    """The ``Begin KIND`` ... ``End KIND`` sections of ``source``, in file order."""
    found: list[_Section] = []
    current: _Section | None = None
    for index, line in enumerate(source.lines):
        text = line.text
        if not text.strip():
            continue
        indent = len(text) - len(text.lstrip()) + 1
        edge = _BEGIN_END.match(text)
        if edge is not None:
            word, name = edge.group(1).lower(), edge.group(2)
            name_column = edge.start(2) + 1 if name else len(text.rstrip()) + 1
            if name is None or name.lower() != kind.lower():
                shown = f"{edge.group(1)} {name}" if name else edge.group(1)
                errors.append(
                    ConfSyntaxError(
                        f"{shown!r}: {source.path} holds {kind} sections "
                        f"(Begin {kind} ... End {kind})",
                        source.locate(index, name_column),
                    )
                )
                continue
            if word == "begin":
                if current is not None:
                    errors.append(
                        ConfSyntaxError(
                            f"Begin {kind} inside another (missing End {kind}?)",
                            source.locate(index, indent),
                        )
                    )
                current = _Section(index)
                found.append(current)
            elif current is None:
                errors.append(
                    ConfSyntaxError(
                        f"End {kind} without Begin {kind}", source.locate(index, indent)
                    )
                )
            else:
                current = None
            continue
        pair = _PAIR.match(text)
        if pair is None:
            errors.append(ConfSyntaxError("expected KEY = value", source.locate(index, indent)))
            continue
        if current is None:
            errors.append(
                ConfSyntaxError(
                    f"{pair.group(1)} outside a Begin {kind} ... End {kind} section",
                    source.locate(index, indent),
                )
            )
            continue
        key = pair.group(1)
        value, value_start = pair.group(2), pair.start(2)
        if len(value) >= 2 and value[0] == value[-1] == '"':
            value, value_start = value[1:-1], value_start + 1
        entry = _Value(key, value, index, pair.start(1) + 1, value_start + 1)
        if any(known.upper() == key.upper() for known in current.values):
            errors.append(
                ConfValueError(
                    key, value, "set twice in this section", source.locate(index, entry.key_column)
                )
            )
            continue
        current.values[key] = entry
    if current is not None:
        errors.append(
            ConfSyntaxError(f"Begin {kind} without End {kind}", source.whole_line(current.begin))
        )
        found.remove(current)
    return found


def _known(
    section: _Section,
    source: SourceFile,
    table: tuple[str, ...],
    record: str,
    errors: list[ConfError],
) -> dict[str, _Value]:
    """The section's values by canonical key; unknown keys become errors."""
    canon = {name.upper(): name for name in table}
    out: dict[str, _Value] = {}
    for key, entry in section.values.items():
        name = canon.get(key.upper())
        if name is None:
            errors.append(
                ConfKeyError(
                    key,
                    source.locate(entry.index, entry.key_column),
                    record=record,
                    suggestion=keys.suggest(key, table),
                )
            )
            continue
        out[name] = entry
    return out


def _value(
    entry: _Value, source: SourceFile, errors: list[ConfError], parser: Callable[[str], object]
) -> object | None:
    """``parser`` applied to the entry's value; a :class:`BadValue` becomes an error."""
    try:
        return parser(entry.value)
    except BadValue as error:
        location = entry.location(source, error.offset)
        errors.append(ConfValueError(entry.key, entry.value, error.reason, location))
        return None


def _queue(
    section: _Section,
    source: SourceFile,
    errors: list[ConfError],
    inactive: dict[str, str],
    references: list[tuple[str, SourceLocation]],
) -> LsfQueue | None:
    values = _known(section, source, keys.QUEUE_KEYS, "lsb.queues Queue", errors)
    name_entry = values.get("QUEUE_NAME")
    if name_entry is None or not name_entry.value:
        errors.append(
            ConfSyntaxError("a Queue section needs QUEUE_NAME", source.whole_line(section.begin))
        )
        return None
    if len(name_entry.value.split()) != 1:
        errors.append(
            ConfValueError(
                "QUEUE_NAME",
                name_entry.value,
                "a queue name is one word",
                name_entry.location(source),
            )
        )
        return None
    fields: dict[str, object] = {"name": name_entry.value}
    for key, entry in values.items():
        if key == "QUEUE_NAME":
            continue
        if key not in keys.QUEUE_SETTINGS:
            inactive[f"{LSB_QUEUES} {name_entry.value} {key}"] = entry.value
            continue
        parsed = _value(entry, source, errors, _QUEUE_PARSERS[key])
        if parsed is None:
            continue
        if key == "PREEMPTION":
            assert isinstance(parsed, Preemption)
            fields.update(
                preemptive=parsed.preemptive,
                preemptive_targets=parsed.targets,
                preemptable=parsed.preemptable,
                preemptable_by=parsed.preemptable_by,
            )
            for target, at in zip(parsed.targets, parsed.targets_at, strict=True):
                references.append((target.queue, entry.location(source, at)))
            for queue, at in zip(parsed.preemptable_by, parsed.preemptable_by_at, strict=True):
                references.append((queue, entry.location(source, at)))
        elif key == "RUNLIMIT":
            assert isinstance(parsed, tuple)
            fields.update(run_limit_default=parsed[0], run_limit_max=parsed[1])
        elif key == "JOB_CONTROLS":
            assert isinstance(parsed, dict)
            fields["job_controls_suspend"] = parsed.get("SUSPEND")
        else:
            fields[_QUEUE_FIELDS[key]] = parsed
    return LsfQueue(**fields, location=source.whole_line(section.begin))  # type: ignore[arg-type]


def _params(
    section: _Section, source: SourceFile, errors: list[ConfError], inactive: dict[str, str]
) -> LsfParams:
    values = _known(section, source, keys.PARAMS_KEYS, "lsb.params Parameters", errors)
    fields: dict[str, object] = {}
    for key, entry in values.items():
        if key not in keys.PARAMS_SETTINGS:
            inactive[f"{LSB_PARAMS} {key}"] = entry.value
            continue
        parsed = _value(entry, source, errors, _PARAMS_PARSERS[key])
        if parsed is not None:
            fields[key.lower()] = parsed
    return LsfParams(**fields)  # type: ignore[arg-type]


def _priority(text: str) -> int:
    return parse_count(text, minimum=0)


def _terminate_when(text: str) -> frozenset[str]:
    return parse_keywords(text, ("LOAD", "PREEMPT", "WINDOW"), "TERMINATE_WHEN")


_QUEUE_PARSERS: dict[str, Callable[[str], object]] = {
    "PRIORITY": _priority,
    "PREEMPTION": parse_preemption,
    "RUNLIMIT": parse_run_limit,
    "NO_PREEMPT_RUN_TIME": parse_guard,
    "NO_PREEMPT_FINISH_TIME": parse_guard,
    "MAX_JOB_PREEMPT": parse_count,
    "TERMINATE_WHEN": _terminate_when,
    "JOB_CONTROLS": parse_job_controls,
}
_QUEUE_FIELDS = {
    "PRIORITY": "priority",
    "NO_PREEMPT_RUN_TIME": "no_preempt_run_time",
    "NO_PREEMPT_FINISH_TIME": "no_preempt_finish_time",
    "MAX_JOB_PREEMPT": "max_job_preempt",
    "TERMINATE_WHEN": "terminate_when",
}
_PARAMS_PARSERS: dict[str, Callable[[str], object]] = {
    "PREEMPT_FOR": lambda text: parse_keywords(text, keys.PREEMPT_FOR, "PREEMPT_FOR"),
    "NO_PREEMPT_RUN_TIME": parse_guard,
    "NO_PREEMPT_FINISH_TIME": parse_guard,
    "MAX_JOB_PREEMPT": parse_count,
    "PREEMPT_JOBTYPE": lambda text: parse_keywords(text, keys.PREEMPT_JOBTYPE, "PREEMPT_JOBTYPE"),
}
