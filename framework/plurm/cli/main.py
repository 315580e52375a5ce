"""Entry point of the ``plurm`` console script.

Each command module adds its sub-parser and a ``run(args, out) -> exit status`` function.
Any :class:`~plurm.errors.PlurmError` becomes a message on stderr and exit status 1, so no
command prints a traceback for bad input.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TextIO

from plurm import __version__
from plurm.cli import cluster, compare, conf, hostlist, plugin, simulate, trace
from plurm.errors import PlurmError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="plurm", description="A workload manager built of plugins, on the plan of Slurm."
    )
    parser.add_argument("--version", action="version", version=f"plurm {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    conf.add_parser(commands)
    hostlist.add_parser(commands)
    simulate.add_parser(commands)
    compare.add_parser(commands)
    cluster.add_parser(commands)
    trace.add_parser(commands)
    plugin.add_parser(commands)
    return parser


def main(
    argv: Sequence[str] | None = None, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    args = build_parser().parse_args(argv)
    try:
        status: int = args.run(args, out)
    except PlurmError as error:
        out.flush()
        err.write(f"plurm: error: {error}\n")
        return 1
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
