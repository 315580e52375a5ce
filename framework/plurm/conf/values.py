"""Value parsers for slurm.conf, one per kind of value, with Slurm 22.05's rules.

Each parser takes the value text and returns a typed value, or raises :class:`BadValue` with
the reason. The builder turns that into a :class:`~plurm.errors.ConfValueError` that carries
the key and the position, so parsers stay free of locations.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping

import attrs

from plurm.errors import SourceLocation
from plurm.numbers import MAX_NUMBER_TEXT, leading_int, time_form_seconds

__all__ = [
    "INFINITE",
    "SLURM_PREEMPT_TYPES",
    "BadValue",
    "CrBase",
    "OverSubscribe",
    "OverSubscribeKind",
    "PreemptBase",
    "PreemptMode",
    "SelectTypeParameters",
    "c_strtol",
    "format_minutes",
    "format_seconds",
    "format_time_limit",
    "parse_accounting_enforce",
    "parse_bool",
    "parse_int",
    "parse_preempt_mode",
    "parse_select_type_parameters",
    "parse_time",
]

#: The PreemptTypes whose PreemptMode the parser judges by Slurm's rules (no plugin, then
#: the two Slurm ships); any other policy judges it itself (``preempt_check_mode``).
SLURM_PREEMPT_TYPES = ("preempt/none", "preempt/partition_prio", "preempt/qos")

#: Slurm's INFINITE: every bit of the field set. Plurm keeps it as None in typed fields and
#: uses this marker only while parsing.
INFINITE = -1

UINT16_MAX = 0xFFFF
UINT32_MAX = 0xFFFF_FFFF
UINT64_MAX = 0xFFFF_FFFF_FFFF_FFFF


class BadValue(ValueError):
    """A value a parser refuses; the message is the reason, in Slurm's words where it has them."""


_INFINITE_WORDS = frozenset({"infinite", "unlimited"})
_INT = re.compile(r"[ \t\n\v\f\r]*\+?(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)", re.ASCII)


def parse_int(text: str, *, bits: int = 32, infinite: bool = True, k_suffix: bool = False) -> int:
    """An unsigned integer as C's ``strtoul(text, 0)`` reads it, within ``bits`` bits.

    ``0x`` is hexadecimal and a leading ``0`` octal, as in Slurm. ``UNLIMITED`` and
    ``INFINITE`` (any case) give :data:`INFINITE` where ``infinite`` allows it. With
    ``k_suffix`` a trailing ``k``/``K`` multiplies by 1024.
    """
    word = text.strip().lower()
    if word in _INFINITE_WORDS:
        if infinite:
            return INFINITE
        raise BadValue(f'"{text}" is not a valid number')
    if len(text) > MAX_NUMBER_TEXT:
        raise BadValue(f'"{text[:20]}..." is not a valid number (longer than {MAX_NUMBER_TEXT})')
    multiplier = 1
    body = text
    if k_suffix and body[-1:] in ("k", "K"):
        multiplier = 1024
        body = body[:-1]
    match = _INT.fullmatch(body)
    if match is None:
        raise BadValue(f'"{text}" is not a valid number')
    digits = match.group(1)
    if digits[:2] in ("0x", "0X"):
        value = int(digits, 16)
    elif digits.startswith("0"):
        value = int(digits, 8)
    else:
        value = int(digits)
    value *= multiplier
    if value > (1 << bits) - 1:
        raise BadValue(f'"{text}" is greater than {(1 << bits) - 1}')
    return value


_TRUE = frozenset({"yes", "up", "true", "1"})
_FALSE = frozenset({"no", "down", "false", "0"})


def parse_bool(text: str) -> bool:
    """``yes``/``up``/``true``/``1`` or ``no``/``down``/``false``/``0``, any case."""
    word = text.lower()
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    raise BadValue(f'"{text}" is not a valid boolean')


