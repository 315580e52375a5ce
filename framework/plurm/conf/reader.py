"""Read slurm.conf and its Includes into raw settings and records, in file order.

This is the layer that knows Slurm's line rules: one global key per line, record lines that
carry many pairs, DEFAULT records that merge and apply to later records, the last value of a
duplicated key winning with a warning, Include resolution. Values are checked against their
key's kind here (so every bad value is reported with its position), but their meaning is
the builder's business (build.py).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import attrs

from plurm.conf import keys
from plurm.conf.model import ConfNotice
from plurm.conf.source import SourceFile, split_logical_lines
from plurm.conf.syntax import Include, Pair, PairLine, parse_source
from plurm.conf.values import BadValue
from plurm.errors import (
    ConfError,
    ConfIncludeError,
    ConfKeyError,
    ConfSyntaxError,
    ConfValueError,
    InputFileError,
    SourceLocation,
)
from plurm.inputfile import MAX_CONF_BYTES, read_input
from plurm.inputfile import decode as decode

__all__ = ["RawConfig", "RawRecord", "Setting", "decode", "read_config"]

#: Include depth at which Plurm stops, whatever the files: a cycle check catches loops, this
#: catches pathological chains of distinct files.
MAX_INCLUDE_DEPTH = 64
#: Includes followed in one configuration, however they nest: a file that includes the next
#: one twice, 24 deep, would otherwise be read 2**24 times.
MAX_INCLUDES = 1024


@attrs.frozen
class Setting:
    """One key=value as written, with where it was written.

    Positions are kept as (file, logical line, column) and mapped to the physical line only
    when a message needs them, so reading a large file builds no locations at all.
    """

    key: str
    value: str
    source: SourceFile = attrs.field(repr=False, eq=False)
    index: int = attrs.field(eq=False)
    key_column: int = attrs.field(eq=False)
    value_column: int = attrs.field(eq=False)

    @property
    def location(self) -> SourceLocation:
        """Where the key starts."""
        return self.source.locate(self.index, self.key_column)

    @property
    def value_location(self) -> SourceLocation:
        """Where the value starts (inside the quotes of a quoted value)."""
        return self.source.locate(self.index, self.value_column)


@attrs.frozen
class RawRecord:
    """A record line (NodeName=..., PartitionName=...) with DEFAULT values merged in.

    ``settings`` maps the canonical sub-key to its setting; the record's own name is under the
    record key itself (for example "NodeName").
    """

    kind: str
    name: str
    settings: dict[str, Setting]
    location: SourceLocation


@attrs.define
class RawConfig:
    """Everything read: scalar settings (last one wins) and records in reading order."""

    scalars: dict[str, Setting] = attrs.Factory(dict)
    multi: dict[str, list[Setting]] = attrs.Factory(dict)
    records: list[RawRecord] = attrs.Factory(list)
    errors: list[ConfError] = attrs.Factory(list)
    notices: list[ConfNotice] = attrs.Factory(list)
    files: list[str] = attrs.Factory(list)
    main_dir: Path = Path(".")

    def get(self, key: str) -> str | None:
        setting = self.scalars.get(key)
        return setting.value if setting else None


Reader = Callable[[Path], bytes]


def _read_bytes(path: Path) -> bytes:
    return read_input(path, limit=MAX_CONF_BYTES)


def read_config(
    path: str | os.PathLike[str], *, text: str | None = None, read: Reader = _read_bytes
) -> RawConfig:
    """Read ``path`` (or ``text`` standing for it) and every file it includes."""
    main = Path(path)
    raw = RawConfig(main_dir=main.parent)
    _FileReader(raw, read).read(main, text=text, chain=())
    return raw


class _FileReader:
    def __init__(self, raw: RawConfig, read: Reader) -> None:
        self.raw = raw
        self.read_bytes = read
        self.defaults: dict[str, dict[str, Setting]] = {}
        self.includes = 0

    # ----------------------------------------------------------------------------- files

    def read(
        self,
        path: Path,
        *,
        text: str | None,
        chain: tuple[str, ...],
        resolved: tuple[str, ...] = (),
    ) -> None:
        if text is None:
            text = decode(self.read_bytes(path))
        self.raw.files.append(str(path))
        resolved = (*resolved, _resolved(path))
        source = split_logical_lines(str(path), text)
        statements, syntax_errors = parse_source(source)
        pending = iter(sorted(syntax_errors, key=lambda e: _line_of(e)))
        next_error = next(pending, None)
        for statement in statements:
            while (
                next_error is not None
                and _line_of(next_error) <= source.lines[statement.index].first_line
            ):
                self.raw.errors.append(next_error)
                next_error = next(pending, None)
            if isinstance(statement, Include):
                self._include(source, statement, (*chain, str(path)), resolved)
            else:
                self._pairs(source, statement)
        while next_error is not None:
            self.raw.errors.append(next_error)
            next_error = next(pending, None)

    def _include(
        self,
        source: SourceFile,
        include: Include,
        chain: tuple[str, ...],
        resolved: tuple[str, ...],
    ) -> None:
        location = source.locate(include.index, include.column)
        if include.column != 1:
            self.raw.errors.append(
                ConfSyntaxError(
                    f"parse error: {source.lines[include.index].text.strip()!r} "
                    "(Include must start in column 1)",
                    location,
                )
            )
            return
        name = include.path
        if "%c" in name:
            cluster = self.raw.get("ClusterName")
            if cluster is None:
                self.raw.errors.append(
                    ConfIncludeError(
                        f"Include {name}: %c needs ClusterName to be set before this line",
                        location,
                        chain,
                    )
                )
                return
            name = name.replace("%c", cluster.lower())
        target = Path(name)
        if not target.is_absolute():
            # Relative to the file that holds the Include line, as Slurm resolves it.
            target = Path(source.path).parent / target
        if str(target) in chain or _resolved(target) in resolved:
            # The same file however it is spelled (../d/a.conf, ./../d/a.conf, a symlink).
            self.raw.errors.append(
                ConfIncludeError(f"Include {include.path}: circular include", location, chain)
            )
            return
        if len(chain) >= MAX_INCLUDE_DEPTH:
            self.raw.errors.append(
                ConfIncludeError(
                    f"Include {include.path}: includes nest deeper than {MAX_INCLUDE_DEPTH}",
                    location,
                    chain,
                )
            )
            return
        if self.includes >= MAX_INCLUDES:
            self.raw.errors.append(
                ConfIncludeError(
                    f"Include {include.path}: more than {MAX_INCLUDES} includes in one "
                    "configuration",
                    location,
                    chain,
                )
            )
            return
        self.includes += 1
        if target.is_dir():
            # Slurm reads a directory as an empty file and goes on.
            self.raw.notices.append(
                ConfNotice(f"Include {include.path}: is a directory; nothing read", location)
            )
            return
        try:
            text = decode(self.read_bytes(target))
        except InputFileError as error:
            # A device or a pipe could block or never end; Plurm reads regular files only.
            self.raw.errors.append(
                ConfIncludeError(f"Include failed: {target} {error.strerror}", location, chain)
            )
            return
        except OSError as error:
            reason = error.strerror or type(error).__name__
            self.raw.errors.append(
                ConfIncludeError(f"Include failed: cannot read {target}: {reason}", location, chain)
            )
            return
        self.read(target, text=text, chain=chain, resolved=resolved)

    # ----------------------------------------------------------------------------- lines

    def _pairs(self, source: SourceFile, line: PairLine) -> None:
        first = line.pairs[0]
        record = keys.record_kind(first.key)
        if record is not None:
            self._record(source, line, record)
            return
        spec = keys.top(first.key)
        location = source.locate(line.index, first.key_column)
        if spec is None:
            self.raw.errors.append(
                ConfKeyError(first.key, location, suggestion=keys.suggest(first.key))
            )
            return
        if len(line.pairs) > 1:
            extra = line.pairs[1]
            self.raw.errors.append(
                ConfSyntaxError(
                    f"only one key=value may appear on a line with {spec.name}; "
                    f"found {extra.key}={extra.value} after it",
                    source.locate(line.index, extra.key_column),
                )
            )
            return
        self._scalar(source, line.index, first, spec)

    def _scalar(self, source: SourceFile, index: int, pair: Pair, spec: keys.KeySpec) -> None:
        setting = _setting(source, index, pair, spec.name)
        self._note_operator(pair, setting)
        if spec.removed:
            self.raw.errors.append(ConfError(spec.removed, setting.location))
            return
        if spec.defunct:
            self.raw.notices.append(
                ConfNotice(f"{spec.name} is defunct, please remove it", setting.location)
            )
        if not self._check(spec, setting):
            return
        if spec.multi:
            self.raw.multi.setdefault(spec.name, []).append(setting)
            return
        if spec.name in self.raw.scalars:
            self.raw.notices.append(
                ConfNotice(
                    f"{spec.name} specified more than once, latest value used", setting.location
                )
            )
        self.raw.scalars[spec.name] = setting

    def _note_operator(self, pair: Pair, setting: Setting) -> None:
        notice = _operator_notice(pair, setting)
        if notice is not None:
            self.raw.notices.append(notice)

    def _check(self, spec: keys.KeySpec, setting: Setting) -> bool:
        if spec.check is None:
            return True
        try:
            spec.check(setting.value)
        except BadValue as error:
            self.raw.errors.append(
                ConfValueError(spec.name, setting.value, str(error), setting.value_location)
            )
            return False
        return True

    def _record(self, source: SourceFile, line: PairLine, kind: str) -> None:
        table = keys.record_keys(kind)
        first = line.pairs[0]
        location = source.locate(line.index, first.key_column)
        if kind in keys.FATAL_RECORDS:
            self.raw.errors.append(ConfError(keys.FATAL_RECORDS[kind], location))
            return
        settings: dict[str, Setting] = {}
        for pair in line.pairs[1:]:
            spec = table.get(pair.key.lower())
            if spec is None:
                self.raw.errors.append(
                    ConfKeyError(
                        pair.key,
                        source.locate(line.index, pair.key_column),
                        record=kind,
                        suggestion=keys.suggest(pair.key, kind),
                    )
                )
                return
            setting = _setting(source, line.index, pair, spec.name)
            self._note_operator(pair, setting)
            if not self._check(spec, setting):
                return
            if spec.name in settings:
                self.raw.notices.append(
                    ConfNotice(
                        f"{spec.name} specified more than once, latest value used",
                        setting.location,
                    )
                )
            settings[spec.name] = setting
        name = first.value
        if kind in keys.DEFAULTABLE_RECORDS and name.lower() == "default":
            merged = dict(self.defaults.get(kind, {}))
            merged.update(settings)
            self.defaults[kind] = merged
            return
        effective = dict(self.defaults.get(kind, {}))
        effective.update(settings)
        effective[kind] = _setting(source, line.index, first, kind)
        self.raw.records.append(RawRecord(kind, name, effective, location))


def _operator_notice(pair: Pair, setting: Setting) -> ConfNotice | None:
    """slurm.conf takes ``K+=V`` (and -=, *=, /=) but simply sets K to V, as Slurm does."""
    if not pair.op:
        return None
    return ConfNotice(
        f"{setting.key}{pair.op}={pair.value}: the {pair.op}= operator has no meaning in "
        f"slurm.conf; {setting.key} is set to {pair.value!r}",
        setting.location,
    )


def _setting(source: SourceFile, index: int, pair: Pair, canonical: str) -> Setting:
    value_column = pair.value_column + (1 if pair.quoted else 0)
    return Setting(canonical, pair.value, source, index, pair.key_column, value_column)


def _line_of(error: ConfError) -> int:
    return error.location.line if error.location else 0


def _resolved(path: Path) -> str:
    """The file a path names, however it is spelled, for the cycle check."""
    try:
        return str(path.resolve())
    except (OSError, RuntimeError):  # a symlink loop: the path as written will do
        return os.path.abspath(path)
