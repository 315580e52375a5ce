"""Reading the simulator's small TOML files (trace mappings, comparisons) with Plurm's errors."""

from __future__ import annotations

import os
import tomllib
from typing import Any

from plurm.errors import PlurmError
from plurm.inputfile import MAX_TOML_BYTES, read_text

__all__ = ["MAX_TOML_DEPTH", "read_toml"]

#: How deep arrays and inline tables may nest in a TOML file Plurm reads. tomllib parses
#: nesting by recursion, so depth is checked first, without recursing.
MAX_TOML_DEPTH = 32


def read_toml(path: str | os.PathLike[str], what: str, error: type[PlurmError]) -> dict[str, Any]:
    """The TOML document at ``path``; an unreadable or invalid file raises ``error`` with a
    message naming the file and ``what`` it was meant to be ("mapping", "comparison")."""
    name = str(path)
    try:
        data = read_text(path, limit=MAX_TOML_BYTES)
    except OSError as problem:
        raise error(f"{name}: cannot read the {what}: {problem.strerror or problem}") from None
    except ValueError as problem:  # a NUL in the path
        raise error(f"{name}: cannot read the {what}: {problem}") from None
    return parse_toml(data, name, what, error)


def parse_toml(text: str, name: str, what: str, error: type[PlurmError]) -> dict[str, Any]:
    """The TOML document ``text`` (from ``name``), nested at most :data:`MAX_TOML_DEPTH` deep."""
    depth = nesting_depth(text)
    if depth > MAX_TOML_DEPTH:
        raise error(
            f"{name}: not a valid TOML {what}: arrays and tables nest {depth} deep "
            f"(at most {MAX_TOML_DEPTH})"
        )
    try:
        return tomllib.loads(text)
    except ValueError as problem:  # TOMLDecodeError, or int() past its 4,300 digits
        raise error(f"{name}: not a valid TOML {what}: {problem}") from None
    except RecursionError:  # not reached below the depth cap; kept as a last guard
        raise error(f"{name}: not a valid TOML {what}: nested too deep") from None


def nesting_depth(text: str) -> int:
    """The deepest nesting of ``[`` and ``{`` in values, outside strings and comments.

    A linear scan: string contents and comments are skipped; table headers (``[a]``,
    ``[[a]]``) open and close on their line and so count one or two.
    """
    deepest = depth = 0
    index = 0
    length = len(text)
    while index < length:
        char = text[index]
        if char in "\"'":
            triple = text.startswith(char * 3, index)
            quote = char * 3 if triple else char
            index += len(quote)
            while index < length:
                if char == '"' and text[index] == "\\":
                    index += 2
                    continue
                if text.startswith(quote, index):
                    index += len(quote)
                    break
                if not triple and text[index] == "\n":
                    break
                index += 1
            continue
        if char == "#":
            end = text.find("\n", index)
            index = length if end == -1 else end
            continue
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth = max(0, depth - 1)
        index += 1
    return deepest
