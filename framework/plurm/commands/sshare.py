"""sshare: the fair-share tree's shares, usage and factors, as Slurm 22.05 prints them.

Rows follow the association tree, root first; the Account column is indented one space per
level (a user's association is shown with its account's name, one level deeper). Without
``-a`` (or ``-u``) a user sees every account but only their own user associations. Columns
are sacctmgr-style: fixed widths, values cut with ``+``, a space after each; ``-p``/``-P``
separate them with ``|``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import attrs

from plurm.commands.base import SIMULATED, CommandError, CommandResult, Invocation
from plurm.commands.client import ClusterClient
from plurm.commands.options import Option, parse_options
from plurm.model.priority import ShareRow
from plurm.numbers import is_digits

__all__ = ["FIELDS", "format_shares", "run"]

OPTIONS = (
    Option("all", "a", ("all",), takes_value=False),
    Option("accounts", "A", ("accounts",)),
    Option("long", "l", ("long",), takes_value=False),
    Option("noheader", "n", ("noheader",), takes_value=False),
    Option("format", "o", ("format",)),
    Option("parsable", "p", ("parsable",), takes_value=False),
    Option("parsable2", "P", ("parsable2",), takes_value=False),
    Option("users", "u", ("users",)),
    Option("users_only", "U", ("Users",), takes_value=False),
    Option("partition", "m", ("partition",), takes_value=False),
)

#: The TRES Slurm 22.05 tracks by default, in its order (TRESRunMins lists them all).
_TRES = ("cpu", "mem", "energy", "node", "billing", "fs/disk", "vmem", "pages")


@attrs.frozen
class _Field:
    name: str
    #: Negative: left-justified.
    width: int
    kind: str


#: sshare's columns, in its table's order (a -o name matches the first it begins).
FIELDS = (
    _Field("Account", -20, "account"),
    _Field("Cluster", 10, "cluster"),
    _Field("EffectvUsage", 13, "effective"),
    _Field("FairShare", 10, "fairshare"),
    _Field("GrpTRESMins", 30, "grp_tres_mins"),
    _Field("GrpTRESRaw", 30, "grp_tres_raw"),
    _Field("ID", 6, "id"),
    _Field("LevelFS", 10, "level_fs"),
    _Field("NormShares", 11, "norm_shares"),
    _Field("NormUsage", 11, "norm_usage"),
    _Field("Partition", 12, "partition"),
    _Field("RawShares", 10, "raw_shares"),
    _Field("RawUsage", 11, "raw_usage"),
    _Field("TRESRunMins", 30, "tres_run_mins"),
    _Field("User", 10, "user"),
)

_SHORT = "A,User,RawShares,NormShares,RawUsage,Eff,Fairshare"
_LONG_FAIR_TREE = (
    "A,User,RawShares,NormShares,RawUsage,NormUsage,Eff,Fairshare,LevelFS,GrpTRESMins,TRESRunMins"
)
_LONG_CLASSIC = (
    "A,User,RawShares,NormShares,RawUsage,NormUsage,Eff,Fairshare,GrpTRESMins,TRESRunMins"
)


def _fields(text: str) -> list[_Field]:
    found = []
    for word in filter(None, (w.strip() for w in text.split(","))):
        name, percent, size = word.partition("%")
        for field in FIELDS:
            if field.name.lower().startswith(name.lower()):
                if percent and is_digits(size.removeprefix("-")) and int(size):
                    field = attrs.evolve(field, width=int(size))
                found.append(field)
                break
        else:
            raise CommandError(f'sshare: error: Invalid field requested: "{name}"')
    return found


def _double(value: float | None) -> str | None:
    if value is None:
        return None
    return f"{value:f}"


def _value(field: _Field, row: ShareRow, cluster: str) -> str | None:
    kind = field.kind
    if kind == "account":
        return " " * (row.depth - (1 if row.user is not None else 0)) + (
            (" " if row.user is not None else "") + row.account
        )
    if kind == "cluster":
        return cluster
    if kind == "user":
        return row.user
    if kind == "raw_shares":
        if row.parent:
            return "parent"
        return None if row.raw_shares is None else str(row.raw_shares)
    if kind == "norm_shares":
        return _double(row.norm_shares)
    if kind == "raw_usage":
        return str(int(row.raw_usage))
    if kind == "norm_usage":  # blank for the root, as 22.05 prints it
        return None if row.depth == 0 else _double(row.norm_usage)
    if kind == "effective":
        return _double(row.effective_usage)
    if kind == "fairshare":
        return _double(row.fairshare)
    if kind == "level_fs":
        return None if row.parent else _double(row.level_fs)
    if kind == "tres_run_mins":
        minutes = dict(row.tres_run_mins)
        return ",".join(f"{name}={minutes.get(name, 0)}" for name in _TRES)
    return None


def _fixed(text: str | None, field: _Field) -> str:
    width = abs(field.width)
    text = text or ""
    if len(text) > width:
        text = text[: width - 1] + "+"
    return (text.ljust(width) if field.width < 0 else text.rjust(width)) + " "


def format_shares(
    rows: Sequence[ShareRow],
    fields: Sequence[_Field],
    *,
    cluster: str,
    header: bool = True,
    delimiter: str | None = None,
    trailing: bool = True,
) -> str:
    """sshare's lines for ``rows`` (already selected)."""

    def line(cells: list[str | None], cell: Callable[[str | None, _Field], str]) -> str:
        if delimiter is None:
            return "".join(cell(text, f) for text, f in zip(cells, fields, strict=True)) + "\n"
        tail = delimiter if trailing else ""
        return delimiter.join(text or "" for text in cells) + tail + "\n"

    out = []
    if header:
        out.append(line([f.name for f in fields], _fixed))
        if delimiter is None:
            out.append(line(["-" * abs(f.width) for f in fields], _fixed))
    for row in rows:
        out.append(line([_value(f, row, cluster) for f in fields], _fixed))
    return "".join(out)


