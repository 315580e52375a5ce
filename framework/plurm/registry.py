"""From a type string in slurm.conf to a plugin object, through Python entry points.

``SelectType=select/linear`` names the entry point ``linear`` in the group ``plurm.select``,
exactly as Slurm turns it into the file ``select_linear.so``. Built-in plugins (``sched/builtin``,
``preempt/none``, ``auth/none``, ``jobacct_gather/none``, ``priority/basic``) are entry points
of the ``plurm`` distribution itself, so they load the same way as a third party's.

An entry point names a *factory*: a class or function that takes a :class:`PluginContext` and
returns the object whose ``@hookimpl`` methods are registered. The factory declares the hook
API it was written for as ``PLURM_HOOK_API = (major, minor)``; a different major version is
refused (:class:`PluginAPIVersionError`), a newer minor one is accepted.

Environment:

* ``PLURM_DISABLED_PLUGINS``: comma list of type strings that must not load (like pytest's
  ``-p no:NAME``); asking for one is a :class:`PluginNotFoundError`.
"""

from __future__ import annotations

import difflib
import importlib
import os
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from plurm._markers import HOOK_API_VERSION, NAME
from plurm.conf.model import NO_EFFECT_KEYS, SlurmConfig
from plurm.errors import PlurmError
from plurm.params import PluginOption, declared_options, option_values

if TYPE_CHECKING:  # importlib.metadata (and the email parser it imports) loads on first scan
    from importlib import metadata

__all__ = [
    "GROUPS",
    "PluginAPIVersionError",
    "PluginConflictError",
    "PluginContext",
    "PluginError",
    "PluginLoadError",
    "PluginNotFoundError",
    "Registry",
    "import_factory",
]

#: slurm.conf's plugin type prefixes and their entry-point groups.
GROUPS = {
    "select": f"{NAME}.select",
    "preempt": f"{NAME}.preempt",
    "sched": f"{NAME}.sched",
    "auth": f"{NAME}.auth",
    "jobacct_gather": f"{NAME}.acct_gather",
    "acct_gather": f"{NAME}.acct_gather",
    # Slurm's plugins with no effect in simulation (plurm.builtin.no_effect), by the
    # prefix of their type strings.
    **{prefix: f"{NAME}.{prefix}" for prefix in NO_EFFECT_KEYS.values()},
    "priority": f"{NAME}.priority",
}


class PluginError(PlurmError):
    """A plugin could not be found, loaded or combined with the others."""


class PluginLoadError(PluginError):
    """A plugin failed to import, to build, or to pass pluggy's checks."""


class PluginNotFoundError(PluginLoadError):
    """No installed plugin has the configured type string; the message lists those that are."""


class PluginAPIVersionError(PluginLoadError):
    """The plugin was written for another major version of the hook API."""


class PluginConflictError(PluginError):
    """Two plugins claim one type string, or two implement one exclusive hook."""


@attrs.frozen
class PluginContext:
    """What a plugin factory receives: the configuration, the type string it serves, and
    the typed values of the options it declares (``PLURM_OPTIONS``, see
    :mod:`plurm.params`), each its default when slurm.conf does not set it."""

    config: SlurmConfig
    type_string: str
    options: Mapping[str, object] = attrs.field(factory=dict)

    @property
    def logger_name(self) -> str:
        """Where the plugin should log: ``plurm.plugin.<type>.<name>``."""
        major, _, minor = self.type_string.partition("/")
        return f"{NAME}.plugin.{major}.{minor}"


@attrs.frozen
class LoadedPlugin:
    """A plugin object with where it came from."""

    type_string: str
    plugin: object
    distribution: str
    api: tuple[int, int]
    #: The options its factory declares.
    options: tuple[PluginOption, ...] = ()


def _split(type_string: str) -> tuple[str, str]:
    major, slash, minor = type_string.partition("/")
    if not slash or not major or not minor:
        raise PluginLoadError(f"{type_string!r} is not a plugin type (expected TYPE/NAME)")
    if major not in GROUPS:
        known = ", ".join(sorted(GROUPS))
        raise PluginLoadError(f"{type_string!r}: unknown plugin type {major!r} (known: {known})")
    return major, minor