def parse_time(text: str, *, unit: str, wrap: bool = False) -> int | None:
    """A Slurm time string in ``unit`` ("seconds" or "minutes"); None means INFINITE.

    Forms: ``M``, ``M:S``, ``H:M:S``, ``D-H``, ``D-H:M``, ``D-H:M:S``; ``-1``, ``INFINITE``
    and ``UNLIMITED`` mean infinite. Fields are not range-checked (``1:60:15`` is 7215 s).
    Minutes round up, as Slurm's ``time_str2mins`` does; ``wrap`` keeps the seconds in
    32 bits first, as Slurm does for partition limits.
    """
    word = text.lower()
    if word in _INFINITE_WORDS or word == "-1":
        return None
    seconds = time_form_seconds(text) if len(text) <= MAX_NUMBER_TEXT else None
    if seconds is None:
        raise BadValue(f'"{text}" is not a valid time')
    if wrap:
        # For partition time limits Slurm counts the seconds in 32 bits before rounding up
        # to minutes, so a huge value wraps (MaxTime=99999999 becomes 28417211 minutes).
        seconds &= 0xFFFF_FFFF
    if unit == "minutes":
        return (seconds + 59) // 60
    return seconds


def format_minutes(minutes: int | None) -> str:
    """Minutes as Slurm prints a time limit: ``UNLIMITED``, ``M:SS``..., ``D-HH:MM:SS``."""
    if minutes is None:
        return "UNLIMITED"
    return format_seconds(minutes * 60)


def format_time_limit(minutes: int | None) -> str:
    """A limit in minutes as scontrol shows it: ``UNLIMITED``, ``HH:MM:SS``, ``D-HH:MM:SS``."""
    if minutes is None:
        return "UNLIMITED"
    days, rest = divmod(minutes * 60, 86400)
    hours, rest = divmod(rest, 3600)
    clock = f"{hours:02d}:{rest // 60:02d}:{rest % 60:02d}"
    return f"{days}-{clock}" if days else clock


def format_seconds(seconds: int) -> str:
    """Seconds as Slurm prints an elapsed time or limit: ``M:SS``, ``H:MM:SS``, ``D-HH:MM:SS``."""
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}-{hours:02d}:{minutes:02d}:{secs:02d}"
    if hours:
        return f"{hours}:{minutes:02d}:{secs:02d}"
    return f"{minutes}:{secs:02d}"


# --------------------------------------------------------------------------- OverSubscribe


class OverSubscribeKind(enum.Enum):
    """How a partition shares its resources between jobs."""

    NO = "NO"
    YES = "YES"
    FORCE = "FORCE"
    EXCLUSIVE = "EXCLUSIVE"


@attrs.frozen
class OverSubscribe:
    """A partition's OverSubscribe: the kind and, for YES and FORCE, jobs per resource."""

    kind: OverSubscribeKind = OverSubscribeKind.NO
    count: int = 1

    def __str__(self) -> str:
        if self.kind in (OverSubscribeKind.YES, OverSubscribeKind.FORCE):
            return f"{self.kind.value}:{self.count}"
        return str(self.kind.value)


def c_strtol(text: str) -> int:
    """C's ``strtol`` (and ``atoi``) in base 10: optional blanks and sign, then the leading
    digits; none gives 0. Slurm reads some numbers this way, without a word of complaint."""
    return leading_int(text, minimum=-(1 << 63), maximum=(1 << 63) - 1)


def parse_oversubscribe(text: str) -> tuple[OverSubscribe, str | None]:
    """OverSubscribe (alias Shared): the value and, when Slurm logs an error but goes on, its text.

    ``YES`` and ``FORCE`` alone mean 4 jobs per resource. A count Slurm cannot use (``YES:n``
    with n <= 1, ``FORCE:n`` with n < 1, or no number at all) is logged and the partition
    falls back to NO; a count is kept in 16 bits, as Slurm stores it. Anything else is fatal.
    """
    word, colon, count_text = text.partition(":")
    kind_name = word.upper()
    if not colon and kind_name in ("NO", "EXCLUSIVE"):
        return OverSubscribe(OverSubscribeKind(kind_name), 1), None
    if kind_name not in ("YES", "FORCE"):
        raise BadValue(f'Bad value "{text}" for OverSubscribe')
    kind = OverSubscribeKind(kind_name)
    if not colon:
        return OverSubscribe(kind, 4), None
    count = c_strtol(count_text)
    if count <= (1 if kind is OverSubscribeKind.YES else 0):
        return OverSubscribe(), f"Ignoring bad OverSubscribe value: {text}"
    return OverSubscribe(kind, count & UINT16_MAX), None


