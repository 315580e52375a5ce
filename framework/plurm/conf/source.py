"""From the bytes of one slurm.conf file to its logical lines, as Slurm reads them.

Slurm handles each physical line in three steps before it looks for keys:

1. a ``#`` preceded by an even number of backslashes starts a comment (so ``\\#`` is a literal);
2. a line whose text, ignoring trailing white space, ends in an odd number of backslashes
   continues on the next physical line, joined *directly* with no space put in between;
3. every remaining single backslash is removed and the character after it kept (``\\\\`` -> ``\\``).

The grammar then sees one logical line per physical line group. Because steps 2 and 3 shift
characters, :class:`LogicalLine` keeps the raw physical lines so that a position in the logical
text can be mapped back to the physical line and column an editor shows. That mapping is only
computed when an error is reported; the fast path never builds per-character tables.
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs

from plurm.errors import SourceLocation

__all__ = ["LogicalLine", "SourceFile", "split_logical_lines"]


@attrs.frozen
class LogicalLine:
    """One logical line: ``text`` after comment, continuation and escape handling.

    ``first_line`` is the 1-based number of the first physical line; ``raw`` holds the physical
    lines that were joined, exactly as they are in the file.
    """

    text: str
    first_line: int
    raw: tuple[str, ...]


@attrs.frozen
class SourceFile:
    """A configuration file split into logical lines; ``path`` is what messages show."""

    path: str
    lines: tuple[LogicalLine, ...]

    def locate(self, index: int, column: int) -> SourceLocation:
        """Map a 0-based logical line ``index`` and 1-based logical ``column`` to the file."""
        logical = self.lines[index]
        if len(logical.raw) == 1 and "\\" not in logical.raw[0]:
            physical, physical_column = 0, column  # nothing moved: the common case
        else:
            physical, physical_column = _map_column(logical.raw, column)
        return SourceLocation(
            self.path,
            logical.first_line + physical,
            physical_column,
            _display(logical.raw[physical]),
        )

    def whole_line(self, index: int) -> SourceLocation:
        """The location of a logical line as a whole (its first physical line)."""
        logical = self.lines[index]
        return SourceLocation(self.path, logical.first_line, 0, _display(logical.raw[0]))


def _display(raw: str) -> str:
    return raw.rstrip("\r\n")


def _comment_start(line: str) -> int:
    """Index of the first ``#`` preceded by an even number of backslashes, or -1."""
    start = line.find("#")
    while start != -1:
        backslashes = 0
        while start - backslashes > 0 and line[start - backslashes - 1] == "\\":
            backslashes += 1
        if backslashes % 2 == 0:
            return start
        start = line.find("#", start + 1)
    return -1


def _strip_comment(line: str) -> str:
    if "#" not in line:
        return line
    cut = _comment_start(line)
    return line if cut == -1 else line[:cut]


def _continues(line: str) -> str | None:
    """The line without its continuation backslash, or None when it does not continue."""
    body = line.rstrip()
    if not body.endswith("\\"):
        return None
    backslashes = len(body) - len(body.rstrip("\\"))
    if backslashes % 2 == 0:
        return None
    return body[:-1]


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text
    out: list[str] = []
    chars = iter(text)
    for char in chars:
        if char == "\\":
            out.append(next(chars, ""))
        else:
            out.append(char)
    return "".join(out)


def split_logical_lines(path: str, text: str) -> SourceFile:
    """Split ``text`` (the content of ``path``) into its logical lines."""
    physical = text.split("\n")
    if physical and physical[-1] == "":
        physical.pop()
    if "\0" in text:
        # Slurm reads lines as C strings: whatever follows a NUL byte on its line is unseen.
        physical = [line.partition("\0")[0] for line in physical]
    return SourceFile(path, tuple(_join(physical)))


def _join(physical: list[str]) -> Iterator[LogicalLine]:
    index = 0
    count = len(physical)
    while index < count:
        first = index
        line = physical[index]
        index += 1
        if "\\" not in line:
            yield LogicalLine(_strip_comment(line), first + 1, (line,))
            continue
        parts: list[str] = []
        raw = [line]
        while True:
            stripped = _strip_comment(line)
            joined = _continues(stripped)
            if joined is None or index >= count:
                parts.append(stripped if joined is None else joined)
                break
            parts.append(joined)
            line = physical[index]
            raw.append(line)
            index += 1
        yield LogicalLine(_unescape("".join(parts)), first + 1, tuple(raw))


def _map_column(raw: tuple[str, ...], column: int) -> tuple[int, int]:
    """Replay the three steps over ``raw``, tracking where each logical character came from.

    Returns the 0-based physical line offset and the 1-based physical column of logical
    ``column``; a column past the end maps to just after the last character kept.
    """
    origins: list[tuple[int, int]] = []
    for offset, line in enumerate(raw):
        stripped = _strip_comment(line)
        joined = _continues(stripped)
        kept = stripped if joined is None else joined
        position = 0
        while position < len(kept):
            if kept[position] == "\\" and position + 1 < len(kept):
                position += 1
            origins.append((offset, position + 1))
            position += 1
    if not origins:
        return 0, 1
    if 1 <= column <= len(origins):
        return origins[column - 1]
    last_offset, last_column = origins[-1]
    return last_offset, last_column + 1