class Registry:
    """The installed plugins, by entry-point group and name.

    ``entry_points`` defaults to everything installed; tests pass their own.
    """

    def __init__(
        self,
        entry_points: Iterable[metadata.EntryPoint] | None = None,
        disabled: Iterable[str] | None = None,
        factories: dict[str, Callable[[PluginContext], object]] | None = None,
        sources: dict[str, str] | None = None,
    ) -> None:
        #: Factories given directly (tests, embedding, a command's cached resolution): they
        #: win over entry points. ``sources`` names where each came from (for messages).
        self.factories = dict(factories or {})
        self._sources = dict(sources or {})
        if entry_points is None:
            from importlib import metadata

            found = metadata.entry_points()
            entry_points = [
                ep for group in set(GROUPS.values()) for ep in found.select(group=group)
            ]
        self._entry_points = list(entry_points)
        if disabled is None:
            disabled = filter(None, os.environ.get("PLURM_DISABLED_PLUGINS", "").split(","))
        self._disabled = frozenset(name.strip() for name in disabled)

    def installed(self, major: str) -> list[str]:
        """Type strings of the installed plugins of one type, sorted."""
        group = GROUPS[major]
        names = {ep.name for ep in self._entry_points if ep.group == group}
        names |= {t.split("/", 1)[1] for t in self.factories if t.startswith(major + "/")}
        return sorted(
            f"{major}/{name}" for name in names if f"{major}/{name}" not in self._disabled
        )

    def entry_point(self, type_string: str) -> metadata.EntryPoint:
        major, minor = _split(type_string)
        group = GROUPS[major]
        found = [
            ep
            for ep in self._entry_points
            if ep.group == group and ep.name == minor and type_string not in self._disabled
        ]
        if not found:
            known = self.installed(major)
            near = difflib.get_close_matches(type_string, known, n=1, cutoff=0.6)
            hint = f"; did you mean {near[0]}?" if near else ""
            raise PluginNotFoundError(
                f"{type_string}: no such plugin is installed (entry point {minor!r} in group "
                f"{group!r}); installed {major} plugins: {', '.join(known) or 'none'}{hint}"
            )
        sources = {(_distribution(ep), ep.value) for ep in found}
        if len(sources) > 1:
            listing = "; ".join(f"{dist}: {value}" for dist, value in sorted(sources))
            raise PluginConflictError(f"{type_string} is provided more than once ({listing})")
        return found[0]

    def load(self, type_string: str, config: SlurmConfig) -> LoadedPlugin:
        """Import, check and build the plugin named by ``type_string``."""
        if type_string in self.factories:
            _split(type_string)
            source = self._sources.get(type_string, "given directly")
            return self._build(type_string, self.factories[type_string], source, config)
        entry = self.entry_point(type_string)
        distribution = _distribution(entry)
        try:
            factory = entry.load()
        except Exception as error:  # an import error in third-party code, whatever its type
            raise PluginLoadError(
                f"{type_string}: cannot import {entry.value} from {distribution}: "
                f"{type(error).__name__}: {error}"
            ) from error
        return self._build(type_string, factory, distribution, config)

    def _build(
        self, type_string: str, factory: object, distribution: str, config: SlurmConfig
    ) -> LoadedPlugin:
        api = _api_version(type_string, factory, distribution)
        options = declared_options(factory)
        context = PluginContext(config, type_string, option_values(config, options))
        try:
            plugin = factory(context) if callable(factory) else factory
        except PlurmError:
            raise
        except Exception as error:
            raise PluginLoadError(
                f"{type_string}: {distribution} failed to start: {type(error).__name__}: {error}"
            ) from error
        return LoadedPlugin(type_string, plugin, distribution, api, options)

    def declared_for(self, config: SlurmConfig) -> dict[str, tuple[PluginOption, ...]]:
        """The options each installed plugin ``config`` names declares, by type string (a
        plugin that is not installed, or does not import, declares none here: its options
        are then unknown)."""
        declared: dict[str, tuple[PluginOption, ...]] = {}
        for type_strings in config.plugin_types().values():
            for type_string in type_strings:
                try:
                    options = self.declared(type_string)
                except PluginLoadError:
                    options = None
                if options is not None:
                    declared[type_string] = options
        return declared

    def declared(self, type_string: str) -> tuple[PluginOption, ...] | None:
        """The options the plugin ``type_string`` declares, without building it; None when
        no installed plugin has that type string."""
        if type_string in self.factories:
            return declared_options(self.factories[type_string])
        try:
            entry = self.entry_point(type_string)
        except PluginError:
            return None
        try:
            return declared_options(entry.load())
        except Exception as error:  # an import error in third-party code, whatever its type
            raise PluginLoadError(
                f"{type_string}: cannot import {entry.value} from {_distribution(entry)}: "
                f"{type(error).__name__}: {error}"
            ) from error

    def resolve(self, type_string: str) -> tuple[str, str]:
        """Where ``type_string``'s plugin comes from: its entry point's value
        (``module:attribute``) and its distribution, for :func:`import_factory`."""
        entry = self.entry_point(type_string)
        return entry.value, _distribution(entry)


def import_factory(value: str) -> object:
    """What an entry point's value (``module:attribute.path``) names, as
    ``EntryPoint.load`` finds it."""
    module_name, _, attribute = value.split("[", 1)[0].partition(":")
    found: object = importlib.import_module(module_name.strip())
    for part in filter(None, attribute.strip().split(".")):
        found = getattr(found, part)
    return found


def _distribution(entry: metadata.EntryPoint) -> str:
    dist = entry.dist
    if dist is None:
        return "an unknown distribution"
    return f"{dist.name} {dist.version}"


def _api_version(
    type_string: str, factory: Callable[..., Any] | object, distribution: str
) -> tuple[int, int]:
    declared = getattr(factory, "PLURM_HOOK_API", None)
    if declared is None:
        raise PluginAPIVersionError(
            f"{type_string} ({distribution}) does not declare PLURM_HOOK_API; this Plurm "
            f"provides hook API {HOOK_API_VERSION[0]}.{HOOK_API_VERSION[1]}"
        )
    try:
        major, minor = (int(part) for part in declared)
    except (TypeError, ValueError):
        raise PluginAPIVersionError(
            f"{type_string} ({distribution}): PLURM_HOOK_API must be (major, minor), "
            f"not {declared!r}"
        ) from None
    if major != HOOK_API_VERSION[0]:
        raise PluginAPIVersionError(
            f"{type_string} ({distribution}) needs hook API {major}.{minor}; this Plurm "
            f"provides {HOOK_API_VERSION[0]}.{HOOK_API_VERSION[1]}"
        )
    return major, minor
