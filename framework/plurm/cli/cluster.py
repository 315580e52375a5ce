"""``plurm cluster up|down``: a local cluster of plurmctld and one plurmd per node."""

from __future__ import annotations

import argparse
from typing import TextIO

from plurm.live.settings import find_conf


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("cluster", help="start or stop a local live cluster")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    up = verbs.add_parser(
        "up", help="start plurmctld and a plurmd per node (what is not running already)"
    )
    up.add_argument("-f", metavar="FILE", help="slurm.conf (default: SLURM_CONF)")
    up.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for nodes")
    up.set_defaults(run=run_up)
    down = verbs.add_parser("down", help="stop the daemons and every job process they started")
    down.add_argument("-f", metavar="FILE", help="slurm.conf (default: SLURM_CONF)")
    down.set_defaults(run=run_down)


def run_up(args: argparse.Namespace, out: TextIO) -> int:
    from plurm.live.local import up

    path = find_conf(args.f).resolve()
    started = up(path, timeout=args.timeout)
    out.write(f"started: {' '.join(started)}\n" if started else "already running\n")
    out.write(f"cluster up ({path})\n")
    return 0


def run_down(args: argparse.Namespace, out: TextIO) -> int:
    from plurm.live.local import down

    stopped = down(find_conf(args.f).resolve())
    out.write(f"stopped: {' '.join(stopped)}\n" if stopped else "nothing was running\n")
    return 0
