"""The values of LSF's preemption keys: PREEMPTION, RUNLIMIT, the NO_PREEMPT_* guards,
counts and keyword lists, each checked and turned into a typed value.

The parsers know nothing of files: they raise :class:`BadValue` with a reason and the
0-based offset in the value where the problem is; the caller turns it into a located
:class:`~plurm.errors.ConfValueError`.
"""

from __future__ import annotations

import difflib
import re

import attrs

from plurm.numbers import is_digits

__all__ = [
    "BadValue",
    "Guard",
    "Preemption",
    "Target",
    "parse_count",
    "parse_guard",
    "parse_job_controls",
    "parse_keywords",
    "parse_preemption",
    "parse_run_limit",
]

#: The largest count or minute value accepted (LSF keeps these in a C int).
MAX_COUNT = 2**31 - 1


class BadValue(Exception):
    """A value LSF would refuse: ``reason`` says why, ``offset`` (0-based) where."""

    def __init__(self, reason: str, offset: int = 0) -> None:
        super().__init__(reason)
        self.reason = reason
        self.offset = offset


def parse_count(text: str, *, minimum: int = 0) -> int:
    """A decimal count of ASCII digits, at least ``minimum``."""
    if not is_digits(text) or int(text) > MAX_COUNT:
        raise BadValue(f"{text!r} is not a whole number from {minimum} to {MAX_COUNT}")
    if int(text) < minimum:
        raise BadValue(f"{text} is below the minimum of {minimum}")
    return int(text)


@attrs.frozen
class Guard:
    """NO_PREEMPT_RUN_TIME or NO_PREEMPT_FINISH_TIME: ``minutes``, or ``percent`` of the
    job's run limit (exactly one is set)."""

    minutes: int | None = None
    percent: int | None = None

    def seconds(self, run_limit: int | None) -> int | None:
        """The guard in seconds for a job whose run limit is ``run_limit`` seconds; None
        when it is a percentage and the job has no run limit to take it of."""
        if self.minutes is not None:
            return self.minutes * 60
        if run_limit is None or self.percent is None:
            return None
        return run_limit * self.percent // 100

    def __str__(self) -> str:
        return f"{self.percent}%" if self.percent is not None else str(self.minutes)


def parse_guard(text: str) -> Guard:
    """``MINUTES`` or ``PCT%`` (0 to 100)."""
    if text.endswith("%"):
        number = text[:-1].strip()
        if not is_digits(number) or int(number) > 100:
            raise BadValue(f"{text!r} is not a percentage from 0% to 100%")
        return Guard(percent=int(number))
    if not is_digits(text) or int(text) > MAX_COUNT:
        raise BadValue(f"{text!r} is not a number of minutes or a percentage (such as 50%)")
    return Guard(minutes=int(text))


_LIMIT = re.compile(r"(?:(\d+):)?(\d+)(?:/\S+)?")


def _limit_seconds(token: str, offset: int) -> int:
    match = _LIMIT.fullmatch(token)
    if match is None or len(token) > 40:
        raise BadValue(f"{token!r} is not a run limit ([hour:]minute[/host])", offset)
    hours = int(match.group(1) or 0)
    minutes = int(match.group(2))
    if match.group(1) is not None and minutes >= 60:
        raise BadValue(f"{token!r}: minutes after hours must be below 60", offset)
    total = hours * 60 + minutes
    if total > MAX_COUNT // 60:
        raise BadValue(f"{token!r} is too long a run limit", offset)
    return total * 60


def parse_run_limit(text: str) -> tuple[int | None, int]:
    """RUNLIMIT: ``[default] maximum``, each ``[hour:]minute[/host]``; (default or None,
    maximum), in seconds."""
    tokens = [(m.start(), m.group()) for m in re.finditer(r"\S+", text)]
    if not 1 <= len(tokens) <= 2:
        raise BadValue("RUNLIMIT takes one value (the maximum) or two (default and maximum)")
    values = [_limit_seconds(token, offset) for offset, token in tokens]
    if len(values) == 1:
        return None, values[0]
    if values[0] > values[1]:
        raise BadValue("the default run limit is above the maximum", tokens[0][0])
    return values[0], values[1]


def parse_keywords(text: str, known: tuple[str, ...], key: str) -> frozenset[str]:
    """A blank-separated list of keywords from ``known`` (any case)."""
    words: set[str] = set()
    for match in re.finditer(r"\S+", text):
        word = match.group().upper()
        if word not in known:
            near = difflib.get_close_matches(word, known, n=1, cutoff=0.6)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            raise BadValue(
                f"{match.group()!r} is not a {key} keyword (known: {', '.join(known)}){hint}",
                match.start(),
            )
        words.add(word)
    return frozenset(words)


@attrs.frozen
class Target:
    """One queue of a PREEMPTIVE list and its preference (``+N``; 0 when not given)."""

    queue: str
    preference: int = 0


