"""Generic resources: ``GresTypes``, ``Gres=`` on node lines and gres.conf beside slurm.conf.

slurm.conf says how many of each generic resource a node has (``Gres=gpu:2``,
``Gres=gpu:a100:4,gpu:v100:2``, counts with Slurm's ``K``/``M``/``G`` suffixes); gres.conf
says what they are, one record a line, in slurm.conf's line syntax::

    AutoDetect=off
    NodeName=gpu[01-04] Name=gpu Type=a100 File=/dev/nvidia[0-3] Cores=0-7
    Name=gpu Count=2

Each record names the resource (``Name``, which must be in ``GresTypes``), its ``Type``, its
``Count`` (one per device file when ``File`` is given, else 1), the device files (a
hostlist-like range) and the ``Cores`` (core indexes on the node) that sit closest to them.
A record whose first key is ``NodeName`` applies to the nodes of its hostlist, one without
to every node. Plurm has no hardware to detect: ``AutoDetect`` other than ``off`` is noted
and ignored, and the counts come from the records.

The rules, as Slurm 22.05 applies them (slurmctld at start, slurmd when it reads gres.conf):

* a ``Gres=`` entry whose name is not in ``GresTypes`` is logged and dropped; so is a
  gres.conf record whose Name is not;
* a node's entries of one name are either all typed or all untyped;
* a ``Count`` that differs from the number of ``File`` entries, a ``Cores`` beyond the node's
  cores, records of one name where some have ``File`` and some not (or ``Type``), are fatal;
* a node whose gres.conf records give fewer of a resource than its ``Gres=`` says is set
  DRAIN (``gres/gpu count reported lower than configured (1 < 2)``), as slurmctld does when
  the node registers; more is logged and the ``Gres=`` count holds.

The result is :class:`GresConfig`: per node, the devices of each resource (index, type,
file, cores) in the order Slurm numbers them.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping

from plurm.conf.model import (
    ConfNotice,
    DownNodesSpec,
    GresConfig,
    GresCount,
    GresDevice,
    GresRecord,
    NodeSpec,
)
from plurm.conf.source import SourceFile, split_logical_lines
from plurm.conf.syntax import Include, Pair, parse_source
from plurm.errors import (
    ConfError,
    ConfKeyError,
    ConfSyntaxError,
    ConfValueError,
    HostlistError,
    SourceLocation,
)
from plurm.hostlist import expand

__all__ = [
    "GresConfig",
    "GresCount",
    "GresDevice",
    "GresRecord",
    "parse_count",
    "parse_node_gres",
    "read_gres_conf",
]

#: gres.conf's keys, by lower-case spelling.
KEYS = {
    key.lower(): key
    for key in (
        "NodeName",
        "Name",
        "Type",
        "Count",
        "File",
        "Files",
        "MultipleFiles",
        "Cores",
        "CPUs",
        "Links",
        "Link",
        "Flags",
        "AutoDetect",
    )
}

#: Slurm's count suffixes (``suffix_mult``): binary by default, decimal with ``B``.
_SUFFIX = re.compile(r"([0-9]+)([kmgtp]?)(i?b?)", re.IGNORECASE)
_POWERS = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5}
#: Slurm keeps GRES counts in 64 bits below its NO_VAL64 marker.
_MAX_COUNT = (1 << 64) - 2


class _Bad(Exception):
    pass


def parse_count(text: str) -> int:
    """A GRES count with Slurm's suffixes: ``K``/``KiB`` 1024, ``KB`` 1000, up to ``P``."""
    match = _SUFFIX.fullmatch(text.strip())
    if match is None or (match.group(3) and not match.group(2)):
        raise _Bad(f"invalid count {text}")
    digits, unit, tail = match.groups()
    base = 1000 if tail.lower() == "b" else 1024
    value: int = int(digits) * base ** _POWERS[unit.lower()]
    if value > _MAX_COUNT:
        raise _Bad(f"invalid count {text}")
    return value


def parse_node_gres(
    text: str, types: tuple[str, ...]
) -> tuple[tuple[GresCount, ...], list[str], str | None]:
    """The entries of a node's ``Gres=`` value: (entries, the names dropped for not being in
    GresTypes, an error). Entries of one name and type add up."""
    entries: dict[tuple[str, str | None], int] = {}
    dropped: list[str] = []
    for word in (w.strip() for w in text.split(",")):
        if not word:
            continue
        word = word.split("(", 1)[0]  # a socket binding, "(S:0-1)", is not modelled
        parts = word.split(":")
        name = parts[0]
        if name.lower() not in types:
            dropped.append(word)
            continue
        if len(parts) > 3:
            return (), dropped, f"invalid GRES specification {word}"
        gtype: str | None = None
        count_text = "1"
        if len(parts) == 3:
            gtype, count_text = parts[1], parts[2]
        elif len(parts) == 2:
            if parts[1][:1].isdigit():
                count_text = parts[1]
            else:
                gtype = parts[1]
        if gtype == "":
            return (), dropped, f"invalid GRES specification {word}"
        try:
            count = parse_count(count_text)
        except _Bad:
            return (), dropped, f"invalid GRES count in {word}"
        key = (name.lower(), gtype)
        entries[key] = entries.get(key, 0) + count
    names = {name for name, _ in entries}
    for name in sorted(names):
        typed = [gtype for n, gtype in entries if n == name]
        if None in typed and len(typed) > 1:
            return (), dropped, f"some {name} GRES have a type while others do not"
    result = tuple(GresCount(name, gtype, count) for (name, gtype), count in entries.items())
    return result, dropped, None


