"""accounts.conf: the accounts and users real Slurm keeps in slurmdbd, written as a file.

Real Slurm defines them with ``sacctmgr add account NAME ...`` and ``sacctmgr add user NAME
account=...``; each (user, account) pair is an *association*. Plurm reads the same fields
from ``accounts.conf`` beside slurm.conf, in slurm.conf's line syntax, one record a line::

    Account=physics QOS=normal,high DefaultQOS=normal
    Account=theory Parent=physics
    User=alice Account=theory,physics DefaultAccount=theory
    User=bob Account=physics QOS=normal
    User=carol Account=physics AdminLevel=Operator
    Account=biology Coordinators=carol
    Account=chem Fairshare=30
    User=dave Account=chem Fairshare=parent

What ``sacctmgr add cluster`` creates always exists: the account ``root`` (its QOS list is
``normal``) and the user ``root`` in it, with ``root`` as its default account. An account's
``Parent`` defaults to ``root``; its ``QOS`` and ``DefaultQOS`` default to its parent's. A
user's associations take the ``QOS`` and ``DefaultQOS`` of its line, else those of the
account; a default QOS must be in the association's QOS list, as sacctmgr requires. A user
may appear on several lines (as ``sacctmgr add user`` may be run again with another
account); its default account is the ``DefaultAccount`` given, else the first account it
was added to. Names are stored lower-case, as slurmdbd stores them. ``AdminLevel`` (``None``,
``Operator``, ``Administrator``; sacctmgr also takes ``Admin``) is the user's, as
``sacctmgr modify user NAME set adminlevel=...`` sets it: an operator or administrator may
act on every job, as root may. ``Coordinators`` (an account's field, as ``sacctmgr add
coordinator account=NAME names=USERS`` sets them, and ``sacctmgr list account
withcoordinator`` shows them) are users each defined on a User= line; a coordinator of an
account coordinates its sub-accounts too. ``Fairshare`` (sacctmgr also takes ``Shares``) is the
association's shares among its siblings for fair-share priority (default 1), or ``parent``:
its usage and shares count as its parent account's; a user line's applies to each of its
associations.

Limits, as sacctmgr's association fields (enforced with ``AccountingStorageEnforce=limits``,
see :mod:`plurm.controller.limits`), on account and user lines::

    Account=chem GrpTRES=cpu=64,node=8 GrpJobs=20 MaxJobs=4 MaxWall=2-00:00:00
    User=dave Account=chem MaxSubmitJobs=10 GrpTRES=cpu=16

``GrpTRES`` (``cpu=`` and ``node=``) and ``GrpJobs`` bound what the running jobs of an
association hold together: on an account line, those of every association below it too; on
a user line, those of each of its associations. ``MaxJobs`` (running jobs),
``MaxSubmitJobs`` (jobs pending or running) and ``MaxWall`` (each job's time limit, in
Slurm's time forms) hold for each association; an account's are the default of the
associations below it that do not set their own, as slurmdbd propagates them. ``-1`` means
no limit.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection

import attrs

from plurm.conf.model import NO_LIMITS, AccountSpec, Association, AssocLimits
from plurm.conf.source import SourceFile, split_logical_lines
from plurm.conf.syntax import Include, Pair, parse_source
from plurm.conf.values import BadValue, parse_time
from plurm.errors import ConfError, ConfKeyError, ConfSyntaxError, ConfValueError, SourceLocation
from plurm.numbers import is_digits

__all__ = ["ADMIN_LEVELS", "ROOT", "read_accounts"]

#: The account, and the user, ``sacctmgr add cluster`` creates.
ROOT = "root"

#: sacctmgr's association limits Plurm reads.
_LIMIT_FIELDS = ("GrpTRES", "GrpJobs", "MaxJobs", "MaxSubmitJobs", "MaxWall")
_ACCOUNT_FIELDS = (
    "Parent",
    "QOS",
    "DefaultQOS",
    "Coordinators",
    "Fairshare",
    "Shares",
    "Priority",
    *_LIMIT_FIELDS,
)
_USER_FIELDS = (
    "Account",
    "DefaultAccount",
    "QOS",
    "DefaultQOS",
    "AdminLevel",
    "Fairshare",
    "Shares",
    "Priority",
    *_LIMIT_FIELDS,
)
#: The TRES GrpTRES may bound, with the AssocLimits field each sets.
_GRP_TRES = {"cpu": "grp_cpus", "node": "grp_nodes"}
#: The largest count sacctmgr takes for a job limit (32 bits below its NO_VAL markers).
_MAX_COUNT = 0xFFFF_FFFD
#: The largest Fairshare sacctmgr takes (a 32-bit value below its NO_VAL markers).
_MAX_SHARES = 0xFFFF_FFFD
#: sacctmgr's AdminLevel words, as slurmdbd stores them.
ADMIN_LEVELS = {
    "none": "None",
    "operator": "Operator",
    "admin": "Administrator",
    "administrator": "Administrator",
}


def read_accounts(
    path: str, text: str, qos_names: Collection[str]
) -> tuple[
    tuple[AccountSpec, ...],
    tuple[Association, ...],
    dict[str, str],
    dict[str, str],
    list[ConfError],
]:
    """The accounts, associations, default accounts and admin levels (user -> ``Operator``
    or ``Administrator``) ``text`` (the content of ``path``) defines, with the implicit root
    ones; QOS names must be among ``qos_names``."""
    source = split_logical_lines(path, text)
    statements, syntax_errors = parse_source(source)
    errors: list[ConfError] = list(syntax_errors)
    accounts: dict[str, AccountSpec] = {ROOT: AccountSpec(ROOT, parent=None, qos=("normal",))}
    users: list[tuple[str, dict[str, str], SourceLocation]] = [
        (ROOT, {"account": ROOT}, SourceLocation(path, 0))
    ]
    admins: dict[str, str] = {}
    for statement in statements:
        if isinstance(statement, Include):
            where = source.locate(statement.index, statement.column)
            errors.append(ConfSyntaxError("accounts.conf does not support Include", where))
            continue
        first = statement.pairs[0]
        kind = first.key.lower()
        where = source.locate(statement.index, first.key_column)
        if kind not in ("account", "user"):
            errors.append(
                ConfSyntaxError(
                    f"an accounts.conf line starts with Account= or User=, not {first.key}=",
                    where,
                )
            )
            continue
        fields = _ACCOUNT_FIELDS if kind == "account" else _USER_FIELDS
        values = _fields(source, statement.index, statement.pairs[1:], fields, errors)
        if "shares" in values:
            values.setdefault("fairshare", values.pop("shares"))
        shares = _shares(values.get("fairshare"), where, errors)
        priority = _priority(values.get("priority"), where, errors)
        limits = _limits(values, where, errors)
        name = first.value.lower()
        if not name:
            errors.append(ConfValueError(first.key, "", "a name is needed", where))
        elif kind == "user":
            level = values.get("adminlevel")
            if level is not None and level not in ADMIN_LEVELS:
                errors.append(
                    ConfValueError(
                        "AdminLevel", level, "not None, Operator or Administrator", where
                    )
                )
            elif level is not None and ADMIN_LEVELS[level] != "None":
                admins[name] = ADMIN_LEVELS[level]
            elif level is not None:
                admins.pop(name, None)
            if "account" not in values:
                errors.append(ConfError(f"user {name}: Account= is needed", where))
            else:
                users.append((name, values, where))
        elif name in accounts and name != ROOT:
            errors.append(ConfError(f"account {name} is defined twice", where))
        else:
            accounts[name] = attrs.evolve(
                _account(name, values, where),
                fairshare=shares,
                priority=priority,
                limits=limits,
            )
    _check_accounts(accounts, qos_names, errors)
    _check_coordinators(accounts, {user for user, _, _ in users}, errors)
    associations, defaults = _associations(users, accounts, qos_names, errors)
    return tuple(accounts.values()), associations, defaults, admins, errors


def _fields(
    source: SourceFile,
    index: int,
    pairs: tuple[Pair, ...],
    fields: tuple[str, ...],
    errors: list[ConfError],
) -> dict[str, str]:
    """The line's fields by lower-case name, values lower-cased; unknown keys are errors."""
    known = {field.lower(): field for field in fields}
    values = {}
    for pair in pairs:
        key = pair.key.lower()
        if key not in known:
            found = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
            where = source.locate(index, pair.key_column)
            suggestion = known[found[0]] if found else None
            errors.append(ConfKeyError(pair.key, where, suggestion=suggestion))
            continue
        values[key] = pair.value.lower()
    return values


