"""The values of PBS's preemption settings: booleans, counts, ``preempt_prio``,
``preempt_order`` and soft run limits, each checked and turned into a typed value.

The parsers here know nothing of files: they raise :class:`BadValue` with a reason and the
0-based offset in the value where the problem is, and the caller (config, qmgr) turns it into
a located :class:`~plurm.errors.ConfValueError`.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping

import attrs

from plurm.numbers import is_digits

__all__ = [
    "LEVELS",
    "BadValue",
    "OrderRange",
    "PreemptOrder",
    "SoftLimits",
    "parse_bool",
    "parse_count",
    "parse_preempt_order",
    "parse_preempt_prio",
    "parse_soft_limits",
]

#: The preemption levels Plurm models (PBS's names). ``fairshare`` and ``starving_jobs`` are
#: refused: Plurm models no fairshare usage (no job could ever be over its share) and not
#: PBS's starving jobs (help_starving_jobs, max_starve).
LEVELS = ("express_queue", "normal_jobs", "queue_softlimits", "server_softlimits")
_REFUSED_LEVELS = {
    "fairshare": "Plurm models no fairshare usage, so the fairshare preemption level cannot be "
    "used; remove it from preempt_prio",
    "starving_jobs": "Plurm does not model PBS's starving jobs (help_starving_jobs, "
    "max_starve), so the starving_jobs preemption level cannot be used; remove it from "
    "preempt_prio",
}
#: The largest count accepted (PBS keeps these in a C int).
MAX_COUNT = 2**31 - 1


class BadValue(Exception):
    """A value PBS would refuse: ``reason`` says why, ``offset`` (0-based) where."""

    def __init__(self, reason: str, offset: int = 0) -> None:
        super().__init__(reason)
        self.reason = reason
        self.offset = offset


_TRUE = {"true", "t", "yes", "y", "1"}
_FALSE = {"false", "f", "no", "n", "0"}


def parse_bool(text: str) -> bool:
    """PBS's booleans: true/false, t/f, yes/no, y/n, 1/0, in any case."""
    word = text.strip().lower()
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    raise BadValue(f"{text.strip()!r} is not a boolean (expected true or false)")


def parse_count(text: str, *, minimum: int = 0) -> int:
    """A decimal count of ASCII digits, at least ``minimum``."""
    word = text.strip()
    if not is_digits(word) or int(word) > MAX_COUNT:
        raise BadValue(f"{word!r} is not a whole number from {minimum} to {MAX_COUNT}")
    value = int(word)
    if value < minimum:
        raise BadValue(f"{value} is below the minimum of {minimum}")
    return value


def _pieces(text: str, separator: str) -> list[tuple[int, str]]:
    """``text`` split at ``separator``: (offset of the stripped piece, piece)."""
    out: list[tuple[int, str]] = []
    start = 0
    for piece in text.split(separator):
        stripped = piece.strip()
        lead = len(piece) - len(piece.lstrip())
        out.append((start + lead, stripped))
        start += len(piece) + len(separator)
    return out


def parse_preempt_prio(text: str) -> tuple[frozenset[str], ...]:
    """``preempt_prio``: a comma list of levels, highest first; one element may join several
    statuses with ``+`` (a job must have all of them to be at that level)."""
    levels: list[frozenset[str]] = []
    for offset, element in _pieces(text, ","):
        if not element:
            raise BadValue("empty preemption level in the list", offset)
        names: list[str] = []
        for inner, name in _pieces(element, "+"):
            where = offset + inner
            word = name.lower()
            if word in _REFUSED_LEVELS:
                raise BadValue(_REFUSED_LEVELS[word], where)
            if word not in LEVELS:
                near = difflib.get_close_matches(word, LEVELS, n=1, cutoff=0.6)
                hint = f"; did you mean {near[0]!r}?" if near else ""
                known = ", ".join(LEVELS)
                raise BadValue(f"unknown preemption level {name!r} (known: {known}){hint}", where)
            if word in names:
                raise BadValue(f"{word} is named twice in one level", where)
            names.append(word)
        level = frozenset(names)
        if level in levels:
            raise BadValue(f"the level {element!r} is listed twice", offset)
        levels.append(level)
    return tuple(levels)


@attrs.frozen
class OrderRange:
    """The methods tried, in order, for a job with ``low``..``high`` percent (inclusive) of
    its requested walltime left."""

    methods: str
    high: int
    low: int


@attrs.frozen
class PreemptOrder:
    """``preempt_order``: the method ladder by percent of requested walltime left."""

    ranges: tuple[OrderRange, ...]

    def methods(self, percent_left: int | None) -> str:
        """The letters tried for a job with ``percent_left`` (None: a job without a
        walltime, which uses the first range)."""
        if percent_left is None:
            return self.ranges[0].methods
        for window in self.ranges:
            if window.low <= percent_left <= window.high:
                return window.methods
        return self.ranges[-1].methods

    def __str__(self) -> str:
        parts = [self.ranges[0].methods]
        for window in self.ranges[1:]:
            parts += [str(window.high), window.methods]
        return " ".join(parts)


_ORDER_TOKEN = re.compile(r"\S+")


