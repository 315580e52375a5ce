"""sinfo -O/--Format: fields by name, ``name[:[.]size][suffix]``, comma separated.

As Slurm 22.05's sinfo: a field without ``:size`` is 20 columns wide, left-justified;
``:.size`` right-justifies; ``:0`` (or ``:``) prints the value unpadded and uncut; text after
the size is printed after the field. Values are cut to the size; the NODELIST and HOSTNAMES
headers are not cut when right-justified. An unknown name prints nothing and is reported
(``sinfo: error: Invalid job format specification: NAME``, Slurm's own words). Fields run
together with no separator.
"""

from __future__ import annotations

import attrs

from plurm.commands.base import CommandError

__all__ = ["FIELDS", "GROUPING", "LongPiece", "parse_long", "render_long"]

#: -O names: the row key sinfo fills (its -o letter where it has one) and the header.
FIELDS: dict[str, tuple[str, str]] = {
    "allocmem": ("allocmem", "ALLOCMEM"),
    "available": ("a", "AVAIL"),
    "cpus": ("c", "CPUS"),
    "cpusstate": ("C", "CPUS(A/I/O/T)"),
    "disk": ("d", "TMP_DISK"),
    "features": ("f", "AVAIL_FEATURES"),
    "freemem": ("e", "FREE_MEM"),
    "gres": ("G", "GRES"),
    "gresused": ("gresused", "GRES_USED"),
    "groups": ("g", "GROUPS"),
    "memory": ("m", "MEMORY"),
    "nodeaiot": ("F", "NODES(A/I/O/T)"),
    "nodehost": ("n", "HOSTNAMES"),
    "nodelist": ("N", "NODELIST"),
    "nodes": ("D", "NODES"),
    "oversubscribe": ("h", "OVERSUBSCRIBE"),
    "partition": ("P", "PARTITION"),
    "partitionname": ("R", "PARTITION"),
    "reason": ("E", "REASON"),
    "root": ("r", "ROOT"),
    "share": ("h", "OVERSUBSCRIBE"),
    "size": ("s", "JOB_SIZE"),
    "socketcorethread": ("z", "S:C:T"),
    "statecompact": ("t", "STATE"),
    "statelong": ("T", "STATE"),
    "time": ("l", "TIMELIMIT"),
    "weight": ("w", "WEIGHT"),
}
#: Row keys that, when shown, put nodes that differ in them on separate lines (sinfo
#: matches nodes on them whatever -e says).
GROUPING = frozenset({"G", "gresused", "allocmem", "n"})
#: The default size of a field without ``:size``.
DEFAULT_SIZE = 20
#: The largest size Plurm takes (sinfo would pad to any size).
MAX_SIZE = 4096
_UNCUT_HEADERS = frozenset({"N", "n"})


@attrs.frozen
class LongPiece:
    """One -O field: its row key, header, size (0: as long as the value), justification
    and the text printed after it."""

    key: str
    header: str
    size: int
    right: bool
    suffix: str


def parse_long(spec: str) -> tuple[list[LongPiece], list[str]]:
    """The fields of an -O specification, and the error lines for unknown names."""
    pieces: list[LongPiece] = []
    errors: list[str] = []
    for item in spec.split(","):
        if not item:
            continue
        name, colon, rest = item.partition(":")
        right = rest.startswith(".")
        rest = rest[1:] if right else rest
        digits = len(rest) - len(rest.lstrip("0123456789"))
        if digits > 6 or (digits and int(rest[:digits]) > MAX_SIZE):
            raise CommandError(f"sinfo: error: field width {rest[:digits]} is above {MAX_SIZE}")
        size = (int(rest[:digits]) if digits else 0) if colon else DEFAULT_SIZE
        field = FIELDS.get(name.lower())
        if field is None:
            errors.append(f"sinfo: error: Invalid job format specification: {name}\n")
            continue
        pieces.append(LongPiece(field[0], field[1], size, right, rest[digits:]))
    return pieces, errors


def _cell(text: str, size: int, right: bool, cut: bool) -> str:
    if not size:
        return text
    if cut or not right:
        text = text[:size]
    return text.rjust(size) if right else text.ljust(size)


def render_long(pieces: list[LongPiece], row: dict[str, str] | None) -> str:
    """One line: the headers (``row`` None) or a row's values."""
    out = []
    for piece in pieces:
        if row is None:
            out.append(
                _cell(piece.header, piece.size, piece.right, piece.key not in _UNCUT_HEADERS)
            )
        else:
            text = row.get(piece.key, "")
            if piece.key == "P" and piece.size and text.endswith("*") and len(text) > piece.size:
                text = text[: piece.size - 1] + "*"  # the default's mark survives the cut
            out.append(_cell(text, piece.size, piece.right, True))
        out.append(piece.suffix)
    return "".join(out) + "\n"
