"""qos.conf: the QOS records real Slurm keeps in its database, written as a file.

Real Slurm defines QOS with ``sacctmgr add qos NAME key=value ...``. Plurm reads the same
fields from ``qos.conf`` beside slurm.conf, in slurm.conf's line syntax, one record a line::

    QOS=high Priority=100 Preempt=low,normal PreemptMode=REQUEUE GraceTime=60

Values follow sacctmgr: ``PreemptMode`` of ``cluster`` or empty means the cluster's mode;
``PreemptExemptTime`` is a time string (``-1`` defers to the cluster's PreemptExemptTime);
``GraceTime`` is seconds. The QOS ``normal`` always exists, as slurmdbd creates it.
Other sacctmgr QOS fields (limits and the like) are accepted and reported as inactive.
"""

from __future__ import annotations

from typing import Any

import attrs

from plurm.conf.model import ConfNotice, QosSpec
from plurm.conf.source import SourceFile, split_logical_lines
from plurm.conf.syntax import Include, Pair, parse_source
from plurm.conf.values import BadValue, PreemptMode, parse_int, parse_preempt_mode, parse_time
from plurm.errors import ConfError, ConfKeyError, ConfSyntaxError, ConfValueError

__all__ = ["QOS_FLAGS", "read_qos"]

QOS_FLAGS = (
    "DenyOnLimit",
    "EnforceUsageThreshold",
    "NoDecay",
    "NoReserve",
    "OverPartQOS",
    "PartitionMaxNodes",
    "PartitionMinNodes",
    "PartitionTimeLimit",
    "RequiresReservation",
    "UsageFactorSafe",
)

_ACTIVE = (
    "Priority",
    "Preempt",
    "PreemptMode",
    "PreemptExemptTime",
    "GraceTime",
    "UsageFactor",
    "Flags",
)
# sacctmgr's other QOS fields: accepted, reported, not acted on.
_INACTIVE = (
    "Description",
    "GrpJobs",
    "GrpJobsAccrue",
    "GrpSubmitJobs",
    "GrpTRES",
    "GrpTRESMins",
    "GrpTRESRunMins",
    "GrpWall",
    "LimitFactor",
    "MaxJobsAccruePerAccount",
    "MaxJobsAccruePerUser",
    "MaxJobsPerAccount",
    "MaxJobsPerUser",
    "MaxSubmitJobsPerAccount",
    "MaxSubmitJobsPerUser",
    "MaxTRESMinsPerJob",
    "MaxTRESPerAccount",
    "MaxTRESPerJob",
    "MaxTRESPerNode",
    "MaxTRESPerUser",
    "MaxWall",
    "MaxWallDurationPerJob",
    "MinPrioThreshold",
    "MinTRESPerJob",
    "RawUsage",
    "UsageThreshold",
)
_FIELDS = {name.lower(): name for name in (*_ACTIVE, *_INACTIVE)}
_FLAG_NAMES = {flag.lower(): flag for flag in QOS_FLAGS}


def read_qos(path: str, text: str) -> tuple[tuple[QosSpec, ...], list[ConfError], list[ConfNotice]]:
    """The QOS defined in ``text`` (the content of ``path``), plus ``normal`` if absent."""
    source = split_logical_lines(path, text)
    statements, syntax_errors = parse_source(source)
    errors: list[ConfError] = list(syntax_errors)
    notices: list[ConfNotice] = []
    records: dict[str, QosSpec] = {}
    for statement in statements:
        if isinstance(statement, Include):
            errors.append(
                ConfSyntaxError(
                    "qos.conf does not support Include",
                    source.locate(statement.index, statement.column),
                )
            )
            continue
        first = statement.pairs[0]
        if first.key.lower() not in ("qos", "name"):
            errors.append(
                ConfSyntaxError(
                    f"a qos.conf line starts with QOS=<name>, not {first.key}=",
                    source.locate(statement.index, first.key_column),
                )
            )
            continue
        spec = _record(source, statement.index, statement.pairs, errors, notices)
        if spec is None:
            continue
        if spec.name in records:
            errors.append(ConfError(f"QOS {spec.name} is defined twice", spec.location))
            continue
        records[spec.name] = spec
    if "normal" not in records:
        records["normal"] = QosSpec("normal")
    for spec in records.values():
        for victim in spec.preempt:
            if victim not in records:
                errors.append(
                    ConfError(
                        f"QOS {spec.name}: Preempt names unknown QOS {victim!r}", spec.location
                    )
                )
    errors += _preemption_loops(records)
    return tuple(records.values()), errors, notices


