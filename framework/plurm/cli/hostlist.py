"""``plurm hostlist expand|compress``: scontrol's ``show hostnames`` and ``show hostlist``."""

from __future__ import annotations

import argparse
from typing import TextIO

from plurm import hostlist


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("hostlist", help="expand or compress a hostlist")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    expand = verbs.add_parser(
        "expand", help="print one host per line, as 'scontrol show hostnames' does"
    )
    expand.add_argument("expression", metavar="EXPR")
    expand.set_defaults(run=run_expand)
    compress = verbs.add_parser(
        "compress", help="print the ranged form, as 'scontrol show hostlist' does"
    )
    compress.add_argument("names", metavar="NAMES")
    compress.set_defaults(run=run_compress)


def run_expand(args: argparse.Namespace, out: TextIO) -> int:
    for host in hostlist.iter_expand(args.expression):
        out.write(host + "\n")
    return 0


def run_compress(args: argparse.Namespace, out: TextIO) -> int:
    out.write(hostlist.compress(args.names) + "\n")
    return 0