def gres_types(inactive: Mapping[str, str]) -> tuple[str, ...]:
    """GresTypes' names, lower-case, in order."""
    words = inactive.get("GresTypes", "").split(",")
    return tuple(dict.fromkeys(word.strip().lower() for word in words if word.strip()))


def read_gres_conf(
    path: str,
    text: str,
    types: tuple[str, ...],
    nodes: tuple[NodeSpec, ...],
) -> tuple[GresConfig, list[ConfError], list[ConfNotice], tuple[DownNodesSpec, ...]]:
    """Read gres.conf ``text`` (the content of ``path``; empty when there is none) against
    the nodes' ``Gres=``: the resolved configuration, the errors, the notices, and the nodes
    slurmctld would drain for reporting fewer than configured."""
    errors: list[ConfError] = []
    notices: list[ConfNotice] = []
    counts: dict[str, tuple[GresCount, ...]] = {}
    cores_of: dict[str, int] = {}
    for spec in nodes:
        if not spec.gres:
            continue
        entries, dropped, error = parse_node_gres(",".join(spec.gres), types)
        for word in dropped:
            notices.append(
                ConfNotice(
                    f"Invalid GRES configured on node {spec.expression}: {word}", spec.location
                )
            )
        if error is not None:
            errors.append(ConfValueError("Gres", ",".join(spec.gres), error, spec.location))
            continue
        if entries:
            for name in spec.names:
                counts[name] = entries
                cores_of[name] = spec.sockets * spec.cores_per_socket
    records, autodetect = _read_records(path, text, types, errors, notices)
    devices, drains = _devices(records, counts, cores_of, errors, notices)
    config = GresConfig(types, counts, devices, tuple(records), autodetect)
    return config, errors, notices, drains


def _read_records(
    path: str,
    text: str,
    types: tuple[str, ...],
    errors: list[ConfError],
    notices: list[ConfNotice],
) -> tuple[list[GresRecord], str | None]:
    source = split_logical_lines(path, text)
    statements, syntax_errors = parse_source(source)
    errors += syntax_errors
    records: list[GresRecord] = []
    autodetect: str | None = None
    for statement in statements:
        if isinstance(statement, Include):
            where = source.locate(statement.index, statement.column)
            errors.append(ConfSyntaxError("gres.conf does not support Include", where))
            continue
        values: dict[str, tuple[Pair, SourceLocation]] = {}
        for pair in statement.pairs:
            where = source.locate(statement.index, pair.key_column)
            key = KEYS.get(pair.key.lower())
            if key is None:
                found = difflib.get_close_matches(pair.key.lower(), list(KEYS), n=1, cutoff=0.6)
                errors.append(
                    ConfKeyError(
                        pair.key,
                        where,
                        record="gres.conf",
                        suggestion=KEYS[found[0]] if found else None,
                    )
                )
                continue
            values[key] = (pair, source.locate(statement.index, pair.value_column))
        first = KEYS.get(statement.pairs[0].key.lower())
        if "AutoDetect" in values:
            pair, where = values["AutoDetect"]
            word = pair.value.strip().lower()
            if first == "NodeName" or len(values) == 1:
                if word != "off":
                    notices.append(
                        ConfNotice(
                            f"AutoDetect={pair.value}: Plurm detects no devices; "
                            "the counts of gres.conf and slurm.conf hold",
                            where,
                        )
                    )
                autodetect = autodetect or word
            else:
                notices.append(
                    ConfNotice("In-line AutoDetect requires NodeName to take effect", where)
                )
            if len(values) == 1 or (first == "NodeName" and "Name" not in values):
                continue
        record = _record(source, statement.index, values, types, errors, notices)
        if record is not None:
            records.append(record)
    return records, autodetect