def parse_preempt_order(text: str) -> PreemptOrder:
    """``preempt_order``: method letters (S, C, R, D), optionally followed by a percentage
    and more letters, the percentages strictly falling: ``"SCR 80 SC 50 S"``."""
    tokens = [(match.start(), match.group()) for match in _ORDER_TOKEN.finditer(text)]
    if not tokens:
        raise BadValue("empty preempt_order (expected method letters such as SCR)")
    groups: list[tuple[int, str]] = []  # (high bound, letters)
    high = 100
    expect_letters = True
    for offset, token in tokens:
        if expect_letters:
            if is_digits(token):
                raise BadValue(f"expected method letters, found the number {token}", offset)
            letters = token.upper()
            bad = next((c for c in letters if c not in "SCRD"), None)
            if bad is not None:
                raise BadValue(
                    f"{bad!r} is not a preemption method (S suspend, C checkpoint, R requeue, "
                    "D delete)",
                    offset + letters.index(bad),
                )
            twice = next((c for c in letters if letters.count(c) > 1), None)
            if twice is not None:
                raise BadValue(f"method {twice} is listed twice in {token!r}", offset)
            groups.append((high, letters))
        else:
            if not is_digits(token):
                raise BadValue(f"expected a percentage, found {token!r}", offset)
            percent = int(token)
            if not 0 < percent < high:
                raise BadValue(
                    f"percentage {percent} must be above 0 and below the one before it ({high})",
                    offset,
                )
            high = percent
        expect_letters = not expect_letters
    if expect_letters:
        raise BadValue("a percentage must be followed by method letters", tokens[-1][0])
    ranges = []
    for index, (top, letters) in enumerate(groups):
        low = groups[index + 1][0] + 1 if index + 1 < len(groups) else 0
        ranges.append(OrderRange(letters, top, low))
    return PreemptOrder(tuple(ranges))


#: The default ``preempt_order``.
DEFAULT_ORDER = parse_preempt_order("SCR")


@attrs.frozen
class SoftLimits:
    """A ``max_run_soft`` value: how many jobs may run before the entity's jobs are over
    their soft limit. ``overall`` is ``[o:PBS_ALL=N]``; ``generic_*`` is
    ``[u|g|p:PBS_GENERIC=N]`` (every user, group or project); the mappings name one entity.
    A PBS project is a Slurm account."""

    overall: int | None = None
    generic_user: int | None = None
    users: Mapping[str, int] = attrs.field(factory=dict)
    generic_group: int | None = None
    groups: Mapping[str, int] = attrs.field(factory=dict)
    generic_project: int | None = None
    projects: Mapping[str, int] = attrs.field(factory=dict)

    def empty(self) -> bool:
        """True when no limit is set."""
        return self == SoftLimits()

    def user_limit(self, user: str) -> int | None:
        """The soft limit on ``user``'s running jobs (an individual limit wins)."""
        return self.users.get(user, self.generic_user)

    def group_limit(self, group: str) -> int | None:
        """The soft limit on ``group``'s running jobs."""
        return self.groups.get(group, self.generic_group)

    def project_limit(self, project: str | None) -> int | None:
        """The soft limit on ``project``'s (a Slurm account's) running jobs."""
        if project is None:
            return self.generic_project
        return self.projects.get(project, self.generic_project)


_ENTRY = re.compile(r"\[\s*([ougpOUGP])\s*:\s*([^=\]\s]+)\s*=\s*([^\]\s]*)\s*\]")


def parse_soft_limits(text: str, base: SoftLimits | None = None) -> SoftLimits:
    """A limit value: comma-separated ``[o:PBS_ALL=N]``, ``[u:PBS_GENERIC=N]``,
    ``[u:NAME=N]``, ``[g:...]``, ``[p:...]``. With ``base`` (``+=``), the entries are added
    to it (an entry for the same entity replaces the old one)."""
    limits = base if base is not None else SoftLimits()
    fields: dict[str, object] = attrs.asdict(limits, recurse=False)
    fields = {k: dict(v) if isinstance(v, Mapping) else v for k, v in fields.items()}
    pieces = _pieces(text, ",")
    if not text.strip():
        raise BadValue("empty limit (expected entries such as [u:PBS_GENERIC=4])")
    for offset, piece in pieces:
        match = _ENTRY.fullmatch(piece)
        if match is None:
            raise BadValue(
                f"{piece!r} is not a limit entry (expected [o:PBS_ALL=N], [u:PBS_GENERIC=N], "
                "[u:NAME=N], [g:NAME=N] or [p:NAME=N])",
                offset,
            )
        kind, name, number = match.group(1).lower(), match.group(2), match.group(3)
        try:
            count = parse_count(number)
        except BadValue as error:
            raise BadValue(error.reason, offset + match.start(3)) from None
        if kind == "o":
            if name != "PBS_ALL":
                raise BadValue(f"an overall limit names PBS_ALL, not {name!r}", offset)
            fields["overall"] = count
            continue
        if name == "PBS_ALL":
            raise BadValue(f"PBS_ALL goes with o:, not {kind}:", offset)
        table = {"u": ("generic_user", "users"), "g": ("generic_group", "groups")}.get(
            kind, ("generic_project", "projects")
        )
        if name == "PBS_GENERIC":
            fields[table[0]] = count
        else:
            entities = fields[table[1]]
            assert isinstance(entities, dict)
            entities[name] = count
    return SoftLimits(**fields)  # type: ignore[arg-type]
