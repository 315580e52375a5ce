"""A per-user cache of parsed configurations, for Slurm's commands: the configuration, and
where the auth plugins it names come from.

A command is a new process for every call, and parsing slurm.conf (lark's grammar and
parser, the build) costs it more than everything else it does. The commands therefore load
their configuration through :func:`load`, which keeps the parsed :class:`SlurmConfig` in the
user's cache directory (``$XDG_CACHE_HOME/plurm``, else ``~/.cache/plurm``), one file per
slurm.conf path, and uses it only while nothing it was read from has changed:

* every file the configuration was read from (slurm.conf, its Includes, qos.conf,
  accounts.conf, plurm.conf and gres.conf), and the companions that were absent then (a
  qos.conf or gres.conf created since counts as a change), is stamped with its device,
  inode, size, modification and change times in nanoseconds: any write, replacement or
  removal changes a stamp;
* so is Plurm's own code (the files of the ``plurm`` package), so that a new version never
  reads a configuration an old one pickled.

The commands still read the file ``SLURM_CONF`` names (else /etc/slurm/slurm.conf) each time,
as Slurm's do; the cache only spares them parsing it again while it is unchanged. A
configuration with errors is never cached, so its errors are reported exactly as without
the cache. Anything wrong with the cache (unreadable, another user's, stale, from another
Python) falls back to parsing. The daemons do not use it: they parse at start.

With the configuration it keeps where each of the auth plugins (AuthType, AuthAltTypes)
was found: the entry point's ``module:attribute`` and its distribution, so that a command
imports its auth plugin without scanning every installed distribution's entry points
(importlib.metadata, and the email parser it loads). That part is used only while the
directories on ``sys.path`` are unchanged (installing or removing a distribution changes
its directory) and ``PLURM_DISABLED_PLUGINS`` is the same; else the plugins are looked up
again.

Why not ask plurmctld for the configuration instead: a command must read the file first to
find the controller and the auth plugin, Slurm's commands use the file on disk (which may
differ from what the controller read at its start), and it would cost every command a
second round trip.
"""

from __future__ import annotations

import logging
import os
import pickle
import stat
import sys
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from plurm._stamp import code_stamp
from plurm.conf.model import SlurmConfig

__all__ = ["cache_dir", "load", "load_for_command"]

logger = logging.getLogger(__name__)

#: Bumped when the cache file's layout changes.
_LAYOUT = 1

_Stamp = tuple[int, int, int, int, int] | None

#: The files beside slurm.conf that parsing reads when they exist: one created since the
#: configuration was cached counts as a change.
_COMPANIONS = ("qos.conf", "accounts.conf", "plurm.conf", "gres.conf")


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "plurm"


def _stamp(path: str) -> _Stamp:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _code_stamp() -> str:
    """Plurm's code as it is on disk (:func:`plurm._stamp.code_stamp`)."""
    return code_stamp(_LAYOUT)


def _sources(config: SlurmConfig, main: Path) -> list[str]:
    """Every file the configuration depends on, including the companions it lacked."""
    files = [str(main), *config.files]
    files += [str(main.parent / name) for name in _COMPANIONS]
    return sorted(set(files))


def _entry(main: Path) -> Path:
    # two paths with one checksum share a file, which each then finds naming the other path
    return cache_dir() / f"conf-{zlib.crc32(os.fsencode(main)):08x}.pickle"


