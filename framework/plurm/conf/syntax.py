"""The lark grammar of slurm.conf lines, and its output: statements with positions.

:func:`parse_source` turns a :class:`~plurm.conf.source.SourceFile` into a list of
:class:`Include` and :class:`PairLine` statements. It parses the whole file in one LALR pass;
only when that fails does it parse line by line, so that every bad line is reported (Slurm,
too, goes on after a bad line and refuses the file at the end).
"""

from __future__ import annotations

from importlib import resources

import attrs
import lark
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from plurm.conf.source import SourceFile
from plurm.errors import ConfSyntaxError

__all__ = ["Include", "Pair", "PairLine", "Statement", "parse_source"]


@attrs.frozen
class Pair:
    """``key[op]=value`` with 1-based logical columns of the key and the value."""

    key: str
    value: str
    op: str = ""
    key_column: int = 1
    value_column: int = 1
    quoted: bool = False


@attrs.frozen
class PairLine:
    """A logical line of one or more pairs; ``index`` is its 0-based logical line number."""

    index: int
    pairs: tuple[Pair, ...]


@attrs.frozen
class Include:
    """An ``Include FILE`` line; ``column`` is where the keyword starts (1 in valid files)."""

    index: int
    path: str
    column: int
    path_column: int


Statement = Include | PairLine


class _ToStatements(lark.Transformer[lark.Token, list[Statement]]):
    """Builds statements while the LALR parser reduces, so no parse tree is ever built."""

    def start(self, children: list[Statement]) -> list[Statement]:
        return children

    def include(self, children: list[lark.Token]) -> Include:
        keyword, path = children
        return Include(self._index(keyword), str(path), keyword.column or 1, path.column or 1)

    def pairs(self, children: list[tuple[int, Pair]]) -> PairLine:
        return PairLine(children[0][0], tuple(pair for _, pair in children))

    def pair(self, children: list[lark.Token]) -> tuple[int, Pair]:
        key, *middle, value = children
        quoted = value.type == "QUOTED"
        text = str(value)[1:-1] if quoted else str(value)
        op = str(middle[0]) if middle else ""
        return self._index(key), Pair(
            str(key), text, op, key.column or 1, value.column or 1, quoted
        )

    def quoted(self, children: list[lark.Token]) -> lark.Token:
        return children[0]

    def bare(self, children: list[lark.Token]) -> lark.Token:
        return children[0]

    def _index(self, token: lark.Token) -> int:
        return (token.line or 1) - 1


def _make_parser() -> lark.Lark:
    grammar = resources.files("plurm.conf").joinpath("slurm.lark").read_text(encoding="utf-8")
    return lark.Lark(
        grammar,
        parser="lalr",
        lexer="contextual",
        maybe_placeholders=False,
        transformer=_ToStatements(),
    )


_PARSER = _make_parser()


def parse_source(source: SourceFile) -> tuple[list[Statement], list[ConfSyntaxError]]:
    """The statements of ``source``, and a syntax error for each logical line that has one."""
    text = "\n".join(line.text for line in source.lines) + "\n"
    try:
        return _parse(text), []
    except UnexpectedInput:
        pass
    statements: list[Statement] = []
    errors: list[ConfSyntaxError] = []
    for index, line in enumerate(source.lines):
        try:
            parsed = _parse(line.text + "\n")
        except UnexpectedInput as error:
            errors.append(_syntax_error(source, index, line.text, error))
            continue
        statements.extend(attrs.evolve(statement, index=index) for statement in parsed)
    return statements, errors


def _parse(text: str) -> list[Statement]:
    result: list[Statement] = _PARSER.parse(text)  # type: ignore[assignment]
    return result


def _syntax_error(
    source: SourceFile, index: int, text: str, error: UnexpectedInput
) -> ConfSyntaxError:
    column = error.column if isinstance(error.column, int) and error.column > 0 else 1
    message = f"parse error: {text.strip()!r}"
    if isinstance(error, UnexpectedToken):
        token = error.token
        expected = set(error.expected)
        if expected <= {"QUOTED", "BARE"}:
            message = 'a value must follow "=" (write Key="" for an empty value)'
        elif "EQUAL" in expected:
            previous_key = str(error.token_history[-1]) if error.token_history else ""
            message = f'expected "=" after key {previous_key!r}'
            if token.type != "_NL" and token.column:
                column = token.column
            elif error.token_history:
                previous = error.token_history[-1]
                column = previous.column or column
        elif token.type == "BARE" and token.value.startswith('"'):
            message = f"a key must start a pair, not {token.value!r}"
        elif token.type == "BARE" and token.column:
            message = f"not a key=value pair: {token.value!r}"
    elif isinstance(error, UnexpectedCharacters):
        message = f"unexpected character {text[column - 1 : column]!r}"
    return ConfSyntaxError(message, source.locate(index, column))
