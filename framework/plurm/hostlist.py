"""Hostlist expressions, expanded and compressed exactly as Slurm 22.05's scontrol does.

``expand("n[01-03],m7")`` gives ``["n01", "n02", "n03", "m7"]``; ``compress`` goes back.
The rules were measured on real ``scontrol show hostnames|hostlist`` (the vectors live in
``tests/data/oracle/hostlist/``):

* Top-level separators are comma, space and tab; a run of them is one break. A separator
  inside an open bracket does not split (``n[1, 3]`` is one expression).
* A bracket group is a comma list of ``LO`` or ``LO-HI``; values print zero-padded to the
  width of ``LO`` as written (``n[08-11]`` -> ``n08``...; ``n[8-11]`` -> ``n8``...). Each
  element may name at most 65,536 hosts.
* Several groups form a cartesian product in Slurm's order: the last group varies fastest,
  the others in left-to-right order, so the second-to-last group is the outermost loop.
* Order and duplicates are kept; nothing is sorted.
* Nothing may follow the last ``]`` (22.05 rejects ``n[1-3].ib``).
* Compression brackets only the trailing number and merges a host into the range just
  before it when it has the same prefix and is the next number (with compatible width).
  It neither sorts nor removes duplicates: ``n3,n1,n2`` -> ``n[3,1-2]``.

:func:`natural_key` orders names as Slurm's node table is ordered (``n2`` before ``n10``).

Where 22.05 silently mangles malformed input, Plurm refuses it with a clear error instead:
an unclosed ``[`` (Slurm turns ``n[1-3`` into the host ``n]``), range bounds with blanks,
signs or junk (``n[1y-3]``), numbers past 2**64-1, and expansions past
:data:`MAX_HOSTS` hosts in total. docs/configuration.md lists these deviations.
"""

from __future__ import annotations

import itertools
import operator
import re
from collections.abc import Iterable, Iterator

from plurm.errors import HostlistError
from plurm.numbers import MAX_NUMBER_TEXT

__all__ = [
    "MAX_CHARACTERS",
    "MAX_HOSTS",
    "MAX_RANGE",
    "HostlistError",
    "compress",
    "expand",
    "iter_expand",
    "natural_key",
]

#: Slurm's cap on the hosts one range element may name.
MAX_RANGE = 65536
#: Plurm's cap on a whole expansion, to fail clearly instead of exhausting memory.
MAX_HOSTS = 1 << 20
#: Plurm's cap on the characters of a whole expansion's names (long names times many hosts).
MAX_CHARACTERS = 64 << 20

_SEPARATORS = ", \t"
_U64_MAX = (1 << 64) - 1

# A run of hosts: the text before their numbers, the first and last number, and the width the
# numbers are printed at. A name that does not end in digits is the run (name, None, 0, 0).
# Expansion and compression work on runs, so that a range costs one step, not one per host.
_Run = tuple[str, int | None, int, int]


def expand(expression: str) -> list[str]:
    """Every host the expression names, in Slurm's order, duplicates kept."""
    names: list[str] = []
    for prefix, low, high, width in _expand_runs(expression):
        if low is None:
            names.append(prefix)
        else:
            names += [f"{prefix}{number:0{width}d}" for number in range(low, high + 1)]
    return names


def iter_expand(expression: str) -> Iterator[str]:
    """Like :func:`expand`, but validates everything first and then yields lazily."""
    runs = _expand_runs(expression)
    return (
        prefix if low is None else f"{prefix}{number:0{width}d}"
        for prefix, low, high, width in runs
        for number in (range(1) if low is None else range(low, high + 1))
    )


def compress(hosts: Iterable[str] | str) -> str:
    """The ranged form ``scontrol show hostlist`` prints (without the line break).

    ``hosts`` is a list of names or a hostlist expression (which is expanded first, as
    scontrol does).
    """
    if isinstance(hosts, str):
        return _ranged_string(_expand_runs(hosts))
    return _ranged_string(_runs_of(list(hosts)))


#: Names already split (name -> its one-host run): compressions of node lists see the same
#: node names over and over. A pure memo, emptied when it holds more than MAX_HOSTS names.
_SPLIT: dict[str, _Run] = {}
_FIRST = operator.itemgetter(0)
_LOW = operator.itemgetter(1)
_WIDTH = operator.itemgetter(3)