def _selected(
    rows: Sequence[ShareRow], users: set[str] | None, accounts: set[str] | None
) -> list[ShareRow]:
    """The rows to show: every account (within ``accounts``, and the accounts above them)
    and the user associations of ``users`` (None: every user)."""
    if accounts is None:
        chosen = list(rows)
    else:
        # an account's row and all rows below it, with the path from the root
        chosen = []
        inside: int | None = None
        for row in rows:
            if inside is not None and row.depth <= inside and row.user is None:
                inside = None
            if row.user is None and row.account in accounts and inside is None:
                inside = row.depth
            if inside is not None or row.depth == 0:
                chosen.append(row)
    return [row for row in chosen if row.user is None or users is None or row.user in users]


def run(
    argv: Sequence[str], client: ClusterClient, cwd: Path, invocation: Invocation = SIMULATED
) -> CommandResult:
    found, rest = parse_options("sshare", argv, OPTIONS)
    if rest:
        raise CommandError(f"sshare: error: Unrecognized option: {rest[0]}")
    values = dict(found)
    config = client.config
    fair_tree = "NO_FAIR_TREE" not in config.priority.flags
    if "format" in values:
        fields = _fields(str(values["format"]))
    elif "long" in values:
        fields = _fields(_LONG_FAIR_TREE if fair_tree else _LONG_CLASSIC)
    else:
        fields = _fields(_SHORT)
    report = client.priorities()
    rows = list(report.shares or ())
    if "users" in values:
        users: set[str] | None = set(str(values["users"]).split(","))
    elif "all" in values:
        users = None
    else:
        users = {invocation.user}
    accounts = set(str(values["accounts"]).split(",")) if "accounts" in values else None
    rows = _selected(rows, users, accounts)
    if "users_only" in values:
        rows = [row for row in rows if row.user is not None]
    delimiter = "|" if ("parsable" in values or "parsable2" in values) else None
    text = format_shares(
        rows,
        fields,
        cluster=config.cluster_name,
        header="noheader" not in values,
        delimiter=delimiter,
        trailing="parsable2" not in values,
    )
    return CommandResult(0, text)