# --------------------------------------------------------------------------- PreemptMode


class PreemptBase(enum.Enum):
    """The one base action of a PreemptMode."""

    OFF = "OFF"
    CANCEL = "CANCEL"
    REQUEUE = "REQUEUE"
    SUSPEND = "SUSPEND"


@attrs.frozen
class PreemptMode:
    """A PreemptMode: exactly one base action plus the GANG, WITHIN and PRIORITY flags."""

    base: PreemptBase = PreemptBase.OFF
    gang: bool = False
    within: bool = False
    priority: bool = False

    def __str__(self) -> str:
        # Spelled as scontrol shows it: GANG first, then the base, then the other flags;
        # OFF only when nothing else is set.
        words = ["GANG"] if self.gang else []
        if self.base is not PreemptBase.OFF:
            words.append(self.base.value)
        if self.within:
            words.append("WITHIN")
        if self.priority:
            words.append("PRIORITY")
        return ",".join(words) or "OFF"


_PREEMPT_BASES = {
    "off": PreemptBase.OFF,
    "cluster": PreemptBase.OFF,
    "cancel": PreemptBase.CANCEL,
    "requeue": PreemptBase.REQUEUE,
    "suspend": PreemptBase.SUSPEND,
    "on": PreemptBase.SUSPEND,
}
_PREEMPT_FLAGS = ("gang", "within", "priority")


def parse_preempt_mode(text: str) -> PreemptMode:
    """Comma tokens: one base (off/cluster, cancel, requeue, suspend/on) and any flags.

    Slurm refuses two bases, GANG with WITHIN or PRIORITY, PRIORITY on its own, and any
    other word, all with the message ``PreemptMode=<value> invalid``.
    """
    bases: list[PreemptBase] = []
    flags: set[str] = set()
    if text == "":
        return PreemptMode()
    for token in text.split(","):
        word = token.strip().lower()
        if word in _PREEMPT_BASES:
            bases.append(_PREEMPT_BASES[word])
        elif word in _PREEMPT_FLAGS:
            flags.add(word)
        else:
            raise BadValue(f"PreemptMode={text} invalid")
    if len(bases) > 1:
        raise BadValue(f"PreemptMode={text} invalid")
    base = bases[0] if bases else PreemptBase.OFF
    mode = PreemptMode(base, *(flag in flags for flag in _PREEMPT_FLAGS))
    if mode.gang and (mode.within or mode.priority):
        raise BadValue(f"PreemptMode={text} invalid")
    if mode.priority and not bases and not mode.gang:
        raise BadValue(f"PreemptMode={text} invalid")
    return mode


# --------------------------------------------------------------------------- SelectTypeParameters


class CrBase(enum.Enum):
    """The consumable resource a select plugin counts."""

    CPU = "CR_CPU"
    CPU_MEMORY = "CR_CPU_Memory"
    CORE = "CR_Core"
    CORE_MEMORY = "CR_Core_Memory"
    SOCKET = "CR_Socket"
    SOCKET_MEMORY = "CR_Socket_Memory"
    MEMORY = "CR_Memory"

    @property
    def memory(self) -> bool:
        return self.value.endswith("Memory")