def _shares(text: str | None, where: SourceLocation, errors: list[ConfError]) -> int | None:
    """A Fairshare value: a count of shares, or ``parent`` (None); 1 when not given."""
    if text is None:
        return 1
    if text == "parent":
        return None
    if is_digits(text) and int(text) <= _MAX_SHARES:
        return int(text)
    errors.append(ConfValueError("Fairshare", text, "not a number of shares or parent", where))
    return 1


def _priority(text: str | None, where: SourceLocation, errors: list[ConfError]) -> int | None:
    """An association's Priority (None: not set, or ``-1``, sacctmgr's "clear")."""
    return None if text is None else _count("Priority", text, where, errors)


def _count(key: str, text: str, where: SourceLocation, errors: list[ConfError]) -> int | None:
    """A limit's count; ``-1`` (sacctmgr's "clear") is no limit."""
    if text == "-1":
        return None
    if is_digits(text) and int(text) <= _MAX_COUNT:
        return int(text)
    errors.append(ConfValueError(key, text, "not a count (or -1 for no limit)", where))
    return None


def _limits(values: dict[str, str], where: SourceLocation, errors: list[ConfError]) -> AssocLimits:
    """The limits a line sets (lower-cased fields, as :func:`_fields` gives them)."""
    found: dict[str, int | None] = {}
    for key, field in (
        ("grpjobs", "grp_jobs"),
        ("maxjobs", "max_jobs"),
        ("maxsubmitjobs", "max_submit_jobs"),
    ):
        if key in values:
            found[field] = _count(key, values[key], where, errors)
    if "maxwall" in values:
        try:
            found["max_wall"] = parse_time(values["maxwall"], unit="minutes")
        except BadValue:
            errors.append(ConfValueError("MaxWall", values["maxwall"], "not a time limit", where))
    for item in filter(None, values.get("grptres", "").split(",")):
        name, _, count = item.partition("=")
        if name not in _GRP_TRES or not count:
            errors.append(
                ConfValueError(
                    "GrpTRES", item, "not cpu=COUNT or node=COUNT (the TRES Plurm limits)", where
                )
            )
            continue
        found[_GRP_TRES[name]] = _count("GrpTRES", count, where, errors)
    return AssocLimits(**found) if found else NO_LIMITS