def _record(
    source: SourceFile,
    index: int,
    values: dict[str, tuple[Pair, SourceLocation]],
    types: tuple[str, ...],
    errors: list[ConfError],
    notices: list[ConfNotice],
) -> GresRecord | None:
    line = source.whole_line(index)
    if "Name" not in values:
        errors.append(ConfSyntaxError("Invalid GRES data, no type name", line))
        return None
    name_pair, name_where = values["Name"]
    name = name_pair.value.strip().lower()
    nodes: tuple[str, ...] | None = None
    if "NodeName" in values:
        pair, where = values["NodeName"]
        try:
            nodes = tuple(expand(pair.value))
        except HostlistError as error:
            errors.append(ConfValueError("NodeName", pair.value, str(error), where))
            return None
    gtype = values["Type"][0].value.strip() if "Type" in values else None
    files: tuple[str, ...] = ()
    file_key = next((k for k in ("File", "Files", "MultipleFiles") if k in values), None)
    if file_key is not None:
        pair, where = values[file_key]
        if file_key == "MultipleFiles":
            errors.append(ConfValueError(file_key, pair.value, "is not supported by Plurm", where))
            return None
        try:
            files = tuple(expand(pair.value))
        except HostlistError as error:
            errors.append(ConfValueError(file_key, pair.value, str(error), where))
            return None
    count = len(files) or 1
    if "Count" in values:
        pair, where = values["Count"]
        try:
            given = parse_count(pair.value)
        except _Bad as bad:
            errors.append(
                ConfValueError("Count", pair.value, f"Invalid GRES record for {name}, {bad}", where)
            )
            return None
        if files and given != len(files):
            reason = f"Invalid GRES record for {name}, count does not match File value"
            errors.append(ConfValueError("Count", pair.value, reason, where))
            return None
        count = given
    cores: frozenset[int] | None = None
    core_key = "Cores" if "Cores" in values else ("CPUs" if "CPUs" in values else None)
    if core_key is not None:
        pair, where = values[core_key]
        try:
            cores = _core_set(pair.value)
        except _Bad:
            reason = f"Invalid GRES data for {name}, {core_key}={pair.value}"
            errors.append(ConfValueError(core_key, pair.value, reason, where))
            return None
    if name not in types:
        notices.append(ConfNotice(f"Ignoring gres.conf record, invalid name: {name}", name_where))
        return None
    return GresRecord(name, gtype, count, files, cores, nodes, line)


def _core_set(text: str) -> frozenset[int]:
    """``0-3,8,10-11``: core indexes."""
    cores: set[int] = set()
    for part in text.split(","):
        low, _, high = part.strip().partition("-")
        if not low.isdigit() or (high and not high.isdigit()):
            raise _Bad(text)
        first, last = int(low), int(high or low)
        if last < first or last > 1 << 20:
            raise _Bad(text)
        cores.update(range(first, last + 1))
    return frozenset(cores)


def _devices(
    records: list[GresRecord],
    counts: Mapping[str, tuple[GresCount, ...]],
    cores_of: Mapping[str, int],
    errors: list[ConfError],
    notices: list[ConfNotice],
) -> tuple[dict[str, tuple[GresDevice, ...]], tuple[DownNodesSpec, ...]]:
    """Each node's devices, and the DRAIN lines for nodes short of their Gres= counts."""
    by_name: dict[str, list[GresRecord]] = {}
    for record in records:
        by_name.setdefault(record.name, []).append(record)
    devices: dict[str, tuple[GresDevice, ...]] = {}
    drains: list[DownNodesSpec] = []
    reported_once: set[tuple[str, int]] = set()
    for node, entries in counts.items():
        units: list[GresDevice] = []
        for name in dict.fromkeys(entry.name for entry in entries):
            mine = [r for r in by_name.get(name, ()) if r.nodes is None or node in r.nodes]
            if not mine:
                continue  # count only: Slurm tracks no device identity either
            if not _consistent(name, mine, errors, reported_once):
                continue
            configured = sum(entry.count for entry in entries if entry.name == name)
            reported = sum(r.count for r in mine)
            limit = cores_of[node]
            for record in mine:
                if record.cores is not None and max(record.cores, default=0) >= limit:
                    reason = (
                        f"Invalid GRES data for {name}, Cores={_cores_text(record.cores)} "
                        f"(only {limit} Cores are available)"
                    )
                    errors.append(ConfSyntaxError(reason, record.location))
            if reported < configured:
                reason = (
                    f"gres/{name} count reported lower than configured ({reported} < {configured})"
                )
                drains.append(DownNodesSpec((node,), "DRAIN", reason, mine[0].location))
            elif reported > configured:
                notices.append(
                    ConfNotice(
                        f"node {node}: gres/{name} count {reported} in gres.conf is more than "
                        f"the {configured} configured; {configured} are scheduled",
                        mine[0].location,
                    )
                )
            index = 0
            for record in mine:
                for file in record.files:
                    if index < configured:
                        units.append(GresDevice(name, index, record.type, file, record.cores))
                    index += 1
        if units:
            devices[node] = tuple(units)
    return devices, tuple(drains)


def _consistent(
    name: str, mine: list[GresRecord], errors: list[ConfError], reported: set[tuple[str, int]]
) -> bool:
    """Slurm's checks over the records one node reads (slurmd keeps only its own): all or
    none have File, all or none have Type. Each bad record is reported once."""
    checks = (
        ("File", {bool(r.files) for r in mine}),
        ("Type=", {r.type is not None for r in mine}),
    )
    for attribute, kinds in checks:
        if len(kinds) > 1:
            last = mine[-1]
            key = (attribute, id(last))
            if key not in reported:
                reported.add(key)
                message = (
                    f'gres.conf for {name}, some records have "{attribute}" '
                    "specification while others do not"
                )
                errors.append(ConfSyntaxError(message, last.location))
            return False
    return True


def _cores_text(cores: frozenset[int]) -> str:
    ordered = sorted(cores)
    return f"{ordered[0]}-{ordered[-1]}" if len(ordered) > 1 else str(ordered[0])