_CR_BASES = {base.value.lower(): base for base in CrBase}
_CR_FLAGS = {
    name.lower(): name
    for name in (
        "CR_ONE_TASK_PER_CORE",
        "CR_LLN",
        "CR_PACK_NODES",
        "CR_CORE_DEFAULT_DIST_BLOCK",
        "LL_SHARED_GRES",
        "MULTIPLE_SHARING_GRES_PJ",
        "ENFORCE_BINDING_GRES",
        "ONE_TASK_PER_SHARING_GRES",
        "OTHER_CONS_RES",
        "OTHER_CONS_TRES",
    )
}


#: The words of SelectTypeParameters Slurm knows, lower case.
SELECT_TYPE_WORDS = frozenset(_CR_BASES) | frozenset(_CR_FLAGS)


@attrs.frozen
class SelectTypeParameters:
    """SelectTypeParameters: at most one CR_* base and any flags, spelled as Slurm prints them,
    and the options select plugins declare (see :mod:`plurm.params`)."""

    base: CrBase | None = None
    flags: frozenset[str] = frozenset()
    #: The words Slurm does not know, as written (lower-case name -> value or None): options
    #: a loaded plugin declares, or errors that :func:`plurm.params.check_options` reports.
    options: Mapping[str, str | None] = attrs.field(factory=dict)
    #: Where each option was written, for messages.
    locations: Mapping[str, SourceLocation] = attrs.field(factory=dict, eq=False, repr=False)

    def __str__(self) -> str:
        words = ([self.base.value] if self.base else []) + sorted(self.flags)
        words += [
            name if value is None else f"{name}={value}" for name, value in self.options.items()
        ]
        return ",".join(words) if words else "NONE"


def parse_select_type_parameters(
    text: str, *, plugin_options: bool = False
) -> SelectTypeParameters:
    """Comma list, any case; more than one base is an error, as is an unknown word, unless
    ``plugin_options`` (the slurm.conf key, where plugins may declare options): then unknown
    words are kept as options, for the loaded plugins to claim."""
    base: CrBase | None = None
    flags: set[str] = set()
    options: dict[str, str | None] = {}
    for token in text.split(","):
        word = token.strip().lower()
        if not word:
            continue
        if word in _CR_BASES:
            if base is not None:
                raise BadValue("only one of CR_CPU, CR_Core, CR_Socket and CR_Memory may be given")
            base = _CR_BASES[word]
        elif word in _CR_FLAGS:
            flags.add(_CR_FLAGS[word])
        elif plugin_options:
            name, equals, value = token.strip().partition("=")
            options[name.strip().lower()] = value.strip() if equals else None
        else:
            raise BadValue(f"invalid SelectTypeParameters: {token}")
    if "CR_ONE_TASK_PER_CORE" in flags and base in (CrBase.CPU, CrBase.CPU_MEMORY):
        raise BadValue("CR_ONE_TASK_PER_CORE is not compatible with CR_CPU")
    return SelectTypeParameters(base, frozenset(flags), options)


#: What each AccountingStorageEnforce word turns on, as slurm.conf(5) says (1 and 2 are
#: the old numeric spellings of associations and of associations plus limits).
_ENFORCE_IMPLIES = {
    "1": ("associations",),
    "2": ("associations", "limits"),
    "associations": ("associations",),
    "limits": ("limits", "associations"),
    "qos": ("qos", "associations"),
    "wckeys": ("wckeys", "associations"),
    "safe": ("safe", "limits", "associations"),
    "all": ("associations", "limits", "qos", "safe", "wckeys"),
    "nojobs": ("nojobs", "nosteps"),
    "nosteps": ("nosteps",),
}


def parse_accounting_enforce(text: str) -> frozenset[str]:
    """AccountingStorageEnforce, a comma list of words in any case: the words given and
    those they imply. An unknown word is refused as Slurm refuses it."""
    enforced: set[str] = set()
    for word in text.split(","):
        if not word:
            continue
        implied = _ENFORCE_IMPLIES.get(word.lower())
        if implied is None:
            raise BadValue(f"Invalid parameter for AccountingStorageEnforce: {word}")
        enforced.update(implied)
    return frozenset(enforced)