def _propagated(accounts: dict[str, AccountSpec], account: str, own: AssocLimits) -> AssocLimits:
    """A user association's limits: its own Grp*, and each Max* its own else that of the
    nearest account above that sets it."""
    found = {}
    for field in ("max_jobs", "max_submit_jobs", "max_wall"):
        if getattr(own, field) is not None:
            continue
        seen: set[str] = set()
        current: str | None = account
        while current is not None and current in accounts and current not in seen:
            seen.add(current)
            value = getattr(accounts[current].limits, field)
            if value is not None:
                found[field] = value
                break
            current = accounts[current].parent
    return attrs.evolve(own, **found) if found else own


def _names(text: str | None) -> tuple[str, ...] | None:
    return None if text is None else tuple(word for word in text.split(",") if word)


def _account(name: str, values: dict[str, str], where: SourceLocation) -> AccountSpec:
    parent = None if name == ROOT else values.get("parent", ROOT)
    qos = _names(values.get("qos"))
    coordinators = _names(values.get("coordinators")) or ()
    return AccountSpec(name, parent, qos, values.get("defaultqos"), coordinators, location=where)


def _check_coordinators(
    accounts: dict[str, AccountSpec], users: set[str], errors: list[ConfError]
) -> None:
    """A coordinator must be a user slurmdbd knows (one with a User= line)."""
    for spec in accounts.values():
        for user in spec.coordinators:
            if user not in users:
                errors.append(
                    ConfError(
                        f"account {spec.name}: coordinator {user} is not a user", spec.location
                    )
                )


