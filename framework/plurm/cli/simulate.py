"""``plurm simulate --conf slurm.conf SESSION``: replay a command session."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from plurm import conf
from plurm.sim.session import Simulation, parse_session


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "simulate",
        help="replay a session of Slurm commands on a simulated cluster",
        description="Replay SESSION (lines of '<seconds> <command>') against the cluster "
        "slurm.conf describes, and print each command with its output.",
    )
    parser.add_argument("--conf", required=True, metavar="SLURM_CONF", help="the slurm.conf")
    parser.add_argument("session", metavar="SESSION")
    parser.set_defaults(run=run_simulate)


def run_simulate(args: argparse.Namespace, out: TextIO) -> int:
    config = conf.load(args.conf)
    path = Path(args.session)
    try:
        text = path.read_text()
    except OSError as error:
        out.flush()
        raise conf.ConfIncludeError(f"cannot read {path}: {error.strerror}", None) from None
    lines = parse_session(str(path), text)
    simulation = Simulation(config)
    out.write(simulation.run_lines(lines, path.parent))
    return 0