def _runs_of(names: list[str]) -> list[_Run]:
    """The names as runs of consecutive numbers with one prefix and width.

    Each name is split once (and remembered); the names are then grouped by whole-list
    operations (``map`` over C functions), so that the Python loop runs once per run, not
    once per name. Compressing a partition of a node table costs about a tenth of a
    microsecond per node, and a few microseconds per run.
    """
    count = len(names)
    if count < 8:
        return list(map(_split_literal, names))
    split = _SPLIT
    missing = list(itertools.filterfalse(split.__contains__, names))
    if missing:
        if len(split) + len(missing) > MAX_HOSTS:
            split.clear()
        split.update(zip(missing, map(_split_literal, missing), strict=False))
    hosts = list(map(split.__getitem__, names))
    numbers = list(map(_LOW, hosts))
    if None in numbers:
        return hosts
    stems = list(map(_FIRST, hosts))
    widths = list(map(_WIDTH, hosts))
    breaks = map(
        operator.or_,
        map(
            operator.or_,
            map((1).__ne__, map(operator.sub, numbers[1:], numbers[:-1])),
            map(operator.ne, stems[1:], stems[:-1]),
        ),
        map(operator.ne, widths[1:], widths[:-1]),
    )
    starts = [0, *itertools.compress(range(1, count), breaks), count]
    return [
        (stems[start], numbers[start], numbers[end - 1], widths[start])
        for start, end in itertools.pairwise(starts)
    ]


# ----------------------------------------------------------------------------- tokenizing


def _tokens(text: str) -> Iterator[str]:
    """Top-level expressions, with separators inside an open bracket kept in the token."""
    length = len(text)
    position = 0
    while position < length:
        while position < length and text[position] in _SEPARATORS:
            position += 1
        if position >= length:
            return
        start = position
        end = _next_separator(text, position)
        check = start
        while True:
            opening = text.find("[", check, end)
            closing = text.find("]", check, end)
            if opening == -1 or (closing != -1 and closing < opening):
                break
            closing = text.find("]", opening, end)
            if closing != -1:
                check = closing + 1
                continue
            later = text.find("]", end)
            if later == -1:
                break
            check = later + 1
            end = _next_separator(text, check)
        yield text[start:end]
        position = end


def _next_separator(text: str, position: int) -> int:
    length = len(text)
    while position < length and text[position] not in _SEPARATORS:
        position += 1
    return position


# ----------------------------------------------------------------------------- expanding


def _expand_runs(expression: str) -> list[_Run]:
    runs: list[_Run] = []
    hosts = characters = 0
    for token in _tokens(expression):
        for run in _expand_token(token, expression):
            runs.append(run)
            prefix, low, high, width = run
            count = 1 if low is None else high - low + 1
            hosts += count
            characters += count * (len(prefix) + width)
            if hosts > MAX_HOSTS:
                raise HostlistError(
                    f"Invalid hostlist: {_shown(expression)} (more than {MAX_HOSTS} hosts)"
                )
            if characters > MAX_CHARACTERS:
                raise HostlistError(
                    f"Invalid hostlist: {_shown(expression)} (the names take more than "
                    f"{MAX_CHARACTERS} characters)"
                )
    return runs


def _expand_token(token: str, expression: str) -> Iterator[_Run]:
    opening = token.rfind("[")
    if opening == -1:
        yield _split_literal(token)
        return
    closing = token.find("]", opening)
    if closing == -1:
        raise HostlistError(f"Invalid hostlist: {_shown(expression)} (missing ']' in {token!r})")
    if closing != len(token) - 1:
        raise HostlistError(
            f"Invalid hostlist: {_shown(expression)} (nothing may follow ']' in {token!r})"
        )
    prefix = token[:opening]
    last = _parse_group(token[opening + 1 : closing], expression)
    # Slurm's order: the second-to-last group is the outer loop, then the groups before it
    # from right to left, and the last group varies fastest. The earlier groups are peeled
    # off from the right, and walked as an odometer (no recursion, however many groups).
    groups: list[list[tuple[int, int, int]]] = []
    texts: list[str] = []  # the text after each peeled group
    head = prefix
    while (span := _last_group(head)) is not None:
        start, end = span
        groups.append(_parse_group(head[start + 1 : end], expression))
        texts.append(head[end + 1 :])
        head = head[:start]
    if not groups:
        for low, high, width in last:
            yield prefix, low, high, width
        return
    # built[d]: the text of levels 0..d (level 0, the outermost, stands rightmost).
    count = len(groups)
    iterators: list[Iterator[str]] = [_group_values(groups[0])]
    built = [""] * count
    while iterators:
        depth = len(iterators) - 1
        value = next(iterators[depth], None)
        if value is None:
            iterators.pop()
            continue
        built[depth] = value + texts[depth] + (built[depth - 1] if depth else "")
        if depth + 1 < count:
            iterators.append(_group_values(groups[depth + 1]))
            continue
        whole = head + built[depth]
        for low, high, width in last:
            yield whole, low, high, width


def _shown(expression: str) -> str:
    """The expression as a message quotes it: cut, so that a huge one makes no huge error."""
    return expression if len(expression) <= 200 else expression[:200] + "..."


def _group_values(group: list[tuple[int, int, int]]) -> Iterator[str]:
    for low, high, width in group:
        for number in range(low, high + 1):
            yield f"{number:0{width}d}"


def _last_group(prefix: str) -> tuple[int, int] | None:
    """The span of a bracket group in ``prefix``: its last ``[`` and the last ``]`` after it."""
    opening = prefix.rfind("[")
    closing = prefix.rfind("]")
    if opening == -1 or closing < opening:
        return None
    return opening, closing