def _check_accounts(
    accounts: dict[str, AccountSpec], qos_names: Collection[str], errors: list[ConfError]
) -> None:
    for spec in accounts.values():
        if spec.parent is not None and spec.parent not in accounts:
            errors.append(
                ConfError(f"account {spec.name}: unknown Parent {spec.parent}", spec.location)
            )
        seen = {spec.name}
        parent = spec.parent
        while parent in accounts and parent is not None:
            if parent in seen:
                errors.append(ConfError(f"account {spec.name}: Parent loop", spec.location))
                break
            seen.add(parent)
            parent = accounts[parent].parent
        for qos in (*(spec.qos or ()), *([spec.default_qos] if spec.default_qos else [])):
            if qos not in qos_names:
                errors.append(ConfError(f"account {spec.name}: unknown QOS {qos}", spec.location))


def _inherited(accounts: dict[str, AccountSpec], name: str) -> tuple[tuple[str, ...], str | None]:
    """An account's QOS list and default QOS, from the nearest account up the tree that
    sets each."""
    qos: tuple[str, ...] | None = None
    default: str | None = None
    seen: set[str] = set()
    current: str | None = name
    while current is not None and current in accounts and current not in seen:
        seen.add(current)
        spec = accounts[current]
        qos = spec.qos if qos is None else qos
        default = spec.default_qos if default is None else default
        current = spec.parent
    return qos if qos is not None else ("normal",), default


def _inherited_priority(
    accounts: dict[str, AccountSpec], account: str, own: int | None
) -> int | None:
    """An association's Priority: its own, else the nearest account's above it that sets
    one, as slurmdbd hands it down."""
    current: str | None = account
    while own is None and current is not None and current in accounts:
        own = accounts[current].priority
        current = accounts[current].parent
    return own


def _associations(
    users: list[tuple[str, dict[str, str], SourceLocation]],
    accounts: dict[str, AccountSpec],
    qos_names: Collection[str],
    errors: list[ConfError],
) -> tuple[tuple[Association, ...], dict[str, str]]:
    associations: dict[tuple[str, str], Association] = {}
    defaults: dict[str, str] = {}
    chosen: dict[str, tuple[str, SourceLocation]] = {}  # explicit DefaultAccount per user
    for user, values, where in users:
        for account in _names(values["account"]) or ():
            if account not in accounts:
                errors.append(ConfError(f"user {user}: unknown account {account}", where))
                continue
            qos, default = _inherited(accounts, account)
            own = _names(values.get("qos"))
            association = Association(
                user,
                account,
                own if own is not None else qos,
                values.get("defaultqos", default),
                fairshare=_shares(values.get("fairshare"), where, []),
                priority=_inherited_priority(
                    accounts, account, _priority(values.get("priority"), where, [])
                ),
                limits=_propagated(accounts, account, _limits(values, where, [])),  # (reported)
            )
            for name in (*association.qos, *filter(None, [association.default_qos])):
                if name not in qos_names:
                    errors.append(ConfError(f"user {user}: unknown QOS {name}", where))
            if association.default_qos not in (None, *association.qos):
                errors.append(
                    ConfError(
                        f"user {user}, account {account}: DefaultQOS "
                        f"{association.default_qos} is not in its QOS list",
                        where,
                    )
                )
            associations[(user, account)] = association
            defaults.setdefault(user, account)
        wanted = values.get("defaultaccount")
        if wanted is not None:
            if chosen.setdefault(user, (wanted, where))[0] != wanted:
                errors.append(ConfError(f"user {user}: two DefaultAccount values", where))
            defaults[user] = wanted
    for user, (account, where) in chosen.items():
        if (user, account) not in associations:
            errors.append(
                ConfError(
                    f"user {user}: DefaultAccount {account} is not one of its accounts", where
                )
            )
    return tuple(associations.values()), defaults