def _preemption_loops(records: dict[str, QosSpec]) -> list[ConfError]:
    """slurmdbd refuses a QOS whose Preempt list leads back to itself (a preempts b,
    b preempts a; or a preempts a): such QOS would requeue each other for ever. One error
    per QOS on a loop, found by an iterative walk (no recursion on the chain's length)."""
    errors: list[ConfError] = []
    for spec in records.values():
        seen: set[str] = set()
        stack = [victim for victim in spec.preempt if victim in records]
        while stack:
            name = stack.pop()
            if name == spec.name:
                errors.append(
                    ConfError(
                        f"QOS {spec.name}: Preempt={','.join(spec.preempt)}: "
                        "QOS Preemption loop detected",
                        spec.location,
                    )
                )
                break
            if name in seen:
                continue
            seen.add(name)
            stack.extend(victim for victim in records[name].preempt if victim in records)
    return errors


def _record(
    source: SourceFile,
    index: int,
    pairs: tuple[Pair, ...],
    errors: list[ConfError],
    notices: list[ConfNotice],
) -> QosSpec | None:
    name_pair = pairs[0]
    location = source.locate(index, name_pair.key_column)
    if not name_pair.value:
        errors.append(ConfValueError(name_pair.key, "", "a QOS needs a name", location))
        return None
    values: dict[str, Any] = {}
    count = len(errors)
    for pair in pairs[1:]:
        field = _FIELDS.get(pair.key.lower())
        where = source.locate(index, pair.key_column)
        if field is None:
            errors.append(
                ConfKeyError(pair.key, where, record="QOS", suggestion=_suggest(pair.key))
            )
            continue
        if field in _INACTIVE:
            notices.append(
                ConfNotice(f"QOS {name_pair.value}: {field} has no effect in Plurm", where)
            )
            continue
        try:
            values[_ATTRIBUTE[field]] = _PARSERS[field](pair.value)
        except BadValue as error:
            errors.append(
                ConfValueError(
                    field, pair.value, str(error), source.locate(index, pair.value_column)
                )
            )
    if len(errors) > count:
        return None
    return attrs.evolve(QosSpec(name_pair.value, location=location), **values)


def _suggest(key: str) -> str | None:
    import difflib

    found = difflib.get_close_matches(key.lower(), list(_FIELDS), n=1, cutoff=0.6)
    return _FIELDS[found[0]] if found else None


def _qos_preempt_mode(text: str) -> PreemptMode | None:
    if text.strip() == "" or text.strip().lower() == "cluster":
        return None
    mode = parse_preempt_mode(text)
    if mode.gang:
        raise BadValue("GANG is a cluster-wide PreemptMode and cannot be set on a QOS")
    return mode


def _exempt(text: str) -> int | None:
    return None if text.strip() == "-1" else parse_time(text, unit="seconds")


def _flags(text: str) -> frozenset[str]:
    flags = set()
    for word in text.split(","):
        if not word:
            continue
        flag = _FLAG_NAMES.get(word.lower())
        if flag is None:
            raise BadValue(f"unknown QOS flag {word!r}")
        flags.add(flag)
    return frozenset(flags)


def _usage_factor(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise BadValue(f'"{text}" is not a number') from None
    if not value >= 0 or value == float("inf"):
        raise BadValue("UsageFactor must be a finite number, 0 or more")
    return value


_PARSERS = {
    "Priority": lambda text: parse_int(text, bits=32, infinite=False),
    "Preempt": lambda text: tuple(word for word in text.split(",") if word),
    "PreemptMode": _qos_preempt_mode,
    "PreemptExemptTime": _exempt,
    "GraceTime": lambda text: parse_int(text, bits=32, infinite=False),
    "UsageFactor": _usage_factor,
    "Flags": _flags,
}
_ATTRIBUTE = {
    "Priority": "priority",
    "Preempt": "preempt",
    "PreemptMode": "preempt_mode",
    "PreemptExemptTime": "preempt_exempt_time",
    "GraceTime": "grace_time",
    "UsageFactor": "usage_factor",
    "Flags": "flags",
}