def _parse_group(text: str, expression: str) -> list[tuple[int, int, int]]:
    """Range elements ``(low, high, width)`` of a bracket group's text."""
    elements = []
    for element in text.split(","):
        low_text, dash, high_text = element.partition("-")
        if dash and not high_text:
            high_text = low_text
        if max(len(low_text), len(high_text)) > MAX_NUMBER_TEXT:
            raise HostlistError(
                f"Invalid hostlist: {_shown(expression)} (number too large in range)"
            )
        if not (_is_number(low_text) and (not dash or _is_number(high_text))):
            raise HostlistError(
                f"Invalid hostlist: {_shown(expression)} (invalid range {element!r})"
            )
        low = int(low_text)
        high = int(high_text) if dash else low
        if high > _U64_MAX:
            raise HostlistError(
                f"Invalid hostlist: {_shown(expression)} (number too large in {element!r})"
            )
        if low > high:
            raise HostlistError(
                f"Invalid hostlist: {_shown(expression)} (invalid range {element!r})"
            )
        if high - low + 1 > MAX_RANGE:
            raise HostlistError(
                f"Invalid hostlist: {_shown(expression)} (too many hosts in range {element!r})"
            )
        elements.append((low, high, len(low_text)))
    return elements


def _is_number(text: str) -> bool:
    return text.isascii() and text.isdigit()


_DIGITS = "0123456789"


def _split_literal(name: str) -> _Run:
    """A literal name as the run of one host: (text before the trailing digits, number,
    number, digit count)."""
    stem = name.rstrip(_DIGITS)
    digits = len(name) - len(stem)
    if digits == 0 or digits > 20:
        return name, None, 0, 0
    number = int(name[len(stem) :])
    if number > _U64_MAX:
        return name, None, 0, 0
    return stem, number, number, digits


# ----------------------------------------------------------------------------- compressing


def _ranged_string(runs: Iterable[_Run]) -> str:
    """Merge runs (prefix, low, high, width) into ranges.

    A host or run extends the range just before it only: same prefix, its first number the
    next one, and a compatible width. A run merges whole or not at all, since its numbers
    share a width and only grow.
    """
    ranges: list[tuple[str, int | None, int, int]] = []
    last_prefix: str | None = None
    last_low: int | None = None
    last_high = last_width = 0
    for prefix, low, high, width in runs:
        if (
            low is not None
            and last_low is not None
            and last_prefix == prefix
            and low == last_high + 1
            and (last_width == width or len(str(low)) >= max(last_width, width))
        ):
            last_high = high
            ranges[-1] = (prefix, last_low, high, last_width)
            continue
        ranges.append((prefix, low, high, width))
        last_prefix, last_low, last_high, last_width = prefix, low, high, width
    return ",".join(_blocks(ranges))


def _blocks(ranges: list[tuple[str, int | None, int, int]]) -> Iterator[str]:
    """Neighbouring numbered ranges with one prefix share one bracket."""
    index = 0
    while index < len(ranges):
        prefix, low, high, width = ranges[index]
        if low is None:
            yield prefix
            index += 1
            continue
        parts = []
        while index < len(ranges):
            same_prefix, low, high, width = ranges[index]
            if same_prefix != prefix or low is None:
                break
            if low == high:
                parts.append(f"{low:0{width}d}")
            else:
                parts.append(f"{low:0{width}d}-{high:0{width}d}")
            index += 1
        if len(parts) == 1 and "-" not in parts[0]:
            yield f"{prefix}{parts[0]}"
        else:
            yield f"{prefix}[{','.join(parts)}]"


# ----------------------------------------------------------------------------- natural order

_DIGIT_RUN = re.compile(r"[0-9]+")


def _ranked_run(match: re.Match[str]) -> str:
    digits = match.group()
    if digits[0] == "0":
        # runs with a leading zero compare digit by digit, a shorter run (a prefix of the
        # other) first: the run itself ended by a character below every digit
        return digits + "\x00"
    # others compare as numbers: the longer run is the larger, then digit by digit
    return "1" + chr(len(digits)) + digits


def natural_key(name: str) -> str:
    """A sort key that puts node names in the order Slurm 22.05 sorts its node table.

    slurmctld sorts the node table with ``strnatcmp``: the names are compared character by
    character, except where both have a run of digits at the same place. Two runs without
    a leading zero compare as numbers (``n2`` < ``n10``); if either starts with ``0``, they
    compare digit by digit and a run that is a prefix of the other comes first (``n01`` <
    ``n012`` < ``n02`` < ``n1``). A digit run against any other character compares as a
    digit character would (``n-1`` < ``n1`` < ``na``).

    The key is a string built so that plain string comparison gives that order: every digit
    run becomes a code starting with ``0`` (runs with a leading zero: the digits and a
    ``\\x00`` end mark) or ``1`` (others: their length, then the digits), so a run still
    meets any other character as a digit would. Names are compared case-sensitively, and
    whitespace (which strnatcmp skips) cannot occur in a node name.
    """
    return _DIGIT_RUN.sub(_ranked_run, name)
