"""``plurm conf check [FILE ...]``: print the effective configuration, or the errors."""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from plurm import conf
from plurm.conf.render import render
from plurm.errors import ConfError


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
    for index, path in enumerate(paths):
        if index:
            out.write("\n")
        try:
            config = conf.load(path)
        except ConfError as error:
            out.flush()
            sys.stderr.write(f"plurm: {path}: {len(error.errors)} error(s)\n{error}\n")
            status = 1
            continue
        out.write(render(config))
    return status
