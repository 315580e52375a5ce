"""One line of qmgr.conf: a ``qmgr`` command, split into verb, object and attributes.

The forms read (each word may be abbreviated as qmgr allows: ``s q`` for ``set queue``)::

    create queue NAME [attr = value[, attr = value ...]]
    set    server [NAME] attr = value[, ...]
    set    queue NAME attr = value[, ...]          (also += to add limit entries)
    set    sched [NAME] attr = value[, ...]
    unset  queue NAME attr[, attr ...]
    qmgr -c "set queue NAME priority = 200"       (the whole command line, pasted)

A value is one word, or a quoted string ("..." or '...') that may hold blanks and commas;
inside brackets (``[u:bob=3]``) a comma does not end the value. Columns are 1-based
positions in the logical line, for error messages.
"""

from __future__ import annotations

import re

import attrs

__all__ = ["Attribute", "BadSyntax", "Command", "parse_command"]

VERBS = {"create": "create", "c": "create", "set": "set", "s": "set", "unset": "unset"}
VERBS |= {"u": "unset"}
_REFUSED_VERBS = ("active", "delete", "export", "help", "import", "list", "print", "quit")
OBJECTS = {
    "server": "server",
    "s": "server",
    "queue": "queue",
    "q": "queue",
    "sched": "sched",
    "sc": "sched",
    "node": "node",
    "n": "node",
    "resource": "resource",
    "r": "resource",
    "hook": "hook",
    "h": "hook",
    "pbshook": "pbshook",
}


class BadSyntax(Exception):
    """A line that is not a qmgr command: ``reason`` and the 1-based ``column``."""

    def __init__(self, reason: str, column: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.column = column


@attrs.frozen
class Attribute:
    """``name op value`` (``op`` is ``=``, ``+=`` or ``-=``; empty for unset)."""

    name: str
    op: str
    value: str
    name_column: int
    value_column: int


@attrs.frozen
class Command:
    """One command; ``name`` is the object's name ("" when none is given)."""

    verb: str
    kind: str
    name: str
    name_column: int
    attributes: tuple[Attribute, ...]


_WORD = re.compile(r"[^\s,=+\-\"']+(?:-[^\s,=+\-\"']+)*")
_ATTR = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_\-]+)?")
_WRAPPED = re.compile(r"\s*qmgr\s+-c\s*([\"'])(.*)\1\s*$")


class _Scanner:
    def __init__(self, text: str, base: int) -> None:
        self.text = text
        self.base = base  # column of text[0], minus 1
        self.pos = 0

    def column(self, pos: int | None = None) -> int:
        return self.base + (self.pos if pos is None else pos) + 1

    def blanks(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def at_end(self) -> bool:
        self.blanks()
        return self.pos >= len(self.text)

    def word(self, what: str) -> tuple[str, int]:
        self.blanks()
        match = _WORD.match(self.text, self.pos)
        if match is None:
            found = self.text[self.pos : self.pos + 1] or "the end of the line"
            raise BadSyntax(f"expected {what}, found {found!r}", self.column())
        self.pos = match.end()
        return match.group(), self.column(match.start())

    def peek_operator(self) -> str:
        self.blanks()
        for op in ("+=", "-=", "="):
            if self.text.startswith(op, self.pos):
                return op
        return ""

    def value(self) -> tuple[str, int]:
        self.blanks()
        start = self.pos
        if start < len(self.text) and self.text[start] in "\"'":
            quote = self.text[start]
            end = self.text.find(quote, start + 1)
            if end == -1:
                raise BadSyntax(f"unclosed {quote} quote", self.column(start))
            self.pos = end + 1
            return self.text[start + 1 : end], self.column(start + 1)
        depth = 0
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if char == "[":
                depth += 1
            elif char == "]":
                depth = max(0, depth - 1)
            elif depth == 0 and (char.isspace() or char == ","):
                break
            self.pos += 1
        if self.pos == start:
            raise BadSyntax("expected a value", self.column(start))
        return self.text[start : self.pos], self.column(start)


def parse_command(text: str) -> Command | None:
    """The command on a logical line, or None for a blank line. Raises :class:`BadSyntax`."""
    base = 0
    wrapped = _WRAPPED.match(text)
    if wrapped is not None:
        base = wrapped.start(2)
        text = wrapped.group(2)
    scan = _Scanner(text, base)
    if scan.at_end():
        return None
    verb_word, verb_column = scan.word("a qmgr command")
    verb = VERBS.get(verb_word.lower())
    if verb is None:
        if verb_word.lower() in _REFUSED_VERBS:
            raise BadSyntax(
                f"qmgr.conf holds only create, set and unset commands, not {verb_word!r}",
                verb_column,
            )
        raise BadSyntax(
            f"unknown qmgr command {verb_word!r} (expected create, set or unset)", verb_column
        )
    kind_word, kind_column = scan.word("an object type (server, queue, sched)")
    kind = OBJECTS.get(kind_word.lower())
    if kind is None:
        raise BadSyntax(
            f"unknown qmgr object {kind_word!r} (expected server, queue, sched or node)",
            kind_column,
        )
    name, name_column = "", kind_column
    # An object name comes first when the word after it is not an operator or a comma.
    if not scan.at_end():
        saved = scan.pos
        word, column = scan.word("an attribute")
        if kind not in ("server", "sched"):
            name, name_column = word, column
        elif scan.peek_operator() or scan.at_end() or scan.text[scan.pos] == ",":
            scan.pos = saved  # the word was the first attribute
        else:
            name, name_column = word, column
    if kind == "queue" and not name:
        raise BadSyntax(f"{verb} queue needs the queue's name", scan.column())
    attributes = _attributes(scan, verb)
    return Command(verb, kind, name, name_column, attributes)


def _attributes(scan: _Scanner, verb: str) -> tuple[Attribute, ...]:
    out: list[Attribute] = []
    while not scan.at_end():
        match = _ATTR.match(scan.text, scan.pos)
        if match is None:
            found = scan.text[scan.pos]
            raise BadSyntax(f"expected an attribute name, found {found!r}", scan.column())
        name, name_column = match.group(), scan.column()
        scan.pos = match.end()
        if verb == "unset":
            out.append(Attribute(name, "", "", name_column, name_column))
        else:
            op = scan.peek_operator()
            if not op:
                raise BadSyntax(f"expected '=' after {name}", scan.column())
            scan.pos += len(op)
            value, value_column = scan.value()
            out.append(Attribute(name, op, value, name_column, value_column))
        if scan.at_end():
            break
        if scan.text[scan.pos] != ",":
            raise BadSyntax("expected ',' between attributes", scan.column())
        scan.pos += 1
        if scan.at_end():
            raise BadSyntax("expected an attribute after ','", scan.column())
    if verb != "create" and not out:
        raise BadSyntax(f"{verb} needs at least one attribute", scan.column())
    return tuple(out)