def _read(entry: Path, main: Path, code: str) -> dict[str, Any] | None:
    """The entry's saved values (config, stamps, plugins), if it is this user's, for this
    code and file, and every file it was read from is unchanged."""
    try:
        fd = os.open(entry, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        st = os.fstat(fd)
        # only a file of this user's that nobody else may write
        if st.st_uid != os.getuid() or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            return None
        try:
            saved = pickle.load(handle)
        except Exception:  # a torn or foreign file: parse instead
            return None
    if not isinstance(saved, dict) or (saved.get("code"), saved.get("main")) != (code, str(main)):
        return None
    stamps = saved.get("stamps")
    config = saved.get("config")
    if not isinstance(stamps, dict) or not isinstance(config, SlurmConfig):
        return None
    if any(_stamp(path) != stamp for path, stamp in stamps.items()):
        return None
    return saved


def _write(
    entry: Path,
    main: Path,
    code: str,
    config: SlurmConfig,
    stamps: dict[str, _Stamp],
    plugins: tuple[str, Resolved] | None,
) -> None:
    try:
        entry.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        data = pickle.dumps(
            {
                "code": code,
                "main": str(main),
                "stamps": stamps,
                "config": config,
                "plugins": plugins,
            },
            protocol=pickle.HIGHEST_PROTOCOL,
        )
        temp = entry.with_name(f"{entry.name}.{os.getpid()}.tmp")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temp, entry)
    except (OSError, pickle.PicklingError, TypeError, AttributeError) as error:
        logger.debug("conf cache not written path=%s: %s", entry, error)


#: Where a command's auth plugins come from: type string -> (entry point value, source).
Resolved = dict[str, tuple[str, str]]


def load(path: str | os.PathLike[str]) -> SlurmConfig:
    """The configuration at ``path``, as :func:`plurm.conf.load` reads it, from the cache
    while none of its files has changed."""
    return load_for_command(path, resolve=False)[0]


def load_for_command(
    path: str | os.PathLike[str],
    *,
    resolve: bool = True,
    loaded: Callable[[Path, SlurmConfig, dict[str, _Stamp], Resolved | None], None] | None = None,
) -> tuple[SlurmConfig, Resolved | None]:
    """The configuration at ``path`` and where its auth plugins come from (None when they
    cannot be resolved: the caller then loads them the ordinary way, which reports why).
    ``loaded`` is told the file's absolute path, the configuration, the stamps of the files
    it was read from and its auth plugins (the thin sbatch's sidecar is written there)."""
    from plurm import conf

    main = Path(os.path.abspath(path))
    try:
        code = _code_stamp()
    except OSError:  # Plurm's own files cannot be listed: no cache, parse
        return conf.load(path), None
    entry = _entry(main)
    saved = _read(entry, main, code)
    if saved is not None:
        config, resolved = saved["config"], saved.get("plugins")
        if not resolve:
            return config, None
        plugins = _plugins_stamp()
        if isinstance(resolved, tuple) and resolved[0] == plugins:
            if loaded is not None:
                loaded(main, config, saved["stamps"], resolved[1])
            return config, resolved[1]
        stamps = saved["stamps"]
    else:
        # stamp before reading: a file changed while it is parsed then fails the next check
        before = {name: _stamp(name) for name in _sources_guess(main)}
        config = conf.load(path)  # as given, so that its errors name it as given
        stamps = {name: before.get(name, _stamp(name)) for name in _sources(config, main)}
        plugins = _plugins_stamp()
    found = _resolve(config) if resolve else None
    _write(entry, main, code, config, stamps, None if found is None else (plugins, found))
    if loaded is not None and resolve:
        loaded(main, config, stamps, found)
    return config, found


def _resolve(config: SlurmConfig) -> Resolved | None:
    from plurm.registry import PluginError, Registry

    try:
        registry = Registry()
        return {t: registry.resolve(t) for t in config.plugin_types()["auth"]}
    except PluginError:
        return None


def _plugins_stamp() -> str:
    """The directories plugins are found in, as they are now."""
    parts = [os.environ.get("PLURM_DISABLED_PLUGINS", "")]
    for place in sys.path:
        if not place or place == ".":
            continue  # the working directory (python -c): no place to install plugins
        try:
            st = os.stat(place)
        except OSError:
            continue
        parts.append(f"{place} {st.st_ino} {st.st_mtime_ns} {st.st_ctime_ns}")
    return "\n".join(parts)


def _sources_guess(main: Path) -> list[str]:
    """The files known to matter before parsing (Includes are known only after)."""
    return [str(main), *(str(main.parent / name) for name in _COMPANIONS)]
