"""A getopt_long-style parser for Slurm's commands.

Slurm parses options the way GNU getopt_long does: ``-N1`` and ``-N 1``, ``--nodes=1`` and
``--nodes 1``, unambiguous prefixes of long options, and (for sbatch) the first non-option
argument ends the options: it is the script, and the rest are its arguments.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from plurm.commands.base import CommandError

__all__ = ["Option", "parse_options"]


@attrs.frozen
class Option:
    """One option: its canonical name, spellings and whether it takes a value."""

    name: str
    short: str | None = None
    long: tuple[str, ...] = ()
    takes_value: bool = True


def parse_options(
    program: str,
    argv: Sequence[str],
    options: Sequence[Option],
    *,
    stop_at_first_argument: bool = False,
    status: int = 1,
) -> tuple[list[tuple[str, str | None]], list[str]]:
    """(name, value) pairs in command-line order, and the remaining arguments; a bad option
    is a CommandError with exit ``status``."""
    by_short = {opt.short: opt for opt in options if opt.short}
    by_long = {spelling: opt for opt in options for spelling in opt.long}
    found: list[tuple[str, str | None]] = []
    rest: list[str] = []
    words = list(argv)
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if word == "--":
            rest.extend(words[index:])
            break
        if word.startswith("--"):
            name, equals, value = word[2:].partition("=")
            option = by_long.get(name)
            if option is None:
                matches = sorted(
                    {opt.name: opt for s, opt in by_long.items() if s.startswith(name)}.values(),
                    key=lambda o: o.name,
                )
                if len(matches) != 1:
                    raise CommandError(
                        f"{program}: unrecognized option '--{name}'\n"
                        f'Try "{program} --help" for more information',
                        status,
                    )
                option = matches[0]
            if option.takes_value and not equals:
                if index >= len(words):
                    raise CommandError(
                        f"{program}: option '--{name}' requires an argument\n"
                        f'Try "{program} --help" for more information',
                        status,
                    )
                value = words[index]
                index += 1
            found.append((option.name, value if option.takes_value else None))
            continue
        if word.startswith("-") and len(word) > 1:
            position = 1
            while position < len(word):
                letter = word[position]
                option = by_short.get(letter)
                if option is None:
                    raise CommandError(
                        f"{program}: invalid option -- '{letter}'\n"
                        f'Try "{program} --help" for more information',
                        status,
                    )
                if not option.takes_value:
                    found.append((option.name, None))
                    position += 1
                    continue
                value = word[position + 1 :]
                if not value:
                    if index >= len(words):
                        raise CommandError(
                            f"{program}: option requires an argument -- '{letter}'\n"
                            f'Try "{program} --help" for more information',
                            status,
                        )
                    value = words[index]
                    index += 1
                found.append((option.name, value))
                break
            continue
        rest.append(word)
        if stop_at_first_argument:
            rest.extend(words[index:])
            break
    return found, rest
