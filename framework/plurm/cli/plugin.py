"""``plurm plugin new KIND NAME [--dir DIR]``: write a plugin package whose tests pass."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from plurm.kit import KINDS, new_plugin


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("plugin", help="start a plugin of your own")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    new = verbs.add_parser(
        "new",
        help="write a plugin package: the plugin, its tests and a tox.ini",
        description="Write a package for the plugin preempt/NAME or priority/NAME: KIND "
        "preempt is a preemption policy (PreemptType), KIND guard a guard that vetoes "
        "victims (PreemptGuards in plurm.conf), KIND priority a job priority policy "
        "(PriorityType). Install it with pip install -e DIR; its tests (pytest DIR) pass "
        "as written.",
    )
    new.add_argument("kind", choices=KINDS, metavar="KIND", help=", ".join(KINDS))
    new.add_argument("name", metavar="NAME", help="the plugin's name (a-z, 0-9, _)")
    new.add_argument(
        "--dir",
        type=Path,
        help="where to write it (default: plurm-TYPE-NAME, TYPE preempt or priority)",
    )
    new.set_defaults(run=run_new)


def run_new(args: argparse.Namespace, out: TextIO) -> int:
    kind_type = "priority" if args.kind == "priority" else "preempt"
    directory = args.dir or Path(f"plurm-{kind_type}-{args.name.replace('_', '-')}")
    for path in new_plugin(args.kind, args.name, directory):
        out.write(f"wrote {path}\n")
    out.write(f"next: pip install -e {directory} && pytest {directory}\n")
    return 0
