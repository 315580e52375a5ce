"""The one place Plurm reads numbers and times from text it was handed.

Every reader of outside input (slurm.conf values, hostlist ranges, SWF fields, TOML files,
session files, command options) goes through these functions, so that the same rules hold
everywhere:

* only ASCII digits count (Python's ``int()`` also takes ``٣`` and ``²``-like digits, which
  Slurm's C parsers never see as digits);
* a number's text is at most :data:`MAX_NUMBER_TEXT` characters, far below Python's
  4,300-digit limit for ``int()``, so that no input reaches it;
* each value is checked against the range its field has in Slurm (16, 32 or 64 bits, or
  INT_MAX for signed counts), with Slurm's markers :data:`INFINITE` and :data:`NO_VAL`
  kept out of ordinary values;
* floats are finite (no ``nan``, ``inf``, or ``1e999``);
* time limits and begin times stay within what ``datetime`` can hold.

Failures are :class:`~plurm.errors.NumberError`, a :class:`~plurm.errors.PlurmError` that is
also a ``ValueError``, with a message that callers usually replace by Slurm's own words.
"""

from __future__ import annotations

import math
import re

from plurm.errors import NumberError

__all__ = [
    "INFINITE",
    "INFINITE16",
    "INFINITE64",
    "INT32_MAX",
    "MAX_BEGIN_SECONDS",
    "MAX_NUMBER_TEXT",
    "MAX_TIME_MINUTES",
    "NO_VAL",
    "NO_VAL16",
    "NO_VAL64",
    "UINT16_MAX",
    "UINT32_MAX",
    "UINT64_MAX",
    "NumberError",
    "is_digits",
    "leading_int",
    "parse_float",
    "parse_int",
    "parse_time_limit",
    "parse_uint",
    "time_form_seconds",
]

UINT16_MAX = 0xFFFF
UINT32_MAX = 0xFFFF_FFFF
UINT64_MAX = 0xFFFF_FFFF_FFFF_FFFF
INT32_MAX = 0x7FFF_FFFF

#: Slurm's markers: every bit set means "infinite", one less means "no value given".
INFINITE16 = 0xFFFF
NO_VAL16 = 0xFFFE
INFINITE = 0xFFFF_FFFF
NO_VAL = 0xFFFF_FFFE
INFINITE64 = UINT64_MAX
NO_VAL64 = UINT64_MAX - 1

#: The longest text read as one number (sign and leading zeros included). A uint64 has at
#: most 20 digits; the margin admits zero padding, and the cap keeps Python's ``int()``
#: (quadratic in the digit count, refused past 4,300 digits) out of reach.
MAX_NUMBER_TEXT = 64

#: The longest time limit, in minutes: below Slurm's NO_VAL, as a uint32 field must be.
MAX_TIME_MINUTES = NO_VAL - 1

#: The latest begin time Plurm takes, in seconds after its epoch: the year 9000, well
#: inside what ``datetime`` can hold, so that no date arithmetic overflows.
MAX_BEGIN_SECONDS = 220_898_880_000

_DIGITS = re.compile(r"[0-9]+", re.ASCII)
_SIGNED = re.compile(r"[+-]?[0-9]+", re.ASCII)
_LEADING = re.compile(r"[ \t\n\v\f\r]*([+-]?[0-9]+)", re.ASCII)
_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)


def is_digits(text: str) -> bool:
    """True when ``text`` is one or more ASCII digits, and short enough to be a number."""
    return len(text) <= MAX_NUMBER_TEXT and _DIGITS.fullmatch(text) is not None


def _too_long(text: str, what: str) -> NumberError:
    shown = text[:20] + "..." if len(text) > 20 else text
    return NumberError(f"{what} {shown!r} is too long (more than {MAX_NUMBER_TEXT} characters)")


def parse_uint(
    text: str, *, maximum: int = UINT32_MAX, minimum: int = 0, what: str = "value"
) -> int:
    """A decimal number of ASCII digits, in ``[minimum, maximum]``."""
    if len(text) > MAX_NUMBER_TEXT:
        raise _too_long(text, what)
    if _DIGITS.fullmatch(text) is None:
        raise NumberError(f"{what} {text!r} is not a number")
    value = int(text)
    if not minimum <= value <= maximum:
        raise NumberError(f"{what} {text} is out of range ({minimum} to {maximum})")
    return value


