"""``plurm conf check [FILE ...]``: print the effective configuration, or the errors."""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from plurm import conf
from plurm.conf.model import SlurmConfig
from plurm.conf.render import render
from plurm.errors import ConfError, ConfValueError, raise_collected
from plurm.manager import DAEMON_ROLES, Plugins
from plurm.params import PluginOption, check_options, option_values
from plurm.registry import PluginError, PluginNotFoundError, Registry


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("conf", help="read and check slurm.conf files")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    check = verbs.add_parser(
        "check",
        help="print the effective configuration, or every error with file, line and column",
        description="Read slurm.conf (and qos.conf beside it) as Slurm 22.05 would. "
        "FILE defaults to $SLURM_CONF, else /etc/slurm/slurm.conf.",
    )
    check.add_argument("files", nargs="*", metavar="FILE")
    check.set_defaults(run=run_check)


def run_check(args: argparse.Namespace, out: TextIO) -> int:
    paths = args.files or [str(conf.default_path())]
    status = 0
    registry = Registry()
    for index, path in enumerate(paths):
        if index:
            out.write("\n")
        try:
            config = conf.load(path)
            declared = registry.declared_for(config)
            raise_collected(_missing(config, registry) + check_options(config, declared))
            # Building the plugins reads a policy's own files beside slurm.conf (PBS's
            # sched_config, LSF's lsb.queues) and its judgement of PreemptMode.
            Plugins.load(config, registry=registry)
        except ConfError as error:
            out.flush()
            sys.stderr.write(f"plurm: {path}: {len(error.errors)} error(s)\n{error}\n")
            status = 1
            continue
        except PluginError as error:
            out.flush()
            sys.stderr.write(f"plurm: {path}: {error}\n")
            status = 1
            continue
        out.write(render(config))
        out.write(_render_options(config, declared))
    return status


def _missing(config: SlurmConfig, registry: Registry) -> list[ConfError]:
    """One error for each plugin the simulator or the live daemons would load that no
    installed distribution provides."""
    errors: list[ConfError] = []
    types = config.plugin_types()
    for role in DAEMON_ROLES:
        for type_string in types[role]:
            try:
                registry.entry_point(type_string)
            except PluginNotFoundError as error:
                if type_string in registry.factories:
                    continue
                written = config.plugin_locations.get(type_string)
                if written is None:
                    errors.append(ConfError(str(error)))
                else:
                    key, where = written
                    reason = str(error).removeprefix(f"{type_string}: ")
                    errors.append(ConfValueError(key, type_string, reason, where))
            except PluginError:
                continue  # provided twice: Plugins.load says so when it loads
    return errors


def _render_options(config: SlurmConfig, declared: dict[str, tuple[PluginOption, ...]]) -> str:
    """The plugins' own options with their effective values, as comment lines."""
    lines = []
    for type_string, options in sorted(declared.items()):
        values = option_values(config, options)
        for option in options:
            note = f": {option.help}" if option.help else ""
            lines.append(
                f"#   {option.key} {option.name}={values[option.name]} "
                f"({type_string}, {option.kind}, default {option.default}){note}\n"
            )
    return "# Plugin options\n" + "".join(lines) if lines else ""