@attrs.frozen
class Preemption:
    """A parsed PREEMPTION value; ``*_at`` are the offsets of each listed queue name (for
    the caller's "no such queue" check)."""

    preemptive: bool = False
    targets: tuple[Target, ...] = ()
    preemptable: bool = False
    preemptable_by: tuple[str, ...] = ()
    targets_at: tuple[int, ...] = ()
    preemptable_by_at: tuple[int, ...] = ()


_KEYWORD = re.compile(r"\s*([A-Za-z_]+)\s*")
_ENTRY = re.compile(r"([^\s+\[\]]+)(?:\+(\S*))?")
_PREEMPTION_WORDS = ("PREEMPTIVE", "PREEMPTABLE")


def _bracketed(text: str, pos: int) -> tuple[str, int, int]:
    """The list inside ``[...]`` at ``text[pos]``: (inner text, its offset, position after)."""
    end = text.find("]", pos + 1)
    if end == -1:
        raise BadValue("unclosed '[' (a list of queues goes in one set of brackets)", pos)
    inner = text[pos + 1 : end]
    nested = inner.find("[")
    if nested != -1:
        raise BadValue("a '[' inside a list", pos + 1 + nested)
    return inner, pos + 1, end + 1


def parse_preemption(text: str) -> Preemption:
    """PREEMPTION: ``PREEMPTIVE[[queue[+pref] ...]]`` and/or ``PREEMPTABLE[[queue ...]]``."""
    pos = 0
    seen: dict[str, object] = {}
    if not text.strip():
        raise BadValue("empty PREEMPTION (expected PREEMPTIVE and/or PREEMPTABLE)")
    while pos < len(text):
        match = _KEYWORD.match(text, pos)
        if match is None:
            offset = pos + len(text[pos:]) - len(text[pos:].lstrip())
            raise BadValue(f"expected PREEMPTIVE or PREEMPTABLE, found {text[offset]!r}", offset)
        word = match.group(1).upper()
        if word not in _PREEMPTION_WORDS:
            near = difflib.get_close_matches(word, _PREEMPTION_WORDS, n=1, cutoff=0.6)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            raise BadValue(
                f"{match.group(1)!r} is not PREEMPTIVE or PREEMPTABLE{hint}", match.start(1)
            )
        if word in seen:
            raise BadValue(f"{word} is given twice", match.start(1))
        pos = match.end()
        entries: list[tuple[int, str, str | None]] = []
        if pos < len(text) and text[pos] == "[":
            inner, inner_at, pos = _bracketed(text, pos)
            for found in re.finditer(r"\S+", inner):
                entry = _ENTRY.fullmatch(found.group())
                at = inner_at + found.start()
                if entry is None:
                    raise BadValue(f"{found.group()!r} is not a queue name", at)
                entries.append((at, entry.group(1), entry.group(2)))
            if not entries:
                raise BadValue(f"empty list after {word} (leave the brackets out for all)", pos - 1)
        seen[word] = entries
    targets: list[Target] = []
    targets_at: list[int] = []
    for at, name, preference in seen.get("PREEMPTIVE", []):  # type: ignore[attr-defined]
        level = 0
        if preference is not None:
            if not is_digits(preference) or not 1 <= int(preference) <= MAX_COUNT:
                raise BadValue(
                    f"preference +{preference} is not a positive whole number", at + len(name)
                )
            level = int(preference)
        if any(target.queue == name for target in targets):
            raise BadValue(f"queue {name} is listed twice", at)
        targets.append(Target(name, level))
        targets_at.append(at)
    by: list[str] = []
    by_at: list[int] = []
    for at, name, preference in seen.get("PREEMPTABLE", []):  # type: ignore[attr-defined]
        if preference is not None:
            raise BadValue("a PREEMPTABLE list takes no preference levels", at + len(name))
        if name in by:
            raise BadValue(f"queue {name} is listed twice", at)
        by.append(name)
        by_at.append(at)
    return Preemption(
        "PREEMPTIVE" in seen,
        tuple(targets),
        "PREEMPTABLE" in seen,
        tuple(by),
        tuple(targets_at),
        tuple(by_at),
    )


_CONTROLS = ("SUSPEND", "RESUME", "TERMINATE")


def parse_job_controls(text: str) -> dict[str, str]:
    """JOB_CONTROLS: ``SUSPEND[action] RESUME[action] TERMINATE[action]`` -> actions."""
    actions: dict[str, str] = {}
    pos = 0
    while text[pos:].strip():
        match = _KEYWORD.match(text, pos)
        if match is None or match.group(1).upper() not in _CONTROLS:
            offset = pos + len(text[pos:]) - len(text[pos:].lstrip())
            raise BadValue("expected SUSPEND[...], RESUME[...] or TERMINATE[...]", offset)
        word = match.group(1).upper()
        pos = match.end()
        if pos >= len(text) or text[pos] != "[":
            raise BadValue(f"{word} needs its action in brackets", pos)
        end = text.find("]", pos + 1)
        if end == -1:
            raise BadValue("unclosed '['", pos)
        if word in actions:
            raise BadValue(f"{word} is given twice", match.start(1))
        actions[word] = text[pos + 1 : end].strip()
        pos = end + 1
    return actions
