"""Plugin parameters: the options a plugin declares, read from slurm.conf and checked.

A plugin factory lists the options it reads as ``PLURM_OPTIONS``::

    class MaxAge:
        PLURM_HOOK_API = HOOK_API_VERSION
        PLURM_OPTIONS = (
            PluginOption("max_age", kind="int", default=3600, help="seconds a job may run"),
        )

        def __init__(self, context):
            self.max_age = context.options["max_age"]

and a site sets them where Slurm's own options of that plugin type go:
``PreemptParameters=max_age=7200`` (the default ``key``), ``SchedulerParameters=...`` or
``SelectTypeParameters=...``.
``context.options`` holds the typed value of each (its default when not set).

A select plugin's options go in ``SelectTypeParameters`` beside Slurm's ``CR_*`` words
(``SelectTypeParameters=CR_Core,pack_limit=4``).

PreemptParameters and SelectTypeParameters options that neither Slurm nor a loaded plugin
knows are errors (:func:`check_options`, which :meth:`plurm.manager.Plugins.load` and
``plurm conf check`` run), with the file, line, column and the nearest known option; so is a
declared option with a value of the wrong kind. SchedulerParameters options Slurm does not know stay
accepted, as Slurm accepts them, unless a plugin declares them with a kind.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence

import attrs

from plurm.conf.model import PREEMPT_OPTIONS, SlurmConfig
from plurm.conf.values import SELECT_TYPE_WORDS
from plurm.errors import ConfError, ConfValueError, SourceLocation

__all__ = ["KEYS", "KINDS", "PluginOption", "check_options", "declared_options", "option_values"]

#: The slurm.conf keys a plugin option may be set in.
KEYS = ("PreemptParameters", "SchedulerParameters", "SelectTypeParameters")
#: The kinds of value: ``int`` (a whole number), ``str`` (any text), ``flag`` (no value:
#: present or not).
KINDS = ("int", "str", "flag")


def _lower(text: object) -> str:
    return str(text).lower()


@attrs.frozen
class PluginOption:
    """One option a plugin reads: ``name`` in the comma list of ``key``."""

    #: The option's name, lower case (``max_age`` in ``PreemptParameters=max_age=3600``).
    name: str = attrs.field(converter=_lower)
    #: One of :data:`KINDS`.
    kind: str = attrs.field(default="str", validator=attrs.validators.in_(KINDS))
    #: The value when the option is not set (a flag's is False).
    default: object = None
    #: What it does, one line: ``plurm conf check`` shows it.
    help: str = ""
    #: The slurm.conf key it is set in, one of :data:`KEYS`.
    key: str = attrs.field(default="PreemptParameters", validator=attrs.validators.in_(KEYS))


def declared_options(factory: object) -> tuple[PluginOption, ...]:
    """The options a plugin factory declares (``PLURM_OPTIONS``; none when absent)."""
    declared = getattr(factory, "PLURM_OPTIONS", ())
    return tuple(option for option in declared if isinstance(option, PluginOption))


def _written(
    config: SlurmConfig, key: str
) -> tuple[Mapping[str, str | None], Mapping[str, SourceLocation]]:
    if key == "PreemptParameters":
        return config.preempt_parameters.options, config.preempt_parameters.locations
    if key == "SelectTypeParameters":
        return config.select_type_parameters.options, config.select_type_parameters.locations
    return config.scheduler_parameters.options, config.scheduler_parameters.locations


def _convert(option: PluginOption, value: str | None) -> object:
    """The typed value of ``option`` as written, or ValueError with the reason."""
    if option.kind == "flag":
        if value is not None:
            raise ValueError(f"{option.name} is a flag and takes no value")
        return True
    if value is None:
        raise ValueError(f"{option.name} needs a value ({option.name}=...)")
    if option.kind == "int":
        try:
            return int(value)
        except ValueError:
            raise ValueError(f"{option.name} must be a whole number, not {value!r}") from None
    return value


def option_values(config: SlurmConfig, options: Iterable[PluginOption]) -> dict[str, object]:
    """Each option's typed value in ``config`` (its default when not set; a value that does
    not convert gives the default too: :func:`check_options` reports it)."""
    values: dict[str, object] = {}
    for option in options:
        written, _ = _written(config, option.key)
        default = False if option.kind == "flag" and option.default is None else option.default
        if option.name not in written:
            values[option.name] = default
            continue
        try:
            values[option.name] = _convert(option, written[option.name])
        except ValueError:
            values[option.name] = default
    return values


def _where(config: SlurmConfig, key: str, name: str) -> SourceLocation | None:
    return _written(config, key)[1].get(name)


def check_options(
    config: SlurmConfig, declared: Mapping[str, Sequence[PluginOption]]
) -> list[ConfError]:
    """Errors in the plugin options of ``config``, given each loaded plugin's declared
    options (by type string): PreemptParameters options no one knows, values of the wrong
    kind, and one option declared by two plugins."""
    errors: list[ConfError] = []
    owners: dict[tuple[str, str], str] = {}
    for type_string, options in declared.items():
        for option in options:
            other = owners.setdefault((option.key, option.name), type_string)
            if other != type_string:
                errors.append(
                    ConfError(
                        f"{option.key} option {option.name} is declared by both {other} "
                        f"and {type_string}"
                    )
                )
    for (key, name), owner in sorted(owners.items()):
        option = next(o for o in declared[owner] if o.name == name and o.key == key)
        written, _ = _written(config, key)
        if name in written:
            try:
                _convert(option, written[name])
            except ValueError as error:
                value = f"{name}={written[name]}" if written[name] is not None else name
                errors.append(
                    ConfValueError(key, value, f"{error} ({owner})", _where(config, key, name))
                )
    loaded = ", ".join(sorted(declared)) or "none"
    for key, slurms in (
        ("PreemptParameters", PREEMPT_OPTIONS),
        ("SelectTypeParameters", SELECT_TYPE_WORDS),
    ):
        known = set(slurms) | {n for k, n in owners if k == key}
        written, _ = _written(config, key)
        for name, setting in written.items():
            if name in known:
                continue
            found = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
            hint = f"; did you mean {found[0]!r}?" if found else ""
            written_as = f"{name}={setting}" if setting is not None else name
            errors.append(
                ConfValueError(
                    key,
                    written_as,
                    f"unknown option {name}: neither Slurm nor the loaded plugins ({loaded}) "
                    f"declare it{hint}",
                    _where(config, key, name),
                )
            )
    return errors