def parse_int(
    text: str, *, minimum: int = -INT32_MAX - 1, maximum: int = INT32_MAX, what: str = "value"
) -> int:
    """A signed decimal number of ASCII digits, in ``[minimum, maximum]``."""
    if len(text) > MAX_NUMBER_TEXT:
        raise _too_long(text, what)
    if _SIGNED.fullmatch(text) is None:
        raise NumberError(f"{what} {text!r} is not a number")
    value = int(text)
    if not minimum <= value <= maximum:
        raise NumberError(f"{what} {text} is out of range ({minimum} to {maximum})")
    return value


def leading_int(text: str, *, minimum: int, maximum: int) -> int:
    """C's ``strtol`` in base 10: blanks, a sign, the leading ASCII digits (none gives 0),
    clamped to ``[minimum, maximum]`` as strtol clamps to its type. Never fails."""
    match = _LEADING.match(text)
    if match is None:
        return 0
    digits = match.group(1)
    negative = digits.startswith("-")
    body = digits.lstrip("+-").lstrip("0") or "0"
    if len(body) > MAX_NUMBER_TEXT:
        return minimum if negative else maximum
    return max(minimum, min(maximum, int(digits)))


def parse_float(
    text: str,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    what: str = "value",
) -> float:
    """A finite decimal number of ASCII characters (``12``, ``1.5``, ``2e3``), in range."""
    stripped = text.strip(" \t")
    if len(stripped) > MAX_NUMBER_TEXT:
        raise _too_long(stripped, what)
    if _FLOAT.fullmatch(stripped) is None:
        raise NumberError(f"{what} {text!r} is not a number")
    value = float(stripped)
    if not math.isfinite(value):
        raise NumberError(f"{what} {text!r} is not a finite number")
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        low = "" if minimum is None else f"{minimum:g}"
        high = "" if maximum is None else f"{maximum:g}"
        raise NumberError(f"{what} {text} is out of range ({low} to {high})")
    return value


_TIME_FORMS = re.compile(
    r"(?:(?P<days>[0-9]+)-(?P<dh>[0-9]*)(?::(?P<dm>[0-9]+)(?::(?P<ds>[0-9]+))?)?)"
    r"|(?:(?P<a>[0-9]+)(?::(?P<b>[0-9]+)(?::(?P<c>[0-9]+))?)?)",
    re.ASCII,
)
_INFINITE_WORDS = frozenset({"infinite", "unlimited", "-1"})


def time_form_seconds(text: str) -> int | None:
    """The seconds a Slurm time form stands for (``M``, ``M:S``, ``H:M:S``, ``D-H``,
    ``D-H:M``, ``D-H:M:S``, ASCII digits only), or None when ``text`` is not one. Fields are
    not range-checked one by one (``1:60:15`` is 7215 s, as in Slurm)."""
    match = _TIME_FORMS.fullmatch(text)
    if match is None:
        return None
    groups = {key: int(value or 0) for key, value in match.groupdict().items() if value is not None}
    if "days" in groups:
        return (
            groups["days"] * 86400
            + groups["dh"] * 3600
            + groups.get("dm", 0) * 60
            + groups.get("ds", 0)
        )
    if "c" in groups:
        return groups["a"] * 3600 + groups["b"] * 60 + groups["c"]
    if "b" in groups:
        return groups["a"] * 60 + groups["b"]
    return groups["a"] * 60


def parse_time_seconds(text: str, *, maximum: int = MAX_TIME_MINUTES * 60) -> int | None:
    """A Slurm time string in seconds; None means INFINITE.

    Forms: ``M``, ``M:S``, ``H:M:S``, ``D-H``, ``D-H:M``, ``D-H:M:S``; ``-1``, ``INFINITE``
    and ``UNLIMITED`` (any case) mean infinite. Fields are not range-checked one by one
    (``1:60:15`` is 7215 s, as in Slurm), but the text is length-capped and the total must
    not pass ``maximum`` seconds.
    """
    if len(text) > MAX_NUMBER_TEXT:
        raise _too_long(text, "time")
    if text.lower() in _INFINITE_WORDS:
        return None
    seconds = time_form_seconds(text)
    if seconds is None:
        raise NumberError(f"time {text!r} is not a valid time")
    if seconds > maximum:
        raise NumberError(f"time {text} is out of range (at most {maximum} seconds)")
    return seconds


def parse_time_limit(text: str) -> int | None:
    """A time limit in minutes (seconds round up, as Slurm's ``time_str2mins``); None means
    INFINITE. At most :data:`MAX_TIME_MINUTES`."""
    seconds = parse_time_seconds(text)
    return None if seconds is None else (seconds + 59) // 60
