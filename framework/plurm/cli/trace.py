"""``plurm trace export``: a live cluster's accounting as an SWF trace.

``plurm trace export [-f slurm.conf] [--since DATE] [--whole-seconds] [-o FILE]`` reads
plurmctld's accounting store (``<StateSaveLocation>/plurmctld.sqlite``, read-only, while
plurmctld runs or not) and writes the jobs that have ended, submitted at or after DATE (sacct
-S's forms: ``2026-01-12T10:00``, ``now-1hour``, ``today``...), as SWF v2.2
(:mod:`plurm.live.export`). ``plurm simulate --conf slurm.conf --trace FILE`` replays it.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import TextIO

from plurm import conf
from plurm.errors import PlurmError


class TraceExportError(PlurmError):
    """A trace export that cannot be made: no accounting store, a bad --since."""


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("trace", help="workload traces of a live cluster")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    export = verbs.add_parser(
        "export",
        help="write the live cluster's finished jobs as an SWF trace",
        description="Write the jobs plurmctld's accounting holds that have ended, as a "
        "Standard Workload Format (v2.2) trace that 'plurm simulate --trace' replays.",
    )
    export.add_argument("-f", metavar="FILE", help="slurm.conf (default: SLURM_CONF)")
    export.add_argument(
        "--since",
        "-S",
        metavar="DATE",
        help="only jobs submitted at or after DATE (sacct -S's forms); default: all",
    )
    export.add_argument(
        "--whole-seconds",
        action="store_true",
        help="round times to whole seconds (by default they keep milliseconds)",
    )
    export.add_argument("-o", "--output", metavar="FILE", help="write here, not to stdout")
    export.set_defaults(run=run_export)


def run_export(args: argparse.Namespace, out: TextIO) -> int:
    from plurm.commands.base import CommandError
    from plurm.commands.sacct import parse_moment
    from plurm.live.export import read_history, swf_lines
    from plurm.live.settings import LiveSettings, find_conf
    from plurm.live.wallclock import epoch_seconds

    path = find_conf(args.f)
    config = conf.load(str(path))
    since = None
    if args.since is not None:
        try:
            since = parse_moment(args.since, epoch_seconds(time.time()))
        except CommandError:
            raise TraceExportError(f"--since: invalid time specification: {args.since}") from None
    store = LiveSettings.from_config(config).state_save / "plurmctld.sqlite"
    if not store.is_file():
        raise TraceExportError(f"no accounting store at {store} (has plurmctld run with {path}?)")
    history = read_history(str(store))
    lines = swf_lines(history, config, since=since, whole_seconds=args.whole_seconds)
    text = "".join(f"{line}\n" for line in lines)
    if args.output:
        try:
            Path(args.output).write_text(text)
        except OSError as error:
            raise TraceExportError(
                f"cannot write {args.output}: {error.strerror or error}"
            ) from None
    else:
        out.write(text)
    return 0
